"""Does private tuning pay? PrivateGridSearch over a pipeline against the untuned default
at the same total epsilon, on Adult (issue 27).

The pipeline is what mixed-column data need: a ``ColumnTransformer`` of privkit's
public-bound transformers (each numeric column from its census range onto [0, 1], each
categorical column one-hot over its public levels), then a private classifier whose row
bound is the public ``sqrt(6 + 8)`` (six numeric features in [0, 1], eight indicators).
The untuned default is that pipeline with the classifier's defaults at the whole epsilon;
the search tunes the classifier's regularisation, intercept scaling and row bound at the
same total epsilon (Papernot-Steinke selection, its cost included). Its public constants
are chosen without Adult: by sweeps on Statlog Shuttle, run first (``choose``, the
constants' comments). 5 seeds per epsilon; test accuracy on Adult's test file. The header
records the commit and the machine's load.

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python -P benchmarks/tuning.py``
(``--data`` the folder with ``adult-*.csv.gz`` and ``shuttle-*.csv.gz``; ``--seeds``).
Writes ``benchmarks/results/tuning.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings
from pathlib import Path

import numpy as np

from privkit.algorithms.reproduce._report import code_version

RESULTS = Path(__file__).resolve().parent / "results"
EPSILONS = (0.25, 0.5, 1.0, 4.0)
#: diffprivlib's LogisticRegression at its best C on Adult at epsilon 4 (issue 27; not
#: rerun here: diffprivlib 0.6.6 does not import with scikit-learn 1.9).
DIFFPRIVLIB_BEST = 0.836
#: The code these results depend on (tests/core/test_results_fresh.py checks the stamp).
DEPENDS = ("benchmarks/tuning.py", "algorithms/tuning/selection.py",
           "algorithms/tuning/_repeat_select.py", "algorithms/linear/erm.py",
           "algorithms/linear/_private_linear.py", "algorithms/linear/_linear.py",
           "algorithms/linear/_losses.py", "algorithms/linear/_solvers.py",
           "algorithms/preprocessing.py", "algorithms/datasets.py")


def adult(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Adult's raw columns (rows with a missing category dropped) and labels."""
    from privkit.algorithms.datasets import ADULT_COLUMNS, ADULT_LEVELS, load_csv

    X, y = load_csv(folder / "adult-train.csv.gz")
    X_test, y_test = load_csv(folder / "adult-test.csv.gz")
    categorical = [ADULT_COLUMNS.index(c) for c in ADULT_LEVELS]
    keep, keep_test = (~np.any(A[:, categorical] < 0, axis=1) for A in (X, X_test))
    return X[keep], y[keep], X_test[keep_test], y_test[keep_test]


def pipeline(**classifier: object) -> object:
    """Public-bound column preprocessing, then objective perturbation."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    from privkit.algorithms import ObjectivePerturbationClassifier
    from privkit.algorithms.datasets import ADULT_COLUMNS, ADULT_LEVELS, ADULT_NUMERIC_BOUNDS
    from privkit.algorithms.preprocessing import PublicOneHotEncoder, PublicRangeScaler

    bounds = np.array(list(ADULT_NUMERIC_BOUNDS.values()))
    columns = ColumnTransformer([
        ("numeric", PublicRangeScaler(bounds[:, 0], bounds[:, 1]),
         [ADULT_COLUMNS.index(c) for c in ADULT_NUMERIC_BOUNDS]),
        ("categorical", PublicOneHotEncoder(list(ADULT_LEVELS.values())),
         [ADULT_COLUMNS.index(c) for c in ADULT_LEVELS])])
    params = {"classes": [0, 1], "row_norm_bound": math.sqrt(14.0), **classifier}
    return Pipeline([("columns", columns), ("clf", ObjectivePerturbationClassifier(**params))])


#: The sweeps that choose the search's public constants run on Statlog Shuttle, never on
#: Adult: 43,500 training rows (Adult has 30,162), 9 numeric features scaled by their
#: ranges onto [0, 1], class 1 ("Rad Flow", 78%) against the rest (Adult: 75% / 25%).
#: Its test file scores the sweeps. Every candidate value below was written before any
#: run; the values kept are whatever the sweeps pick (``choose``), so no constant of the
#: Adult run was looked up on Adult.
#: The row bound is not swept: it is the schema's largest row norm (sqrt(9) on Shuttle,
#: sqrt(6 + 8) on Adult), a rule fixed in advance. (A first version swept it as a share of
#: that norm; the 0.6 Shuttle picked clips every Adult row, whose eight indicators alone
#: have norm sqrt(8): a share does not transfer between schemas. Its table is kept in
#: tuning.md.)
#: Stage 1, single settings at the budget a candidate trains at: Lambda = c / (n epsilon)
#: (objective perturbation's noise in the minimiser scales as 1 / (n epsilon Lambda):
#: Chaudhuri, Monteleoni, Sarwate 2011, Theorem 9) and the intercept scaling; Huber loss,
#: the default's. Candidates train at epsilon / 2 (eta = 0's split).
SWEEP_C = (0.75, 1.5, 3.0, 6.0, 12.0, 24.0, 48.0)
SWEEP_INTERCEPT = (0.25, 0.5, 1.0)
#: The grid: the best (c*, intercept scaling) of stage 1 (mean Shuttle test accuracy over
#: the four budgets and the seeds), with c on the ladder c* / 4, c*, 4 c*: the best c of
#: one dataset is only a centre for another (it depends on the data's signal), so the
#: private selection picks along the ladder.
LADDER = (0.25, 1.0, 4.0)
#: Stage 2, the selection's constants, by the tuned accuracy of the whole search on
#: Shuttle (the stage-1 grid): shape eta, E[K], score share. (Under pure DP the cost,
#: (2 + eta) epsilon_c, does not grow with E[K]: more runs cost time, not budget.)
SWEEP_SELECTION = tuple((eta, runs, share) for eta in (-0.75, -0.5, 0.0)
                        for runs in (1.5, 3.0, 6.0) for share in (0.05, 0.1))
SWEEP_SEEDS = 2


def shuttle(folder: Path) -> tuple[np.ndarray, ...]:
    """Statlog Shuttle, binary (class 1 against the rest), and the columns' ranges over
    both files (public here: Shuttle is the stand-in dataset, not the private one)."""
    from privkit.algorithms.datasets import load_csv

    X, y = load_csv(folder / "shuttle-train.csv.gz")
    X_test, y_test = load_csv(folder / "shuttle-test.csv.gz")
    both = np.vstack([X, X_test])
    return (X, (y != 1).astype(int), X_test, (y_test != 1).astype(int), both.min(0),
            both.max(0))


def shuttle_pipeline(lo: np.ndarray, hi: np.ndarray, **classifier: object) -> object:
    """Range scaling onto [0, 1] (public ranges), then objective perturbation."""
    from sklearn.pipeline import Pipeline

    from privkit.algorithms import ObjectivePerturbationClassifier
    from privkit.algorithms.preprocessing import PublicRangeScaler

    params = {"classes": [0, 1], "row_norm_bound": math.sqrt(len(lo)), **classifier}
    return Pipeline([("columns", PublicRangeScaler(lo, hi)),
                     ("clf", ObjectivePerturbationClassifier(**params))])


def settings_grid(settings: list[dict[str, float]], n: int, train: float, max_norm: float
                  ) -> list[dict[str, list[object]]]:
    """The search's grid on ``n`` rows (public: n under replace-one, the budget each
    candidate trains at, the schema's largest row norm)."""
    return [{"clf__loss": ["huber"],
             "clf__regularization": [s["c"] / (n * train)],
             "clf__intercept_scaling": [s["intercept_scaling"]],
             "clf__row_norm_bound": [max_norm]} for s in settings]


def search_for(estimator: object, epsilon: float, selection: tuple[float, float, float],
               seed: int, n: int, max_norm: float,
               settings: list[dict[str, float]]) -> object:
    """PrivateGridSearch over ``settings`` at the total ``epsilon``."""
    from privkit.algorithms import PrivateGridSearch

    eta, runs, share = selection
    search = PrivateGridSearch(estimator, {}, epsilon=epsilon, classes=[0, 1], shape=eta,
                               expected_runs=runs, score_share=share, random_state=seed)
    train = search.budget_split()["train"]
    return search.set_params(param_grid=settings_grid(settings, n, train, max_norm))


def choose(folder: Path) -> tuple[list[dict[str, float]], tuple[float, float, float],
                                  list[str]]:
    """The sweeps on Shuttle: (the grid's settings, the selection's constants, report
    lines)."""
    import itertools

    X, y, X_test, y_test, lo, hi = shuttle(folder)
    n, max_norm = len(y), math.sqrt(X.shape[1])
    scored = []
    for c, intercept in itertools.product(SWEEP_C, SWEEP_INTERCEPT):
        accuracy = [shuttle_pipeline(
            lo, hi, loss="huber", regularization=c / (n * epsilon / 2), epsilon=epsilon / 2,
            intercept_scaling=intercept, random_state=seed).fit(X, y).score(  # type: ignore[attr-defined]
                X_test, y_test)
            for epsilon in EPSILONS for seed in range(SWEEP_SEEDS)]
        scored.append((float(np.mean(accuracy)), {"c": c, "intercept_scaling": intercept}))
    scored.sort(key=lambda t: -t[0])
    best = scored[0][1]
    settings = [{"c": best["c"] * f, "intercept_scaling": best["intercept_scaling"]}
                for f in LADDER]
    print("stage 1", scored[:8], flush=True)
    tuned = []
    for selection in SWEEP_SELECTION:
        accuracy = [search_for(shuttle_pipeline(lo, hi), epsilon, selection, seed, n,
                               max_norm, settings).fit(X, y).score(  # type: ignore[attr-defined]
                                   X_test, y_test)
                    for epsilon in EPSILONS for seed in range(SWEEP_SEEDS)]
        tuned.append((float(np.mean(accuracy)), selection))
    tuned.sort(key=lambda t: -t[0])
    print("stage 2", tuned, flush=True)
    lines = [f"Stage 1 on Shuttle ({n} rows; {len(scored)} settings, each at epsilon / 2 "
             f"for epsilon in {list(EPSILONS)}, {SWEEP_SEEDS} seeds), the best six (c / "
             "intercept scaling: mean Shuttle test accuracy): "
             + "; ".join(f"{s['c']:g} / {s['intercept_scaling']:g}: {a:.4f}"
                         for a, s in scored[:6])
             + f". Grid: c in {[s['c'] for s in settings]}, intercept scaling "
             f"{best['intercept_scaling']:g}.",             "",
             f"Stage 2 on Shuttle (the search with that grid, {SWEEP_SEEDS} seeds per "
             "epsilon), eta / E[K] / score share: mean tuned accuracy: "
             + "; ".join(f"{e:g} / {k:g} / {r:g}: {a:.4f}" for a, (e, k, r) in tuned)
             + f". Kept: {tuned[0][1]}."]
    return settings, tuned[0][1], lines


#: Settings of the classifier at epsilon 4 for the comparison with diffprivlib at its
#: best C (each setting's mean over the seeds; the best is reported, as for diffprivlib).
AT_FOUR = [{"loss": "huber", "regularization": 1e-3, "intercept_scaling": 1.0},
           {"loss": "huber", "regularization": 1e-4, "intercept_scaling": 1.0},
           {"loss": "huber", "regularization": 1e-4, "intercept_scaling": 0.5},
           {"loss": "logistic", "regularization": 1e-4, "intercept_scaling": 0.5}]


#: The break-even analysis: settings an oracle may pick from (Lambda = c / (n epsilon_train),
#: Huber loss; the default's Lambda 1e-3 too), each trained at a fraction of epsilon. The
#: oracle picks the best on Adult's test split, so it bounds from above what any grid of
#: these settings could reach at that budget, whatever selected it.
ORACLE_C = (6.0, 12.0, 24.0)
ORACLE_INTERCEPT = (0.25, 0.5, 1.0)
FRACTIONS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def oracle_settings(n: int, train: float) -> list[dict[str, object]]:
    """The oracle's settings at the training budget ``train``."""
    grid: list[dict[str, object]] = [{"loss": "huber", "regularization": 1e-3,
                                      "intercept_scaling": 1.0}]
    grid += [{"loss": "huber", "regularization": c / (n * train), "intercept_scaling": i}
             for c in ORACLE_C for i in ORACLE_INTERCEPT]
    return grid


def break_even(data: tuple[np.ndarray, ...], defaults: dict[float, float], seeds: int,
               share: float) -> list[str]:
    """For each epsilon, the best setting's mean test accuracy (an oracle's pick) when it
    trains at a fraction f of epsilon, and the largest overhead 1 / f at which it still
    matches the default at the whole epsilon. A Papernot-Steinke selection costs ``(2 +
    eta) / (1 - share)`` candidates' training budgets and runs one candidate only with
    probability at least ``-eta`` (``P[K = 1] -> -eta`` as gamma -> 0 for eta < 0, and
    grows with gamma: Definition 1), so the overhead an oracle grid allows bounds how
    often such a search can select anything without losing to the default."""
    X, y, X_test, y_test = data
    n = len(y)
    lines = ["| epsilon | default | " + " | ".join(f"oracle at {f:g} epsilon"
                                                     for f in FRACTIONS)
             + " | break-even overhead | eta it allows | P[K = 1] at least |",
             "|---|---|" + "---|" * len(FRACTIONS) + "---|---|---|"]
    for epsilon in EPSILONS:
        best, allowed = [], 1.0
        for f in FRACTIONS:
            train = f * epsilon
            means = [float(np.mean([pipeline(epsilon=train, random_state=seed, **setting)
                                    .fit(X, y).score(X_test, y_test)  # type: ignore[attr-defined]
                                    for seed in range(seeds)]))
                     for setting in oracle_settings(n, train)]
            best.append(max(means))
            if max(means) >= defaults[epsilon]:
                allowed = max(allowed, 1.0 / f)
            print("break-even", epsilon, f, max(means), flush=True)
        eta = allowed * (1.0 - share) - 2.0
        at_least = ">= " if allowed == 1.0 / FRACTIONS[0] else ""
        lines.append(f"| {epsilon:g} | {defaults[epsilon]:.4f} | "
                     + " | ".join(f"{b:.4f}" for b in best) + f" | {at_least}{allowed:.3g} | "
                     + (f"{at_least}{eta:.2f} | {-eta:.2f} |" if -1.0 < eta < 0.0 else
                        f"{at_least}{eta:.2f} | - |" if eta >= 0.0 else "none | 1 |"))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="/work/shared/data", type=Path)
    parser.add_argument("--seeds", default=5, type=int)
    args = parser.parse_args()
    from privkit.errors import PrivacyLeakWarning

    for name in ("adult-train.csv.gz", "shuttle-train.csv.gz"):
        if not (args.data / name).is_file():
            raise SystemExit(f"{args.data} has no {name}")
    load = os.getloadavg()
    started = time.time()
    settings, selection, sweep_lines = choose(args.data)  # Shuttle only
    X, y, X_test, y_test = adult(args.data)  # Adult is read after the constants are fixed
    n, max_norm = len(y), math.sqrt(14.0)
    eta, runs, share = selection
    lines = ["# Private tuning on Adult: PrivateGridSearch over a pipeline vs the default",
             "", f"privkit-commit: {code_version(DEPENDS)}", "",
             f"privkit-depends: {' '.join(DEPENDS)}", "",
             (f"Load average at start {load[0]:.2f}, {load[1]:.2f}, "
              f"{load[2]:.2f} ({os.cpu_count()} cores, shared)."),
             (f"Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python -P "
              f"benchmarks/tuning.py --seeds {args.seeds}`"),
             "",
             (f"Adult: {len(y)} training rows, {len(y_test)} test rows. Pipeline: a "
              "ColumnTransformer of PublicRangeScaler (census ranges) and "
              "PublicOneHotEncoder (public levels), then ObjectivePerturbationClassifier "
              "(classes=[0, 1], row_norm_bound sqrt(14), the largest norm the schema "
              "allows). Default: the classifier's defaults (Huber loss, Lambda 1e-3, "
              "intercept_scaling 1, row bound sqrt(14)) at the whole epsilon. Search: the "
              f"{len(settings)} settings the Shuttle sweeps chose (below), Lambda = "
              "c / (n epsilon_train) where epsilon_train is what each candidate trains at "
              "(`budget_split()`), the row bound sqrt(14) (the schema's, by rule); selection "
              "constants "
              f"from the same sweeps: eta = {eta:g}, {runs:g} runs expected, score_share "
              f"{share:g}; at the same total epsilon: the selection is (2 + eta) "
              "epsilon_c-DP (Papernot, Steinke 2022, Theorem 2, orders to infinity), pure "
              "DP, its guarantee_ checked. Test accuracy, mean ± std over "
              f"{args.seeds} seeds."), "",
             "| epsilon | default | PrivateGridSearch | tuned - default | settings chosen |",
             "|---|---|---|---|---|"]
    losses, defaults = [], {}
    for epsilon in EPSILONS:
        default, tuned, chosen = [], [], []
        for seed in range(args.seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("error", PrivacyLeakWarning)
                base = pipeline(epsilon=epsilon, random_state=seed).fit(X, y)
                search = search_for(pipeline(), epsilon, selection, seed, n, max_norm,
                                    settings).fit(X, y)  # type: ignore[attr-defined]
            assert search.guarantee_.epsilon_at(0.0) <= epsilon * (1 + 1e-12)
            default.append(base.score(X_test, y_test))
            tuned.append(search.score(X_test, y_test))
            p = search.best_params_
            chosen.append(f"{p['clf__regularization']:.2g}/{p['clf__intercept_scaling']:g}/"
                          f"{p['clf__row_norm_bound']:.2g}")
            print(epsilon, seed, default[-1], tuned[-1], chosen[-1], flush=True)
        defaults[epsilon] = float(np.mean(default))
        if np.mean(tuned) < np.mean(default):
            losses.append(f"{epsilon:g} ({np.mean(tuned) - np.mean(default):+.3f})")
        lines.append(f"| {epsilon:g} | {np.mean(default):.4f} ± {np.std(default):.4f} | "
                     f"{np.mean(tuned):.4f} ± {np.std(tuned):.4f} | "
                     f"{np.mean(tuned) - np.mean(default):+.4f} | {', '.join(chosen)} |")
    lines += ["", "Settings chosen: Lambda / intercept_scaling / row bound.", ""]
    if losses:
        lines += [("**Honest tuning loses to the untuned default at epsilon "
                   + ", ".join(losses) + ".** Why: (1) every candidate trains at about "
                   "epsilon / (2 + eta) (`budget_split()`), so a setting must beat the "
                   "default at the whole budget while trained at a fraction of it; (2) the "
                   "regularisation that wins depends on the data's signal and does not "
                   "transfer: Shuttle (nearly separable) prefers c* = "
                   f"{settings[1]['c']:g}, where Adult's best is c 6 to 24 (the oracle "
                   "below); (3) at small epsilon the noisy scores barely tell the rungs "
                   "apart, so the selection often keeps a poor one (the settings chosen "
                   "above)."), ""]
    else:
        lines += ["Tuned >= default at every epsilon.", ""]
    lines += ["## Could any grid pay? The break-even overhead", "",
              ("The untuned default's fixed Lambda 1e-3 is, on Adult's n, c = Lambda n "
               "epsilon: 7.5, 15, 30 and 120 at epsilon 0.25, 0.5, 1 and 4. The table "
               "trains each of the oracle's settings (the default's, and Lambda = c / (n "
               f"epsilon_train) for c in {list(ORACLE_C)}, intercept scaling in "
               f"{list(ORACLE_INTERCEPT)}) at a fraction of epsilon, {args.seeds} seeds, "
               "and reports the best mean test accuracy: the oracle picks on the test "
               "split, so no grid of these settings does better at that budget, however "
               "it is chosen and selected. The break-even overhead is the largest 1 / f "
               "(f in the table) at which the oracle still matches the default at the "
               "whole epsilon. A Papernot-Steinke search with score share "
               f"{share:g} spends (2 + eta) / (1 - {share:g}) candidates' training budgets, "
               "so it can match the default only with eta <= overhead (1 - share) - 2, and "
               "then it runs a single candidate, a setting drawn at random with no "
               "selection at all, with probability at least -eta."), "",
              *break_even((X, y, X_test, y_test), defaults, args.seeds, share), "",
              ("Where the break-even overhead is near 1 (the default is already at "
               "Adult's optimum), a search can only tie the default by rarely searching: "
               "no private selection that runs several candidates in most runs can beat "
               "it there, even with a grid chosen on Adult's test split. Meeting "
               "\"tuned >= default\" at such an epsilon would take a grid fitted to Adult, "
               "which is an unaccounted release of Adult."), ""]
    lines += [
              "## How the search's public parameters were chosen", "",
              ("Without Adult. The row bound is the schema's largest row norm (a rule "
               "fixed in advance); every other constant of the search (the centre c* of "
               "the ladder c* / 4, c*, 4 c* for Lambda = c / (n epsilon_train), the "
               "intercept scaling, eta, E[K], the score share) is picked by two "
               "sweeps on a different dataset, Statlog Shuttle (binary: class 1 against "
               "the rest), from candidate values written in `benchmarks/tuning.py` "
               "before any run; this script runs the sweeps first and reads Adult only "
               "after the constants are fixed. The default's Lambda 1e-3 is not blind to "
               "Adult: when it was set, it was checked on Adult at epsilon 1 (the comment "
               "on `DEFAULT_REGULARIZATION`: 0.82, where 0.01 gave the majority class). "
               "This replaces the earlier version of this benchmark, which picked "
               "its constants from non-private sweeps on this same Adult split (and won "
               "by 0.2 to 2 points); the candidate lists were revised once after a "
               "first honest run (below)."),
              "", *sweep_lines, "",
              ("A first honest version also swept the row bound, as a share (0.6, 0.8, "
               "1) of the schema's largest norm; Shuttle picked 0.6 and c* = 3 (grid: its "
               "four best settings), and on Adult (5 seeds) the search lost by 0.053, "
               "0.067, 0.059 and 0.023 at epsilon 0.25, 0.5, 1 and 4: 0.6 sqrt(14) = 2.2 "
               "clips every Adult row (eight indicators alone have norm sqrt(8)). The row "
               "bound is now the schema's, by rule, and c a ladder around c*; this "
               "change was made after seeing that result, so it is not blind to Adult "
               "either, though no constant was set to an Adult-tuned value."), "",
              "### Epsilon 4: privkit at its best setting, as diffprivlib at its best C", "",
              ("Both sides picked on the test split (as issue 27 quotes diffprivlib): "
               "not a private procedure, a comparison of what each model class can reach."),
              "",
              "| setting | test accuracy |", "|---|---|"]
    for setting in AT_FOUR:
        scores = [pipeline(epsilon=4.0, random_state=seed, **setting).fit(X, y).score(
            X_test, y_test) for seed in range(args.seeds)]
        lines.append(f"| {setting} | {np.mean(scores):.4f} ± {np.std(scores):.4f} |")
        print(setting, np.mean(scores), flush=True)
    lines += ["",
              (f"diffprivlib's LogisticRegression at its best C, epsilon 4: "
               f"{DIFFPRIVLIB_BEST} (quoted from issue 27; diffprivlib 0.6.6 does not import "
               "with scikit-learn 1.9, so it is not rerun here)."), "",
              f"Wall time {time.time() - started:.0f} s; load average at the end "
              + ", ".join(f"{v:.2f}" for v in os.getloadavg()) + "."]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "tuning.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
