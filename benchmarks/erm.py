"""Accuracy and training time of the private ERM, PCA and federated algorithms.

Run: .venv/bin/python benchmarks/erm.py [--data ../shared/data] [--seeds 10]

Writes benchmarks/results/erm.md and benchmarks/results/erm_privacy_utility.png.

* Accuracy (mean and std over seeds) at epsilon in {0.1, 0.5, 1, 2, 5} against the
  non-private model, on scikit-learn's breast cancer and digits data and on Adult
  (seed 003: non-private QP-SVM test error 0.173) when the data folder is present.
* DPDR-DPML and FedDPDR-DPML on MNIST with seed 004's defaults (epsilon 0.1 split in
  half, delta 1e-4, k 20, N 5 participants of n 10,000, lambda 0.01), and at larger
  epsilons, when the data folder is present.
* Training time at n = 10,000 for each algorithm next to scikit-learn's LinearSVC and
  LogisticRegression in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from privkit.algorithms import (
    DPDRDPMLClassifier,
    DPSGDLinearSVM,
    FedDPDRDPMLClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    solve_erm,
)
from privkit.algorithms._losses import MarginLoss
from privkit.algorithms.datasets import load_adult, load_csv

EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
RESULTS = Path(__file__).parent / "results"


def unit_rows(X_train, X_test):
    scaler = StandardScaler().fit(X_train)
    a, b = scaler.transform(X_train), scaler.transform(X_test)
    top = np.linalg.norm(a, axis=1).max()
    return a / top, np.clip(b / top, -1, 1)


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
            scores = [cls(epsilon=eps, regularization=lam, random_state=s).fit(X, y)
                      .score(X_test, y_test) for s in range(seeds)]
            row.append(f"{statistics.mean(scores):.4f} ± {statistics.pstdev(scores):.4f}")
            curves[name].setdefault(cls.__name__, []).append(statistics.mean(scores))
        lines.append("| " + " | ".join(row) + " |")


def mnist_table(folder, seeds, lines, curves):
    X, y = load_csv(folder / "mnist-train.csv.gz")
    X_test, y_test = load_csv(folder / "mnist-test.csv.gz")
    X, X_test = X / 255.0, X_test / 255.0
    top = np.linalg.norm(X, axis=1).max()
    X, X_test = X / top, X_test / top
    n, parts = 10_000, 5
    lines.append(f"\n### MNIST, seed 004 defaults (delta 1e-4, k 20, lambda 0.01, "
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
            random_state=0).fit(X, y),
        "ObjectivePerturbationClassifier": lambda: ObjectivePerturbationClassifier(
            random_state=0).fit(X, y),
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
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared"
                                              / "data"))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--mnist-seeds", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    folder = Path(args.data)
    lines = ["# privkit private ERM benchmarks", "",
             f"Accuracy is the mean ± std over {args.seeds} seeds (MNIST: {args.mnist_seeds}).",
             "Rows are standardised on the training split and divided by its largest norm."]
    curves = {}
    for name, loader in (("breast cancer", load_breast_cancer), ("digits", load_digits)):
        X, y = loader(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
        X_tr, X_te = unit_rows(X_tr, X_te)
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
