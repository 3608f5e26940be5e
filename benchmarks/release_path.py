"""Time the floating-point-safe release path (``mechanisms/_grid.py``) with its exact-tail
noise (``mechanisms/_noise.py``) against plain numpy, in one process, on one core.

Run: OMP_NUM_THREADS=1 .venv/bin/python -P benchmarks/release_path.py
Writes benchmarks/results/release_path.txt.

Targets (issue 10): the safe release of 10^6 values within 3x numpy's plain draw of the
same law (``rng.laplace`` / ``rng.normal``); a scalar ``release_on_grid`` call (everything it
does for a 0-d value: grid lookup, range check, exact-tail noise, rounding) at most 5
microseconds. Vector figures are medians of 7 repetitions after a warm-up; the scalar
figures are the median and the minimum over 7 repetitions of a 20,000-call Python loop,
per call, and the minimum as a ratio to numpy's own scalar ``rng.laplace``. The loop
calls ``release_on_grid`` directly, so it excludes the mechanism's own validation and
ledger record (the lead's part of ``release``); a last line times ``Laplace.release`` as it
is on this checkout, for reference.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from privkit.mechanisms import _noise
from privkit.mechanisms._grid import release_on_grid

N = 1_000_000
REPEATS = 7
LOOP = 20_000
RESULTS = Path(__file__).resolve().parent / "results" / "release_path.txt"


def seconds(run: Callable[[], object], repeats: int = REPEATS) -> list[float]:
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def median_seconds(run: Callable[[], object], repeats: int = REPEATS) -> float:
    return statistics.median(seconds(run, repeats))


def main() -> None:
    rng = np.random.default_rng(0)
    zeros = np.zeros(N)
    b = 1.0  # Laplace at epsilon 1, sensitivity 1; Gaussian sigma 1, sensitivity 1

    def safe(sampler: _noise.StandardNoise, penalty: Callable[[int], float]
             ) -> Callable[[], object]:
        return lambda: release_on_grid(
            zeros, noise_scale=b, sensitivity=1.0, dimension_penalty=penalty,
            standard_noise=sampler, rng=rng, shape=(), owner="bench")

    lines = [
        (f"release path benchmark: numpy {np.__version__}, "
         f"Python {platform.python_version()}, {platform.machine()}, "
         f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"),
        "",
        f"{'10^6 values':<44}{'numpy ms':>10}{'safe ms':>10}{'ratio':>8}",
    ]
    vector_rows = [
        ("Laplace (rng.laplace vs release_on_grid)", lambda: rng.laplace(0.0, b, N),
         safe(_noise.standard_laplace, float)),
        ("Gaussian (rng.normal vs release_on_grid)", lambda: rng.normal(0.0, b, N),
         safe(_noise.standard_normal, math.sqrt)),
        ("exact-tail sampler only: standard_laplace", lambda: rng.laplace(0.0, 1.0, N),
         lambda: _noise.standard_laplace(rng, (N,))),
        ("exact-tail sampler only: standard_normal", lambda: rng.standard_normal(N),
         lambda: _noise.standard_normal(rng, (N,))),
    ]
    for name, plain, ours in vector_rows:
        t_plain, t_ours = median_seconds(plain), median_seconds(ours)
        lines.append(f"{name:<44}{t_plain * 1e3:>10.2f}{t_ours * 1e3:>10.2f}"
                     f"{t_ours / t_plain:>8.2f}")

    lines += ["", (f"{'scalar call in a Python loop':<44}{'median us':>10}{'min us':>10}"
                  f"{'min/numpy':>10}")]

    def loop(call: Callable[[], object]) -> Callable[[], object]:
        def run() -> None:
            for _ in range(LOOP):
                call()
        return run

    x = np.asarray(3.0)
    scalar_rows: list[tuple[str, Callable[[], object]]] = [
        ("numpy rng.laplace(3.0, 1.0)", lambda: rng.laplace(3.0, 1.0)),
        ("numpy rng.normal(3.0, 1.0)", lambda: rng.normal(3.0, 1.0)),
        ("release_on_grid, Laplace, 0-d array", lambda: release_on_grid(
            x, noise_scale=b, sensitivity=1.0, dimension_penalty=float,
            standard_noise=_noise.standard_laplace, rng=rng, shape=(), owner="bench")),
        ("release_on_grid, Gaussian, 0-d array", lambda: release_on_grid(
            x, noise_scale=b, sensitivity=1.0, dimension_penalty=math.sqrt,
            standard_noise=_noise.standard_normal, rng=rng, shape=(), owner="bench")),
        ("release_on_grid, Laplace, Python float", lambda: release_on_grid(
            3.0, noise_scale=b, sensitivity=1.0, dimension_penalty=float,
            standard_noise=_noise.standard_laplace, rng=rng, shape=(), owner="bench")),
    ]
    from privkit.mechanisms import Gaussian, Laplace

    lap = Laplace.for_epsilon(1.0, sensitivity=1.0, relation="add_remove")
    gau = Gaussian.for_gdp(1.0, sensitivity=1.0, relation="add_remove")
    scalar_rows += [("Laplace.release(3.0, rng=generator)", lambda: lap.release(3.0, rng=rng)),
                    ("Gaussian.release(3.0, rng=generator)", lambda: gau.release(3.0, rng=rng))]
    numpy_min = math.inf
    for name, call in scalar_rows:
        times = [t / LOOP for t in seconds(loop(call))]
        if name.startswith("numpy rng.laplace"):
            numpy_min = min(times)
        lines.append(f"{name:<44}{statistics.median(times) * 1e6:>10.2f}"
                     f"{min(times) * 1e6:>10.2f}{min(times) / numpy_min:>10.2f}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    lines += ["", (f"load average during the run: {load:.1f} on {os.cpu_count()} cores "
                  "(shared machine: absolute times scale with it, ratios much less)")]

    text = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
