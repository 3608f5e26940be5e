"""``scripts/rerun_results.py``: finds stale results files by the freshness test's rule,
reads each file's command from its header, runs each command once, ``--jobs`` at a time,
and prints what it runs."""

import importlib.util
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("rerun_results",
                                               ROOT / "scripts" / "rerun_results.py")
assert _spec is not None
assert _spec.loader is not None
rerun = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rerun)


def _stale_file(folder: Path, name: str, command: str, style: str = "- command: ") -> Path:
    path = folder / name
    path.write_text(f"# A result\n\n{style}{command}\n- privkit-commit: {'0' * 40}\n"
                    "- privkit-depends: algorithms\n\n| a | b |\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("style", ["- command: ", "command: ", "# command: "])
def test_the_command_is_read_from_each_header_style(tmp_path, style):
    path = _stale_file(tmp_path, "r.md", "privkit reproduce demo --quick", style)
    assert rerun.command_of(path) == "privkit reproduce demo --quick"


def test_the_backquoted_style_of_the_erm_benchmark(tmp_path):
    path = tmp_path / "erm.md"
    path.write_text("# x\n\nprivkit-commit: abc\n\nCommand: `OMP_NUM_THREADS=1 python -P "
                    "benchmarks/erm.py --part defaults --seeds 5`\n", encoding="utf-8")
    assert rerun.command_of(path) == ("OMP_NUM_THREADS=1 python -P benchmarks/erm.py "
                                      "--part defaults --seeds 5")


def test_a_synthetic_stale_file_is_rerun_once_per_command(tmp_path, capsys):
    """Two stale tables of one folder share a command: it runs once and writes its
    marker; a third file's command runs too; output names every command."""
    marker = tmp_path / "ran.txt"
    fake = f"echo ran >> {marker}"
    files = [_stale_file(tmp_path, "a.md", fake), _stale_file(tmp_path, "a.csv", fake),
             _stale_file(tmp_path, "b.md", f"echo other > {tmp_path / 'other.txt'}")]
    code = rerun.main(["--jobs", "2"], root=tmp_path,
                      rule=lambda: [(f, "changed") for f in files])
    out = capsys.readouterr().out
    assert code == 0
    assert marker.read_text() == "ran\n"  # once, not once per file
    assert (tmp_path / "other.txt").read_text() == "other\n"
    assert f"run: {fake}" in out
    assert "stale: a.md, a.csv" in out
    assert "2 of 2 commands succeeded" in out


def test_dry_run_runs_nothing_and_a_failure_is_reported(tmp_path, capsys):
    marker = tmp_path / "ran.txt"
    ok = _stale_file(tmp_path, "a.md", f"touch {marker}")
    assert rerun.main(["--dry-run"], root=tmp_path, rule=lambda: [(ok, "x")]) == 0
    assert not marker.exists()
    bad = _stale_file(tmp_path, "b.md", "exit 3")
    assert rerun.main([], root=tmp_path, rule=lambda: [(bad, "x")]) == 1
    assert "failed: exit 3" in capsys.readouterr().out


def test_a_stale_file_without_a_command_is_listed_and_exits_2(tmp_path, capsys):
    path = tmp_path / "r.md"
    path.write_text(f"privkit-commit: {'0' * 40}\nprivkit-depends: x\n", encoding="utf-8")
    assert rerun.main([], root=tmp_path, rule=lambda: [(path, "x")]) == 2
    assert "no command in the header" in capsys.readouterr().err


def test_commands_see_the_data_folder_and_the_venv(tmp_path):
    out = tmp_path / "env.txt"
    path = _stale_file(tmp_path, "a.md", f'echo "$PRIVKIT_DATA:$PATH" > {out}')
    assert rerun.main(["--data", "/some/data"], root=tmp_path,
                      rule=lambda: [(path, "x")]) == 0
    data, search = out.read_text().strip().split(":", 1)
    assert data == "/some/data"
    assert search.startswith(str(tmp_path / ".venv" / "bin"))


def test_the_rule_is_the_freshness_tests_own():
    """The script imports the freshness test's `stale_results` (no copy of the rule):
    in a checkout it returns (path, reason) pairs of committed results files."""
    module = rerun.freshness_rule()
    assert module.stale_results.__module__ == module.__name__
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                      check=False).returncode != 0:
        pytest.skip("not in a git checkout")
    for path, why in module.stale_results():
        assert path.is_file()
        assert why


def test_the_longest_recorded_run_goes_first(tmp_path):
    """With 2 jobs, starting the longest runs first ends sooner; a file that records no
    time may be long, so it goes first of all; the CPU time, when recorded, counts
    rather than the wall time (which measures the load)."""
    short = _stale_file(tmp_path, "s.md", "echo short")
    long = _stale_file(tmp_path, "l.md", "echo long")
    unknown = _stale_file(tmp_path, "u.md", "echo unknown")
    for path, seconds in ((short, 5.0), (long, 500.0)):
        path.write_text(path.read_text() + f"- wall time: {seconds} s\n", encoding="utf-8")
    cpu = _stale_file(tmp_path, "c.md", "echo cpu")
    cpu.write_text(cpu.read_text() + "- wall time: 9000.0 s\n- CPU time (the process, --jobs 2): "
                   "50.0 s; over 2 workers: 25.0 s\n", encoding="utf-8")
    commands, orphans = rerun.plan([(short, "x"), (long, "x"), (unknown, "x"), (cpu, "x")])
    assert list(commands) == ["echo unknown", "echo long", "echo cpu", "echo short"]
    assert not orphans


def test_include_adds_fresh_reproductions_to_a_dry_run(capsys):
    """``--include TEXT`` lists every committed stamped file whose command contains TEXT,
    stale or not (here: every reproduction output of the checkout)."""
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                      check=False).returncode != 0:
        pytest.skip("not in a git checkout")
    assert rerun.main(["--dry-run", "--include", "privkit reproduce"]) in (0, 2)
    out = capsys.readouterr().out
    assert "<- privkit reproduce " in out
