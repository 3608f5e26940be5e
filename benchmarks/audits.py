"""Audit speed, scaling and tightness.

Run: .venv/bin/python benchmarks/audits.py

1. Throughput of a vectorised audit of a scalar mechanism (draws per second, both sides,
   selection split included); target >= 5 million per second.
2. A slow, non-batched mechanism: wall time with 1 and 2 processes
   (``ProcessPoolExecutor``), and a dask.distributed LocalCluster run, all from the same
   seed (same verdict and bound).
3. Tightness: Laplace at epsilon 1, 95%, lower bound for 10^4, 10^5, 10^6 draws per side,
   next to what an oracle knowing the best threshold certifies (0.94, 0.98, 0.994).
4. Floating-point leak: ``x + numpy Laplace`` claimed at epsilon 0.1 against privkit's
   safe ``release`` of the same mechanism, 10^5 draws per side (reachability test).
5. Sequential testing: draws per side needed to flag Laplace noise of half the scale
   (true epsilon 2, claim 1), locally and on a dask LocalCluster (one worker).
6. Bands and patterns: the sparse vector that also releases the first positive answer's
   noisy value, bound at 10^6 draws per side over the pair's exact epsilon.

Part 2 uses two processes; it runs only with ``--parallel`` (the shared machine's rule is
one core per engineer). Results: ``benchmarks/results/audits.txt``.

``--transcripts`` instead measures the transcript audit (issue 22) and writes
``benchmarks/results/audit_transcripts.txt``, with the commit it ran on: for every
estimator ``privkit audit`` finds (and the toys of ``privkit.audits.leaky``), the
transcript tier's rows, fits and seconds as ``privkit audit`` runs them, and the full
tier's cost (every channel and label mode at 200 + 50 fits per side) projected from the
seconds per fit; then every leaky toy at both tiers (its bound and verdict) and the full
tier of the correct toy.

``--e2e [COMMAND]`` instead runs ``privkit audit`` on the black-box end-to-end rows
(``privkit.audits.end_to_end``, issue 23) under ``/usr/bin/time -v`` and writes
``benchmarks/results/audit_e2e.txt`` (with the commit).

``--cli [COMMAND]`` instead runs ``privkit audit`` and ``privkit audit --epsilon 4``
(COMMAND, default the venv's ``privkit``, with ``OMP_NUM_THREADS=1``) under
``/usr/bin/time -v`` and writes both tables, the wall clock, CPU time, peak memory, the
load average before and after, and the count of stderr lines that are not progress lines
(third-party log lines) to ``benchmarks/results/audit_cli.txt``.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from privkit import Neighbouring
from privkit.audits import NeighbouringPair, audit
from privkit.audits.registry import CASES


def slow_laplace(value: float, rng: np.random.Generator) -> float:
    """One draw at a time with some Python work (about 20 us), as an arbitrary mechanism."""
    total = 0.0
    for i in range(200):
        total += i * 1e-12
    return _snap(value + float(rng.laplace(0.0, 1.0)) + total * 0.0)


def _snap(x: float) -> float:
    """On a 2^-30 grid: no floating-point leak (part 4 measures that one)."""
    return float(np.round(x * 2.0**30) / 2.0**30)


def naive_laplace(value: float, rng: np.random.Generator, size: int) -> np.ndarray:
    return value + rng.laplace(0.0, 10.0, size)


def half_scale(value: float, rng: np.random.Generator) -> float:
    return _snap(value + float(rng.laplace(0.0, 0.5)))


def half_scale_batched(value: float, rng: np.random.Generator, size: int) -> np.ndarray:
    return np.round((value + rng.laplace(0.0, 0.5, size)) * 2.0**30) / 2.0**30


def main() -> None:
    case = CASES["laplace"](epsilon=1.0)
    audit(case.system, case.pair, epsilon=1.0, trials=100_000, rng=0)  # warm up
    start = time.perf_counter()
    result = audit(case.system, case.pair, epsilon=1.0, trials=2_000_000, rng=0)
    seconds = time.perf_counter() - start
    draws = 2 * 2_000_000 * 1.2

    lines: list[str] = [(f"vectorised Laplace audit (safe release): {draws / seconds / 1e6:.1f} "
                        f"million draws/s ({seconds:.2f} s for 2 x 2.4M draws), bound "
                        f"{result.lower_bound:.4f}")]
    print(lines[0])
    pair = NeighbouringPair(first=0.0, second=1.0, relation=Neighbouring.ADD_REMOVE)
    if "--parallel" in sys.argv:
        _parallel(pair)

    print("Laplace eps = 1, 95%: draws/side, lower bound, oracle")
    lines.append("Laplace eps = 1, 95%: draws/side, lower bound, oracle")
    for n, oracle in ((10_000, 0.94), (100_000, 0.98), (1_000_000, 0.994)):
        bound = audit(case.system, case.pair, epsilon=1.0, trials=n, rng=3).lower_bound
        print(f"  {n:>9,}  {bound:.4f}  {oracle}")
        lines.append(f"  {n:>9,}  {bound:.4f}  {oracle}")

    from privkit.mechanisms import Laplace

    mech = Laplace.for_epsilon(0.1, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    naive = audit(naive_laplace, pair, epsilon=0.1, trials=100_000, rng=3)
    safe = audit(lambda v, r, n: mech.release(v, rng=r, size=n), pair, epsilon=0.1,
                 trials=100_000, rng=3)
    lines.append(f"float leak, claim 0.1, 10^5 draws/side: naive x + numpy Laplace bound "
                 f"{naive.lower_bound:.4f} ({naive.verdict}, rule: {naive.rule}); privkit "
                 f"release bound {safe.lower_bound:.4f} ({safe.verdict})")
    print(lines[-1])

    from privkit.audits import sequential_audit

    start = time.perf_counter()
    seq = sequential_audit(half_scale_batched, pair, epsilon=1.0, rng=4)
    lines.append(f"sequential, Laplace at half scale (true eps 2, claim 1): {seq.verdict} "
                 f"after {seq.stages} stage(s), {seq.draws_per_side:,} draws/side in all, "
                 f"bound {seq.lower_bound:.4f} at {seq.confidence:.0%} "
                 f"({time.perf_counter() - start:.2f} s)")
    print(lines[-1])
    from dask.distributed import Client, LocalCluster

    local = sequential_audit(half_scale, pair, epsilon=1.0, rng=6, batched=False)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        remote = sequential_audit(half_scale, pair, epsilon=1.0, rng=6, batched=False,
                                  executor=client)
    lines.append(f"sequential, non-batched, dask LocalCluster (1 worker process): "
                 f"{remote.verdict} after {remote.draws_per_side:,} draws/side, bound "
                 f"{remote.lower_bound:.4f}; same result as local: {remote == local}")
    print(lines[-1])

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "audits"))
    from test_hardening import _svt_value_true_epsilon, _svt_with_value

    worst, svt, scale, system = _svt_with_value()
    true = _svt_value_true_epsilon(svt, scale, len(worst.first) - 1)
    svt_pair = NeighbouringPair(first=worst.first, second=worst.second,
                                relation=Neighbouring.ADD_REMOVE)
    res = audit(system, svt_pair, epsilon=1.0, trials=1_000_000, rng=12)
    lines.append(f"sparse vector + noisy value (claim 1, pair's exact eps {true:.4f}), 10^6 "
                 f"draws/side: bound {res.lower_bound:.4f} = {res.lower_bound / true:.3f} of "
                 f"the pair's epsilon ({res.distinguisher})")
    print(lines[-1])
    out = Path(__file__).resolve().parent / "results" / "audits.txt"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _parallel(pair: NeighbouringPair) -> None:
    kwargs = dict(epsilon=1.0, trials=100_000, batched=False, rng=9)
    start = time.perf_counter()
    serial = audit(slow_laplace, pair, **kwargs)  # type: ignore[arg-type]
    one = time.perf_counter() - start
    with ProcessPoolExecutor(max_workers=2) as pool:
        start = time.perf_counter()
        pooled = audit(slow_laplace, pair, executor=pool, **kwargs)
        two = time.perf_counter() - start
    print(f"slow mechanism, 2 x 120k single draws: 1 process {one:.2f} s, 2 processes "
          f"{two:.2f} s (speed-up {one / two:.2f}); same result: {pooled == serial}")
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        start = time.perf_counter()
        on_dask = audit(slow_laplace, pair, executor=client, **kwargs)
        dask_seconds = time.perf_counter() - start
    print(f"dask LocalCluster (2 workers): {dask_seconds:.2f} s, bound "
          f"{on_dask.lower_bound:.4f}, verdict {on_dask.verdict}; same as local: "
          f"{on_dask == serial}")


def cli(command: list[str], runs: list[list[str]] | None = None,
        name: str = "audit_cli.txt") -> None:
    """Run the audit command line with each of ``runs``' arguments (default: at epsilon 1
    and 4); write ``name`` in ``benchmarks/results``."""
    import os
    import re
    import subprocess

    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    parts = [f"# commit: {_commit()}"]
    for extra in runs or ([], ["--epsilon", "4"]):
        before = os.getloadavg()
        run = subprocess.run(["/usr/bin/time", "-v", *command, "audit", *extra], env=env,
                             capture_output=True, text=True, cwd="/tmp", check=False)
        after = os.getloadavg()
        stats = dict(re.findall(r"^\s*(Elapsed \(wall clock\) time.*?|User time.*?|"
                                r"System time.*?|Maximum resident set size.*?): (.*)$",
                                run.stderr, flags=re.M))
        progress = [line for line in run.stderr.splitlines()
                    if re.match(r"^(\[\d+/\d+\] |      )", line)]
        timing = {k for k in run.stderr.splitlines() if k.startswith("\t")}
        other = [line for line in run.stderr.splitlines()
                 if line not in progress and line not in timing and line.strip()
                 and not line.startswith("\tCommand being timed")]
        cpu = sum(float(v) for k, v in stats.items() if k.startswith(("User", "System")))
        parts += [
            f"# command: cd /tmp && OMP_NUM_THREADS=1 {' '.join(command)} audit "
            f"{' '.join(extra)}".rstrip() + f" (exit code {run.returncode})",
            (f"# wall clock {next(v for k, v in stats.items() if k.startswith('Elapsed'))} "
            f"(m:ss), CPU {cpu:.1f} s (user + system: about the wall clock of an idle "
            f"machine), max RSS {next(v for k, v in stats.items() if k.startswith('Max'))} "
            "kB"),
            (f"# load average before: {', '.join(f'{x:.2f}' for x in before)}, after: "
            f"{', '.join(f'{x:.2f}' for x in after)} (2 shared cores)"),
            (f"# stderr: {sum(1 for p in progress if p.startswith('['))} progress lines "
            f"([i/N] name ...), {len(other)} other lines"),
            "",
            run.stdout.rstrip(),
            "",
            "# per-row progress (cumulative seconds):",
            *(f"#   {line.strip()}" for line in progress if not line.startswith("[")),
            "",
        ]
    out = Path(__file__).resolve().parent / "results" / name
    out.write_text("\n".join(parts) + "\n", encoding="utf-8")
    print("\n".join(parts))


def end_to_end(command: list[str]) -> None:
    """``privkit audit`` on the black-box end-to-end rows alone (issue 23); writes
    ``audit_e2e.txt``: each row's bound over its claim, the fits and the CPU time."""
    from privkit.audits.registry import CASES

    rows = sorted(name for name in CASES if name.endswith("_e2e"))
    cli(command, runs=[["--quiet", *rows]], name="audit_e2e.txt")


def _commit() -> str:
    """The commit the code ran on ("+ changes" when the worktree differs from it)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                           cwd=root, capture_output=True, text=True, check=False).stdout
    return head + (" + changes" if dirty.strip() else "")


def transcripts() -> None:
    """The transcript tier of ``privkit audit`` per estimator, the full tier's projected
    cost, and the leaky toys' detection (see the module docstring)."""
    from privkit.audits.channels import channels
    from privkit.audits.estimators import (
        CLI_FITS,
        case_builders,
        cli_selection,
        estimators,
        register_estimator,
        run_estimator,
    )
    from privkit.audits.leaky import LEAKY, PrivateCentroids
    from privkit.audits.transcript import DEFAULT_FITS, audit_channels, audit_estimator

    lines = [f"# commit {_commit()}",
             f"# load average before: {os.getloadavg()[0]:.2f} (2 shared cores)", ""]
    found = estimators()
    lines.append(f"privkit audit's transcript tier: {CLI_FITS} + {cli_selection(CLI_FITS)} "
                 f"fits per side per channel; {len(found)} estimators found")
    register_estimator(PrivateCentroids)
    full_total = 0.0
    for i, (name, cls) in enumerate({**found, "PrivateCentroids": PrivateCentroids}.items()):
        start = time.perf_counter()
        rows = run_estimator(cls, rng=np.random.SeedSequence([2026, i]))
        seconds = time.perf_counter() - start
        per_fit = float(np.mean([r.seconds_per_fit for r in rows]))
        audits = sum(len(channels(build())) for build in case_builders(cls).values())
        full = audits * 2 * (DEFAULT_FITS + DEFAULT_FITS // 4) * per_fit
        full_total += full
        lines += [f"  {row.name}: bound {row.lower_bound:.4f} / claim {row.claim_epsilon:g} "
                  f"({row.verdict}), {row.fits_run:,} fits" for row in rows]
        lines.append(f"    {name}: {seconds:.1f} s, {1e3 * per_fit:.2f} ms per fit; full "
                     f"tier ({audits} audits x {2 * (DEFAULT_FITS + DEFAULT_FITS // 4)} fits)"
                     f" ~{full:.0f} s")
    lines.append(f"full tier, every estimator above, projected: ~{full_total / 60:.1f} min "
                 "(one core)")
    lines += ["", ("leaky toys on their channel: CLI tier (20 + 10 fits, 6 channels, "
                   "Bonferroni, second stage) and one audit at 200 + 50 fits per side, 95%")]
    for name, cls in LEAKY.items():
        cli = run_estimator(cls, rng=np.random.SeedSequence([2026, 99]))
        full_result = audit_estimator(cls.transcript_case(), cls.channel, rng=7)
        lines.append(f"  {name} ({cls.leak}; claim 2): CLI tier "
                     + ", ".join(f"{r.lower_bound:.2f} {r.verdict}" for r in cli)
                     + f"; full {full_result.lower_bound:.4f} {full_result.verdict}, rule: "
                     f"{full_result.rule[:70]}")
    for declared in (True, False):
        start = time.perf_counter()
        rows = audit_channels(PrivateCentroids.transcript_case(declare_classes=declared),
                              familywise=True, rng=8)
        lines.append(f"  PrivateCentroids (correct; claim 2), classes "
                     f"{'declared' if declared else 'learnt'}, 6 channels at 200 + 50 fits: "
                     f"largest bound {max(r.lower_bound for r in rows):.4f}, "
                     f"{sum(r.verdict == 'violation' for r in rows)} violations "
                     f"({time.perf_counter() - start:.1f} s)")
    lines.append(f"# load average after: {os.getloadavg()[0]:.2f}")
    print("\n".join(lines))
    out = Path(__file__).resolve().parent / "results" / "audit_transcripts.txt"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if "--transcripts" in sys.argv:
        transcripts()
    elif "--e2e" in sys.argv:
        rest = sys.argv[sys.argv.index("--e2e") + 1:]
        end_to_end(rest or [str(Path(sys.executable).with_name("privkit"))])
    elif "--cli" in sys.argv:
        rest = sys.argv[sys.argv.index("--cli") + 1:]
        cli(rest or [str(Path(sys.executable).with_name("privkit"))])
    else:
        main()
