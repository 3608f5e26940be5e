"""``privkit reproduce wang2024``: T. Wang et al., "Differentially private SVMs with
knowledge aggregation" (CMC 2024).

Its section 5 as far as the shared data allows: MNIST and Fashion-MNIST (CIFAR-10 is
not available offline), the four competitors (Non-Priv: PCA to k dimensions and the
Huber SVM, no noise; DPML: objective perturbation on the raw 784 features, no dimension
reduction; DPDR-DPML: one participant of n rows; FedDPDR-DPML: N participants of n rows),
and its sweeps (Figures 2-5): the target dimension k, epsilon, the participant size n
and three sets of uneven participant sizes. Defaults (its section 5.2): epsilon 0.1 split
in half, delta 1e-4, k 20, N 5, n 10^4, lambda 0.01. The paper's results are figures
only (its Table 3 of running times is an image): every cell says so.

Rows: each image divided by its own L2 norm (a per-record public map, so every
guarantee holds for the mapped rows; the paper does not state its scaling). Participants
hold disjoint rows drawn from the training file; the test file is the test set.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._cli import Paper, Run, run_paper
from ._report import RUNNER, Cell

__all__ = ["PAPER", "main", "non_private", "top_components"]

SETS = ("mnist", "fashion-mnist")
METHODS = ("Non-Priv", "DPML", "DPDR-DPML", "FedDPDR-DPML")
DELTA, LAMBDA, K, N, ROWS, EPSILON = 1e-4, 0.01, 20, 5, 10_000, 0.1
#: The full grid: the paper's sweeps (its section 5: epsilon in {0.01, 0.05, 0.1, 0.5,
#: 1, 2}, k from 5 to 100, n in {100, 500, 1000, 5000, 10^4}, three uneven sets) plus
#: epsilon 10, beyond its range, to show where the curves leave chance; ``FULL_RUNS``
#: runs (the paper does not say how many it averages).
FULL = {"epsilon": (0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 10.0), "k": (5, 10, 20, 50, 100),
        "n": (100, 500, 1000, 5000, 10_000),
        "uneven": ((50, 100, 500, 1000, 2000), (100, 500, 1000, 5000, 10_000),
                   (100, 1000, 5000, 8000, 10_000))}
FULL_RUNS = 3
CUT = ("the paper's sweeps whole (k at 5, 10, 20, 50, 100: the paper gives the range 5-100 "
       "only) and epsilon 10 beyond them; CIFAR-10, the paper's third data set, is not in "
       "the shared data")
QUICK = {"epsilon": (0.1, 10.0), "k": (), "n": (), "uneven": ()}
QUICK_SETS = ("mnist",)
QUICK_N = 300
#: DPML's gradient tolerances, tried in turn: the default 1e-8 is out of reach in 784
#: dimensions at small n, and at n = 100 and epsilon 0.01 so is 1e-5 (privkit perturbs
#: the residue, so the guarantee holds at any tolerance; the same seed gives the same
#: fit whichever process runs it).
DPML_TOLS = (1e-5, 1e-3)
NOTE = "figure only"
DEPENDS = (*RUNNER, "algorithms/reproduce/wang2024.py", "algorithms/federated/pca.py",
           "algorithms/federated/federated.py", "algorithms/linear/erm.py",
           "algorithms/linear/_private_linear.py", "algorithms/linear/_linear.py",
           "algorithms/linear/_losses.py", "algorithms/linear/_solvers.py", "algorithms/_labels.py")


def _load(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        import pandas as pd
    except ModuleNotFoundError:
        from privkit.algorithms.datasets import load_csv

        return load_csv(path)
    table = pd.read_csv(path).to_numpy(dtype=np.float64)
    return table[:, :-1], table[:, -1].astype(np.int64)


def _unit(X: np.ndarray) -> np.ndarray:
    unit: np.ndarray = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    return unit


def top_components(X: np.ndarray, k: int) -> np.ndarray:
    """The top ``k`` eigenvectors of ``X^T X`` (columns, largest first), exactly, by
    LAPACK's ``syevr`` (only those ``k`` are computed)."""
    from scipy.linalg import eigh

    d = X.shape[1]
    _, vectors = eigh(X.T @ X, subset_by_index=[d - k, d - 1], driver="evr")
    top: np.ndarray = vectors[:, ::-1]
    return top


def non_private(k: int, components: np.ndarray | None = None
                ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """Non-Priv: exact PCA to ``k`` dimensions (the first ``k`` of ``components`` when
    given, else :func:`top_components`), then one-vs-rest Huber SVMs (lambda 0.01, h 0.5)
    with no noise; returns ``fit_predict(X, y, X_test)``."""
    from privkit.algorithms import solve_erm
    from privkit.algorithms.linear._losses import MarginLoss

    def fit_predict(X: np.ndarray, y: np.ndarray, X_test: np.ndarray) -> np.ndarray:
        V = (top_components(X, k) if components is None else components)[:, :k]
        Z, Z_test = X @ V, X_test @ V
        classes = np.unique(y)
        W = np.array([solve_erm(Z, np.where(y == c, 1.0, -1.0), MarginLoss("huber", 0.5),
                                LAMBDA, tol=1e-6) for c in classes])
        predicted: np.ndarray = classes[np.argmax(Z_test @ W.T, axis=1)]
        return predicted

    return fit_predict


def _accuracy(method: str, eps: float, k: int, sizes: Sequence[int], pool: np.ndarray,
              X: np.ndarray, y: np.ndarray, X_te: np.ndarray, y_te: np.ndarray,
              seed: int, components: np.ndarray | None = None) -> float:
    """One fit of ``method``; ``sizes`` are the participants' row counts, drawn in order
    from the shuffled ``pool`` of training indices (DPDR-DPML and DPML use the first
    participant's rows, Non-Priv and FedDPDR-DPML all of them)."""
    from privkit.algorithms import (
        DPDRDPMLClassifier,
        FedDPDRDPMLClassifier,
        ObjectivePerturbationClassifier,
    )

    classes = list(range(10))
    rows = pool[: sum(sizes)]
    first = rows[: sizes[0]]
    if method == "Non-Priv":
        pred = non_private(k, components)(X[rows], y[rows], X_te)
    elif method == "DPML":
        for tol in DPML_TOLS:
            try:
                pred = ObjectivePerturbationClassifier(
                    epsilon=eps, delta=DELTA, classes=classes, regularization=LAMBDA,
                    tol=tol, random_state=seed).fit(X[first], y[first]).predict(X_te)
                break
            except RuntimeError:  # the solver's tolerance, out of reach: the next one
                if tol == DPML_TOLS[-1]:
                    raise
    elif method == "DPDR-DPML":
        pred = DPDRDPMLClassifier(epsilon=eps, delta=DELTA, classes=classes, n_components=k,
                                  regularization=LAMBDA, random_state=seed
                                  ).fit(X[first], y[first]).predict(X_te)
    else:
        ids = np.repeat(np.arange(len(sizes)), sizes)
        pred = FedDPDRDPMLClassifier(epsilon=eps, delta=DELTA, classes=classes,
                                     n_components=k, regularization=LAMBDA,
                                     random_state=seed
                                     ).fit(X[rows], y[rows], participant=ids).predict(X_te)
    return float(np.mean(pred == y_te))


@functools.lru_cache(maxsize=2)
def _dataset(name: str, data: str, quick: bool
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, X_test, y_test) of ``name``, rows divided by their norms (cached per
    process: a worker loads each data set once)."""
    folder = Path(data)
    X_te, y_te = _load(folder / f"{name}-test.csv.gz")
    if quick:  # the 10,000 test rows: the first half trains, the rest tests
        X, y, X_te, y_te = X_te[:5000], y_te[:5000], X_te[5000:], y_te[5000:]
    else:
        X, y = _load(folder / f"{name}-train.csv.gz")
    return _unit(X), y, _unit(X_te), y_te


@functools.lru_cache(maxsize=4)
def _components(name: str, data: str, quick: bool, seed: int, sizes: tuple[int, ...],
                kmax: int) -> np.ndarray:
    """Non-Priv's top ``kmax`` components on one run's rows (cached per process: the k
    sweep slices them; always ``kmax`` of them, so a worker that finds them cached gets
    the numbers one that computes them would)."""
    X, y, _, _ = _dataset(name, data, quick)
    rows = np.random.default_rng(seed).permutation(len(y))[: sum(sizes)]
    return top_components(X[rows], kmax)


def _cell(name: str, data: str, quick: bool, seed: int, kmax: int, method: str,
          eps: float, k: int, sizes: tuple[int, ...]) -> float:
    """One fit of one run (a worker's task): the run's ``seed`` shuffles the pool of
    training rows the participants draw from and seeds the fit."""
    X, y, X_te, y_te = _dataset(name, data, quick)
    pool = np.random.default_rng(seed).permutation(len(y))
    components = (_components(name, data, quick, seed, sizes, kmax)
                  if method == "Non-Priv" else None)
    return _accuracy(method, eps, k, sizes, pool, X, y, X_te, y_te, seed, components)


def _grid(args: argparse.Namespace) -> tuple[tuple[str, ...], dict[str, Any], int]:
    return (QUICK_SETS, QUICK, QUICK_N) if args.quick else (SETS, FULL, ROWS)


def _settings(args: argparse.Namespace) -> list[tuple[str, str, float, int, tuple[int, ...]]]:
    """(sweep, x label, epsilon, k, participant sizes) of every point."""
    _, grid, n = _grid(args)
    out = [("epsilon", f"{e:g}", e, K, (n,) * N) for e in grid["epsilon"]]
    out += [("k", f"{k}", EPSILON, k, (n,) * N) for k in grid["k"]]
    out += [("n", f"{m}", EPSILON, K, (m,) * N) for m in grid["n"]]
    out += [("uneven", "/".join(map(str, s)), EPSILON, K, tuple(s)) for s in grid["uneven"]]
    return out


Point = tuple[str, float, int, tuple[int, ...]]


def _points(settings: list[tuple[str, str, float, int, tuple[int, ...]]]
            ) -> dict[tuple[str, str, str], Point]:
    """(sweep, x, method) -> the fit it needs, (method, epsilon, k, sizes) with the
    parameters a method ignores blanked: the sweeps share their default point, so each
    distinct fit runs once per run."""
    out: dict[tuple[str, str, str], Point] = {}
    for sweep, x, eps, k, sizes in settings:
        for method in METHODS:
            if sweep == "uneven" and method == "DPML":
                continue
            out[sweep, x, method] = (method, eps if method != "Non-Priv" else 0.0,
                                     k if method != "DPML" else 0, sizes)
    return out


def _units(args: argparse.Namespace) -> int:
    distinct = len(set(_points(_settings(args)).values()))
    return len(_grid(args)[0]) * int(args.runs) * distinct


def _body(run: Run) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets, _, _ = _grid(run.args)
    settings = _settings(run.args)
    if not run.quick:
        run.report.grid += "; " + CUT
    sweeps = ("epsilon", "k", "n", "uneven")
    fig, axes = plt.subplots(len(sets), len(sweeps), figsize=(17, 4 * len(sets)),
                             squeeze=False)
    for row, name in enumerate(sets):
        data = run.need_data(f"{name}-test.csv.gz", *(() if run.quick else
                                                        (f"{name}-train.csv.gz",)))
        seeds = [run.args.seed + r for r in range(run.args.runs)]
        points = _points(settings)
        kmax = max(k for _, _, _, k, _ in settings)
        tasks = [(name, str(data), run.quick, seed, kmax, *point) for seed in seeds
                 for point in dict.fromkeys(points.values())]
        values = iter(run.map(_cell, tasks))
        done = {(seed, point): next(values) for seed in seeds
                for point in dict.fromkeys(points.values())}
        acc: dict[tuple[str, str, str], list[float]] = {}
        for seed in seeds:
            for (sweep, x, method), point in points.items():
                acc.setdefault((sweep, x, method), []).append(done[seed, point])
        for col, sweep in enumerate(sweeps):
            xs = list(dict.fromkeys(x for s, x, *_ in settings if s == sweep))
            if not xs:  # --quick runs the epsilon sweep only
                axes[row, col].set_axis_off()
                continue
            t = run.report.table(f"{name}_{sweep}", f"{name}: accuracy against {sweep} "
                                 f"(mean ± standard error over {run.args.runs} runs; "
                                 f"defaults epsilon {EPSILON}, k {K}, N {N}, n "
                                 f"{_grid(run.args)[2]})", [], row_label="method")
            ax = axes[row, col]
            for method in METHODS:
                if (sweep, xs[0], method) not in acc:
                    continue
                cells = [Cell(acc[sweep, x, method], paper_note=NOTE) for x in xs]
                for x, c in zip(xs, cells, strict=True):
                    t.put(method, f"{sweep} {x}", c)
                ax.plot(range(len(xs)), [c.mean for c in cells], marker="o", label=method)
            ax.set_xticks(range(len(xs)), xs, fontsize=7, rotation=20)
            ax.set_title(f"{name}: {sweep}")
            ax.set_ylim(0, 1)
            ax.grid(alpha=0.3)
        axes[row, 0].legend(fontsize=7)
        run.report.summary.append(_headline(name, acc, settings))
    fig.supylabel("test accuracy")
    fig.tight_layout()
    run.report.figure("figures2to5", "Figures 2-5 reproduced: accuracy against k, epsilon, "
                      "n and uneven participant sizes.", fig)
    run.report.notes += _ANALYSIS


def _headline(name: str, acc: dict[tuple[str, str, str], list[float]],
              settings: list[tuple[str, str, float, int, tuple[int, ...]]]) -> str:
    """The summary line of one data set: the paper's headline (FedDPDR-DPML close to
    Non-Priv at the default epsilon) against privkit's numbers."""
    def mean(x: str, method: str) -> float:
        return float(np.mean(acc["epsilon", x, method]))

    xs = [x for s, x, *_ in settings if s == "epsilon"]
    default = f"{EPSILON:g}" if f"{EPSILON:g}" in xs else xs[0]
    fed, top = mean(default, "FedDPDR-DPML"), mean(default, "Non-Priv")
    reached = "reached" if top - fed <= 0.05 else "not reached"
    curve = ", ".join(f"{x}: {mean(x, 'FedDPDR-DPML'):.3f}" for x in xs)
    return (f"- {name}: FedDPDR-DPML {fed:.3f} against Non-Priv {top:.3f} at epsilon "
            f"{default}: the paper's headline (close to Non-Priv) is {reached} (within "
            f"0.05 counts as close); FedDPDR-DPML against epsilon: {curve}. Why: the "
            "Notes above (sensitivity sqrt(2), the budget split over ten one-vs-rest "
            "problems, the noise scale 1 / (n lambda epsilon)); Non-Priv itself is the "
            "noise-free PCA and Huber SVM at lambda 0.01 on rows of norm 1 (the paper "
            "states no scaling and prints no Non-Priv number).")


_ANALYSIS = [
    ("- The paper's accuracies are figures only; its headline is that FedDPDR-DPML is close "
    "to Non-Priv at epsilon 0.1 (k 20, n 10^4, N 5). Where privkit's tables are near 0.1 "
    "(chance for 10 classes) at epsilon 0.1, the headline is not reached, for reasons that "
    "are properties of the algorithm as privkit implements it, each checkable in the code:"),
    ("- Sensitivity: Lemma 4.1 gives 1 for X^T X under replacement of a row; the true value "
    "is sqrt(2) (the lemma removes the row rather than replacing it), so privkit's PCA "
    "noise is sqrt(2) times the paper's at the same epsilon."),
    ("- Budget split: epsilon 0.1 is halved between the PCA and the SVM, and the SVM "
    "stage's half is split over the ten one-vs-rest problems (epsilon / 10 each, basic "
    "composition: a participant's rows are in every problem; privkit.algorithms."
    "linear._private_linear), so each binary SVM runs at epsilon 0.005."),
    ("- Scale of the noise: objective perturbation's noise is calibrated to rows of norm "
     "<= 1 (each image divided by its own norm here; the paper does not state its "
     "scaling) and grows as 1 / (n lambda epsilon): at n = 10^4, lambda = 0.01 and "
     "epsilon 0.005 per binary problem that factor is 2, against 1 / lambda = 100 for "
     "the largest weight norm the regulariser allows."),
    ("- The epsilon sweep runs past the paper's range (0.01-2) to show where the curves "
    "leave chance; the uneven sets are the paper's three (sizes in rows per participant)."),
]


PAPER = Paper(
    name="wang2024",
    title="Wang et al. 2024, \"Differentially private SVMs with knowledge aggregation\"",
    depends=DEPENDS, units=_units, body=_body, default_runs=(2, FULL_RUNS),
    description="MNIST and Fashion-MNIST, the four competitors, sweeps over epsilon, k, n "
                "and uneven participants.")


def main(argv: Sequence[str] | None = None) -> int:
    """``privkit reproduce wang2024 [--quick | --full] [--out DIR] [--data DIR] ...``."""
    return run_paper(PAPER, argv)
