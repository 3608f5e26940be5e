"""FedDPDR-DPML on Flower against the in-process run, in the same process.

Run: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python -P benchmarks/flower.py
     [--participants 5] [--rows 2000] [--features 784] [--components 20] [--repeats 3]

Writes benchmarks/results/flower.md: the time of a whole ``fit`` and of the protocol alone
(its three phases; the budget calibration is the same code in both runs), for the
in-process :class:`~privkit.algorithms.FedDPDRDPMLClassifier` and for
:class:`~privkit.algorithms.federated.flower.FlowerFedDPDRDPMLClassifier` (Flower's deployment
engine on 127.0.0.1: a SuperLink, one SuperNode per participant, the run submitted by
``flwr run``; the ServerApp and every participant's ClientApp in processes of their own),
the processes the participants ran in, the largest difference between the two models, and
the load average. Runs alternate between
the two; the first Flower run (cold caches) is reported apart. Synthetic data with
Wang et al.'s MNIST shape by default (784 features, k 20, 5 participants, epsilon 0.1,
delta 1e-4, the classes declared); only the shape matters for time.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from privkit.algorithms import FedDPDRDPMLClassifier
from privkit.algorithms.federated.flower import FlowerFedDPDRDPMLClassifier

RESULTS = Path(__file__).parent / "results"


def timed_fit(cls: type[Any], params: dict[str, Any], *data: Any, **fit: Any
              ) -> tuple[float, float, Any]:
    """Fit ``cls(**params)``: (seconds of the whole fit, seconds of its
    ``_run_protocol``, the model). The protocol is timed by wrapping the class's method
    for the call (not a subclass: the Flower participants unpickle the estimator by its
    class)."""
    original = cls.__dict__["_run_protocol"]
    seconds: list[float] = []

    def protocol(self: Any, federation: Any) -> Any:
        start = time.perf_counter()
        out = original(self, federation)
        seconds.append(time.perf_counter() - start)
        return out

    cls._run_protocol = protocol
    try:
        start = time.perf_counter()
        model = cls(**params).fit(*data, **fit)
        return time.perf_counter() - start, seconds[0], model
    finally:
        cls._run_protocol = original


def _commit() -> str:
    """The commit the code ran on ("+ changes" when the worktree differs from it)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                           cwd=root, capture_output=True, text=True, check=False).stdout
    return head + (" + changes" if dirty.strip() else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=5)
    parser.add_argument("--rows", type=int, default=2000, help="rows per participant")
    parser.add_argument("--features", type=int, default=784)
    parser.add_argument("--components", type=int, default=20)
    parser.add_argument("--classes", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "flower.md")
    args = parser.parse_args()
    os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")

    rng = np.random.default_rng(0)
    n = args.participants * args.rows
    X = rng.normal(size=(n, args.features)) * np.linspace(3.0, 0.2, args.features)
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    y = (np.argmax(X[:, :args.classes], axis=1) if args.classes > 2
         else (X[:, 0] > 0).astype(int))
    ids = np.arange(n) % args.participants
    params = dict(epsilon=0.1, delta=1e-4, n_components=args.components,
                  classes=list(range(args.classes)), random_state=0)
    load_before = os.getloadavg()

    def run(cls: type[Any]) -> tuple[float, float, Any]:
        return timed_fit(cls, params, X, y, participant=ids)

    cold_fit, cold_protocol, flower = run(FlowerFedDPDRDPMLClassifier)
    times: dict[str, list[tuple[float, float]]] = {"in-process": [], "Flower": []}
    difference = 0.0
    processes: set[int] = set()
    shared = 0  # PIDs that served two participants
    for _ in range(args.repeats):
        fit, protocol, local = run(FedDPDRDPMLClassifier)
        times["in-process"].append((fit, protocol))
        fit, protocol, flower = run(FlowerFedDPDRDPMLClassifier)
        times["Flower"].append((fit, protocol))
        deployed = flower._flower_run
        processes.update(deployed.client_pids.ravel().tolist())
        columns = [set(column.tolist()) for column in deployed.client_pids.T]
        shared += sum(len(a & b) for i, a in enumerate(columns) for b in columns[i + 1:])
        per_run = deployed.client_pids.size
        difference = max(difference, float(np.abs(flower.coef_ - local.coef_).max()),
                         float(np.abs(flower.intercept_ - local.intercept_).max()),
                         float(np.abs(flower.components_ - local.components_).max()))
    load_after = os.getloadavg()

    def median(name: str, i: int) -> float:
        return statistics.median(t[i] for t in times[name])

    import flwr

    rows = ["| run | fit (s, median) | protocol (s, median) | protocol runs (s) |",
            "| --- | ---: | ---: | --- |"]
    for name in times:
        runs = ", ".join(f"{p:.3f}" for _, p in times[name])
        rows.append(f"| {name} | {median(name, 0):.3f} | {median(name, 1):.3f} | {runs} |")
    rows.append(f"| Flower, first run | {cold_fit:.3f} | {cold_protocol:.3f} | |")
    ratio_fit = median("Flower", 0) / median("in-process", 0)
    ratio_protocol = median("Flower", 1) / median("in-process", 1)
    text = f"""# FedDPDR-DPML on Flower against the in-process run

Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python -P benchmarks/flower.py \
--participants {args.participants} --rows {args.rows} --features {args.features} \
--components {args.components} --classes {args.classes} --repeats {args.repeats}`

Commit {_commit()}, {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')},
Python {platform.python_version()},
flwr {flwr.__version__}, {os.cpu_count()} CPUs; load average (1, 5, 15 min) before
{', '.join(f'{v:.2f}' for v in load_before)}, after {', '.join(f'{v:.2f}' for v in load_after)}.

Setting: {args.participants} participants of {args.rows} rows, {args.features} features,
k = {args.components}, {args.classes} classes, epsilon 0.1, delta 1e-4 (Wang et al.'s
defaults), random_state 0. The Flower run is Flower's deployment engine on 127.0.0.1
(`flower-superlink`, one `flower-supernode` per participant, the app submitted by `flwr
run`), three rounds (the declared label set, private subspaces, private models); Flower
starts the ServerApp in a process and, for every round, each participant's ClientApp in a
process of its own: {per_run} ClientApp processes per run ({args.participants} participants x
3 rounds), {len(processes)} distinct PIDs over the {args.repeats} timed runs, {shared} shared
between participants. "fit" is the whole `fit` (validation, budget calibration by
privkit's tightest accountant, the protocol, accounting); "protocol" is the three phases
with the deployment's start and end (every process ended, the ports free). The in-process
participants run one after the other in the caller's process; the Flower time is mostly
starting processes (each imports Flower, numpy and privkit) and Flower's polling.

{chr(10).join(rows)}

Flower / in-process: fit {ratio_fit:.2f}x, protocol {ratio_protocol:.2f}x. Largest
absolute difference between the two fitted models (coef, intercept, components) over the
{args.repeats} pairs of runs: {difference:.1e}.
"""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
