"""What the default ``audit()`` finds with nothing tailored (issue 23).

1. The naive float Laplace ``sum(data) + rng.laplace(0, 10)`` claimed at epsilon 0.1,
   with *datasets* as the pair's inputs (three pairs, three seeds each, 10^5 draws per
   side), against privkit's own ``release`` of the same sum.
2. The sparse vector that also releases its first positive answer's noisy value: the
   default bound at 10^6 draws per side over the pair's exact epsilon.
3. Objective perturbation on one feature, black box on the released weight
   (:mod:`privkit.audits.objective_variants`): the two broken calibrations on 8 seeds
   at 2 x 10^5 draws per side, and the correct one at 10^6 over its exact epsilon.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/default_auditor.py``; writes
``benchmarks/results/default_auditor.md`` with the commit it ran on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from privkit import Neighbouring
from privkit.audits import NeighbouringPair, audit
from privkit.audits.objective_variants import objective_variant
from privkit.mechanisms import Laplace

A = Neighbouring.ADD_REMOVE
ROOT = Path(__file__).resolve().parent.parent


def naive(data, rng, size):
    return np.sum(data) + rng.laplace(0.0, 10.0, size)


SAFE = Laplace.for_epsilon(0.1, sensitivity=1.0, relation=A)


def safe(data, rng, size):
    return SAFE.release(float(np.sum(data)), rng=rng, size=size)


def floats() -> list[str]:
    rows = [("| pair (sums) | seed | naive: bound, verdict | safe release: bound, verdict | "
            "naive rule |"), "|---|---|---|---|---|"]
    for first in (np.array([0.5, 0.25, 0.25]), np.zeros(4), np.array([3.0, 4.0, 2.0])):
        pair = NeighbouringPair(first=first, second=np.append(first, 1.0), relation=A)
        for seed in range(3):
            bad = audit(naive, pair, epsilon=0.1, trials=100_000, rng=seed)
            good = audit(safe, pair, epsilon=0.1, trials=100_000, rng=seed)
            rows.append(f"| {first.sum():g} vs {first.sum() + 1:g} | {seed} | "
                        f"{bad.lower_bound:.3f}, {bad.verdict} | {good.lower_bound:.3f}, "
                        f"{good.verdict} | {bad.rule[:60]} |")
    return rows


def sparse_vector() -> list[str]:
    sys.path.insert(0, str(ROOT / "tests" / "audits"))
    from test_hardening import _svt_value_true_epsilon, _svt_with_value

    worst, svt, scale, system = _svt_with_value()
    true = _svt_value_true_epsilon(svt, scale, len(worst.first) - 1)
    pair = NeighbouringPair(first=worst.first, second=worst.second, relation=A)
    rows = ["| seed | bound | exact epsilon | share | rule |", "|---|---|---|---|---|"]
    for seed in (12, 1, 2):
        r = audit(system, pair, epsilon=1.0, trials=1_000_000, rng=seed)
        rows.append(f"| {seed} | {r.lower_bound:.3f} | {true:.3f} | "
                    f"{r.lower_bound / true:.2f} | {r.rule[:60]} |")
    return rows


def objective() -> list[str]:
    rows = ["| variant | exact epsilon | trials | seeds flagged | bounds (min-max) |",
            "|---|---|---|---|---|"]
    for variant, trials, seeds in (("adjustment", 200_000, 8), ("curvature", 200_000, 8),
                                   ("correct", 1_000_000, 3)):
        case = objective_variant(variant)
        results = [audit(case.system, case.pair, epsilon=case.claim, trials=trials, rng=s)
                   for s in range(seeds)]
        flagged = sum(r.verdict == "violation" for r in results)
        bounds = [r.lower_bound for r in results]
        rows.append(f"| {variant} | {case.true_epsilon:.3f} | {trials:,} | {flagged} of "
                    f"{seeds} | {min(bounds):.3f}-{max(bounds):.3f} "
                    f"({min(bounds) / case.true_epsilon:.2f}-"
                    f"{max(bounds) / case.true_epsilon:.2f} of exact) |")
    return rows


def main() -> None:
    start, load = time.perf_counter(), os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False, cwd=ROOT).stdout.strip()
    text = "\n".join([
        "# What the default audit() finds (issue 23)", "",
        (f"`OMP_NUM_THREADS=1 python benchmarks/default_auditor.py` on commit {commit}; "
        "claims as stated, confidence 95%, every audit with the default distinguisher."), "",
        "## Naive float Laplace (claim 0.1), datasets as the pair, 10^5 draws per side", "",
        *floats(), "",
        "## Sparse vector releasing its noisy value, 10^6 draws per side", "",
        *sparse_vector(), "",
        "## Objective perturbation on one feature, black box on w (claim 1)", "",
        *objective(), "",
        (f"Wall clock {time.perf_counter() - start:.0f} s; load average before "
        f"{', '.join(f'{x:.2f}' for x in load)}, after "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} (2 shared cores)."), "",
    ])
    out = ROOT / "benchmarks" / "results" / "default_auditor.md"
    out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
