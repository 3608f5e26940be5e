"""Coverage of the auditor's bounds: does the lower bound exceed the truth more often
than 1 - confidence allows?

Mechanisms audited exactly at their true epsilon (or mu), over many seeds, each run a
full audit with fresh draws; a run "fails" when its lower bound exceeds the truth. With a
valid bound at 95% the failure count is at most Binomial(runs, 0.05) in distribution.

* epsilon bound, randomized response at epsilon 1 with the rejection set {1} fixed:
  the set attains the true epsilon exactly, so this is the sharpest test of the
  Clopper-Pearson split;
* epsilon bound, privkit's Laplace ``release`` at epsilon 1 through the full ``audit``
  (threshold chosen on the selection split, reachability test included);
* f-DP mu bound (Nasr et al. 2023), Gaussian mechanism with mu = 1 and a fixed
  threshold (every threshold attains the Gaussian trade-off curve, so this is sharp);
* f-DP mu bound through the full ``audit`` of privkit's Gaussian ``release``;
* the streaming measurement (the path of the 10^8-draw Gaussian rows of ``privkit
  audit``): chunks of 3,000 draws, so the selection split ends inside a chunk and the
  measured draws are counted chunk by chunk; an explicit small selection split (10% of
  the measured draws) and the set chosen for the measured size (tail thresholds,
  counts projected to it, :meth:`~privkit.audits.Distinguisher.for_trials`). Laplace
  ``release`` at epsilon 1 (truth 1), and privkit's Gaussian ``release`` with noise scale
  1 audited at delta 0.01, where the best set is a tail of probability ~0.03 that 20,000
  draws measure closely (truth: the exact epsilon of the pair at that delta,
  ``GDP(mu=1).epsilon_at(0.01)``, Dong, Roth, Su 2022, Corollary 2.13).

Run: ``OMP_NUM_THREADS=1 python benchmarks/audit_coverage.py [runs]`` (default 400);
writes ``benchmarks/results/audit_coverage.md``.

The procedures of issue 23 (``... audit_coverage.py [runs] procedures``, writes
``benchmarks/results/audit_coverage_procedures.md``), each run at a claim equal to the
truth, so a run fails when it reports more than the truth:

* the default distinguisher (level sets, threshold, floating-point cells, chosen on
  held-out selection draws) on the black-box objective perturbation of
  :mod:`privkit.audits.objective_variants` (exact epsilon 0.75), on privkit's Laplace
  release of a sum with *datasets* as the pair (the cells test included), and on
  randomized response;
* :func:`~privkit.audits.sequential_audit` (stages of 2,000, 8,000, 32,000 draws at
  confidence 1 - 0.05 / 2^k);
* :func:`~privkit.audits.search_pairs` over 4 random dataset pairs (records in [0, 1],
  the Laplace release of the clipped sum: every pair's truth is at most 1), screening
  2,000 draws each, then a fresh audit of 20,000;
* best of three distinguishers by a union bound (``distinguisher=[...]``).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from privkit import Neighbouring
from privkit.audits import Distinguisher, NeighbouringPair, Rule, Threshold, attacks, audit
from privkit.guarantees import GDP
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE
CONFIDENCE = 0.95
TRIALS = 20_000
#: The streaming rows: chunk size (so a run is 8 chunks a side) and selection draws.
STREAM_CHUNK, STREAM_SELECTION = 3_000, 2_000
#: The delta of the streaming Gaussian row, and the pair's exact epsilon there.
STREAM_DELTA = 0.01


class Fixed(Distinguisher):
    """A rejection set fixed in advance (so the bound's only randomness is the counts)."""

    name = "fixed"

    def __init__(self, contains, text, swapped):
        self.rule = Rule(contains=contains, description=text, swapped=swapped)

    def fit(self, first, second, *, delta, confidence):
        return self.rule


def rr_system(value, rng, size):
    p = math.e / (1 + math.e)
    return np.where(rng.random(size) < p, value, 1 - value)


LAPLACE = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
GAUSS = Gaussian.for_gdp(1.0, sensitivity=1.0, relation=A)  # noise scale 1: mu = 1


def laplace_system(value, rng, size):
    return LAPLACE.release(value, rng=rng, size=size)


def gauss_system(value, rng, size):
    return GAUSS.release(value, rng=rng, size=size)


def experiment(label, truth, runs, run):
    start = time.perf_counter()
    values = np.array([run(seed) for seed in range(runs)])
    over = int(np.sum(values > truth))
    limit = int(stats.binom.isf(0.05, runs, 1 - CONFIDENCE))
    return (f"| {label} | {truth:g} | {runs} | {over} ({over / runs:.1%}) | "
            f"{np.median(values):.4f} | {values.max():.4f} | {limit} | "
            f"{time.perf_counter() - start:.1f} s |")


def procedures(runs: int) -> list[str]:
    """The coverage rows of issue 23's procedures (see the module docstring)."""
    from privkit.audits import LevelSets, Threshold, random_pairs, search_pairs, sequential_audit
    from privkit.audits.objective_variants import objective_variant

    pair = NeighbouringPair(first=0.0, second=1.0, relation=A)
    datasets = NeighbouringPair(first=np.array([0.5, 0.25, 0.25]),
                                second=np.array([0.5, 0.25, 0.25, 1.0]), relation=A)
    objective = objective_variant("correct")
    rr_pair = NeighbouringPair(first=0, second=1, relation=A)
    return [
        experiment("default distinguisher, objective perturbation (correct), black box",
                   objective.true_epsilon, runs,
                   lambda s: audit(objective.system, objective.pair, epsilon=1.0,
                                   trials=TRIALS, rng=[700, s]).lower_bound),
        experiment("default distinguisher, Laplace release of a sum, datasets as the pair",
                   1.0, runs,
                   lambda s: audit(dataset_sum_system, datasets, epsilon=1.0,
                                   trials=TRIALS, rng=[800, s]).lower_bound),
        experiment("default distinguisher, randomized response", 1.0, runs,
                   lambda s: audit(rr_system, rr_pair, epsilon=1.0, trials=TRIALS,
                                   rng=[900, s]).lower_bound),
        experiment("sequential audit, Laplace release (2,000 x 4^k up to 32,000)", 1.0,
                   runs,
                   lambda s: sequential_audit(laplace_system, pair, epsilon=1.0,
                                              first_stage=2_000, max_trials=32_000,
                                              rng=[1000, s]).lower_bound),
        experiment("pair search, 4 random dataset pairs, screening 2,000, fresh 20,000",
                   1.0, runs,
                   lambda s: search_pairs(
                       dataset_sum_system,
                       random_pairs(0.0, 1.0, n_records=3, relation=A, count=4,
                                    rng=1100 + s),
                       epsilon=1.0, trials=TRIALS, screening_trials=2_000,
                       rng=[1200, s])[1].lower_bound),
        experiment("best of 3 by union bound (threshold, level sets, default), Laplace",
                   1.0, runs,
                   lambda s: audit(laplace_system, pair, epsilon=1.0, trials=TRIALS,
                                   distinguisher=[Threshold(), LevelSets(), *_default()],
                                   rng=[1300, s]).lower_bound),
    ]


def _default() -> list[Distinguisher]:
    from privkit.audits.distinguishers import Best
    from privkit.audits.floating import Reachability

    return [Best(Threshold(), Reachability())]


def dataset_sum_system(data, rng, size):
    return LAPLACE.release(float(np.clip(data, 0.0, 1.0).sum()), rng=rng, size=size)


def main() -> None:
    import os

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    if len(sys.argv) > 2 and sys.argv[2] == "procedures":
        write_procedures(runs)
        return
    load_before = os.getloadavg()
    pair = NeighbouringPair(first=0.0, second=1.0, relation=A)
    rr_pair = NeighbouringPair(first=0, second=1, relation=A)
    one = Fixed(lambda x: np.asarray(x) == 1, "x == 1", swapped=True)
    half = Fixed(lambda x: np.asarray(x) > 0.5, "x > 0.5", swapped=True)
    rows = [
        experiment("epsilon, randomized response, fixed set {1}", 1.0, runs,
                   lambda s: audit(rr_system, rr_pair, epsilon=1.0, trials=TRIALS,
                                   distinguisher=one, rng=[100, s]).lower_bound),
        experiment("epsilon, Laplace release, full audit", 1.0, runs,
                   lambda s: audit(laplace_system, pair, epsilon=1.0, trials=TRIALS,
                                   rng=[200, s]).lower_bound),
        experiment("mu (f-DP), Gaussian mu = 1, fixed threshold 0.5", 1.0, runs,
                   lambda s: audit(gauss_system, pair, epsilon=5.0, delta=1e-5,
                                   trials=TRIALS, distinguisher=half,
                                   rng=[300, s]).gdp_mu_lower),
        experiment("mu (f-DP), Gaussian mu = 1, full audit", 1.0, runs,
                   lambda s: audit(gauss_system, pair, epsilon=5.0, delta=1e-5,
                                   trials=TRIALS, rng=[400, s]).gdp_mu_lower),
    ]
    attacks._CHUNK = STREAM_CHUNK  # force the chunked path on these small runs
    gauss_truth = GDP(mu=1.0).epsilon_at(STREAM_DELTA)
    rows += [
        experiment("epsilon, Laplace release, streaming (3,000-draw chunks, 2,000 "
                   "selection draws, set chosen for the measured size)", 1.0, runs,
                   lambda s: audit(laplace_system, pair, epsilon=1.0, trials=TRIALS,
                                   selection_trials=STREAM_SELECTION,
                                   rng=[500, s]).lower_bound),
        experiment(f"epsilon, Gaussian release (mu = 1) at delta {STREAM_DELTA:g}, streaming "
                   "(as above)", gauss_truth, runs,
                   lambda s: audit(gauss_system, pair, epsilon=5.0, delta=STREAM_DELTA,
                                   trials=TRIALS, selection_trials=STREAM_SELECTION,
                                   rng=[600, s]).lower_bound),
    ]
    load = (f"Load average before: {', '.join(f'{x:.2f}' for x in load_before)}, after: "
            f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} (2 shared cores; times are "
            "wall clock).")
    text = "\n".join([
        "# Coverage of the audit bounds",
        "",
        (f"`OMP_NUM_THREADS=1 python benchmarks/audit_coverage.py {runs}`: {runs} seeded "
        f"audits per row, {TRIALS:,} measured draws per side each, confidence "
        f"{CONFIDENCE:.0%}. A run fails when its lower bound exceeds the truth; a valid "
        "bound fails in at most 5% of runs in expectation. 'allowed' is the count a "
        "Binomial(runs, 0.05) exceeds with probability 5%. The last two rows run the "
        f"streaming measurement ({STREAM_CHUNK:,}-draw chunks, {STREAM_SELECTION:,} "
        "selection draws per side instead of 20% of the measured ones, the set chosen for "
        "the measured size)."),
        "",
        ("| bound, mechanism | truth | runs | bound > truth | median bound | max bound "
        "| allowed | time |"),
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        load,
        "",
    ])
    out = Path(__file__).resolve().parent / "results" / "audit_coverage.md"
    out.write_text(text, encoding="utf-8")
    print(text)


def write_procedures(runs: int) -> None:
    import os
    import subprocess

    load_before = os.getloadavg()
    rows = procedures(runs)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    text = "\n".join([
        "# Coverage of the audit procedures (issue 23)",
        "",
        (f"`OMP_NUM_THREADS=1 python benchmarks/audit_coverage.py {runs} procedures` on "
         f"commit {commit}: {runs} seeded runs per row, {TRIALS:,} measured draws per side "
         f"(the sequential audit: up to 32,000), confidence {CONFIDENCE:.0%}, the claim "
         "equal to the truth. A run fails when its lower bound exceeds the truth; "
         "'allowed' is the count a Binomial(runs, 0.05) exceeds with probability 5%."),
        "",
        ("| procedure, mechanism | truth | runs | bound > truth | median bound | max bound "
         "| allowed | time |"),
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        (f"Load average before: {', '.join(f'{x:.2f}' for x in load_before)}, after: "
         f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} (2 shared cores; wall clock)."),
        "",
    ])
    out = Path(__file__).resolve().parent / "results" / "audit_coverage_procedures.md"
    out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
