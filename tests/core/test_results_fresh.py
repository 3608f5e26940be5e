"""No stale results: every committed stamped results file was written by code that is
unchanged at HEAD, by the rule of ``scripts/results_freshness.py`` (read its docstring);
the rule itself, on synthetic repositories."""

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
_spec = importlib.util.spec_from_file_location("results_freshness",
                                               ROOT / "scripts" / "results_freshness.py")
assert _spec is not None
assert _spec.loader is not None
rule = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rule)

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not rule.in_checkout(),
                                reason="not in a git checkout")


def test_stamped_results_were_written_by_the_current_code():
    stale = [f"{path.relative_to(ROOT)}: {why}" for path, why in rule.stale_results()]
    assert not stale, ("results written by code that has changed since; rerun their "
                       "command (in each file's header, or scripts/rerun_results.py):\n"
                       + "\n".join(stale))


def test_reproduction_outputs_carry_the_stamp():
    unstamped = [str(p.relative_to(ROOT)) for p in rule.committed_results()
                 if "reproduce" in p.relative_to(RESULTS).parts and rule.stamp(p) is None]
    assert not unstamped, unstamped


def test_a_stale_stamp_is_detected(tmp_path):
    """The check itself on this repository: HEAD against anything is fresh; the first
    commit against ``privkit/`` is stale."""
    head = rule.git("rev-parse", "HEAD").stdout.strip()
    assert rule.changed_since(head, ["algorithms", "privkit/plan.py"]) == []
    first = rule.git("rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    assert rule.changed_since(first, ["privkit"])
    stamped = tmp_path / "r.md"
    stamped.write_text(f"- privkit-commit: {first}\n- privkit-depends: privkit algorithms\n")
    assert rule.stamp(stamped) == (first, ["privkit", "algorithms"])


MODULE = '''"""A solver."""

from .losses import hinge
from .shared import clip

DEPENDS = ("pkg/solver.py", "pkg/losses.py")
STEP = 0.5


def solve(x):
    """The clipped, scaled hinge of ``x`` (long enough for git to see the file moved: a
    rename is detected at 50% similarity, and a move rewrites a few import lines)."""
    y = hinge(x)
    y = y * STEP
    y = clip(y)
    return y
'''


def _repo(tmp_path: Path) -> tuple[Path, str]:
    """A git repository in ``tmp_path`` with ``pkg/solver.py`` (the module above),
    ``pkg/losses.py``, ``pkg/shared.py``, ``pkg/kernel.pyx`` and ``pkg/data/a.txt``
    committed; with the commit's SHA."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    files = {"pkg/solver.py": MODULE, "pkg/losses.py": "def hinge(x):\n    return x\n",
             "pkg/shared.py": "def clip(x):\n    return x\n",
             "pkg/kernel.pyx": "# the kernel\ncdef int k = 1\n", "pkg/data/a.txt": "a\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    _commit(tmp_path, "init")
    return tmp_path, rule.git("rev-parse", "HEAD", root=tmp_path).stdout.strip()


def _commit(root: Path, message: str) -> None:
    for args in (["init", "-q"] if not (root / ".git").exists() else [],
                 ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message]):
        if args:
            assert rule.git(*args, root=root).returncode == 0


def _move(root: Path, old: str, new: str, text: str | None = None) -> None:
    """``git mv old new``, then write ``text`` to ``new`` when given."""
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    assert rule.git("mv", old, new, root=root).returncode == 0
    if text is not None:
        (root / new).write_text(text)


def test_a_move_with_new_import_paths_is_fresh(tmp_path):
    """(a) Files moved into a subfolder, their ``from`` imports and ``DEPENDS`` paths
    rewritten to the new places and re-sorted: the old stamp stays fresh (the folder
    too)."""
    root, commit = _repo(tmp_path)
    moved = (MODULE.replace("from .losses import hinge\nfrom .shared import clip",
                            "from ..pkg.shared import clip\nfrom .linear.losses import hinge")
             .replace('"pkg/', '"pkg/linear/'))
    assert moved.index("import clip") < moved.index("import hinge")
    _move(root, "pkg/solver.py", "pkg/linear/solver.py", moved)
    _move(root, "pkg/losses.py", "pkg/linear/losses.py")
    _move(root, "pkg/kernel.pyx", "pkg/compiled/kernel.pyx")
    _commit(root, "move")
    depends = ["pkg/solver.py", "pkg/losses.py", "pkg/kernel.pyx", "pkg/shared.py", "pkg"]
    assert rule.changed_since(commit, depends, root) == []


def test_a_move_with_a_changed_constant_is_stale(tmp_path):
    """(b) The same move with ``STEP`` changed is a change of the moved file."""
    root, commit = _repo(tmp_path)
    moved = MODULE.replace("from .losses", "from .linear.losses").replace("0.5", "0.25")
    _move(root, "pkg/solver.py", "pkg/linear/solver.py", moved)
    _commit(root, "move and change")
    assert rule.changed_since(commit, ["pkg/solver.py", "pkg/losses.py"], root) == [
        "pkg/solver.py (now pkg/linear/solver.py)"]


def test_a_changed_imported_name_is_stale(tmp_path):
    """(c) Importing another name (``clip`` -> ``clamp``) is a change, although only the
    import line differs."""
    root, commit = _repo(tmp_path)
    moved = MODULE.replace("import clip", "import clamp as clip")
    _move(root, "pkg/solver.py", "pkg/linear/solver.py", moved)
    _commit(root, "another name")
    assert rule.changed_since(commit, ["pkg/solver.py"], root) == [
        "pkg/solver.py (now pkg/linear/solver.py)"]


def test_a_move_is_followed_across_commits(tmp_path):
    """A file moved in one commit and rewritten in another (not similar enough for git to
    pair the ends) is followed commit by commit: the rewrite makes it stale, the move
    alone would not have."""
    root, commit = _repo(tmp_path)
    _move(root, "pkg/losses.py", "pkg/linear/losses.py")
    _commit(root, "move")
    assert rule.changed_since(commit, ["pkg/losses.py"], root) == []
    (root / "pkg/linear/losses.py").write_text("def hinge(x):\n    return max(0.0, 1.0 - x)\n")
    _commit(root, "rewrite")
    direct = rule.git("diff", "-M", "--name-status", commit, "HEAD", root=root).stdout
    assert not any(line.startswith("R") for line in direct.splitlines())
    assert rule.changed_since(commit, ["pkg/losses.py"], root) == [
        "pkg/losses.py (now pkg/linear/losses.py)"]


def test_a_docstring_may_follow_the_move(tmp_path):
    """A docstring naming the moved module by its new dotted name and path is fresh; the
    same docstring with one more word is not."""
    root, commit = _repo(tmp_path)
    text = MODULE.replace('"""A solver."""', '"""A solver (``pkg.losses``, pkg/losses.py)."""')
    (root / "pkg/solver.py").write_text(text)
    _commit(root, "docstring")
    commit = rule.git("rev-parse", "HEAD", root=root).stdout.strip()
    moved = text.replace("pkg.losses", "pkg.linear.losses").replace(
        "pkg/losses.py", "pkg/linear/losses.py").replace("from .losses", "from .linear.losses"
    ).replace('"pkg/solver.py"', '"pkg/linear/solver.py"')
    _move(root, "pkg/solver.py", "pkg/linear/solver.py", moved)
    _move(root, "pkg/losses.py", "pkg/linear/losses.py")
    _commit(root, "move")
    assert rule.changed_since(commit, ["pkg/solver.py"], root) == []
    (root / "pkg/linear/solver.py").write_text(moved.replace("A solver", "A fast solver"))
    _commit(root, "edit")
    assert rule.changed_since(commit, ["pkg/solver.py"], root) == [
        "pkg/solver.py (now pkg/linear/solver.py)"]


@pytest.mark.parametrize(("edit", "expected"), [
    ("docstring", ["pkg/solver.py (now pkg/linear/solver.py)"]),
    ("pyx", ["pkg/kernel.pyx (now pkg/compiled/kernel.pyx)"]),
    ("delete", ["pkg/losses.py (gone)"]),
    ("add", ["pkg/data/b.txt (new)"]),
])
def test_what_else_makes_a_stamp_stale(tmp_path, edit, expected):
    """A moved module's docstring, a moved non-Python file's comment, a deleted file and
    a file added under a depended-on folder are changes."""
    root, commit = _repo(tmp_path)
    if edit == "docstring":
        _move(root, "pkg/solver.py", "pkg/linear/solver.py", MODULE.replace("A solver", "A"))
    elif edit == "pyx":
        _move(root, "pkg/kernel.pyx", "pkg/compiled/kernel.pyx", "# moved\ncdef int k = 1\n")
    elif edit == "delete":
        assert rule.git("rm", "-q", "pkg/losses.py", root=root).returncode == 0
    else:
        (root / "pkg/data/b.txt").write_text("b\n")
    _commit(root, edit)
    assert rule.changed_since(commit, ["pkg/solver.py", "pkg/kernel.pyx", "pkg/losses.py",
                                  "pkg/data"], root) == expected
