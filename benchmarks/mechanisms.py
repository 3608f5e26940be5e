"""Time 10^6 draws of every mechanism next to plain numpy in the same process, and the
exponential mechanism over 10^4 candidates per draw.

Run: .venv/bin/python benchmarks/mechanisms.py

Targets (issue 3): the float path within 1.5x of numpy; the floating-point-safe path
within 5x of numpy; the exponential mechanism over 10^4 candidates under 0.3 ms a draw.
Numbers are medians of 5 repetitions after a warm-up.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from privkit import Neighbouring
from privkit.mechanisms import (
    AnalyzeGauss,
    DiscreteGaussian,
    DiscreteLaplace,
    Exponential,
    Gaussian,
    L2Laplace,
    Laplace,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
    SparseVector,
)

N = 1_000_000
REPEATS = 5
A = Neighbouring.ADD_REMOVE


def median_seconds(draw: Callable[[], object], repeats: int = REPEATS) -> float:
    draw()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        draw()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rng = np.random.default_rng(0)
    lap = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
    gau = Gaussian.for_approx_dp(epsilon=1.0, delta=1e-5, sensitivity=1.0, relation=A)
    l2 = L2Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
    dlap = DiscreteLaplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
    dgau = DiscreteGaussian.for_zcdp(0.5, sensitivity=1.0, relation=A)
    rr = RandomizedResponse.for_epsilon(1.0, n_categories=2)
    svt = SparseVector.for_epsilon(1.0, sensitivity=1.0, relation=A, max_positives=1)
    ag = AnalyzeGauss.for_approx_dp(epsilon=1.0, delta=1e-5, row_norm_bound=1.0, relation=A)
    p_geom = -np.expm1(-1.0 / dlap.noise_scale)
    bits = np.zeros(N, dtype=np.int64)
    d = 10  # 10x10 matrices: 55 upper-triangle entries, N/55 releases
    upper = np.triu_indices(d)

    def numpy_l2_laplace() -> object:
        z = rng.standard_normal((N // 10, 10))
        return z / np.linalg.norm(z, axis=1, keepdims=True) * rng.standard_gamma(10, (N // 10, 1))

    def numpy_rr() -> object:
        keep = rng.random(N) < rr.keep_probability
        return np.where(keep, bits, (bits + rng.integers(1, 2, N)) % 2)

    def numpy_symmetric() -> object:
        out = np.zeros((N // 55, d, d))
        noise = rng.normal(0, ag.noise_scale, (N // 55, 55))
        out[:, upper[0], upper[1]] = noise
        out[:, upper[1], upper[0]] = noise
        return out + np.eye(d)

    rows = [
        ("Laplace", lambda: rng.laplace(0, lap.noise_scale, N),
         lambda: lap.simulate(0.0, rng=rng, size=N), lambda: lap.release(0.0, rng=rng, size=N)),
        ("Gaussian", lambda: rng.normal(0, gau.noise_scale, N),
         lambda: gau.simulate(0.0, rng=rng, size=N), lambda: gau.release(0.0, rng=rng, size=N)),
        ("L2Laplace (d=10)", numpy_l2_laplace,
         lambda: l2.simulate(np.zeros(10), rng=rng, size=N // 10),
         lambda: l2.release(np.zeros(10), rng=rng, size=N // 10)),
        ("DiscreteLaplace", lambda: rng.geometric(p_geom, N) - rng.geometric(p_geom, N),
         lambda: dlap.simulate(0, rng=rng, size=N), lambda: dlap.release(0, rng=rng, size=N)),
        ("DiscreteGaussian", lambda: np.rint(rng.normal(0, dgau.noise_scale, N)),
         lambda: dgau.simulate(0, rng=rng, size=N), lambda: dgau.release(0, rng=rng, size=N)),
        ("RandomizedResponse", numpy_rr,
         lambda: rr.simulate(bits, rng=rng), lambda: rr.release(bits, rng=rng)),
        ("SparseVector (10 q)", lambda: rng.laplace(0, 1, (N // 10, 11)),
         lambda: svt.simulate(np.zeros(10), rng=rng, size=N // 10),
         lambda: svt.release(np.zeros(10), rng=rng, size=N // 10)),
        ("AnalyzeGauss (10x10)", numpy_symmetric,
         lambda: ag.simulate(np.eye(d), rng=rng, size=N // 55),
         lambda: ag.release(np.eye(d), rng=rng, size=N // 55)),
    ]
    print(f"10^6 draws (per row: N scalar values), median of {REPEATS}")
    print(f"{'mechanism':<22} {'numpy ms':>9} {'simulate':>9} {'x numpy':>8} "
          f"{'release':>9} {'x numpy':>8}")
    for name, numpy_draw, simulate, release in rows:
        base = median_seconds(numpy_draw)
        sim = median_seconds(simulate)
        rel = median_seconds(release)
        print(f"{name:<22} {base * 1e3:9.1f} {sim * 1e3:9.1f} {sim / base:8.2f} "
              f"{rel * 1e3:9.1f} {rel / base:8.2f}")

    k = 10_000
    utilities = rng.normal(size=k)
    print(f"\nselection over {k} candidates, ms per draw (single draws / batch of 1000)")
    numpy_softmax = median_seconds(
        lambda: rng.choice(k, p=np.exp(utilities - utilities.max())
                           / np.exp(utilities - utilities.max()).sum()), repeats=200)
    print(f"{'numpy choice(p=softmax)':<26} {numpy_softmax * 1e3:8.3f}")
    for mech in (Exponential.for_epsilon(1.0, sensitivity=1.0, relation=A),
                 PermuteAndFlip.for_epsilon(1.0, sensitivity=1.0, relation=A),
                 ReportNoisyMax.for_epsilon(1.0, sensitivity=1.0, relation=A)):
        one = median_seconds(lambda m=mech: m.release(utilities, rng=rng), repeats=200)
        batch = median_seconds(lambda m=mech: m.release(utilities, rng=rng, size=1000)) / 1000
        print(f"{type(mech).__name__:<26} {one * 1e3:8.3f} {batch * 1e3:8.3f}")


if __name__ == "__main__":
    main()
