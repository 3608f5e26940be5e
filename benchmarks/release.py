"""Time 10^6 draws of each mechanism's safe release and float simulation, next to plain
numpy drawing the same distribution in the same process.

Run: .venv/bin/python benchmarks/release.py

Prints the median of 5 repetitions and the ratio to numpy for each path.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from privkit import Neighbouring
from privkit.mechanisms import Gaussian, Laplace

N = 1_000_000
REPEATS = 5


def median_seconds(draw: Callable[[], object]) -> float:
    draw()  # warm up
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        draw()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rng = np.random.default_rng(0)
    lap = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    gau = Gaussian.for_approx_dp(1.0, 1e-5, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    rows = [
        ("Laplace", lambda: rng.laplace(0.0, lap.scale, N),
         lambda: lap.simulate(0.0, rng=rng, size=N), lambda: lap.release(0.0, rng=rng, size=N)),
        ("Gaussian", lambda: rng.normal(0.0, gau.noise_scale, N),
         lambda: gau.simulate(0.0, rng=rng, size=N), lambda: gau.release(0.0, rng=rng, size=N)),
    ]
    print(f"{'mechanism':<10} {'numpy ms':>9} {'simulate ms':>12} {'ratio':>6} "
          f"{'release ms':>11} {'ratio':>6}")
    for name, numpy_draw, simulate, release in rows:
        base = median_seconds(numpy_draw)
        sim = median_seconds(simulate)
        rel = median_seconds(release)
        print(f"{name:<10} {base * 1e3:9.1f} {sim * 1e3:12.1f} {sim / base:6.2f} "
              f"{rel * 1e3:11.1f} {rel / base:6.2f}")


if __name__ == "__main__":
    main()
