"""When a results file is stale: a committed results file that records the commit of the code that
wrote it (``privkit-commit: SHA`` and ``privkit-depends: PATH ...`` in its first lines,
as :mod:`privkit.algorithms.reproduce._report` writes them) must name a commit whose
depended-on code is unchanged at HEAD. Files under ``benchmarks/results/reproduce/`` must
carry the stamp (the test's).

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


from __future__ import annotations

import ast
import functools
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
COMMIT = re.compile(r"privkit-commit: (\S+)")
DEPENDS = re.compile(r"privkit-depends: (.+)")


def git(*args: str, root: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=False, timeout=60)


def in_checkout() -> bool:
    return (shutil.which("git") is not None and (ROOT / ".git").exists()
            and git("rev-parse", "HEAD").returncode == 0)


def committed_results() -> list[Path]:
    listed = git("ls-files", "--", "benchmarks/results").stdout.split()
    return [ROOT / p for p in listed if p.endswith((".md", ".csv", ".txt"))]


def stamp(path: Path) -> tuple[str, list[str]] | None:
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
    steps = git("log", "--reverse", "--first-parent", "-m", "-M", "--diff-filter=R",
                 "--name-status", "-z", "--format=%x01", f"{commit}..{head}", root=root).stdout
    for old, new in _name_status_renames(steps):
        moved = [k for k, v in chain.items() if v == old]
        for k in moved:
            chain[k] = new
        if not moved:
            chain[old] = new
    direct = git("diff", "-M", "--name-status", "-z", commit, head, root=root).stdout
    return chain | dict(_name_status_renames(direct))


@functools.cache
def _files(root: Path, rev: str, path: str) -> tuple[str, ...]:
    """The files at ``path`` in ``rev`` (the path itself for a file; none if absent)."""
    return tuple(git("ls-tree", "-r", "--name-only", "-z", rev, "--", path,
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
    head = git("rev-parse", "HEAD", root=root).stdout.strip()
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


def stale_results() -> list[tuple[Path, str]]:
    """Every committed stamped results file written by code that has changed since, with
    why (the rule of ``tests/core/test_results_fresh.py`` and ``scripts/rerun_results.py``)."""
    stale = []
    for path in committed_results():
        found = stamp(path)
        if found is None:
            continue
        commit, depends = found
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
