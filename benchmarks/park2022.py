"""Reproduce Park 2022 (J. Park, "Differentially private multi-class classification using
kernel supports and equilibrium points", SNU 2022): Table 7.2 timings next to a
non-private scikit-learn SVC timed in the same run, Table 7.3 (shuttle sub-sampled to 10%
and 30%) next to the thesis' numbers, and Figure 7.1 (accuracy against epsilon).

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python -P benchmarks/park2022.py
[--part timing table73 figure] [--runs 5] [--data /work/shared/data]``. Writes
``benchmarks/results/park2022_*.md`` and ``park2022_figure71.png``.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from privkit.algorithms import park2022 as p

RESULTS = Path(__file__).resolve().parent / "results"
#: Thesis Table 7.2 (seconds, training + inference).
PAPER_72 = {
    "svm_weight": [4.72, 100.65, 0.60, 4.66, 71.17, 1376.24, 298.70, 49943.29],
    "svm_semi": [5.01, 64.35, 0.51, 1.63, 31.39, 1158.10, 140.61, 52519.56],
    "proposed": [0.90, 2.41, 0.18, 1.32, 1.96, 31.03, 4.54, 1334.80],
}
#: Thesis Table 7.3 (test accuracy) at epsilon 0.01, 0.1, 1, 5, non-private.
PAPER_73 = {
    0.1: {"svm_weight": [0.366, 0.310, 0.892, 0.917, 0.912],
          "svm_semi": [0.332, 0.484, 0.899, 0.932, 0.930],
          "proposed": [0.456, 0.644, 0.908, 0.983, 0.987],
          "svm_output": [0.493, 0.919, 0.926, 0.926, 0.926]},
    0.3: {"svm_weight": [0.135, 0.456, 0.957, 0.955, 0.948],
          "svm_semi": [0.330, 0.514, 0.935, 0.950, 0.947],
          "proposed": [0.635, 0.786, 0.958, 0.981, 0.986],
          "svm_output": [0.559, 0.943, 0.943, 0.946, 0.946]},
}
EPS_73 = (0.01, 0.1, 1.0, 5.0, p.NON_PRIVATE)


def timing(data: str) -> str:
    from sklearn.svm import SVC

    lines = ["| dataset | method | privkit (s) | thesis Table 7.2 (s) | speed-up |",
             "|---|---|---|---|---|"]
    for j, dataset in enumerate(p.DATASETS):
        X, y = p.load_dataset(dataset, data, seed=0)
        for method in ("proposed", "svm_weight", "svm_semi", "svm_output"):
            r = p.run_once(method, dataset, 1.0, X, y, seed=0)
            paper = PAPER_72.get(method, [None] * 8)[j]
            ratio = f"{paper / r['seconds']:.0f}x" if paper else "-"
            lines.append(f"| {dataset} | {method} | {r['seconds']:.3f} | "
                         f"{paper if paper else '-'} | {ratio} |")
        order = np.random.default_rng(0).permutation(len(y))
        cut = round(0.8 * len(y))
        nu, gamma = p.TABLE_7_1[dataset]["output"]
        start = time.perf_counter()
        svc = SVC(C=nu * cut, gamma=gamma).fit(X[order[:cut]], y[order[:cut]])
        acc = float(np.mean(svc.predict(X[order[cut:]]) == y[order[cut:]]))
        lines.append(f"| {dataset} | sklearn SVC (non-private, C = nu n) | "
                     f"{time.perf_counter() - start:.3f} | - | acc {acc:.3f} |")
        print(lines[-1], flush=True)
    return "\n".join(lines)


def table73(data: str, runs: int) -> str:
    out = []
    for fraction in (0.1, 0.3):
        grid = p.run_grid(("shuttle",), ("proposed", "proposed_paper", "svm_weight",
                                         "svm_semi", "svm_output"), EPS_73, runs, data,
                          fraction=fraction)
        out.append(f"\n### shuttle sub-sampled to {fraction:.0%} ({runs} runs, mean ± sd)\n")
        out.append("| method | " + " | ".join(
            "non-private" if e >= p.NON_PRIVATE else f"eps={e:g}" for e in EPS_73) +
            " | privkit guarantee at eps=1 |")
        out.append("|---" * (len(EPS_73) + 2) + "|")
        for method in ("proposed", "proposed_paper", "svm_weight", "svm_semi", "svm_output"):
            cells = []
            for k, e in enumerate(EPS_73):
                acc = np.array([r["accuracy"] for r in grid[("shuttle", method, e)]])
                paper_key = "proposed" if method == "proposed_paper" else method
                paper = PAPER_73[fraction].get(paper_key, [None] * 5)[k]
                cells.append(f"{acc.mean():.3f} ± {acc.std():.3f} (thesis {paper})")
            g = grid[("shuttle", method, 1.0)][0]["guarantee"]
            out.append(f"| {method} | " + " | ".join(cells) + f" | {g} |")
        print("\n".join(out[-7:]), flush=True)
    return "\n".join(out)


def figure(data: str, runs: int) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps = (*p.EPSILONS, p.NON_PRIVATE)
    methods = ("proposed", "proposed_paper", "svm_weight", "svm_semi", "svm_output")
    fig, axes = plt.subplots(2, 4, figsize=(16, 7))
    rows = ["| dataset | method | " + " | ".join(f"{e:g}" for e in eps) + " |",
            "|---" * (len(eps) + 2) + "|"]
    for ax, dataset in zip(axes.ravel(), p.DATASETS, strict=True):
        grid = p.run_grid((dataset,), methods, eps, runs, data)
        xs = np.arange(len(eps))
        for method in methods:
            acc = np.array([[r["accuracy"] for r in grid[(dataset, method, e)]] for e in eps])
            ax.errorbar(xs, acc.mean(1), yerr=acc.std(1), label=method, capsize=2)
            rows.append(f"| {dataset} | {method} | " + " | ".join(
                f"{a:.3f}" for a in acc.mean(1)) + " |")
        ax.set_xticks(xs, [f"{e:g}" for e in p.EPSILONS] + ["NP"])
        ax.set_title(dataset)
        ax.set_ylim(0, 1.02)
        print(dataset, "done", flush=True)
    axes[0, 0].legend(fontsize=7)
    fig.supxlabel("epsilon")
    fig.supylabel("test accuracy")
    fig.tight_layout()
    fig.savefig(RESULTS / "park2022_figure71.png", dpi=110)
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", nargs="*", default=["timing", "table73", "figure"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", default="/work/shared/data")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    header = (f"Machine: {platform.processor() or platform.machine()}, one thread "
              f"(OMP_NUM_THREADS=1). Produced by benchmarks/park2022.py.\n\n")
    if "timing" in args.part:
        (RESULTS / "park2022_table72.md").write_text(
            "# Park 2022 Table 7.2: training + inference time\n\n" + header + timing(args.data)
            + "\n")
    if "table73" in args.part:
        (RESULTS / "park2022_table73.md").write_text(
            "# Park 2022 Table 7.3: shuttle sub-sampled\n\n" + header
            + "proposed = privkit's private mode (guarantee_ is privkit's accountant); "
              "proposed_paper = the thesis' procedure (no finite guarantee, claim "
              "PureDP(eps)); svm_output charges eps per query as the thesis does "
              "(guarantee_ composes the queries).\n" + table73(args.data, args.runs) + "\n")
    if "figure" in args.part:
        (RESULTS / "park2022_figure71.md").write_text(
            "# Park 2022 Figure 7.1: mean test accuracy\n\n" + header
            + figure(args.data, args.runs) + "\n")


if __name__ == "__main__":
    main()
