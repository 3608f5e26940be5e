"""Private kernel learning: K-means Nyström at scale, private KME on Adult, DPKSVMEL.

Run (one core):
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python -P benchmarks/kernel_learning.py \
      scale [--rows 1000000] [--features 200] [--k 256]
  ... kernel_learning.py kme [--data ../shared/data]
  ... kernel_learning.py dpksvmel [--data ../shared/data] [--runs 10] [--reduced]

Writes to benchmarks/results/: ``kernel_scale.md``, ``kernel_kme.md`` and
``kernel_kme.png``, ``dpksvmel.md``.

* ``scale``: B. Lee, J. Ahn, C. Park, "Differential privacy in scalable general kernel
  learning via K-means Nyström random features" (poster): n rows in d = 200 dimensions
  with a polynomial (degree-2) decision boundary. The poster gives no generator; ours:
  ``x ~ N(0, diag(s))`` with ``s_j = 1`` on the first 5 coordinates and ``0.1^2`` on the
  rest, label ``1[x_0^2 + x_1^2 + x_2 x_3 > 1.386]`` (about balanced; no linear signal).
  Time and test accuracy of the private pipeline (K-means Nyström, polynomial kernel,
  output perturbation) against the non-private RBF/poly SVM on a 20,000-row subsample
  and private linear learning on the raw features.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def polynomial_data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The scale experiment's data (module docstring), generated in float64."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 5:] *= 0.1
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 + X[:, 2] * X[:, 3] > 1.386).astype(np.int64)
    return X, y


def scale(args: argparse.Namespace) -> None:
    from sklearn.svm import SVC

    from privkit.algorithms.erm import OutputPerturbationClassifier
    from privkit.algorithms.nystrom import KMeansNystromClassifier

    n, d, k = args.rows, args.features, args.k
    t0 = time.perf_counter()
    X, y = polynomial_data(n + 20_000, d, seed=0)
    Xte, yte = X[n:], y[n:]
    X, y = X[:n], y[:n]
    t_gen = time.perf_counter() - t0
    radius = 4.0  # public: E||x||^2 = 5 + 0.01 (d - 5); rows beyond are clipped
    lines = [f"# K-means Nyström at scale: n = {n}, d = {d}, K = {k}", "",
             (f"Machine: {os.cpu_count()} cores, run with OMP_NUM_THREADS="
             f"{os.environ.get('OMP_NUM_THREADS')}; data generation {t_gen:.1f} s "
             "(not counted)."), "",
             "| model | epsilon | delta | fit time (s) | test accuracy |",
             "|---|---|---|---|---|"]
    for eps in args.epsilons:
        clf = KMeansNystromClassifier(
            k, epsilon=eps, delta=1.0 / n, kernel="poly", degree=2, coef0=1.0,
            gamma=1.0 / 4.0, data_radius=radius, n_iter=args.iters,
            regularization=args.regularization, tol=1e-6, random_state=0)
        t = time.perf_counter()
        clf.fit(X, y)
        fit_time = time.perf_counter() - t
        acc = float(np.mean(clf.predict(Xte) == yte))
        eps_cert = clf.guarantee_.epsilon_at(1.0 / n)
        lines.append(f"| private K-means Nyström (poly-2, output perturbation) | {eps} "
                     f"(certified {eps_cert:.3f}) | 1/n | {fit_time:.1f} | {acc:.4f} |")
        print(lines[-1], flush=True)
    lin = OutputPerturbationClassifier(epsilon=1.0, regularization=args.regularization,
                                       row_norm_bound=radius, tol=1e-6, random_state=0)
    t = time.perf_counter()
    lin.fit(X, y)
    lines.append(f"| private linear (raw features, output perturbation) | 1.0 | 0 | "
                 f"{time.perf_counter() - t:.1f} | {np.mean(lin.predict(Xte) == yte):.4f} |")
    print(lines[-1], flush=True)
    m = min(20_000, n)
    for kernel in ("poly", "rbf"):
        svc = SVC(kernel=kernel, degree=2, coef0=1.0, gamma="scale", C=1.0)
        t = time.perf_counter()
        svc.fit(X[:m], y[:m])
        lines.append(f"| non-private SVC ({kernel}, {m}-row subsample) | inf | - | "
                     f"{time.perf_counter() - t:.1f} | {svc.score(Xte, yte):.4f} |")
        print(lines[-1], flush=True)
    lines += ["", (f"Pipeline: DP K-means (DPLloyd, Gaussian, {args.iters} iterations, "
              f"epsilon/2) -> Nyström (poly kernel (x.y/4 + 1)^2, public radius {radius}) "
              f"-> output perturbation (epsilon/2, Huber, lambda {args.regularization}, "
              "tol 1e-6). Test set: 20,000 fresh rows.")]
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"kernel_scale_{n}.md"
    out.write_text("\n".join(lines) + "\n")
    print("wrote", out)


DPKSVMEL_SETS = ["australian", "breast-cancer", "heart", "ionosphere", "sonar",
                 "german-numer", "diabetes", "splice-train"]


def _libsvm_scaled(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """A dataset scaled to [-1, 1] per feature (libsvm's svm-scale, as the paper's
    libsvm copies); labels 0/1. The corrected variant takes [-1, 1]^d as public."""
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    X, y = data[:, :-1], data[:, -1]
    lo, hi = X.min(0), X.max(0)
    X = 2 * (X - lo) / np.where(hi > lo, hi - lo, 1.0) - 1
    return X, (y == y.max()).astype(int)


def dpksvmel(args: argparse.Namespace) -> None:
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split
    from sklearn.svm import SVC

    from privkit.algorithms.dpksvmel import DPKSVMEL, DPKSVMELCorrected

    ks = [2] if args.reduced else [2, 3]
    epsilons = [0.1, 1.0] if args.reduced else [0.1, 0.5, 1.0]
    llss = [0.5, 0.9] if args.reduced else [0.5, 0.6, 0.7, 0.8, 0.9]
    lines = [("# DPKSVMEL: faithful (no certified guarantee) vs corrected (epsilon-DP) vs "
             "non-private"), "",
             (f"Test accuracy / AUC, mean over {args.runs} random 70/30 splits; features "
             "scaled to [-1, 1]. Faithful: DPKSVMEL's Algorithm 1 (its Theorem 1 does not "
             "hold: privkit certifies nothing). Corrected: DPKSVMELCorrected "
             "(16 private centroids, RBF gamma = 1/d, pure epsilon-DP, certified by "
             "privkit)."), "",
             "| dataset | model | k | LLs | epsilon | accuracy | AUC |",
             "|---|---|---|---|---|---|---|"]
    for name in DPKSVMEL_SETS:
        path = Path(args.data) / f"{name}.csv.gz"
        if not path.exists():
            print("missing", path)
            continue
        X, y = _libsvm_scaled(path)
        d = X.shape[1]
        results: dict[tuple[str, int, float, float], list[tuple[float, float]]] = {}
        for run in range(args.runs):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=run,
                                                  stratify=y)

            def score(model: object, key: tuple[str, int, float, float], Xte: np.ndarray = Xte,
                      yte: np.ndarray = yte, results: dict = results) -> None:
                pred = model.predict(Xte)  # type: ignore[attr-defined]
                dec = model.decision_function(Xte)  # type: ignore[attr-defined]
                results.setdefault(key, []).append((float(np.mean(pred == yte)),
                                                    float(roc_auc_score(yte, dec))))

            score(SVC(gamma=1.0 / d).fit(Xtr, ytr), ("non-private SVC", 0, 0.0, math.inf))
            for eps in epsilons:
                for k in ks:
                    for lls in llss:
                        score(DPKSVMEL(epsilon=eps, k=k, lls=lls, random_state=run)
                              .fit(Xtr, ytr), ("faithful", k, lls, eps))
                score(DPKSVMELCorrected(16, epsilon=eps, data_radius=math.sqrt(d),
                                        random_state=run).fit(Xtr, ytr),
                      ("corrected", 0, 0.0, eps))
        for (model, k, lls, eps), vals in results.items():
            acc, auc = np.mean(vals, axis=0)
            lines.append(f"| {name} | {model} | {k or '-'} | {lls or '-'} | {eps} | "
                         f"{acc:.3f} | {auc:.3f} |")
        print(name, "done", flush=True)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "dpksvmel.md"
    out.write_text("\n".join(lines) + "\n")
    print("wrote", out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("scale")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--features", type=int, default=200)
    p.add_argument("--k", type=int, default=256)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--regularization", type=float, default=1e-3)
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0])
    p = sub.add_parser("dpksvmel")
    p.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--reduced", action="store_true")
    args = parser.parse_args()
    {"scale": scale, "dpksvmel": dpksvmel}[args.command](args)


if __name__ == "__main__":
    main()
