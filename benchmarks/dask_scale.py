"""Does dask pay? DP k-means and the private kernel mean on a dask LocalCluster of 2 workers
against the same cluster with 1 worker, and against numpy, in one run (issue 27).

Run: .venv/bin/python -P benchmarks/dask_scale.py [--rows 1000000] [--features 16]
     [--clusters 16] [--iterations 5] [--components 200] [--repeats 3]

Each cluster is a ``distributed.LocalCluster`` of worker processes with one thread each
(dask's nanny sets ``OMP_NUM_THREADS=1`` and friends in them; this script sets them for
its own process before numpy loads, so numpy is one thread too). The data are made on the
workers (``dask.array.random``, dask's default ``chunks="auto"``: one 128 MiB block for
10^6 x 16) and persisted there before anything is timed, as a user with a cluster has
them; ``fit`` cuts them into privkit's row blocks (``privkit.algorithms._dask_blocks``:
one block per worker thread, each a whole number of ``chunk_size`` pieces) and keeps
those on the workers for the fit's passes, and that move is inside the time. numpy fits
the same rows (computed from the cluster) in this process. Every fit's model is checked
bit for bit against numpy's. Medians of ``--repeats`` fits after one warm-up fit per
setting; the CPU seconds of every process (the client with its scheduler thread, each
worker) give a second, load-independent figure: ``client + busiest worker`` is the time
an idle machine would need, if the workers never wait for each other. Writes
``benchmarks/results/dask_scale.md`` with the commit and the load average.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
CHUNK = 65536  # the estimators' default chunk_size


def estimators(args: argparse.Namespace) -> dict[str, Any]:
    """The two estimators, by name (fresh instances: the same seed every fit)."""
    from privkit.algorithms import DPKMeans, PrivateKernelMean

    return {
        "DPKMeans": DPKMeans(args.clusters, epsilon=1.0, n_iter=args.iterations,
                             data_radius=6.0, random_state=0),
        "PrivateKernelMean": PrivateKernelMean(args.components, epsilon=1.0,
                                               relation="add_remove", random_state=0),
    }


def make_rows(block: np.ndarray, block_info: Any = None) -> np.ndarray:
    """One block of the data, made on its worker: standard normal rows, each piece of
    ``CHUNK`` rows from its own seed, so that the data do not depend on the blocks."""
    start, stop = block_info[0]["array-location"][0]
    first = start // CHUNK
    pieces = [np.random.default_rng([2027, p]).standard_normal((CHUNK, block.shape[1]))
              for p in range(first, -(-stop // CHUNK))]
    offset = start - first * CHUNK
    return np.concatenate(pieces)[offset:offset + stop - start]


def model(estimator: Any) -> np.ndarray:
    """What must be identical across runs: the centroids or the embedding."""
    fitted = "cluster_centers_" if hasattr(estimator, "cluster_centers_") else "embedding_"
    return np.asarray(getattr(estimator, fitted))


def cpu_seconds(client: Any) -> tuple[float, list[float]]:
    """(this process's CPU seconds, each worker's)."""
    workers = client.run(time.process_time)
    return time.process_time(), [workers[w] for w in sorted(workers)]


def timed(fit: Any, client: Any = None) -> tuple[float, float, list[float], Any]:
    """(wall seconds, client CPU seconds, each worker's CPU seconds, fitted model)."""
    before = cpu_seconds(client) if client is not None else (time.process_time(), [])
    start = time.perf_counter()
    fitted = fit()
    wall = time.perf_counter() - start
    after = cpu_seconds(client) if client is not None else (time.process_time(), [])
    return (wall, after[0] - before[0], [b - a for a, b in zip(before[1], after[1],
                                                                 strict=True)], fitted)


def run_cluster(workers: int, layout: str, args: argparse.Namespace,
                reference: dict[str, np.ndarray]
                ) -> tuple[dict[str, list[tuple[float, float, list[float]]]], np.ndarray, str]:
    """Fits on a LocalCluster of ``workers`` one-thread worker processes, the data made in
    ``layout`` ("privkit": privkit's row blocks; "auto": dask's default chunks): the
    timings per estimator, the data (for numpy) and the row blocks privkit read."""
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    from privkit.algorithms._dask_blocks import block_rows, dask_row_blocks

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        chunks: Any = "auto"
        if layout == "privkit":
            chunks = (block_rows(args.rows, CHUNK, workers), args.features)
        X = da.zeros((args.rows, args.features), chunks=chunks).map_blocks(
            make_rows, dtype=np.float64)
        X = client.persist(X)
        wait(X)
        blocks = (f"{X.chunks[0]} as made -> {dask_row_blocks(X, CHUNK).chunks[0]} read")
        out: dict[str, list[tuple[float, float, list[float]]]] = {}
        for name in estimators(args):
            runs = []
            for repeat in range(args.repeats + 1):  # the first is the warm-up
                fresh = estimators(args)[name]
                wall, cpu, per_worker, fitted = timed(lambda e=fresh: e.fit(X), client)
                if name not in reference:
                    reference[name] = model(fitted)
                np.testing.assert_array_equal(model(fitted), reference[name])
                if repeat:
                    runs.append((wall, cpu, per_worker))
                print(workers, layout, name, f"{wall:.2f} s", f"client {cpu:.2f}",
                      "workers", [f"{w:.2f}" for w in per_worker], flush=True)
            out[name] = runs
        data = X.compute() if workers == 1 and layout == "privkit" else np.empty(0)
    return out, data, blocks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=1_000_000, type=int)
    parser.add_argument("--features", default=16, type=int)
    parser.add_argument("--clusters", default=16, type=int)
    parser.add_argument("--iterations", default=5, type=int)
    parser.add_argument("--components", default=200, type=int)
    parser.add_argument("--repeats", default=3, type=int)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).parent, check=False).stdout.strip()
    load = os.getloadavg()
    started = time.time()
    reference: dict[str, np.ndarray] = {}
    runs_by: dict[tuple[int, str], Any] = {}
    blocks: dict[tuple[int, str], str] = {}
    X = np.empty(0)
    for layout in ("privkit", "auto"):
        for workers in (1, 2):
            runs_by[workers, layout], data, blocks[workers, layout] = run_cluster(
                workers, layout, args, reference)
            X = data if data.size else X
    local: dict[str, list[tuple[float, float, list[float]]]] = {}
    for name in estimators(args):
        runs = []
        for repeat in range(args.repeats + 1):  # the first is the warm-up
            fresh = estimators(args)[name]
            wall, cpu, _, fitted = timed(lambda e=fresh: e.fit(X))
            np.testing.assert_array_equal(model(fitted), reference[name])
            if repeat:
                runs.append((wall, cpu, []))
            print("numpy", name, f"{wall:.2f} s", flush=True)
        local[name] = runs
    end_load = os.getloadavg()

    def med(runs: list[tuple[float, float, list[float]]], what: str) -> float:
        if what == "wall":
            return statistics.median(r[0] for r in runs)
        return statistics.median(r[1] + max(r[2], default=0.0) for r in runs)

    lines = [
        "# dask that pays: DP k-means and the kernel mean on a LocalCluster (issue 27)", "",
        (f"Commit {commit}; load average (1, 5, 15 min) at start {load[0]:.2f}, "
         f"{load[1]:.2f}, {load[2]:.2f}, at the end {end_load[0]:.2f}, {end_load[1]:.2f}, "
         f"{end_load[2]:.2f} ({os.cpu_count()} cores, shared by other jobs)."),
        (f"Command: `.venv/bin/python -P benchmarks/dask_scale.py --rows {args.rows} "
         f"--features {args.features} --clusters {args.clusters} --iterations "
         f"{args.iterations} --components {args.components} --repeats {args.repeats}`"), "",
        (f"{args.rows:,} rows x {args.features} features, standard normal (the same rows "
         "whatever the blocks), made on the "
         "workers and persisted there before timing (two layouts, below). "
         f"DPKMeans: {args.clusters} clusters, {args.iterations} iterations "
         f"(one pass over the rows each). PrivateKernelMean: {args.components} random "
         "Fourier features, add-remove (one pass). chunk_size 65536 (the default). "
         "LocalCluster of worker processes, 1 thread each; numpy one thread, in the "
         "client process. Every model (centroids, embedding) is bit-identical across "
         "numpy, 1 worker and 2 workers (checked)."), "",
        (f"Median of {args.repeats} fits after a warm-up. Wall: seconds of `fit`. CPU: "
         "the client's CPU seconds (with the scheduler's thread) plus the busiest "
         "worker's, the wall time of an idle machine if the workers never wait."), ""]
    for layout, title in (("privkit", ("Data made in privkit's row blocks (one block per "
                           "worker thread, a whole number of chunk_size rows each)")),
                          ("auto", ("Data made with dask's default chunks (`fit` "
                           "rechunks them into privkit's blocks and spreads those over "
                           "the workers once per fit: inside the time)"))):
        one, two = runs_by[1, layout], runs_by[2, layout]
        lines += [f"### {title}", "",
                  (f"Row blocks, 1 worker: {blocks[1, layout]}; 2 workers: "
                  f"{blocks[2, layout]}."), "",
                  ("| estimator | numpy wall | 1 worker wall | 2 workers wall | **1 / 2 "
                  "workers (wall)** | 1 worker CPU | 2 workers CPU | 1 / 2 workers (CPU) "
                  "| numpy / 2 workers (wall) |"),
                  "|---|---|---|---|---|---|---|---|---|"]
        for name in one:
            w1, w2 = med(one[name], "wall"), med(two[name], "wall")
            wn, c1, c2 = med(local[name], "wall"), med(one[name], "cpu"), med(two[name], "cpu")
            lines.append(f"| {name} | {wn:.2f} | {w1:.2f} | {w2:.2f} | **{w1 / w2:.2f}x** "
                         f"| {c1:.2f} | {c2:.2f} | {c1 / c2:.2f}x | {wn / w2:.2f}x |")
        lines.append("")
    lines += ["Each fit (wall s, client CPU s, workers' CPU s):", ""]
    for (workers, layout), table in sorted(runs_by.items()):
        for name, runs in table.items():
            lines.append(f"- {workers} worker(s), {layout} blocks, {name}: " + "; ".join(
                f"{w:.2f} / {c:.2f} / {', '.join(f'{x:.2f}' for x in ws)}"
                for w, c, ws in runs))
    for name, runs in local.items():
        lines.append(f"- numpy, {name}: " + "; ".join(f"{w:.2f} / {c:.2f}"
                                                       for w, c, _ in runs))
    lines += ["", f"Wall time of the whole run {time.time() - started:.0f} s."]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dask_scale.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
