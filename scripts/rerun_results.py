"""Rerun every stale results file: ``python scripts/rerun_results.py [--jobs N] [--dry-run]
[--data DIR] [--only TEXT ...]``.

A results file is stale by the rule of ``scripts/results_freshness.py`` (the one the
freshness test applies; its ``stale_results``): it records ``privkit-commit`` and
``privkit-depends`` in its header, and the depended-on code has changed since that commit
(or the commit is ``+dirty``). Each stale file's header names the command that wrote it
(``command: ...``, ``- command: ...`` or ``Command: `...```); files that share a command
(the tables of one ``privkit reproduce`` folder) are rerun once, the longest recorded
first. Commands run from the
checkout's root through ``bash -c``, ``--jobs`` at a time, with ``.venv/bin`` first on
``PATH`` and ``PRIVKIT_DATA`` set to ``--data``; each is printed before it starts and
its exit code and time after it ends. ``--include TEXT`` adds the fresh stamped files
whose command contains TEXT (the rule's ``committed_results`` and ``stamp`` list
them). Exit code 0 when every command succeeded, 1
otherwise, 2 when a stale file names no command (listed, nothing is run for it).

Run it after merging, before committing results: the rerun files then record the
merged commit.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
FRESHNESS = ROOT / "scripts" / "results_freshness.py"
#: The recorded CPU time, else the wall time, of the run that wrote a file (``privkit
#: reproduce`` headers): on a loaded machine the CPU time is the better guide.
CPU = re.compile(r"CPU time \(.*?\): ([0-9.]+) s")
WALL = re.compile(r"wall time: ([0-9.]+) s")
#: The header line that names a results file's command, in the three styles in use.
COMMAND = re.compile(r"^[-#*\s]*command:\s*`?(?P<cmd>[^`\n]+?)`?\s*$",
                     re.IGNORECASE | re.MULTILINE)


def freshness_rule(path: Path = FRESHNESS) -> ModuleType:
    """The freshness rule (``scripts/results_freshness.py``; its ``stale_results()``)."""
    spec = importlib.util.spec_from_file_location("results_freshness", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"rerun_results: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def command_of(path: Path) -> str | None:
    """The command recorded in a results file's header (its first 4,000 characters)."""
    found = COMMAND.search(path.read_text(encoding="utf-8", errors="replace")[:4000])
    return found.group("cmd").strip() if found else None


def recorded_seconds(path: Path) -> float:
    """The CPU time the header records, else its wall time, else infinity."""
    head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    found = CPU.search(head) or WALL.search(head)
    return float(found.group(1)) if found else float("inf")


def plan(stale: Sequence[tuple[Path, str]]) -> tuple[dict[str, list[Path]], list[Path]]:
    """Stale files grouped by their command, longest recorded run first (unknown lengths
    first of all), so that ``--jobs`` workers finish together; and the files that name
    no command."""
    commands: dict[str, list[Path]] = {}
    orphans = []
    for path, _why in stale:
        cmd = command_of(path)
        if cmd is None:
            orphans.append(path)
        else:
            commands.setdefault(cmd, []).append(path)
    order = sorted(commands, key=lambda c: -max(recorded_seconds(p) for p in commands[c]))
    return {c: commands[c] for c in order}, orphans


def run_all(commands: Sequence[str], *, jobs: int, env: dict[str, str], cwd: Path,
            echo: Callable[[str], None] = print) -> dict[str, int]:
    """Run ``commands`` through ``bash -c``, ``jobs`` at a time; their exit codes."""

    def one(cmd: str) -> tuple[str, int]:
        echo(f"run: {cmd}")
        start = time.perf_counter()
        done = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        tail = done.stderr.strip().splitlines()[-3:] if done.returncode else []
        echo(f"exit {done.returncode} after {time.perf_counter() - start:.0f} s: {cmd}"
             + "".join(f"\n    {line}" for line in tail))
        return cmd, done.returncode

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        return dict(pool.map(one, commands))


def main(argv: Sequence[str] | None = None, *, root: Path = ROOT,
         rule: Callable[[], list[tuple[Path, str]]] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rerun_results.py", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="commands at a time (2)")
    parser.add_argument("--dry-run", action="store_true", help="list, run nothing")
    parser.add_argument("--data", default=os.environ.get("PRIVKIT_DATA", "/work/shared/data"),
                        help="$PRIVKIT_DATA for the commands (default /work/shared/data)")
    parser.add_argument("--only", nargs="+", default=None, metavar="TEXT",
                        help="rerun only the commands containing one of these strings")
    parser.add_argument("--include", nargs="+", default=None, metavar="TEXT",
                        help="also rerun the fresh stamped files whose command contains "
                             "one of these strings (e.g. after a merge, to have every "
                             "reproduction written by the merged code)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be an integer >= 1, got {args.jobs}")
    module = freshness_rule() if rule is None else None
    stale = module.stale_results() if module is not None else rule()  # type: ignore[misc]
    if args.include and module is not None:
        listed = {path for path, _ in stale}
        stale += [(path, "fresh, included") for path in module.committed_results()
                  if path not in listed and module.stamp(path) is not None
                  and any(t in (command_of(path) or "") for t in args.include)]
    commands, orphans = plan(stale)
    if args.only:
        commands = {c: p for c, p in commands.items() if any(o in c for o in args.only)}
    for path in orphans:
        print(f"no command in the header of {path}: rerun it by hand", file=sys.stderr)
    for cmd, paths in commands.items():
        names = ", ".join(str(p.relative_to(root)) if p.is_relative_to(root) else str(p)
                          for p in paths)
        print(f"stale: {names}\n  <- {cmd}")
    if args.dry_run or not commands:
        return 2 if orphans else 0
    env = dict(os.environ, PRIVKIT_DATA=args.data,
               PATH=f"{root / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    codes = run_all(list(commands), jobs=args.jobs, env=env, cwd=root)
    failed = [c for c, code in codes.items() if code != 0]
    print(f"{len(codes) - len(failed)} of {len(codes)} commands succeeded"
          + "".join(f"\nfailed: {c}" for c in failed))
    return 1 if failed else (2 if orphans else 0)


if __name__ == "__main__":
    sys.exit(main())
