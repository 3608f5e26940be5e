"""``privkit reproduce park2022``: J. Park, "Differentially private multi-class
classification using kernel supports and equilibrium points" (SNU master's thesis, 2022).

Table 7.3 (shuttle sub-sampled to 10% and 30%, accuracy at epsilon 0.01, 0.1, 1, 5 and
non-private; the thesis prints its numbers, so every cell gets a verdict), Figure 7.1
(accuracy against epsilon on the eight data sets; the thesis has only the figure) and
Table 7.2 as same-machine timings (privkit against scikit-learn's non-private SVC in the
same process; the thesis' seconds are quoted with its hardware, never turned into a
ratio). The protocol (splits, scaling, hyperparameters, the documented decisions) is
:mod:`privkit.algorithms.svdd.park2022`'s.

Baselines as the thesis ran them (its sections 6.3 and 7.3): SVM WEIGHT on the 400 random
features, SVM OUTPUT and SVM SEMI with the exact RBF kernel
(:mod:`privkit.algorithms.reproduce._exact_kernel`, which states what each releases and
privkit's guarantee for it: SVM OUTPUT answers m queries at the thesis' epsilon each,
``m epsilon``-DP in total; SEMI is ``(epsilon, 1/n)``-DP). Their random-feature versions
(privkit's estimators) stay as extra rows, labelled "400 random features". The
"non-private" column has no noise at all (:mod:`privkit.algorithms.reproduce._noise_free`).
``proposed`` is privkit's private mode (cubes of a public grid released through a
stability histogram); ``proposed_paper`` is the thesis' procedure, which privkit proves no
finite guarantee for. The thesis' "Proposed" numbers belong to the latter.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np

from privkit.algorithms.svdd import park2022 as p

from ._cli import Paper, Run, run_paper
from ._memo import one_solve_per_problem
from ._report import RUNNER, Cell

__all__ = ["PAPER", "PAPER_72", "PAPER_73", "main"]

#: Thesis Table 7.2 (seconds, training + inference, its Xeon, Python 3.7, cvxopt), in
#: the order of ``p.DATASETS``.
PAPER_72 = {
    "svm_weight": [4.72, 100.65, 0.60, 4.66, 71.17, 1376.24, 298.70, 49943.29],
    "svm_semi": [5.01, 64.35, 0.51, 1.63, 31.39, 1158.10, 140.61, 52519.56],
    "proposed": [0.90, 2.41, 0.18, 1.32, 1.96, 31.03, 4.54, 1334.80],
}
#: Thesis Table 7.3 (test accuracy) at EPS_73, per row of ``ROWS_73``.
PAPER_73 = {
    0.1: {"svm_weight": [0.366, 0.310, 0.892, 0.917, 0.912],
          "svm_semi": [0.332, 0.484, 0.899, 0.932, 0.930],
          "proposed_paper": [0.456, 0.644, 0.908, 0.983, 0.987],
          "svm_output": [0.493, 0.919, 0.926, 0.926, 0.926]},
    0.3: {"svm_weight": [0.135, 0.456, 0.957, 0.955, 0.948],
          "svm_semi": [0.330, 0.514, 0.935, 0.950, 0.947],
          "proposed_paper": [0.635, 0.786, 0.958, 0.981, 0.986],
          "svm_output": [0.559, 0.943, 0.943, 0.946, 0.946]},
}
#: The epsilons of Table 7.3 and Figure 7.1's extra column; ``None`` is "non-private":
#: no noise (:mod:`._noise_free`).
EPS_73: tuple[float | None, ...] = (0.01, 0.1, 1.0, 5.0, None)
#: Table 7.3's rows: the thesis' four (SVM OUTPUT and SEMI on the exact kernel), then
#: privkit's extras. Row -> the method of :func:`privkit.algorithms.svdd.park2022.make_method`
#: that runs it with noise (``None``: the exact-kernel runner).
ROWS_73: dict[str, str | None] = {
    "proposed": "proposed", "proposed_paper": "proposed_paper", "svm_weight": "svm_weight",
    "svm_semi": None, "svm_output": None, "svm_semi (400 random features)": "svm_semi",
    "svm_output (400 random features)": "svm_output",
    "svm_output_batch (400 random features)": "svm_output_batch"}
#: Why a row's cell may differ from the thesis (shown where the verdict is "differs").
REASONS = {
    "proposed": "privkit's private mode (public-grid cubes), not the thesis' procedure; "
                "at small epsilon no cube passes the threshold and it predicts one class",
    "proposed_paper": "the thesis' procedure; its scaling, subsample and split are not "
                      "stated (privkit's choices: module docstring of park2022)",
    "svm_weight": "the thesis' scaling, shuttle merge and split are not stated; the "
                  "noise (sensitivity 4 nu sqrt(F) / (n epsilon)) scales with the n its "
                  "unstated subsample gives",
    "svm_semi": "in the exact kernel's space the least-squares refit on Z removes no "
                "noise (K_ZZ has full rank; 400 random features project it onto 400 "
                "dimensions); privkit's joint calibration adds less noise than the "
                "thesis' epsilon / c per class",
    "svm_output": "privkit's SVM has no intercept (the stability bound needs none); the "
                  "thesis' solver settings and scaling are not stated",
}
#: Why a noise-free cell may differ: the models only (no noise is involved).
NOISE_FREE_REASON = ("no noise: the thesis' scaling, shuttle class merge, subsample and "
                     "split are not stated (privkit's choices: park2022's docstring)")
#: Rows that are not the thesis' (no paper number): what they are.
EXTRA_NOTE = {
    "proposed": "privkit's private mode: not the thesis' procedure",
    "svm_semi (400 random features)": "privkit's estimator on random features: not the "
                                      "thesis' exact kernel",
    "svm_output (400 random features)": "privkit's estimator on random features: not the "
                                        "thesis' exact kernel",
    "svm_output_batch (400 random features)": "privkit's batch accounting: not in the "
                                              "thesis",
}
DEPENDS = (*RUNNER, "algorithms/reproduce/park2022.py", "algorithms/reproduce/_dense_qp.py",
           "algorithms/reproduce/_exact_kernel.py", "algorithms/reproduce/_noise_free.py",
           "algorithms/reproduce/_memo.py",
           "algorithms/svdd/park2022.py", "algorithms/svdd/equilibrium.py",
           "algorithms/svdd/_equilibrium_dynamics.py", "algorithms/svdd/svm_baselines.py",
           "algorithms/svdd/svdd.py", "algorithms/svdd/_svdd_dual.py",
           "algorithms/kernels/random_features.py", "algorithms/_accelerators/_rff.pyx",
           "algorithms/_accelerators/_hull.pyx", "algorithms/_labels.py",
           "algorithms/svdd/_hinge_ovr.py")
FIG_SETS_QUICK = ("three_moons", "iris")
#: The exact kernel matrix is n x n float64: not built beyond this many training rows
#: (Figure 7.1's full shuttle has 24,360; its random-feature rows still run).
MAX_KERNEL_ROWS = 8000
PARTS = ("table73", "figure71", "table72")


def _eps_label(eps: float | None) -> str:
    return "non-private (no noise)" if eps is None else f"eps {eps:g}"


Grid = tuple[tuple[float, ...], tuple[float | None, ...], tuple[str, ...],
             tuple[float | None, ...]]


def _grid(args: argparse.Namespace) -> Grid:
    """(Table 7.3 fractions, its epsilons, Figure 7.1's data sets, its epsilons)."""
    if args.quick:
        return (0.1,), (1.0, None), FIG_SETS_QUICK, (1.0, None)
    return (0.1, 0.3), EPS_73, p.DATASETS, (*p.EPSILONS, None)


def _units(args: argparse.Namespace) -> int:
    fractions, _eps73, sets, _eps71 = _grid(args)
    parts = _parts(args)
    timing = len(p.DATASETS) if "table72" in parts else 0
    return ((len(fractions) * args.runs if "table73" in parts else 0)
            + (len(sets) * min(args.runs, args.figure_runs) if "figure71" in parts else 0)
            ) + timing


def _parts(args: argparse.Namespace) -> tuple[str, ...]:
    """The parts to run: ``--parts``, else all (``--quick``: no timing)."""
    if args.parts:
        return tuple(args.parts)
    return PARTS[:2] if args.quick else PARTS


def _noise_free(row: str, dataset: str, X: np.ndarray, y: np.ndarray, seed: int) -> float:
    """Test accuracy of ``row``'s model without noise (:mod:`._noise_free`)."""
    from ._noise_free import NoiseFreeEquilibrium, rff_svm_predict

    X_tr, y_tr, X_te, y_te = p.split(X, y, seed)
    classes = np.unique(y)
    method = ROWS_73[row]
    if method in ("proposed", "proposed_paper"):
        model = p.make_method(method, dataset, epsilon=1.0, seed=seed, classes=classes)
        params = model.get_params()
        pred = NoiseFreeEquilibrium(**params).fit(X_tr, y_tr).predict(X_te)
    else:
        nu, gamma = p.TABLE_7_1[dataset][str(method).split("_")[1]]
        pred = rff_svm_predict(X_tr, y_tr, X_te, classes, nu, gamma, seed)
    return float(np.mean(pred == y_te))


def _exact_rows(dataset: str, X: np.ndarray, y: np.ndarray, seed: int,
                epsilons: Sequence[float | None]) -> dict[tuple[str, float | None], float]:
    """Accuracies of the exact-kernel SVM SEMI and OUTPUT (one fit each, then one release
    per epsilon; ``None``: no noise); ``{}`` beyond ``MAX_KERNEL_ROWS`` training rows."""
    from ._exact_kernel import ExactKernelOutput, ExactKernelSemi

    X_tr, y_tr, X_te, y_te = p.split(X, y, seed)
    if len(y_tr) > MAX_KERNEL_ROWS:
        return {}
    classes = np.unique(y)
    rng = np.random.default_rng([seed, 7])
    out: dict[tuple[str, float | None], float] = {}
    nu, gamma = p.TABLE_7_1[dataset]["output"]
    output = ExactKernelOutput(nu=nu, gamma=gamma, classes=classes).fit(X_tr, y_tr)
    for eps in epsilons:
        out["svm_output", eps] = float(np.mean(output.predict(X_te, eps, rng) == y_te))
    nu, gamma = p.TABLE_7_1[dataset]["semi"]
    semi = ExactKernelSemi(nu=nu, gamma=gamma, classes=classes)
    if not semi.share(output):
        semi.fit(X_tr, y_tr)
    semi.prepare(X_te)  # the thesis hands SEMI the whole test set as Z
    for eps in epsilons:
        alpha = semi.release(eps, 1.0 / len(y_tr), rng)
        out["svm_semi", eps] = float(np.mean(semi.predict(X_te, alpha) == y_te))
    return out


def _accuracies(dataset: str, X: np.ndarray, y: np.ndarray, seed: int,
                epsilons: Sequence[float | None]) -> dict[tuple[str, float | None], float]:
    """Every row's accuracy at every epsilon on one run's split (paired: same split)."""
    out = _exact_rows(dataset, X, y, seed, epsilons)
    for row, method in ROWS_73.items():
        if method is None:
            continue
        for eps in epsilons:
            out[row, eps] = (_noise_free(row, dataset, X, y, seed) if eps is None else
                             p.run_once(method, dataset, epsilon=eps, X=X, y=y,
                                        seed=seed)["accuracy"])
    return out


def _table73_cell(data: str, fraction: float, seed: int,
                  eps73: Sequence[float | None]) -> tuple[int, dict[tuple[str, float | None],
                                                                    float]]:
    """One run of Table 7.3 at one sub-sample (a worker's task): the test size and every
    row's accuracy at every epsilon."""
    X, y = p.load_dataset("shuttle", data, seed=seed, fraction=fraction)
    with one_solve_per_problem():
        return len(p.split(X, y, seed)[3]), _accuracies("shuttle", X, y, seed, eps73)


def _table73(run: Run) -> None:
    fractions, eps73, _, _ = _grid(run.args)
    data = str(run.need_data("shuttle-train.csv.gz"))
    seeds = [run.args.seed + r for r in range(run.args.runs)]
    done = run.map(_table73_cell, [(data, f, s, eps73) for f in fractions for s in seeds])
    for i, fraction in enumerate(fractions):
        t = run.report.table(f"table73_shuttle{round(fraction * 100)}",
                             f"Table 7.3: shuttle sub-sampled to {fraction:.0%} (accuracy, "
                             f"mean ± standard error over {run.args.runs} runs)",
                             [_eps_label(e) for e in eps73], row_label="method")
        acc: dict[tuple[str, float | None], list[float]] = {}
        part = done[i * len(seeds):(i + 1) * len(seeds)]
        m = part[0][0]  # the test size (the same in every run)
        for _, values in part:
            for key, value in values.items():
                acc.setdefault(key, []).append(value)
        for row in ROWS_73:
            for eps in eps73:
                paper = PAPER_73[fraction].get(row, [None] * 5)[EPS_73.index(eps)]
                t.put(row, _eps_label(eps), Cell(
                    acc[row, eps], paper=paper,
                    reason=NOISE_FREE_REASON if eps is None else REASONS.get(row, ""),
                    paper_note=EXTRA_NOTE.get(row, "no such row in the thesis")))
        t.notes.append(
            f"svm_output (exact kernel, as the thesis) charges epsilon per test query, as "
            f"the thesis does: over the {m} test queries privkit's guarantee is {m} "
            "epsilon (pure, replace-one; e.g. the column eps 0.01 is privkit's "
            f"epsilon {0.01 * m:g}); svm_output_batch calibrates the whole batch to "
            "epsilon. svm_semi (exact kernel) is (epsilon, 1/n)-DP. proposed_paper "
            "certifies no finite guarantee. The non-private column has no noise.")


def _figure71_cell(dataset: str, data: str, seed: int, eps71: Sequence[float | None]
                   ) -> dict[tuple[str, float | None], float]:
    """One run of Figure 7.1 on one data set (a worker's task)."""
    X, y = p.load_dataset(dataset, data, seed=seed)
    with one_solve_per_problem():
        return _accuracies(dataset, X, y, seed, eps71)


def _figure71(run: Run) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, _, sets, eps71 = _grid(run.args)
    runs = min(run.args.runs, run.args.figure_runs)
    missing = [s for s in sets if s not in p.SYNTHETIC]
    data = run.need_data(*(f"{s if s not in ('vowel', 'satimage', 'shuttle') else s + '-train'}"
                           ".csv.gz" for s in missing)) if missing else None
    t = run.report.table("figure71", f"Figure 7.1: accuracy against epsilon (mean ± "
                         f"standard error over {runs} runs; the thesis has only the figure)",
                         [_eps_label(e) for e in eps71], row_label="data set / method")
    fig, axes = plt.subplots(1 if len(sets) <= 4 else 2, min(len(sets), 4),
                             figsize=(4.2 * min(len(sets), 4), 3.6 * (1 + (len(sets) > 4))),
                             squeeze=False)
    xs = np.arange(len(eps71))
    seeds = [run.args.seed + r for r in range(runs)]
    done = run.map(_figure71_cell, [(d, str(data or ""), s, eps71) for d in sets
                                    for s in seeds])
    for j, (ax, dataset) in enumerate(zip(axes.ravel(), sets, strict=False)):
        acc: dict[tuple[str, float | None], list[float]] = {}
        for values in done[j * runs:(j + 1) * runs]:
            for key, value in values.items():
                acc.setdefault(key, []).append(value)
        for i, row in enumerate(r for r in ROWS_73 if (r, eps71[0]) in acc):
            cells = [Cell(acc[row, e]) for e in eps71]
            for e, c in zip(eps71, cells, strict=True):
                t.put(f"{dataset} / {row}", _eps_label(e), c)
            ax.errorbar(xs + 0.03 * (i - 3.5), [c.mean for c in cells],
                        yerr=[0 if runs < 2 else c.se for c in cells], label=row,
                        capsize=2, marker="o", markersize=3)
        ax.set_xticks(xs, [f"{e:g}" if e is not None else "NP" for e in eps71])
        ax.set_title(dataset)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=6)
    fig.supxlabel("epsilon (NP: non-private, no noise)")
    fig.supylabel("test accuracy")
    fig.tight_layout()
    run.report.figure("figure71", "Figure 7.1 reproduced: mean test accuracy (error bars: "
                      "standard error) against epsilon, per data set and method (exact-"
                      f"kernel SVM OUTPUT and SEMI up to {MAX_KERNEL_ROWS} training rows).",
                      fig)


def _fit_seconds(method: str, dataset: str, X: np.ndarray, y: np.ndarray, seed: int
                 ) -> float:
    """Training + inference CPU seconds of one privkit fit at epsilon 1."""
    return float(p.run_once(method, dataset, epsilon=1.0, X=X, y=y,
                            seed=seed)["cpu_seconds"])


def _median_seconds(fit: Callable[[], float], repeats: int = 3) -> float:
    """Median of ``repeats`` timed calls after one warm-up call."""
    fit()
    return statistics.median(fit() for _ in range(repeats))


def _exact_seconds(kind: str, dataset: str, X: np.ndarray, y: np.ndarray, seed: int
                   ) -> float:
    """Training + inference CPU seconds of the exact-kernel SVM OUTPUT or SEMI at
    epsilon 1."""
    from ._exact_kernel import ExactKernelOutput, ExactKernelSemi

    X_tr, y_tr, X_te, _ = p.split(X, y, seed)
    classes, rng = np.unique(y), np.random.default_rng(seed)
    nu, gamma = p.TABLE_7_1[dataset][kind]
    start = time.process_time()
    if kind == "output":
        ExactKernelOutput(nu=nu, gamma=gamma, classes=classes).fit(X_tr, y_tr).predict(
            X_te, 1.0, rng)
    else:
        semi = ExactKernelSemi(nu=nu, gamma=gamma, classes=classes).fit(X_tr, y_tr)
        semi.prepare(X_te)
        semi.predict(X_te, semi.release(1.0, 1.0 / len(y_tr), rng))
    return time.process_time() - start


def _table72(run: Run) -> None:
    """Same-machine times (median of 3 after a warm-up): the SVDD dual by privkit's
    solver and by cvxopt's dense QP (the thesis' solver family) on the same random
    features; training + inference at epsilon 1 of the thesis' procedure, privkit's
    private mode, SVM WEIGHT (random features) and the exact-kernel SVM SEMI and OUTPUT,
    each as a ratio to the thesis' procedure measured in the same process; scikit-learn's
    exact-kernel SVC as the non-private reference."""
    from sklearn.svm import SVC

    from privkit.algorithms.kernels.random_features import RandomFourierFeatures

    from ._dense_qp import MAX_ROWS, time_svdd_solvers

    data = run.need_data("shuttle-train.csv.gz")
    ratios: dict[str, list[tuple[str, float]]] = {}
    t = run.report.table("table72", "Table 7.2 on this machine: CPU seconds on one thread "
                         "(median of 3 after a warm-up), ratios to the thesis' procedure in "
                         "the same process, the thesis' seconds quoted beside", [],
                         row_label="data set")
    for j, dataset in enumerate(p.DATASETS):
        X, y = p.load_dataset(dataset, data, seed=run.args.seed)
        X_tr, y_tr, X_te, _ = p.split(X, y, run.args.seed)
        nu, gamma, *_ = p.TABLE_7_1[dataset]["proposed"]
        t.put(dataset, "n train", f"{len(y_tr)}")
        if len(y_tr) <= MAX_ROWS:
            Phi = RandomFourierFeatures(400, gamma=gamma, random_state=run.args.seed
                                        ).fit(X_tr).transform(X_tr)
            time_svdd_solvers(Phi, nu)  # warm-up
            ours, qp, gap = time_svdd_solvers(Phi, nu)
            ratios.setdefault("SVDD: cvxopt's dense QP / privkit's solver", []).append(
                (dataset, qp / ours))
            t.put(dataset, "SVDD dual: privkit / cvxopt dense QP (s)",
                  f"{ours:.4f} / {qp:.3f} ({qp / ours:.2g}x; objectives within {gap:.0e})")
        else:
            t.put(dataset, "SVDD dual: privkit / cvxopt dense QP (s)",
                  f"not run: the dense QP needs n^2 memory beyond n = {MAX_ROWS}")
        seed = run.args.seed
        base = _median_seconds(functools.partial(_fit_seconds, "proposed_paper", dataset, X,
                                                 y, seed))
        t.put(dataset, "proposed_paper (s)", f"{base:.4f}; thesis "
              f"{PAPER_72['proposed'][j]:g}")
        timed: dict[str, Callable[[], float]] = {
            m: functools.partial(_fit_seconds, m, dataset, X, y, seed)
            for m in ("proposed", "svm_weight")}
        if len(y_tr) <= MAX_KERNEL_ROWS:
            timed["svm_semi (exact kernel)"] = functools.partial(_exact_seconds, "semi",
                                                                 dataset, X, y, seed)
            timed["svm_output (exact kernel)"] = functools.partial(_exact_seconds, "output",
                                                                   dataset, X, y, seed)
        c_nu, c_gamma = p.TABLE_7_1[dataset]["output"]

        def svc(nu: float = c_nu, gamma: float = c_gamma, X_tr: np.ndarray = X_tr,
                y_tr: np.ndarray = y_tr, X_te: np.ndarray = X_te) -> float:
            start = time.process_time()
            SVC(C=nu * len(y_tr), gamma=gamma).fit(X_tr, y_tr).predict(X_te)
            return time.process_time() - start

        timed["sklearn SVC, exact kernel, no noise"] = svc
        for label, fit in timed.items():
            med = _median_seconds(fit)
            ratios.setdefault(f"{label} / proposed_paper", []).append((dataset, med / base))
            thesis = PAPER_72.get(label.split(" ")[0])
            quoted = (f"; thesis {thesis[j]:g} ({thesis[j] / PAPER_72['proposed'][j]:.2g}x "
                      "its proposed)") if thesis and label != "proposed" else ""
            t.put(dataset, f"{label} (s)", f"{med:.4f} ({med / base:.2g}x){quoted}")
        if len(y_tr) > MAX_KERNEL_ROWS:
            for label in ("svm_semi (exact kernel)", "svm_output (exact kernel)"):
                t.put(dataset, f"{label} (s)", f"not run: the n x n kernel matrix beyond "
                      f"n = {MAX_KERNEL_ROWS}; thesis {PAPER_72['svm_semi'][j]:g}"
                      if "semi" in label else f"not run (n > {MAX_KERNEL_ROWS})")
        run.bar.update()
    for label, pairs in ratios.items():
        low, high = min(pairs, key=lambda q: q[1]), max(pairs, key=lambda q: q[1])
        run.report.summary.append(
            f"- Table 7.2, {label} (seconds over seconds, same process): {low[1]:.2g}x "
            f"({low[0]}) to {high[1]:.2g}x ({high[0]}) over {len(pairs)} data sets.")
    for base_row in ("svm_weight", "svm_semi"):
        own = [b / a for a, b in zip(PAPER_72["proposed"], PAPER_72[base_row], strict=True)]
        run.report.summary.append(
            f"- The thesis' own ratio, {base_row} / its method (its Table 7.2, one machine): "
            f"{min(own):.2g}x to {max(own):.2g}x; privkit's same-process ratio is the "
            f"{base_row} line above (below 1: faster than the thesis' method).")
    t.notes.append("Times are the process' CPU seconds with every library on one thread "
                   "(what a shared machine's load does not change; wall seconds would "
                   "measure the load). "
                   "Ratios (Yx) are each method's seconds over the thesis' procedure "
                   "(proposed_paper, the thesis' 'Proposed') in the same process on this "
                   "machine; the thesis' seconds (its Table 7.2: a Xeon Gold 5218R, Python "
                   "3.7.4, cvxopt) are quoted with the thesis' own in-run ratio, never "
                   "divided by privkit's. The SVDD column times the solvers alone on the "
                   "same 400 random features and nu. SVM WEIGHT runs on random features "
                   "(as in the thesis); SVM SEMI and OUTPUT on the exact kernel (the "
                   "thesis gives no time for OUTPUT).")


def _body(run: Run) -> None:
    from ._dense_qp import MAX_ROWS

    parts = _parts(run.args)
    runs = min(run.args.runs, run.args.figure_runs)
    run.report.grid += (f"; parts {', '.join(parts)}"
                        + (f"; Figure 7.1: {runs} runs per point" if "figure71" in parts
                           else "")
                        + f"; not run for memory: the exact-kernel SVM OUTPUT and SEMI "
                        f"beyond {MAX_KERNEL_ROWS} training rows (Figure 7.1's and Table "
                        f"7.2's shuttle: an n x n kernel matrix), cvxopt's dense QP beyond "
                        f"{MAX_ROWS} rows (Table 7.2)")
    if "table73" in parts:
        _table73(run)
    if "figure71" in parts:
        _figure71(run)
    if "table72" in parts:
        _table72(run)
    run.report.notes += [
        ("- Table 7.3 cells carry the thesis' numbers; the thesis reports no spread, so a "
        "verdict compares them with privkit's mean and standard error."),
        ("- SVM OUTPUT and SEMI run on the exact kernel as in the thesis (privkit's "
        "guarantee for each: privkit.algorithms.reproduce._exact_kernel); their "
        "random-feature versions are extra rows. 'Non-private' has no noise."),
        ("- The data set scaling, the shuttle class merge and the subsamples are privkit's "
        "documented choices (privkit.algorithms.svdd.park2022), which the thesis does not state."),
    ]


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--figure-runs", type=int, default=5,
                        help="runs per Figure 7.1 point (at most --runs; default 5, the "
                             "thesis' number of runs)")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=None,
                        help="what to run (default: all; --quick: table73 figure71)")


PAPER = Paper(
    name="park2022",
    title=("Park 2022, \"Differentially private multi-class classification using kernel "
           "supports and equilibrium points\""),
    depends=DEPENDS, units=_units, body=_body, default_runs=(2, 5), options=_options,
    description="Table 7.3 with verdicts, Figure 7.1, Table 7.2 as same-machine times.")


def main(argv: Sequence[str] | None = None) -> int:
    """``privkit reproduce park2022 [--quick | --full] [--out DIR] [--data DIR] ...``."""
    return run_paper(PAPER, argv)
