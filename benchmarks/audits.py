"""Audit speed, scaling and tightness.

Run: .venv/bin/python benchmarks/audits.py

1. Throughput of a vectorised audit of a scalar mechanism (draws per second, both sides,
   selection split included); target >= 5 million per second.
2. A slow, non-batched mechanism: wall time with 1 and 2 processes
   (``ProcessPoolExecutor``), and a dask.distributed LocalCluster run, all from the same
   seed (same verdict and bound).
3. Tightness: Laplace at epsilon 1, 95%, lower bound for 10^4, 10^5, 10^6 draws per side,
   next to what an oracle knowing the best threshold certifies (0.94, 0.98, 0.994).
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from privkit import Neighbouring
from privkit.audits import NeighbouringPair, audit
from privkit.audits.registry import CASES


def slow_laplace(value: float, rng: np.random.Generator) -> float:
    """One draw at a time with some Python work (about 20 us), as an arbitrary mechanism."""
    total = 0.0
    for i in range(200):
        total += i * 1e-12
    return value + float(rng.laplace(0.0, 1.0)) + total * 0.0


def main() -> None:
    case = CASES["laplace"](1.0)
    audit(case.system, case.pair, epsilon=1.0, trials=100_000, rng=0)  # warm up
    start = time.perf_counter()
    result = audit(case.system, case.pair, epsilon=1.0, trials=2_000_000, rng=0)
    seconds = time.perf_counter() - start
    draws = 2 * 2_000_000 * 1.2
    print(f"vectorised Laplace audit: {draws / seconds / 1e6:.1f} million draws/s "
          f"({seconds:.2f} s for 2 x 2.4M draws), bound {result.lower_bound:.4f}")

    pair = NeighbouringPair(first=0.0, second=1.0, relation=Neighbouring.ADD_REMOVE)
    kwargs = dict(epsilon=1.0, trials=100_000, batched=False, rng=9)
    start = time.perf_counter()
    serial = audit(slow_laplace, pair, **kwargs)
    one = time.perf_counter() - start
    with ProcessPoolExecutor(max_workers=2) as pool:
        start = time.perf_counter()
        pooled = audit(slow_laplace, pair, executor=pool, **kwargs)
        two = time.perf_counter() - start
    print(f"slow mechanism, 2 x 120k single draws: 1 process {one:.2f} s, 2 processes "
          f"{two:.2f} s (speed-up {one / two:.2f}); same result: {pooled == serial}")
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        start = time.perf_counter()
        on_dask = audit(slow_laplace, pair, executor=client, **kwargs)
        dask_seconds = time.perf_counter() - start
    print(f"dask LocalCluster (2 workers): {dask_seconds:.2f} s, bound "
          f"{on_dask.lower_bound:.4f}, verdict {on_dask.verdict}; same as local: "
          f"{on_dask == serial}")

    print("Laplace eps = 1, 95%: draws/side, lower bound, oracle")
    for n, oracle in ((10_000, 0.94), (100_000, 0.98), (1_000_000, 0.994)):
        bound = audit(case.system, case.pair, epsilon=1.0, trials=n, rng=3).lower_bound
        print(f"  {n:>9,}  {bound:.4f}  {oracle}")


if __name__ == "__main__":
    main()
