"""Accounting at the limit (issue 25): tightness and speed against dp_accounting and
prv_accountant, measured in one process.

Run: .venv/bin/python benchmarks/accounting.py [--quick]
Writes benchmarks/results/accounting.md (the commit and the machine's load in its header).

Each "Must show" item of issue 25 is one section:

1. DP-SGD (Poisson q = 0.01, sigma = 1, 10^4 steps, delta 1e-5): privkit's default
   (``tightest``) certified epsilon and its certified lower bound, against dp_accounting's
   PLD (its default discretisation, 1e-4) and prv_accountant's certified interval.
2. 10^6 steps, (q, sigma) = (0.01, 1) and (0.001, 3.73): the default against privkit's
   RDP and dp_accounting's PLD.
3. delta 1e-12 at 10^4 steps: PLD's answer against prv_accountant's certified lower bound.
4. 1,000 and 10,000 heterogeneous blocks (half Laplace, half Gaussian, scales uniform in
   [20, 200], sensitivity 1), delta 1e-5: the default against dp_accounting's PLD.
5. 100,000 distinct flat leaves (the same mixture): the default's time and peak memory,
   in a child process (its own peak resident memory).
6. Sampling m of n without replacement (REPLACE_ONE) of one Laplace and one Gaussian
   block: the default against the exact epsilon of the realisable pair
   ``(q P + (1 - q) Q, Q)`` and its reverse, from closed-form tails (Gaussian) and
   piecewise quadrature (Laplace).

Times are medians of repeated runs (each from scratch; ``REPEATS`` per timing, fewer for
runs of more than a few seconds), and every comparison is a ratio of medians measured in
this one process, alternating the libraries: the machine is shared, so absolute times
vary with its load, ratios much less.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import integrate, optimize, stats

from privkit import (
    Neighbouring,
    Norm,
    PLDAccountant,
    PoissonSubsample,
    RDPAccountant,
    Repeat,
    SampleWithoutReplacement,
    Sensitivity,
    Sequential,
    tightest,
)
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE
ROOT = Path(__file__).resolve().parent.parent
REPEATS = 5
LINES: list[str] = []


def out(line: str = "") -> None:
    print(line, flush=True)
    LINES.append(line)


class Time(float):
    """A median wall-clock time (the float) and the median CPU time of the same runs
    (``cpu``: this process's, all threads). On a loaded machine a short run waits for
    the processor far longer, in proportion, than a long one, so wall-clock ratios
    between runs of very different lengths move with the load; CPU-time ratios much
    less. Both are reported."""

    cpu: float

    def __new__(cls, wall: float, cpu: float) -> Time:
        out = super().__new__(cls, wall)
        out.cpu = cpu
        return out


def timed(run: Callable[[], object], repeats: int = REPEATS) -> tuple[object, Time]:
    """The run's value and the median of ``repeats`` timings (after one warm-up run when
    the run is quick), wall clock and CPU."""
    start, cpu = time.perf_counter(), time.process_time()
    value = run()
    first = Time(time.perf_counter() - start, time.process_time() - cpu)
    if first > 5.0 or repeats <= 1:
        return value, first
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return value, Time(statistics.median(walls), statistics.median(cpus))


def ratio(peer: Time, ours: Time) -> str:
    """``1/x`` (wall clock) and ``1/y CPU``."""
    return f"1/{peer / ours:.1f} (CPU 1/{peer.cpu / ours.cpu:.1f})"


def gaussian(sigma: float, relation: Neighbouring = A) -> Gaussian:
    return Gaussian(noise_scale=sigma, sensitivity=Sensitivity(value=1.0, norm=Norm.L2,
                                                               relation=relation))


def laplace(scale: float, relation: Neighbouring = A) -> Laplace:
    return Laplace(noise_scale=scale, sensitivity=Sensitivity(value=1.0, norm=Norm.L1,
                                                              relation=relation))


# -- peers --------------------------------------------------------------------------------


def dpa_dpsgd(q: float, sigma: float, steps: int, delta: float) -> float:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    acct = pld_privacy_accountant.PLDAccountant()
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    acct.compose(event, steps)
    return float(acct.get_epsilon(delta))


def dpa_blocks(laplaces: np.ndarray, gaussians: np.ndarray, delta: float) -> float:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    acct = pld_privacy_accountant.PLDAccountant()
    for b in laplaces:
        acct.compose(dp_accounting.LaplaceDpEvent(float(b)))
    for s in gaussians:
        acct.compose(dp_accounting.GaussianDpEvent(float(s)))
    return float(acct.get_epsilon(delta))


def prv_dpsgd(q: float, sigma: float, steps: int, delta: float) -> tuple[float, float]:
    """prv_accountant's certified (lower, upper) epsilon (eps_error 0.01 as in its README,
    delta_error delta / 1000)."""
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    prv = PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q)
    acct = PRVAccountant(prvs=[prv], max_self_compositions=[steps], eps_error=0.01,
                         delta_error=delta / 1000)
    low, _, up = acct.compute_epsilon(delta=delta, num_self_compositions=[steps])
    return float(low), float(up)


# -- sections -----------------------------------------------------------------------------


def dpsgd(steps: int, q: float, sigma: float, delta: float) -> tuple[object, float]:
    plan = Repeat(PoissonSubsample(gaussian(sigma), q), steps)
    return timed(lambda: tightest(plan, delta=delta), repeats=3 if steps > 10**5 else REPEATS)


def section_dpsgd() -> None:
    out("## 1. DP-SGD, q = 0.01, sigma = 1, 10^4 steps, delta 1e-5")
    out()
    res, t_pk = dpsgd(10**4, 0.01, 1.0, 1e-5)
    eps_dpa, t_dpa = timed(lambda: dpa_dpsgd(0.01, 1.0, 10**4, 1e-5), repeats=3)
    (low, up), t_prv = timed(lambda: prv_dpsgd(0.01, 1.0, 10**4, 1e-5), repeats=3)
    out("| | epsilon | lower bound | median time | time / dp_accounting |")
    out("| --- | --- | --- | --- | --- |")
    out(f"| privkit default (`tightest`, {res.accountant}) | {res.epsilon:.5f} "
        f"| {res.lower:.5f} | {t_pk * 1e3:.1f} ms | {ratio(t_dpa, t_pk)} |")
    out(f"| dp_accounting PLD (1e-4) | {eps_dpa:.5f} | - | {t_dpa * 1e3:.1f} ms | 1 |")
    out(f"| prv_accountant (eps_error 0.01) | {up:.5f} | {low:.5f} | {t_prv * 1e3:.1f} ms "
        f"| {ratio(t_dpa, t_prv)} |")
    out()
    tight = res.epsilon <= 6.189 and res.epsilon - res.lower <= 0.01
    out(f"Target: certified <= 6.189, lower bound within 0.01, at most 1/30 of "
        f"dp_accounting's time: {'met' if tight and t_dpa / t_pk >= 30 else 'NOT met'} "
        f"in wall-clock time, {'met' if tight and t_dpa.cpu / t_pk.cpu >= 30 else 'NOT met'} "
        f"in CPU time (gap {res.epsilon - res.lower:.4f}).")
    out()


def section_long() -> None:
    out("## 2. 10^6 steps, delta 1e-5")
    out()
    out("| q, sigma | default (winner) | lower | privkit RDP | dp_accounting | "
        "default / dp_accounting | time | time / dp_accounting |")
    out("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for q, sigma in ((0.01, 1.0), (0.001, 3.73)):
        res, t_pk = dpsgd(10**6, q, sigma, 1e-5)
        plan = Repeat(PoissonSubsample(gaussian(sigma), q), 10**6)
        rdp = RDPAccountant().epsilon(plan, delta=1e-5)
        eps_dpa, t_dpa = timed(lambda q=q, s=sigma: dpa_dpsgd(q, s, 10**6, 1e-5), repeats=3)
        out(f"| {q}, {sigma} | {res.epsilon:.5f} ({res.accountant}) | {res.lower:.5f} "
            f"| {rdp:.5f} | {eps_dpa:.5f} | {res.epsilon / eps_dpa:.4f} "
            f"| {t_pk * 1e3:.0f} ms | {ratio(t_dpa, t_pk)} |")
    out()
    out("Targets: never looser than RDP; (0.001, 3.73) within 0.5% of dp_accounting in at "
        "most 1/20 of its time.")
    out()


def section_small_delta() -> None:
    out("## 3. delta 1e-12, DP-SGD q = 0.01, sigma = 1, 10^4 steps")
    out()
    plan = Repeat(PoissonSubsample(gaussian(1.0), 0.01), 10**4)
    for delta in (1e-10, 1e-12):
        g, t_pld = timed(lambda d=delta: PLDAccountant().guarantee(plan, delta=d))
        eps, eps_low = g.epsilon_at(delta), g.epsilon_lower_at(delta)
        res = tightest(plan, delta=delta)
        (low, up), _ = timed(lambda d=delta: prv_dpsgd(0.01, 1.0, 10**4, d), repeats=1)
        out(f"- delta {delta:g}: PLD {eps:.5f} (its lower bound {eps_low:.5f}, "
            f"{t_pld * 1e3:.0f} ms), default {res.epsilon:.5f} ({res.accountant}); "
            f"prv_accountant certified [{low:.5f}, {up:.5f}]; PLD / prv lower "
            f"{eps / low:.4f} (target: finite, >= 1 and <= 1.02)")
    out()


def mixture(n: int, seed: int = 2026) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(20, 200, n // 2), rng.uniform(20, 200, n - n // 2)


def blocks_plan(n: int) -> Sequential:
    lap, gau = mixture(n)
    return Sequential(*[laplace(float(b)) for b in lap], *[gaussian(float(s)) for s in gau])


def section_blocks(sizes: tuple[int, ...]) -> None:
    out("## 4. Heterogeneous blocks (half Laplace, half Gaussian, scales in [20, 200]), "
        "delta 1e-5")
    out()
    out("| blocks | default (winner) | lower | dp_accounting | default / dp_accounting "
        "| time | dp_accounting time | time / dp_accounting |")
    out("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        plan = blocks_plan(n)
        res, t_pk = timed(lambda p=plan: tightest(p, delta=1e-5))
        lap, gau = mixture(n)
        eps_dpa, t_dpa = timed(lambda lap=lap, gau=gau: dpa_blocks(lap, gau, 1e-5),
                               repeats=3 if n <= 1000 else 1)
        out(f"| {n:,} | {res.epsilon:.5f} ({res.accountant}) | {res.lower:.5f} "
            f"| {eps_dpa:.5f} | {res.epsilon / eps_dpa:.5f} | {t_pk * 1e3:.0f} ms "
            f"| {t_dpa * 1e3:.0f} ms | {ratio(t_dpa, t_pk)} |")
    out()
    out("Targets: 1,000 blocks in at most 1/30 of dp_accounting's time, no looser than "
        "privkit 0.2.0 (1.8710 on this instance); 10,000 blocks in at most 1/100.")
    out()


def child_wide(n: int) -> None:
    plan = blocks_plan(n)
    start, cpu = time.perf_counter(), time.process_time()
    res = tightest(plan, delta=1e-5)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{seconds:.2f} {cpu:.2f} {_peak_mb():.0f} {res.epsilon:.6f} {res.accountant}")


def _peak_mb() -> float:
    """This process's peak resident memory: ``VmHWM`` of its own address space. Not
    ``ru_maxrss``, which Linux carries over ``execve`` from the forked copy of the parent
    (the benchmark's parent holds dp_accounting's and prv_accountant's arrays by then:
    the child reported ~1 GB whatever it used)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def section_wide(n: int) -> None:
    out(f"## 5. {n:,} distinct flat leaves (the same mixture), delta 1e-5, default accountant")
    out()
    done = subprocess.run([sys.executable, __file__, "--child-wide", str(n)],
                          capture_output=True, text=True, check=True)
    seconds, cpu, peak, eps, name = done.stdout.split()
    out(f"- {float(seconds):.1f} s ({float(cpu):.1f} s of CPU; building the plan excluded), "
        f"peak resident memory of "
        f"the child process {float(peak):.0f} MB (the plan itself included), epsilon "
        f"{float(eps):.5f} ({name}). Target: under 30 s and 1 GB.")
    out()


def exact_swor(kind: str, q: float, scale: float, delta: float) -> float:
    """The exact epsilon at ``delta`` of the pair ``(M, Q)`` and ``(Q, M)``,
    ``M = q P + (1 - q) Q``, ``P, Q`` the block's outputs at 1 and 0 (sensitivity 1)."""
    if kind == "gaussian":
        def dens(x: float, mu: float) -> float:
            return float(stats.norm.pdf(x, mu, scale))

        def tail(t: float, mu: float) -> float:  # P(X > t)
            return float(stats.norm.sf(t, mu, scale))

        def ratio_inv(level: float) -> float:  # x where q exp((x - 1/2) / s^2) + 1 - q = level
            return math.log((level - (1 - q)) / q) * scale**2 + 0.5

        def forward(e: float) -> float:  # H_e(M || Q): the region x > t
            t = ratio_inv(math.exp(e))
            return q * tail(t, 1.0) + (1 - q) * tail(t, 0.0) - math.exp(e) * tail(t, 0.0)

        def reverse(e: float) -> float:  # H_e(Q || M): x < t, M / Q < exp(-e)
            level = math.exp(-e)
            if level <= 1 - q:
                return 0.0
            t = ratio_inv(level)
            cdf = 1 - tail(t, 0.0)
            return cdf - math.exp(e) * (q * (1 - tail(t, 1.0)) + (1 - q) * cdf)
    else:
        def dens(x: float, mu: float) -> float:
            return float(stats.laplace.pdf(x, mu, scale))

        def hockey(e: float, first: Callable[[float], float],
                   second: Callable[[float], float]) -> float:
            f = lambda x: max(first(x) - math.exp(e) * second(x), 0.0)  # noqa: E731
            parts = [(-math.inf, 0.0), (0.0, 1.0), (1.0, math.inf)]
            return sum(integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
                       for a, b in parts)

        def m(x: float) -> float:
            return q * dens(x, 1.0) + (1 - q) * dens(x, 0.0)

        def forward(e: float) -> float:
            return hockey(e, m, lambda x: dens(x, 0.0))

        def reverse(e: float) -> float:
            return hockey(e, lambda x: dens(x, 0.0), m)

    def excess(e: float) -> float:
        return max(forward(e), reverse(e)) - delta

    if excess(0.0) <= 0.0:
        return 0.0
    top = 1.0
    while excess(top) > 0.0:
        top *= 2.0
    return float(optimize.brentq(excess, 0.0, top, xtol=1e-12, rtol=1e-12))


def section_swor() -> None:
    out("## 6. Sampling m = 100 of n = 1,000 without replacement (REPLACE_ONE), one block, "
        "delta 1e-5")
    out()
    out("| block | default (winner) | exact (realisable pair) | default / exact |")
    out("| --- | --- | --- | --- |")
    for kind, scale in (("laplace", 1.0), ("gaussian", 1.0), ("laplace", 0.5),
                        ("gaussian", 0.5)):
        block = laplace(scale, R) if kind == "laplace" else gaussian(scale, R)
        plan = SampleWithoutReplacement(block, sample_size=100, population_size=1000)
        res = tightest(plan, delta=1e-5)
        exact = exact_swor(kind, 0.1, scale, 1e-5)
        out(f"| {kind} (scale {scale}) | {res.epsilon:.5f} ({res.accountant}) | {exact:.5f} "
            f"| {res.epsilon / exact:.4f} |")
    out()
    out("Target: within 1% of the exact value (ratio at most 1.01, never below 1).")
    out()


def header() -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    out("# Accounting benchmark (benchmarks/accounting.py)")
    out()
    out(f"Commit {commit}{' (with uncommitted changes)' if dirty else ''}; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores; "
        f"load average at start {load}.")
    out("Times are medians of repeated runs; every comparison is a ratio measured in this "
        "one process (the machine is shared: absolute times move with its load).")
    out()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip the largest sizes")
    parser.add_argument("--child-wide", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_wide:
        child_wide(args.child_wide)
        return
    header()
    sections: list[Callable[[], None]] = [
        section_dpsgd, section_long, section_small_delta, section_swor,
        lambda: section_wide(20_000 if args.quick else 100_000),
        lambda: section_blocks((1000,) if args.quick else (1000, 10_000))]
    results = ROOT / "benchmarks" / "results" / "accounting.md"
    for section in sections:  # the longest last; the file is rewritten after each
        try:
            section()
        except Exception as exc:  # one section's failure must not lose the others
            out(f"(section failed: {type(exc).__name__}: {exc})")
            out()
        if not args.quick:
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            results.write_text("\n".join([*LINES, f"Load average now: {load}."]) + "\n")


if __name__ == "__main__":
    main()
