"""The SVDD dual solver against scipy's NNLS, in one process, on the Park 2022 data.

For each dataset of Park 2022 (J. Park, "Differentially private multi-class
classification using kernel supports and equilibrium points", SNU 2022), split 0 with
Table 7.1's nu and gamma and F = 400 random Fourier features, this times:

* ``privkit``: :func:`privkit.algorithms.svdd.svdd.svdd_centre` (working sets, the compiled
  warm-started Lawson-Hanson solver on the Gram matrix, the cap's active set);
* ``scipy, all rows``: the exact solve privkit 0.2's previous solver made, on all rows
  at once: ``scipy.optimize.nnls`` (Lawson and Hanson on ``[Phi^T; 1]``, least distance
  programming) inside the same active set on the cap, each pass from scratch. For sets
  of at most 448 rows this *is* the previous solver; above, it is the solve without
  working sets (skipped above 5,000 rows);
* ``scipy, support only``: one scipy solve on the optimum's free rows alone (the capped
  rows' shift added): a lower bound that no solver reaches without knowing the support.

The centres are compared (largest coordinate difference). Run:
``OMP_NUM_THREADS=1 .venv/bin/python -P benchmarks/svdd_solver.py [--data DIR]``; writes
``benchmarks/results/svdd_solver.md``.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from privkit.algorithms.kernels.random_features import RandomFourierFeatures
from privkit.algorithms.reproduce._cli import DATA_ENV
from privkit.algorithms.reproduce._report import code_version
from privkit.algorithms.svdd import park2022 as p
from privkit.algorithms.svdd.svdd import svdd_centre

RESULTS = Path(__file__).resolve().parent / "results"
#: The code the results depend on (tests/core/test_results_fresh.py checks the stamp).
DEPENDS = ("benchmarks/svdd_solver.py", "algorithms/svdd/svdd.py", "algorithms/svdd/_svdd_dual.py",
           "algorithms/_accelerators/_hull.pyx", "algorithms/kernels/random_features.py",
           "algorithms/_accelerators/_rff.pyx", "algorithms/svdd/park2022.py")


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def _hull(Q: np.ndarray) -> np.ndarray:
    """Simplex weights of the minimum-norm point of the rows' hull, by scipy's NNLS."""
    E = np.vstack([Q.T, np.ones(Q.shape[0])])
    target = np.zeros(E.shape[0])
    target[-1] = 1.0
    u = nnls(E, target, maxiter=20 * Q.shape[0] + 100)[0]
    return u / u.sum()


def _scipy_all_rows(Phi: np.ndarray, nu: float) -> np.ndarray:
    """The cap's active set around scipy's NNLS, every pass from scratch (the exact solve
    of privkit's previous solver), on all rows; returns the centre."""
    capped = np.zeros(Phi.shape[0], dtype=bool)
    for _ in range(50):
        mass = 1.0 - nu * capped.sum()
        beta = np.where(capped, nu, 0.0)
        rest = ~capped
        beta[rest] = mass * _hull(Phi[rest] + nu * Phi[capped].sum(axis=0) / mass)
        scores = Phi @ (Phi.T @ beta)
        over = beta > nu * (1.0 + 1e-12)
        free = (beta > 0) & ~capped
        level = scores[free].max() if free.any() else scores[rest].min()
        release = capped & (scores > level + 1e-12)
        if not over.any() and not release.any():
            return Phi.T @ beta
        capped = (capped | over) & ~release
    raise RuntimeError("the cap's active set did not settle")


def _scipy_on_support(Phi: np.ndarray, beta: np.ndarray, nu: float) -> np.ndarray:
    """The centre from scipy's NNLS on the optimum's free rows, the capped rows fixed."""
    capped = beta >= nu * (1.0 - 1e-12)
    free = (beta > 0) & ~capped
    mass = 1.0 - nu * capped.sum()
    lam = _hull(Phi[free] + nu * Phi[capped].sum(axis=0) / mass)
    return nu * Phi[capped].sum(axis=0) + mass * (Phi[free].T @ lam)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.environ.get(DATA_ENV, "/work/shared/data"))
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    lines = ["# The SVDD dual: privkit's solver against scipy's NNLS (same process)", "",
             "- command: OMP_NUM_THREADS=1 .venv/bin/python -P benchmarks/svdd_solver.py",
             f"- privkit-commit: {code_version(DEPENDS)}",
             f"- privkit-depends: {' '.join(DEPENDS)}",
             "- load average (1, 5, 15 min) at start: "
             + ", ".join(f"{x:.2f}" for x in os.getloadavg()), "",
             ("Split 0, Table 7.1's nu and gamma, F = 400, one thread, median of "
              f"{args.repeats} solves. See the docstring of `benchmarks/svdd_solver.py`."),
             "",
             ("| dataset | n | nu | free rows | privkit (ms) | scipy, all rows (ms) | "
              "speed-up | scipy, support only (ms) | max centre difference |"),
             "|---|---|---|---|---|---|---|---|---|"]
    for dataset in p.DATASETS:
        try:
            X, y = p.load_dataset(dataset, args.data, seed=0)
        except (FileNotFoundError, OSError):
            continue
        X_train = p.split(X, y, 0)[0]
        nu, gamma = p.TABLE_7_1[dataset]["proposed"][:2]
        Phi = RandomFourierFeatures(400, gamma, 0).fit(X_train).transform(X_train)
        solution = svdd_centre(Phi, nu)
        beta = solution.beta
        free = int(np.count_nonzero((beta > 0) & (beta < nu * (1 - 1e-12))))
        ours = _median_ms(functools.partial(svdd_centre, Phi, nu), args.repeats)
        oracle = _median_ms(functools.partial(_scipy_on_support, Phi, beta, nu), args.repeats)
        diff = float(np.abs(_scipy_on_support(Phi, beta, nu) - solution.centre).max())
        whole, ratio = "-", "-"
        if Phi.shape[0] <= 5000:
            ms = _median_ms(functools.partial(_scipy_all_rows, Phi, nu), max(3, args.repeats // 3))
            diff = max(diff, float(np.abs(_scipy_all_rows(Phi, nu) - solution.centre).max()))
            whole, ratio = f"{ms:.2f}", f"{ms / ours:.1f}x"
        lines.append(f"| {dataset} | {Phi.shape[0]} | {nu:g} | {free} | {ours:.2f} | {whole} | "
                     f"{ratio} | {oracle:.2f} | {diff:.1e} |")
        print(lines[-1], flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "svdd_solver.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
