"""Private kernel learning: K-means Nyström at scale, private KME on Adult.

Run (one core):
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python -P benchmarks/kernel_learning.py \
      scale [--rows 1000000] [--features 200] [--k 256]
  ... kernel_learning.py stages [--rows 1000000]   (CPU time of each stage of the fit)
  ... kernel_learning.py kme [--data ../shared/data] [--seeds 3]   (or: --part kme)

Writes to benchmarks/results/: ``kernel_scale_<n>.md``, ``kernel_scale_stages_<n>.md``,
``kernel_kme_adult.md`` and ``kernel_kme_adult.png``, each Markdown file stamped with the
commit and the code it depends on (tests/core/test_results_fresh.py). DPKSVMEL's
comparison is ``privkit reproduce dpksvmel``.

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
import sys
import time
from pathlib import Path

import numpy as np

from privkit.algorithms.reproduce._report import code_version
from privkit.algorithms.reproduce.lee_nystrom import polynomial_data

RESULTS = Path(__file__).resolve().parent / "results"
#: The code the results depend on.
DEPENDS = ("benchmarks/kernel_learning.py", "algorithms/reproduce/lee_nystrom.py",
           "algorithms/kernels/nystrom.py", "algorithms/kernels/nystrom_map.py",
           "algorithms/kernels/kmeans.py", "algorithms/kernels/kernel_mean.py",
           "algorithms/kernels/feature_mean.py", "algorithms/linear/erm.py",
           "algorithms/linear/_private_linear.py", "algorithms/kernels/random_features.py")


def _write(path: Path, lines: list[str]) -> None:
    """``lines`` under the stamp (command, commit, depends) as ``path``."""
    command = ("OMP_NUM_THREADS=1 .venv/bin/python -P benchmarks/kernel_learning.py "
               + " ".join(sys.argv[1:]))
    stamp = [f"- command: {command}", f"- privkit-commit: {code_version(DEPENDS)}",
             f"- privkit-depends: {' '.join(DEPENDS)}", ""]
    RESULTS.mkdir(exist_ok=True)
    path.write_text("\n".join([*lines[:2], *stamp, *lines[2:]]) + "\n")


def _load() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg()) + " (1, 5, 15 min)"


def scale(args: argparse.Namespace) -> None:
    from sklearn.svm import SVC

    from privkit.algorithms.kernels.nystrom import KMeansNystromClassifier
    from privkit.algorithms.linear.erm import OutputPerturbationClassifier

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
             (f"Load average before the fits: {_load()}. Fit times are wall-clock; the CPU "
              "time (process_time, one thread) is given beside them because the machine is "
              "shared: on an idle core the two agree."), "",
             "| model | epsilon | delta | fit time (s) | CPU time (s) | test accuracy |",
             "|---|---|---|---|---|---|"]
    for eps in args.epsilons:
        clf = KMeansNystromClassifier(
            k, epsilon=eps, delta=1.0 / n, classes=[0, 1], kernel="poly", degree=2, coef0=1.0,
            gamma=1.0 / 4.0, data_radius=radius, n_iter=args.iters,
            regularization=args.regularization, tol=1e-6, random_state=0)
        t, c = time.perf_counter(), time.process_time()
        clf.fit(X, y)
        fit_time, cpu = time.perf_counter() - t, time.process_time() - c
        acc = float(np.mean(clf.predict(Xte) == yte))
        eps_cert = clf.guarantee_.epsilon_at(1.0 / n)
        lines.append(f"| private K-means Nyström (poly-2, output perturbation) | {eps} "
                     f"(certified {eps_cert:.3f}) | 1/n | {fit_time:.1f} | {cpu:.1f} | "
                     f"{acc:.4f} |")
        print(lines[-1], flush=True)
    lin = OutputPerturbationClassifier(epsilon=1.0, classes=[0, 1],
                                       regularization=args.regularization,
                                       row_norm_bound=radius, tol=1e-6, random_state=0)
    t, c = time.perf_counter(), time.process_time()
    lin.fit(X, y)
    lines.append(f"| private linear (raw features, output perturbation) | 1.0 | 0 | "
                 f"{time.perf_counter() - t:.1f} | {time.process_time() - c:.1f} | "
                 f"{np.mean(lin.predict(Xte) == yte):.4f} |")
    print(lines[-1], flush=True)
    m = min(20_000, n)
    for kernel in ("poly", "rbf"):
        svc = SVC(kernel=kernel, degree=2, coef0=1.0, gamma="scale", C=1.0)
        t, c = time.perf_counter(), time.process_time()
        svc.fit(X[:m], y[:m])
        lines.append(f"| non-private SVC ({kernel}, {m}-row subsample) | inf | - | "
                     f"{time.perf_counter() - t:.1f} | {time.process_time() - c:.1f} | "
                     f"{svc.score(Xte, yte):.4f} |")
        print(lines[-1], flush=True)
    lines += ["", (f"Pipeline: DP K-means (DPLloyd, Gaussian, {args.iters} iterations, "
              f"epsilon/2) -> Nyström (poly kernel (x.y/4 + 1)^2, public radius {radius}) "
              f"-> output perturbation (epsilon/2, Huber, lambda {args.regularization}, "
              "tol 1e-6). Test set: 20,000 fresh rows."), "",
              f"Load average after the runs: {_load()}."]
    out = RESULTS / f"kernel_scale_{n}.md"
    _write(out, lines)
    print("wrote", out)


KME_GAMMA = 2.0  # public choice for Adult rows of norm <= 1 (not fitted to the data)


def kme(args: argparse.Namespace) -> None:
    """Private KME error on Adult against K, for three feature maps (module docstring of
    :mod:`privkit.algorithms.kernels.kernel_mean`).

    Definitions (precisely). X: the n = 30,162 Adult training rows (``load_adult``, public
    bounds, rows of norm <= 1); k: the RBF kernel ``exp(-2 ||x - y||^2)``;
    ``mu_X = (1/n) sum_i k(x_i, .)``: the exact mean embedding (full kernel, all n rows).

    * RKHS error (Nyström maps): ``D(v) = ||g_v - mu_X||_H = sqrt(||v||^2 -
      2 <v, phi_bar(X)> + ||mu_X||_H^2)``, with ``g_v`` the RKHS element of the released
      vector v (:func:`~privkit.algorithms.kernels.kernel_mean.kme_distance`) and
      ``||mu_X||_H^2 = (1/n^2) sum_{i,j} k(x_i, x_j)`` computed exactly. For RFF, v is not
      an element of H_k (cosines are not in the Gaussian RKHS) and the same expansion can
      be negative, so no RKHS distance is reported for it.
    * Witness error (all maps): ``W(v) = sqrt(mean_j (<v, phi(t_j)> - mu_X(t_j))^2)`` over
      2,000 public evaluation points t_j (rows of the Adult test split), where
      ``mu_X(t) = (1/n) sum_i k(x_i, t)``: the L2 distance between the released
      embedding's witness function and the exact one.

    Each is reported for the private vector and for the map's exact (non-private) feature
    mean, which isolates the approximation error from the privacy noise.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from privkit.algorithms.datasets import load_adult
    from privkit.algorithms.kernels.kernel_mean import PrivateKernelMean, kme_distance
    from privkit.algorithms.kernels.nystrom import Kernel

    data = Path(args.data)
    if not (data / "adult-train.csv.gz").exists():
        print("missing", data / "adult-train.csv.gz")
        return
    X, _, X_public, _ = load_adult(data)
    n = X.shape[0]
    kernel = Kernel("rbf", gamma=KME_GAMMA)
    t = time.perf_counter()
    # ||mu_X||_H once: the distance of the zero vector
    norm_mu = kme_distance(np.zeros(1), _ZeroMap(), X, kernel)
    T = X_public[np.random.default_rng(99).choice(X_public.shape[0], 2000, replace=False)]
    mu_T = sum(kernel(X[i:i + 4096], T).sum(0) for i in range(0, n, 4096)) / n
    print(f"||mu_X||_H = {norm_mu:.6f} ({time.perf_counter() - t:.1f} s)", flush=True)
    delta = 1e-6
    maps = {"K-means Nyström (private centroids)": "kmeans_nystrom",
            "subsample Nyström (public landmarks)": "nystrom",
            "RFF (Balog et al. 2018)": "rff"}
    rows: dict[tuple[float, str, int], list[tuple[float, ...]]] = {}
    for eps in args.epsilons:
        for K in args.ks:
            for label, fm in maps.items():
                for seed in range(args.seeds):
                    landmarks = None
                    if fm == "nystrom":
                        rng = np.random.default_rng(1000 + seed)
                        landmarks = X_public[rng.choice(X_public.shape[0], K, replace=False)]
                    model = PrivateKernelMean(K, epsilon=eps, delta=delta, feature_map=fm,
                                              gamma=KME_GAMMA, landmarks=landmarks, n_iter=5,
                                              random_state=seed).fit(X)
                    fmap = model.feature_map_
                    exact = np.asarray(fmap.transform(X)).mean(0)
                    FT = np.asarray(fmap.transform(T))
                    v = model.embedding_
                    nan = float("nan")
                    rkhs = fm != "rff"
                    rows.setdefault((eps, label, K), []).append((
                        _distance(v, exact, norm_mu) if rkhs else nan,
                        _distance(exact, exact, norm_mu) if rkhs else nan,
                        float(np.sqrt(np.mean((FT @ v - mu_T) ** 2))),
                        float(np.sqrt(np.mean((FT @ exact - mu_T) ** 2)))))
                a = np.array(rows[(eps, label, K)])
                print(f"eps={eps} K={K} {label}: " + " ".join(f"{x:.4f}" for x in a.mean(0)),
                      flush=True)
    lines = ["# Private kernel mean embedding on Adult: error against K", "",
             (f"n = {n} training rows (load_adult: public bounds, rows of norm <= 1), RBF "
              f"kernel exp(-{KME_GAMMA} ||x - y||^2), delta = {delta}, replace-one "
              f"(n public), Gaussian noise; mean (sd) over {args.seeds} seeds. "
              f"||mu_X||_H = {norm_mu:.4f}."), "",
             ("RKHS error: ||g_v - mu_X||_H, mu_X the exact full-kernel mean embedding of all "
              "n rows, g_v the released vector's RKHS element (Nyström maps only: an RFF "
              "vector is not in the Gaussian RKHS). Witness error: the root mean square, "
              "over 2,000 public points (Adult test rows), of <v, phi(t)> - mu_X(t). "
              "'non-private' is the exact feature mean under the same map (for K-means "
              "Nyström, the private centroids of that row's epsilon): the approximation "
              "error alone. "
              "K-means Nyström spends half the budget (of mu^2 in GDP) on DP K-means "
              "(5 iterations); subsample Nyström takes its landmarks from the Adult *test* "
              "split as a stand-in for public data (a subsample of the private rows would "
              "be published with the map); RFF spends the whole budget on the mean. "
              "Definitions: `kme` in benchmarks/kernel_learning.py."), "",
             ("| epsilon | map | K | RKHS error, private | RKHS error, non-private | "
             "witness error, private | witness error, non-private |"),
             "|---|---|---|---|---|---|---|"]
    for (eps, label, K), vals in rows.items():
        a = np.array(vals)
        cells = " | ".join("-" if np.isnan(m) else f"{m:.4f} ({sd:.4f})"
                           for m, sd in zip(a.mean(0), a.std(0), strict=False))
        lines.append(f"| {eps} | {label} | {K} | {cells} |")
    lines += ["", ("Reading: the mean's own noise is small at n = 30,162 (its L2 sensitivity "
                   "is 2/n), so each map's error is mostly its approximation error. "
                   "K-means Nyström's error does not fall with K: DPLloyd's per-cluster "
                   "noise is fixed while the clusters' sizes n/K shrink, and a cluster whose "
                   "noisy count is below three noise standard deviations keeps its initial "
                   "(public, data-independent) centroid, so extra centroids add little; "
                   "public landmarks (where public data exist) improve with K as in the "
                   "non-private Nyström method, and RFF improve as 1/sqrt(K)."),
              "", f"Load average at the end: {_load()}."]
    _write(RESULTS / "kernel_kme_adult.md", lines)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    ks = list(args.ks)
    for ax, col, title in ((axes[0], 0, "RKHS error"), (axes[1], 2, "witness error")):
        for i, label in enumerate(maps):
            if col == 0 and maps[label] == "rff":
                continue
            for j, eps in enumerate(args.epsilons):
                y = [np.mean([v[col] for v in rows[(eps, label, K)]]) for K in ks]
                ax.plot(ks, y, ["o-", "s:", "^-."][j % 3], color=f"C{i}",
                        label=f"{label}, eps={eps}")
            y = [np.mean([v[col + 1] for v in rows[(args.epsilons[0], label, K)]])
                 for K in ks]
            ax.plot(ks, y, "x--", color=f"C{i}", alpha=0.5,
                    label=f"{label}, exact feature mean (map of eps={args.epsilons[0]})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("K (landmarks / random features)")
        ax.set_title(f"Adult, RBF gamma={KME_GAMMA}: {title}")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(RESULTS / "kernel_kme_adult.png", dpi=120)
    print("wrote", RESULTS / "kernel_kme_adult.md", RESULTS / "kernel_kme_adult.png")


class _ZeroMap:
    """A one-feature map that is 0 everywhere: ``kme_distance(0, _ZeroMap, X, k)`` is
    ``||mu_X||_H``."""

    n_components = 1

    def transform(self, X: np.ndarray) -> np.ndarray:
        return np.zeros((X.shape[0], 1))


def _distance(v: np.ndarray, phi_bar: np.ndarray, norm_mu: float) -> float:
    """``kme_distance`` with ``phi_bar`` and ``||mu_X||_H`` precomputed."""
    sq = float(v @ v) - 2.0 * float(v @ phi_bar) + norm_mu**2
    return math.sqrt(max(sq, 0.0))


def stages(args: argparse.Namespace) -> None:
    """CPU time (one thread) of each stage of the K-means Nyström fit of ``scale``: DP
    K-means, the Nyström transform, the private linear learner (the same calls as
    ``KMeansNystromClassifier.fit``, seeds included)."""
    from privkit.algorithms.kernels.nystrom import KMeansNystromClassifier, NystromMap

    n, d, k = args.rows, args.features, args.k
    X, y = polynomial_data(n, d, seed=0)
    clf = KMeansNystromClassifier(k, epsilon=1.0, delta=1.0 / n, classes=[0, 1],
                                  kernel="poly", degree=2, coef0=1.0, gamma=1.0 / 4.0,
                                  data_radius=4.0, n_iter=args.iters,
                                  regularization=args.regularization, tol=1e-6,
                                  random_state=0)
    seeds = np.random.SeedSequence(0).spawn(2)
    before = _load()
    times = {}
    c = time.process_time()
    kmeans_epsilon, learner_epsilon = clf._budget(n, d, 2, 1.0, 1.0 / n)
    km = clf._kmeans(np.random.default_rng(seeds[0]), kmeans_epsilon, 1.0 / n).fit(X)
    times[f"DP K-means ({args.iters} iterations, kmeans.py)"] = time.process_time() - c
    c = time.process_time()
    fmap = NystromMap(km.cluster_centers_, clf._kernel(), data_radius=4.0)
    F = fmap.transform(X)
    times["Nyström transform (nystrom.py)"] = time.process_time() - c
    c = time.process_time()
    clf._learner(fmap.norm_bound, np.random.default_rng(seeds[1]), learner_epsilon, 2).fit(F, y)
    times["output perturbation learner (erm.py)"] = time.process_time() - c
    lines = [f"# K-means Nyström fit by stage: n = {n}, d = {d}, K = {k}", "",
             (f"CPU time (process_time, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}) "
              f"of each stage. Load average before: {before}; after: {_load()}."), "",
             "| stage | CPU time (s) |", "|---|---|"]
    lines += [f"| {name} | {t:.1f} |" for name, t in times.items()]
    lines.append(f"| total | {sum(times.values()):.1f} |")
    out = RESULTS / f"kernel_scale_stages_{n}.md"
    _write(out, lines)
    print("\n".join(lines))


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
    p = sub.add_parser("stages")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--features", type=int, default=200)
    p.add_argument("--k", type=int, default=256)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--regularization", type=float, default=1e-3)
    p = sub.add_parser("kme")
    p.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    p.add_argument("--ks", type=int, nargs="+", default=[8, 16, 32, 64, 128, 256])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 1.0])
    argv = sys.argv[1:]
    if "--part" in argv:  # ``--part kme`` is the same as the sub-command ``kme``
        i = argv.index("--part")
        argv = [argv[i + 1], *argv[:i], *argv[i + 2:]]
    args = parser.parse_args(argv)
    {"scale": scale, "stages": stages, "kme": kme}[args.command](args)


if __name__ == "__main__":
    main()
