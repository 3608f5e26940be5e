"""Budget filter speed: one process before and after the filter became one state, and the
shared filter across processes.

Run: .venv/bin/python benchmarks/filter.py > benchmarks/results/filter.txt

1. ``BudgetFilter.spend`` per call in one process, for the filter of this checkout and the
   filter of ``--base`` (default 6081879, the commit before spending became exact across
   processes; its privkit/filter.py is read with ``git show`` and run in this same
   process, against this checkout's accountants), interleaved: each round makes a fresh
   filter of each version and times 1,000 spends on it, for 25 rounds; the table gives
   the median per-call time and the ratio after / before. Two blocks: a Claimed PureDP
   (the cheapest charge) and a Laplace mechanism. The target: ratio 1.00 within noise.
   Then the same after 20,000 earlier spends on the filter (a long-lived filter, e.g. one
   charged per DP-SGD step): 0.2.0 copied its whole history on every spend.
2. ``SharedBudgetFilter``: a spend through the handle in the owning process (a direct call
   on the filter), and from worker processes through the server: one worker alone
   (round-trip latency), and 4 workers at once (throughput of the one state); each worker
   times its own 1,000 spends.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

from privkit import BudgetFilter, Claimed, Neighbouring, PureDP
from privkit.mechanisms import Laplace

ROOT = Path(__file__).resolve().parents[1]
A = Neighbouring.ADD_REMOVE
CALLS = 1000
ROUNDS = 25
PREFILL = 20_000
BLOCKS = {
    "Claimed(PureDP)": Claimed(PureDP(epsilon=1e-6), relation=A),
    "Laplace": Laplace.for_epsilon(1e-6, sensitivity=1.0, relation=A),
}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.strip()


def base_filter_module(ref: str) -> ModuleType:
    """privkit/filter.py as it was at ``ref``, loaded as its own module."""
    source = git("show", f"{ref}:privkit/filter.py")
    spec = importlib.util.spec_from_loader("privkit_filter_base", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    exec(compile(source, f"{ref}:privkit/filter.py", "exec"), module.__dict__)
    return module


def per_call(make: Any, block: Any) -> float:
    """Microseconds per spend: 1,000 spends on a fresh filter."""
    budget = make()
    start = time.perf_counter_ns()
    for _ in range(CALLS):
        budget.spend(block)
    return (time.perf_counter_ns() - start) / CALLS / 1e3


def worker_spends(shared: Any, block: Any) -> float:
    """In a worker process: microseconds per spend over 1,000 spends through ``shared``."""
    shared.spend(block)  # connect first: the handshake is not a spend
    start = time.perf_counter_ns()
    for _ in range(CALLS):
        shared.spend(block)
    return (time.perf_counter_ns() - start) / CALLS / 1e3


def one_process(base: ModuleType) -> None:
    print(f"1. BudgetFilter.spend, one process ({CALLS} spends on a fresh filter, "
          f"median of {ROUNDS} interleaved rounds)\n")
    print(f"{'block':<18}{'before us':>11}{'after us':>10}{'after/before':>14}")
    for name, block in BLOCKS.items():
        before, after = [], []
        for _ in range(ROUNDS):
            before.append(per_call(lambda: base.BudgetFilter(epsilon=1e6), block))
            after.append(per_call(lambda: BudgetFilter(epsilon=1e6), block))
        b, a = statistics.median(before), statistics.median(after)
        print(f"{name:<18}{b:>11.2f}{a:>10.2f}{a / b:>14.3f}")
    block = BLOCKS["Claimed(PureDP)"]
    before, after = [], []
    for _ in range(5):
        before.append(per_call(lambda: prefilled(base.BudgetFilter(epsilon=1e6), block), block))
        after.append(per_call(lambda: prefilled(BudgetFilter(epsilon=1e6), block), block))
    b, a = statistics.median(before), statistics.median(after)
    print(f"{'after 20,000':<18}{b:>11.2f}{a:>10.2f}{a / b:>14.3f}")


def prefilled(budget: Any, block: Any) -> Any:
    for _ in range(PREFILL):
        budget.spend(block)
    return budget


def across_processes() -> None:
    block = BLOCKS["Claimed(PureDP)"]
    print(f"\n2. SharedBudgetFilter.spend ({CALLS} spends per process; median us per "
          "spend)\n")
    local = []
    for _ in range(ROUNDS):
        with BudgetFilter(epsilon=1e6).shared() as shared:
            local.append(per_call(lambda: shared, block))
    print(f"{'in the owning process (direct call)':<44}{statistics.median(local):>8.2f}")
    budget = BudgetFilter(epsilon=1e6)
    with budget.shared() as shared, ProcessPoolExecutor(max_workers=4) as pool:
        list(pool.map(abs, range(8)))  # start the workers before timing
        alone = statistics.median(pool.submit(worker_spends, shared, block).result()
                                  for _ in range(5))
        start = time.perf_counter()
        together = list(pool.map(worker_spends, [shared] * 4, [block] * 4))
        seconds = time.perf_counter() - start
    print(f"{'from one worker process (round trip)':<44}{alone:>8.2f}")
    print(f"{'from 4 worker processes at once, each':<44}{statistics.median(together):>8.2f}")
    print(f"{'  throughput of the one state (spends/s)':<44}{4 * (CALLS + 1) / seconds:>8.0f}")
    assert len(budget.history) == 5 * (CALLS + 1) + 4 * (CALLS + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="6081879", help="the commit to compare with")
    base_ref = parser.parse_args().base
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--",
                                                 "privkit", "algorithms") else ""
    print(f"budget filter benchmark: commit {git('rev-parse', '--short', 'HEAD')}{dirty}, "
          f"before = {git('rev-parse', '--short', base_ref)}; Python "
          f"{platform.python_version()}, {platform.machine()}\n")
    one_process(base_filter_module(base_ref))
    across_processes()
    load = os.getloadavg()[0]
    print(f"\nload average during the run: {load:.1f} on {os.cpu_count()} cores (shared "
          "machine: absolute times scale with it, ratios much less)")


if __name__ == "__main__":
    main()
