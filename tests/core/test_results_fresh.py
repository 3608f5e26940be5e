"""No stale results: a committed results file that records the commit of the code that
wrote it (``privkit-commit: SHA`` and ``privkit-depends: PATH ...`` in its first lines,
as :mod:`privkit.algorithms.reproduce._report` writes them) must name a commit whose
depended-on code is unchanged at HEAD. Files under ``benchmarks/results/reproduce/`` must
carry the stamp. Skipped outside a git checkout."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
COMMIT = re.compile(r"privkit-commit: (\S+)")
DEPENDS = re.compile(r"privkit-depends: (.+)")


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=False, timeout=60)


def _in_checkout() -> bool:
    return (shutil.which("git") is not None and (ROOT / ".git").exists()
            and _git("rev-parse", "HEAD").returncode == 0)


def _committed_results() -> list[Path]:
    listed = _git("ls-files", "--", "benchmarks/results").stdout.split()
    return [ROOT / p for p in listed if p.endswith((".md", ".csv", ".txt"))]


def _stamp(path: Path) -> tuple[str, list[str]] | None:
    head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    commit, depends = COMMIT.search(head), DEPENDS.search(head)
    if commit is None:
        return None
    return commit.group(1), (depends.group(1).split() if depends else [])


pytestmark = pytest.mark.skipif(not _in_checkout(), reason="not in a git checkout")


def stale_results() -> list[tuple[Path, str]]:
    """Every committed stamped results file written by code that has changed since, with
    why (``scripts/rerun_results.py`` imports this rule)."""
    stale = []
    for path in _committed_results():
        stamp = _stamp(path)
        if stamp is None:
            continue
        commit, depends = stamp
        if commit.endswith("+dirty") or not re.fullmatch(r"[0-9a-f]{40}", commit):
            stale.append((path, f"written by uncommitted code ({commit})"))
            continue
        if not depends:
            stale.append((path, "names no privkit-depends paths"))
            continue
        diff = _git("diff", "--quiet", commit, "HEAD", "--", *depends)
        if diff.returncode != 0:
            changed = _git("diff", "--name-only", commit, "HEAD", "--", *depends).stdout
            stale.append((path, (f"{commit[:10]} differs from HEAD in "
                                f"{', '.join(changed.split()) or diff.stderr.strip()}")))
    return stale


def test_stamped_results_were_written_by_the_current_code():
    stale = [f"{path.relative_to(ROOT)}: {why}" for path, why in stale_results()]
    assert not stale, ("results written by code that has changed since; rerun their "
                       "command (in each file's header, or scripts/rerun_results.py):\n"
                       + "\n".join(stale))


def test_reproduction_outputs_carry_the_stamp():
    unstamped = [str(p.relative_to(ROOT)) for p in _committed_results()
                 if "reproduce" in p.relative_to(RESULTS).parts and _stamp(p) is None]
    assert not unstamped, unstamped


def test_a_stale_stamp_is_detected(tmp_path):
    """The check itself: HEAD's parent against a path that changed in HEAD is stale;
    HEAD against anything is fresh."""
    head = _git("rev-parse", "HEAD").stdout.strip()
    assert _git("diff", "--quiet", head, "HEAD", "--", "algorithms").returncode == 0
    first = _git("rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    assert _git("diff", "--quiet", first, "HEAD", "--", "privkit").returncode == 1
    stamped = tmp_path / "r.md"
    stamped.write_text(f"- privkit-commit: {first}\n- privkit-depends: privkit algorithms\n")
    assert _stamp(stamped) == (first, ["privkit", "algorithms"])
