"""Accuracy and training time of the private ERM, PCA and federated algorithms.

Run: .venv/bin/python benchmarks/erm.py [--data ../shared/data] [--seeds 10]

Writes benchmarks/results/erm.md and benchmarks/results/erm_privacy_utility.png.

Parts: ``--part multiclass`` (digits and MNIST, before/after the multinomial model,
writes erm_multiclass.md; ``--mnist-rows N`` trains on the first N MNIST rows),
``--part fit-times`` (fit-time ratios on Adult and MNIST, writes erm_fit_times.md),
``--part defaults`` (accuracy against Lambda on Adult and the README example, writes
erm_defaults.md).

* Accuracy (mean and std over seeds) at epsilon in {0.1, 0.5, 1, 2, 5} against the
  non-private model, on scikit-learn's digits data and on Adult
  (van der Reijden 2019: non-private QP-SVM test error 0.173) when the data folder is present.
* DPDR-DPML and FedDPDR-DPML on MNIST with Wang et al.'s defaults (epsilon 0.1 split in
  half, delta 1e-4, k 20, N 5 participants of n 10,000, lambda 0.01), and at larger
  epsilons, when the data folder is present.
* Training time at n = 10,000 for each algorithm next to scikit-learn's LinearSVC and
  LogisticRegression in the same run.
"""

# ruff: noqa: B023  (the lambdas run within their loop iteration)
from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import LinearSVC

from privkit.algorithms import (
    DPDRDPMLClassifier,
    DPSGDLinearSVM,
    FedDPDRDPMLClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    solve_erm,
)
from privkit.algorithms.datasets import load_adult, load_csv
from privkit.algorithms.linear._losses import MarginLoss
from privkit.algorithms.reproduce._report import code_version

EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
RESULTS = Path(__file__).parent / "results"
#: The code these results depend on (tests/core/test_results_fresh.py checks the stamp).
DEPENDS = ("benchmarks/erm.py", "algorithms/linear/erm.py", "algorithms/federated/pca.py",
           "algorithms/federated/federated.py", "algorithms/linear/dpsgd.py",
           "algorithms/linear/_private_linear.py", "algorithms/linear/_linear.py",
           "algorithms/linear/_losses.py", "algorithms/linear/_solvers.py",
           "algorithms/datasets.py")


def stamp() -> list[str]:
    """The header lines naming the commit of the code that writes the file."""
    return [f"privkit-commit: {code_version(DEPENDS)}", "",
            f"privkit-depends: {' '.join(DEPENDS)}", ""]

MULTICLASS_NOTE = """
Why the multinomial model helps, and what limits it. One-vs-rest spends epsilon / k on
each of k problems, so its k noise vectors (L2-Laplace, radius Gamma(d + 1, scale)) have
total norm about sqrt(k) (d + 1) 2k / (n Lambda eps); the multinomial model's single draw
in dimension k (d + 1) has norm about k (d + 1) 2 sqrt(2) / (n Lambda eps) (Lipschitz
constant sqrt(2), see privkit.algorithms.linear.erm.MULTINOMIAL_LIPSCHITZ): sqrt(k / 2) = 2.2
times less noise for k = 10. The signal is bounded too: strong convexity gives
||W*|| <= ||grad J(0)|| / Lambda = ||G|| / Lambda with G = mean_i (e_{y_i} - 1/k) x_i^T
(Boyd, Vandenberghe, Convex Optimization, eq. 9.11), so ||W*|| / ||noise|| is at most
||G|| n eps / (2 sqrt(2) k (d + 1)) whatever Lambda: with pure DP the noise grows
linearly in the dimension k (d + 1). Two public, per-record feature maps raise that
ceiling: dividing each row by its own norm (||G|| grows, rows use the whole unit ball)
and average pooling (d falls: 64 -> 16 pixels on digits, 784 -> 49 on MNIST).
Multinomial objective perturbation is not offered: Chaudhuri et al. 2011, Theorem 9,
bounds the Jacobian determinant using per-row Hessians of rank one.
"""


#: The public label set of the ten-digit tasks (MNIST, digits).
DIGITS = list(range(10))

def digits_rows(X_train, X_test):
    """Public bounds: 64 pixels in [0, 16], so rows have norm at most 16 * 8 = 128."""
    return X_train / 128.0, X_test / 128.0


def mnist_rows(X, X_test):
    """Public bounds: 784 pixels in [0, 255], rows of norm at most 255 * 28."""
    return X / (255.0 * 28.0), X_test / (255.0 * 28.0)


def pooled(X, side, factor):
    """Average pooling of ``side x side`` images over ``factor x factor`` blocks: a fixed,
    public map applied to each record on its own (no statistic of the data)."""
    m = side // factor
    return X.reshape(len(X), m, factor, m, factor).mean(axis=(2, 4)).reshape(len(X), -1)


def unit_rows(X):
    """Each record divided by its own L2 norm (a per-record map, so privacy is unchanged:
    the estimator's guarantee holds for the transformed rows, which have norm 1)."""
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)


def multiclass_sets(folder, mnist_rows_limit):
    """(data name, feature map name, X_train, X_test, y_train, y_test) for the multi-class
    table; every feature map is public."""
    X, y = load_digits(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
    yield ("digits", "pixels / 128 (public bound)", *digits_rows(X_tr, X_te), y_tr, y_te)
    yield ("digits", "unit rows", unit_rows(X_tr), unit_rows(X_te), y_tr, y_te)
    yield ("digits", "2x2 pooling, unit rows (d 16)", unit_rows(pooled(X_tr, 8, 2)),
           unit_rows(pooled(X_te, 8, 2)), y_tr, y_te)
    if not (folder / "mnist-train.csv.gz").is_file():
        return
    X, y = load_csv(folder / "mnist-train.csv.gz")
    X_test, y_test = load_csv(folder / "mnist-test.csv.gz")
    if mnist_rows_limit:
        X, y = X[:mnist_rows_limit], y[:mnist_rows_limit]
    yield ("MNIST", "4x4 pooling, unit rows (d 49)", unit_rows(pooled(X, 28, 4)),
           unit_rows(pooled(X_test, 28, 4)), y, y_test)


def multiclass_table(folder, seeds, lines, lam=0.01, mnist_rows_limit=0):
    """Digits and MNIST at epsilon 1 and 5, Lambda 0.01, with intercept: before
    (one-vs-rest Huber models at epsilon / k each, output and objective perturbation) and
    after (one multinomial logistic model with one L2-Laplace draw at the whole epsilon),
    next to the non-private multinomial model on the same features."""
    from privkit.algorithms import solve_multinomial

    lines.append(f"\n### Multi-class: test accuracy, mean ± std over {seeds} seeds "
                 f"(Lambda {lam:g}, intercept, pure DP)\n")
    lines.append("| data (n train) | public feature map | epsilon | non-private multinomial | "
                 "before: OvR output (eps/k each) | before: OvR objective (eps/k each) | "
                 "after: multinomial output (one draw) |")
    lines.append("|---|---|---|---|---|---|---|")
    for name, features, X_tr, X_te, y_tr, y_te in multiclass_sets(folder, mnist_rows_limit):
        Z = np.hstack([X_tr, np.ones((len(y_tr), 1))]) / np.sqrt(2.0)
        W = solve_multinomial(Z, y_tr, 10, lam, tol=1e-6)
        Zt = np.hstack([X_te, np.ones((len(y_te), 1))]) / np.sqrt(2.0)
        base = float(np.mean(np.argmax(Zt @ W.T, axis=1) == y_te))
        for eps in (1.0, 5.0):
            runs = {
                "ovr_out": lambda s: OutputPerturbationClassifier(
                    epsilon=eps, classes=DIGITS, regularization=lam, loss="huber",
                    random_state=s),
                "ovr_obj": lambda s: ObjectivePerturbationClassifier(
                    epsilon=eps, classes=DIGITS, regularization=lam, loss="huber",
                    random_state=s),
                "multi": lambda s: OutputPerturbationClassifier(
                    epsilon=eps, classes=DIGITS, regularization=lam, loss="logistic",
                    random_state=s),
            }
            cells = []
            for make in runs.values():
                acc = [make(s).fit(X_tr, y_tr).score(X_te, y_te) for s in range(seeds)]
                cells.append(f"{statistics.mean(acc):.4f} ± {statistics.pstdev(acc):.4f}")
            lines.append(f"| {name} ({len(y_tr)}) | {features} | {eps:g} | {base:.4f} | "
                         + " | ".join(cells) + " |")
            print(lines[-1], flush=True)


def ratio_table(folder, lines, mnist_rows_limit=0, repeats=3):
    """Fit time on Adult and MNIST as a ratio to scikit-learn's non-private models in the
    same run. scikit-learn at its default tol 1e-4; privkit's estimators at their default
    tol 1e-8 (which their privacy accounting uses) and at tol 1e-4 (the same tolerance:
    an L2 gradient norm, which is at least scikit-learn's largest component)."""
    from privkit.algorithms.linear.erm import DEFAULT_REGULARIZATION

    lam = DEFAULT_REGULARIZATION
    sets = []
    if (folder / "adult-train.csv.gz").is_file():
        X, y, _, _ = load_adult(folder)
        sets.append((f"Adult (binary, n {len(y)}, d {X.shape[1]})", X, y, repeats))
    if (folder / "mnist-train.csv.gz").is_file():
        X, y = load_csv(folder / "mnist-train.csv.gz")
        if mnist_rows_limit:
            X, y = X[:mnist_rows_limit], y[:mnist_rows_limit]
        X, _ = mnist_rows(X, X[:1])
        sets.append((f"MNIST (10 classes, n {len(y)}, d 784)", X, y, 1))
    lines.append(f"\n### Fit time ratios to scikit-learn (same run, Lambda {lam:g}; Adult: "
                 f"median of {repeats} fits, MNIST: one fit)\n")
    lines.append("Same model: logistic one-vs-rest (objective perturbation with several "
                 "classes) against scikit-learn's one-vs-rest LogisticRegression; multinomial "
                 "logistic (output perturbation with several classes) against "
                 "LogisticRegression; Huber (a smoothed hinge) against LinearSVC.\n")
    lines.append("| data | estimator | seconds | / LogisticRegression | / LinearSVC "
                 "| / scikit-learn's same model |")
    lines.append("|---|---|---|---|---|---|")
    for name, X, y, count in sets:
        n = len(y)
        labels = DIGITS if "MNIST" in name else [0, 1]  # each task's public label set
        runs = {
            "LogisticRegression (lbfgs, tol 1e-4)": lambda: LogisticRegression(
                C=1 / (n * lam), tol=1e-4, max_iter=10_000).fit(X, y),
            "LinearSVC (tol 1e-4)": lambda: LinearSVC(C=1 / (n * lam), tol=1e-4).fit(X, y),
            "LogisticRegression one-vs-rest (lbfgs, tol 1e-4)": lambda: OneVsRestClassifier(
                LogisticRegression(C=1 / (n * lam), tol=1e-4, max_iter=10_000)).fit(X, y),
        }
        for tol in (1e-8, 1e-4):
            runs |= {
                f"OutputPerturbation logistic (tol {tol:g})": lambda: (
                    OutputPerturbationClassifier(classes=labels, loss="logistic", tol=tol,
                                                 random_state=0).fit(X, y)),
                f"OutputPerturbation huber (tol {tol:g})": lambda: (
                    OutputPerturbationClassifier(classes=labels, tol=tol, random_state=0)
                    .fit(X, y)),
                f"ObjectivePerturbation huber (tol {tol:g})": lambda: (
                    ObjectivePerturbationClassifier(classes=labels, tol=tol, random_state=0)
                    .fit(X, y)),
                f"ObjectivePerturbation logistic (tol {tol:g})": lambda: (
                    ObjectivePerturbationClassifier(classes=labels, loss="logistic", tol=tol,
                                                    random_state=0).fit(X, y)),
            }
        times = {}
        for label, run in runs.items():
            t = []
            for _ in range(count):
                start = time.perf_counter()
                run()
                t.append(time.perf_counter() - start)
            times[label] = statistics.median(t)
            print(label, times[label], os.getloadavg(), flush=True)
        lr, svc = times["LogisticRegression (lbfgs, tol 1e-4)"], times["LinearSVC (tol 1e-4)"]
        ovr = times["LogisticRegression one-vs-rest (lbfgs, tol 1e-4)"]
        several = len(np.unique(y)) > 2
        for label, seconds in times.items():
            same = (svc if "huber" in label else ovr if "Objective" in label and several
                    else lr if "Perturbation" in label else None)
            lines.append(f"| {name} | {label} | {seconds:.3f} | {seconds / lr:.2f} | "
                         f"{seconds / svc:.2f} | "
                         + (f"{seconds / same:.2f} |" if same else "- |"))


def defaults_table(folder, seeds, lines):
    """Accuracy at the old default Lambda (0.01) and around the new one (1e-3) on Adult,
    and on the README's example (digits 0 against 1), to document the default."""
    from sklearn.datasets import load_digits

    lines.append(f"\n### Default regularisation: test accuracy, mean ± std over {seeds} "
                 "seeds (Huber loss, intercept)\n")
    lines.append("| data | Lambda | epsilon | output perturbation | objective perturbation |")
    lines.append("|---|---|---|---|---|")
    sets = []
    X, y = load_digits(return_X_y=True)
    X, y = X[y < 2] / 16.0, y[y < 2]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
    sets.append(("README digits 0/1 (row_norm_bound 8)", X_tr, y_tr, X_te, y_te, 8.0))
    if (folder / "adult-train.csv.gz").is_file():
        sets.append(("Adult", *load_adult(folder), 1.0))
    for name, X_tr, y_tr, X_te, y_te, bound in sets:
        for lam in (1e-2, 3e-3, 1e-3, 3e-4, 1e-4):
            for eps in (1.0, 5.0):
                cells = []
                for cls in (OutputPerturbationClassifier, ObjectivePerturbationClassifier):
                    acc = [cls(epsilon=eps, classes=[0, 1], regularization=lam,
                               row_norm_bound=bound,
                               random_state=s).fit(X_tr, y_tr).score(X_te, y_te)
                           for s in range(seeds)]
                    cells.append(f"{statistics.mean(acc):.4f} ± {statistics.pstdev(acc):.4f}")
                lines.append(f"| {name} | {lam:g} | {eps:g} | " + " | ".join(cells) + " |")
                print(lines[-1], flush=True)


def non_private_huber(X, y, X_test, y_test, lam):
    classes = np.unique(y)
    targets = classes[1:] if classes.size == 2 else classes
    W = np.array([solve_erm(X, np.where(y == c, 1.0, -1.0), MarginLoss("huber"), lam)
                  for c in targets])
    scores = X_test @ W.T
    pred = (np.where(scores[:, 0] > 0, classes[1], classes[0]) if classes.size == 2
            else classes[np.argmax(scores, axis=1)])
    return float(np.mean(pred == y_test))


def accuracy_table(name, X, y, X_test, y_test, seeds, lam, lines, curves):
    base = non_private_huber(X, y, X_test, y_test, lam)
    lines.append(f"\n### {name} (n = {len(y)}, d = {X.shape[1]}, Lambda = {lam:g})\n")
    lines.append(f"non-private Huber SVM test accuracy: {base:.4f} "
                 f"(error {1 - base:.4f})\n")
    lines.append("| epsilon | output perturbation | objective perturbation |")
    lines.append("|---|---|---|")
    curves[name] = {"non-private": base}
    for eps in EPSILONS:
        row = [f"{eps:g}"]
        for cls in (OutputPerturbationClassifier, ObjectivePerturbationClassifier):
            scores = [cls(epsilon=eps, classes=np.unique(y), regularization=lam,
                          random_state=s).fit(X, y).score(X_test, y_test)
                      for s in range(seeds)]  # np.unique of a public benchmark's labels
            row.append(f"{statistics.mean(scores):.4f} ± {statistics.pstdev(scores):.4f}")
            curves[name].setdefault(cls.__name__, []).append(statistics.mean(scores))
        lines.append("| " + " | ".join(row) + " |")


def mnist_table(folder, seeds, lines, curves):
    X, y = load_csv(folder / "mnist-train.csv.gz")
    X_test, y_test = load_csv(folder / "mnist-test.csv.gz")
    X, X_test = mnist_rows(X, X_test)
    n, parts = 10_000, 5
    lines.append(f"\n### MNIST, Wang et al. 2024 defaults (delta 1e-4, k 20, lambda 0.01, "
                 f"N {parts} x n {n})\n")
    lines.append("| epsilon | DPDR-DPML (one participant, n 10,000) | FedDPDR-DPML (5 x 10,000) |")
    lines.append("|---|---|---|")
    curves["MNIST"] = {}
    for eps in (0.1, 1.0, 5.0):
        single, fed = [], []
        for s in range(seeds):
            single.append(DPDRDPMLClassifier(epsilon=eps, delta=1e-4, n_components=20,
                                             regularization=0.01, random_state=s)
                          .fit(X[:n], y[:n]).score(X_test, y_test))
            ids = np.repeat(np.arange(parts), n)
            fed.append(FedDPDRDPMLClassifier(epsilon=eps, delta=1e-4, n_components=20,
                                             regularization=0.01, random_state=s)
                       .fit(X[: parts * n], y[: parts * n], participant=ids)
                       .score(X_test, y_test))
        lines.append(f"| {eps:g} | {statistics.mean(single):.4f} ± {statistics.pstdev(single):.4f}"
                     f" | {statistics.mean(fed):.4f} ± {statistics.pstdev(fed):.4f} |")
        curves["MNIST"].setdefault("DPDRDPMLClassifier", []).append(statistics.mean(single))
        curves["MNIST"].setdefault("FedDPDRDPMLClassifier", []).append(statistics.mean(fed))


def timing_table(lines):
    rng = np.random.default_rng(0)
    n, d = 10_000, 50
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    ids = np.arange(n) % 5
    runs = {
        "scikit-learn LinearSVC (non-private)": lambda: LinearSVC().fit(X, y),
        "scikit-learn LogisticRegression (non-private)": lambda: LogisticRegression().fit(X, y),
        "OutputPerturbationClassifier": lambda: OutputPerturbationClassifier(
            classes=[0, 1], random_state=0).fit(X, y),
        "ObjectivePerturbationClassifier": lambda: ObjectivePerturbationClassifier(
            classes=[0, 1], random_state=0).fit(X, y),
        "DPDRDPMLClassifier (k 20)": lambda: DPDRDPMLClassifier(random_state=0).fit(X, y),
        "FedDPDRDPMLClassifier (5 participants)": lambda: FedDPDRDPMLClassifier(
            random_state=0).fit(X, y, participant=ids),
        "DPSGDLinearSVM (q 0.01, 5 epochs)": lambda: DPSGDLinearSVM(random_state=0).fit(X, y),
    }
    lines.append("\n### Training time, n = 10,000, d = 50 (median of 3)\n")
    lines.append("| estimator | seconds |")
    lines.append("|---|---|")
    for name, run in runs.items():
        run()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        lines.append(f"| {name} | {statistics.median(times):.3f} |")


def plot(curves, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(curves), figsize=(4 * len(curves), 3.5))
    for ax, (name, series) in zip(np.atleast_1d(axes), curves.items(), strict=True):
        for label, values in series.items():
            if label == "non-private":
                ax.axhline(values, color="black", linestyle="--", label=label)
            else:
                eps = EPSILONS if len(values) == len(EPSILONS) else (0.1, 1.0, 5.0)
                ax.plot(eps, values, marker="o", label=label.replace("Classifier", ""))
        ax.set_xscale("log")
        ax.set_title(name)
        ax.set_xlabel("epsilon")
        ax.set_ylabel("test accuracy")
        ax.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=os.environ.get("PRIVKIT_DATA") or str(
        Path(__file__).resolve().parents[2] / "shared" / "data"),
                        help="the shared data folder (default $PRIVKIT_DATA)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--mnist-seeds", type=int, default=3)
    parser.add_argument("--part", default="all",
                        choices=("all", "multiclass", "fit-times", "defaults"))
    parser.add_argument("--mnist-rows", type=int, default=0,
                        help="train on the first N MNIST rows only (0: all 60,000)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    folder = Path(args.data)
    if args.part != "all":
        load = os.getloadavg()
        lines = [f"# privkit ERM benchmarks: {args.part}", "", *stamp(),
                 "Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python -P "
                 f"benchmarks/erm.py --part {args.part} --seeds {args.seeds}"
                 + (f" --mnist-rows {args.mnist_rows}" if args.mnist_rows else "") + "`", "",
                 (f"Load average at start: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} "
                  "(2 cores, shared)."), "",
                 ("Rows are scaled by public bounds or public per-record maps only (digits: "
                  "pixels <= 16; MNIST: <= 255; Adult: load_adult's schema bounds).")]
        if args.part == "multiclass":
            lines.append(MULTICLASS_NOTE)
            multiclass_table(folder, args.seeds, lines, mnist_rows_limit=args.mnist_rows)
        elif args.part == "defaults":
            defaults_table(folder, args.seeds, lines)
        else:
            ratio_table(folder, lines, mnist_rows_limit=args.mnist_rows)
        load = os.getloadavg()
        lines.append(f"\nLoad average at the end: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}.")
        RESULTS.mkdir(exist_ok=True)
        out = {"multiclass": "erm_multiclass.md", "defaults": "erm_defaults.md",
               "fit-times": "erm_fit_times.md"}[args.part]
        (RESULTS / out).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return
    lines = ["# privkit private ERM benchmarks", "", *stamp(),
             f"Accuracy is the mean ± std over {args.seeds} seeds (MNIST: {args.mnist_seeds}).",
             ("Rows are scaled by public bounds only (digits: pixels <= 16; MNIST: <= 255; "
             "Adult: load_adult's schema bounds). Breast cancer is dropped: it has no "
             "published bounds, and scaling it by its own statistics is not private.")]
    curves = {}
    for name, loader in (("digits", load_digits),):
        X, y = loader(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
        X_tr, X_te = digits_rows(X_tr, X_te)
        accuracy_table(name, X_tr, y_tr, X_te, y_te, args.seeds, 1e-3, lines, curves)
    if (folder / "adult-train.csv.gz").is_file():
        X_tr, y_tr, X_te, y_te = load_adult(folder)
        accuracy_table("Adult", X_tr, y_tr, X_te, y_te, args.seeds, 1e-3, lines, curves)
    else:
        lines.append(f"\nAdult skipped: {folder} has no adult-train.csv.gz")
    if (folder / "mnist-train.csv.gz").is_file():
        mnist_table(folder, args.mnist_seeds, lines, curves)
    else:
        lines.append(f"\nMNIST skipped: {folder} has no mnist-train.csv.gz")
    timing_table(lines)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "erm.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    plot(curves, RESULTS / "erm_privacy_utility.png")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
