"""No stale results: a committed results file that records the commit of the code that
wrote it (``privkit-commit: SHA`` and ``privkit-depends: PATH ...`` in its first lines,
as :mod:`privkit.algorithms.reproduce._report` writes them) must name a commit whose
depended-on code is unchanged at HEAD. Files under ``benchmarks/results/reproduce/`` must
carry the stamp. Skipped outside a git checkout.

The rule survives moves, and only moves. Each depended-on path is followed to its path at
HEAD through git's rename detection (``git diff -M --name-status COMMIT HEAD``, else the
renames of the commits in between, for a file that also changed too much to be matched
across the whole range); the file
is unchanged when its content at COMMIT and at HEAD are equal after normalising only
where things come from. For a ``.py`` file that is ``ast.dump`` of both modules with every
``ImportFrom``'s ``module`` and ``level`` blanked (so a run of consecutive ``from``
imports, which isort orders by where they come from, is compared in one order) and, in
the string constants at COMMIT, the old path and old dotted name of every file renamed
since replaced by the new ones (a ``DEPENDS`` entry, a doctest's import, a docstring's
``privkit.algorithms.erm``); everything else (the rest of every docstring and constant,
the imported names, the order of all other statements) must match. Any other file must
be byte-equal. A path that is gone at HEAD (deleted, not renamed) is a
change; so is, under a depended-on folder, a file added since."""

import ast
import functools
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
COMMIT = re.compile(r"privkit-commit: (\S+)")
DEPENDS = re.compile(r"privkit-depends: (.+)")


def _git(*args: str, root: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
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


def _name_status_renames(out: str) -> list[tuple[str, str]]:
    """The (old, new) pairs of ``git ... --name-status -z`` output, in order."""
    fields = [f.strip("\n") for f in out.replace("\1", "\0").split("\0")]
    pairs = []
    for i, field in enumerate(fields):
        if re.fullmatch(r"R\d*", field) and i + 2 < len(fields):
            pairs.append((fields[i + 1], fields[i + 2]))
    return pairs


@functools.cache
def _renames(root: Path, commit: str, head: str) -> dict[str, str]:
    """Old path -> path at ``head``, for the files git sees renamed between ``commit`` and
    ``head``: in the diff of the two (the rule), else by following the renames of each
    commit in between (first parents, merges against their first parent), which finds a
    file that was moved and, in other commits, changed too much to look like itself."""
    chain: dict[str, str] = {}
    steps = _git("log", "--reverse", "--first-parent", "-m", "-M", "--diff-filter=R",
                 "--name-status", "-z", "--format=%x01", f"{commit}..{head}", root=root).stdout
    for old, new in _name_status_renames(steps):
        moved = [k for k, v in chain.items() if v == old]
        for k in moved:
            chain[k] = new
        if not moved:
            chain[old] = new
    direct = _git("diff", "-M", "--name-status", "-z", commit, head, root=root).stdout
    return chain | dict(_name_status_renames(direct))


@functools.cache
def _files(root: Path, rev: str, path: str) -> tuple[str, ...]:
    """The files at ``path`` in ``rev`` (the path itself for a file; none if absent)."""
    return tuple(_git("ls-tree", "-r", "--name-only", "-z", rev, "--", path,
                      root=root).stdout.split("\0")[:-1])


@functools.cache
def _content(root: Path, rev: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), "show", f"{rev}:{path}"],
                          capture_output=True, check=True, timeout=60).stdout


def _dotted(path: str) -> str:
    """``algorithms/linear/erm.py`` -> ``algorithms.linear.erm`` (a package: its folder)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return stem.removesuffix("/__init__").replace("/", ".")


@functools.cache
def _relocate(root: Path, commit: str, head: str) -> Callable[[str], str]:
    """A function that rewrites, in a text, the old path and the old dotted module name of
    every file renamed between ``commit`` and ``head`` to the new ones."""
    table = {}
    for old, new in _renames(root, commit, head).items():
        table[old] = new
        table[_dotted(old)] = _dotted(new)
    if not table:
        return lambda text: text
    pattern = re.compile(r"(?<![\w/])(" + "|".join(
        re.escape(k) for k in sorted(table, key=len, reverse=True)) + r")(?![\w/])")
    return lambda text: pattern.sub(lambda m: table[m.group(1)], text)


def _normalised(source: bytes, relocate: Callable[[str], str] | None) -> str | bytes:
    """``ast.dump`` of a module with where its ``from`` imports come from blanked (and so
    each run of consecutive ``from`` imports sorted: isort orders them by where they come
    from) and, given ``relocate``, its string constants relocated; the source itself if
    it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            node.module, node.level = None, 0
        elif relocate and isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = relocate(node.value)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            node.body = _sorted_runs(body)
    return ast.dump(tree)


def _sorted_runs(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` with each run of consecutive ``from`` imports in one (textual) order."""
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []
    for stmt in [*body, None]:
        if isinstance(stmt, ast.ImportFrom):
            run.append(stmt)
            continue
        out += sorted(run, key=ast.dump)
        run = []
        if stmt is not None:
            out.append(stmt)
    return out


@functools.cache
def _same(root: Path, commit: str, head: str, old: str, new: str) -> bool:
    before, after = _content(root, commit, old), _content(root, head, new)
    if before == after:
        return True
    if not (old.endswith(".py") and new.endswith(".py")):
        return False
    return _normalised(before, _relocate(root, commit, head)) == _normalised(after, None)


def changed_since(commit: str, depends: Sequence[str], root: Path = ROOT) -> list[str]:
    """The paths among ``depends`` (files or folders, as of ``commit``) whose code at HEAD
    differs from ``commit`` by more than where it sits and where its imports come from."""
    head = _git("rev-parse", "HEAD", root=root).stdout.strip()
    renames = _renames(root, commit, head)
    changed = []
    for path in depends:
        before = _files(root, commit, path)
        if not before:
            changed.append(f"{path} (not at {commit[:10]})")
            continue
        images = set()
        for old in before:
            new = renames.get(old, old)
            images.add(new)
            if not _files(root, head, new):
                changed.append(f"{old} (gone)")
            elif not _same(root, commit, head, old, new):
                changed.append(old if new == old else f"{old} (now {new})")
        if before != (path,):  # a folder: a file added under it is a change too
            changed += [f"{f} (new)" for f in _files(root, head, path) if f not in images]
    return list(dict.fromkeys(changed))


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
        changed = changed_since(commit, depends)
        if changed:
            stale.append((path, f"{commit[:10]} differs from HEAD in {', '.join(changed)}"))
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
    """The check itself on this repository: HEAD against anything is fresh; the first
    commit against ``privkit/`` is stale."""
    head = _git("rev-parse", "HEAD").stdout.strip()
    assert changed_since(head, ["algorithms", "privkit/plan.py"]) == []
    first = _git("rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    assert changed_since(first, ["privkit"])
    stamped = tmp_path / "r.md"
    stamped.write_text(f"- privkit-commit: {first}\n- privkit-depends: privkit algorithms\n")
    assert _stamp(stamped) == (first, ["privkit", "algorithms"])


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
    return tmp_path, _git("rev-parse", "HEAD", root=tmp_path).stdout.strip()


def _commit(root: Path, message: str) -> None:
    for args in (["init", "-q"] if not (root / ".git").exists() else [],
                 ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message]):
        if args:
            assert _git(*args, root=root).returncode == 0


def _move(root: Path, old: str, new: str, text: str | None = None) -> None:
    """``git mv old new``, then write ``text`` to ``new`` when given."""
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    assert _git("mv", old, new, root=root).returncode == 0
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
    assert changed_since(commit, depends, root) == []


def test_a_move_with_a_changed_constant_is_stale(tmp_path):
    """(b) The same move with ``STEP`` changed is a change of the moved file."""
    root, commit = _repo(tmp_path)
    moved = MODULE.replace("from .losses", "from .linear.losses").replace("0.5", "0.25")
    _move(root, "pkg/solver.py", "pkg/linear/solver.py", moved)
    _commit(root, "move and change")
    assert changed_since(commit, ["pkg/solver.py", "pkg/losses.py"], root) == [
        "pkg/solver.py (now pkg/linear/solver.py)"]


def test_a_changed_imported_name_is_stale(tmp_path):
    """(c) Importing another name (``clip`` -> ``clamp``) is a change, although only the
    import line differs."""
    root, commit = _repo(tmp_path)
    moved = MODULE.replace("import clip", "import clamp as clip")
    _move(root, "pkg/solver.py", "pkg/linear/solver.py", moved)
    _commit(root, "another name")
    assert changed_since(commit, ["pkg/solver.py"], root) == [
        "pkg/solver.py (now pkg/linear/solver.py)"]


def test_a_move_is_followed_across_commits(tmp_path):
    """A file moved in one commit and rewritten in another (not similar enough for git to
    pair the ends) is followed commit by commit: the rewrite makes it stale, the move
    alone would not have."""
    root, commit = _repo(tmp_path)
    _move(root, "pkg/losses.py", "pkg/linear/losses.py")
    _commit(root, "move")
    assert changed_since(commit, ["pkg/losses.py"], root) == []
    (root / "pkg/linear/losses.py").write_text("def hinge(x):\n    return max(0.0, 1.0 - x)\n")
    _commit(root, "rewrite")
    direct = _git("diff", "-M", "--name-status", commit, "HEAD", root=root).stdout
    assert not any(line.startswith("R") for line in direct.splitlines())
    assert changed_since(commit, ["pkg/losses.py"], root) == [
        "pkg/losses.py (now pkg/linear/losses.py)"]


def test_a_docstring_may_follow_the_move(tmp_path):
    """A docstring naming the moved module by its new dotted name and path is fresh; the
    same docstring with one more word is not."""
    root, commit = _repo(tmp_path)
    text = MODULE.replace('"""A solver."""', '"""A solver (``pkg.losses``, pkg/losses.py)."""')
    (root / "pkg/solver.py").write_text(text)
    _commit(root, "docstring")
    commit = _git("rev-parse", "HEAD", root=root).stdout.strip()
    moved = text.replace("pkg.losses", "pkg.linear.losses").replace(
        "pkg/losses.py", "pkg/linear/losses.py").replace("from .losses", "from .linear.losses"
    ).replace('"pkg/solver.py"', '"pkg/linear/solver.py"')
    _move(root, "pkg/solver.py", "pkg/linear/solver.py", moved)
    _move(root, "pkg/losses.py", "pkg/linear/losses.py")
    _commit(root, "move")
    assert changed_since(commit, ["pkg/solver.py"], root) == []
    (root / "pkg/linear/solver.py").write_text(moved.replace("A solver", "A fast solver"))
    _commit(root, "edit")
    assert changed_since(commit, ["pkg/solver.py"], root) == [
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
        assert _git("rm", "-q", "pkg/losses.py", root=root).returncode == 0
    else:
        (root / "pkg/data/b.txt").write_text("b\n")
    _commit(root, edit)
    assert changed_since(commit, ["pkg/solver.py", "pkg/kernel.pyx", "pkg/losses.py",
                                  "pkg/data"], root) == expected
