"""Accounting speed and tightness, with opacus's accountants timed in the same run.

Run: .venv/bin/python benchmarks/accounting.py

1. DP-SGD, Poisson rate 0.01, noise multiplier 1.0, 10,000 steps, delta 1e-5:
   privkit RDP vs opacus RDP (same orders; equal to 1e-6, no slower) and privkit PLD
   (certified) vs opacus PRV (about 0.3 s here; PLD must be faster, <= 6.20).
2. Closed forms: 100 blocks of pure 0.1 at delta 1e-5 (optimal 4.3068, DRV 5.8502).
3. 1,000 heterogeneous blocks (500 Laplace, 500 Gaussian, scales uniform in [20, 200],
   sensitivity 1): PLD under 1 s, next to RDP and zCDP.
4. Hostile shapes (issue 10 item 5), plans read with privkit.plan_spec.plan_from_spec as
   ``privkit account`` reads them: 40 nested repeats of count 2, one repeat of count
   10^30, 350 nested sequential nodes. Every accountant that accepts them, and
   tightest over all, must answer in well under a second with bounded memory (the peak
   resident memory of the process is printed).
Times are medians of 5 runs (each from scratch) after one warm-up run.
Results: benchmarks/results/accounting.txt (python benchmarks/accounting.py > that file).
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np

from privkit import (
    AdvancedAccountant,
    Claimed,
    Neighbouring,
    Norm,
    OptimalAccountant,
    PLDAccountant,
    PoissonSubsample,
    PureDP,
    RDPAccountant,
    Repeat,
    Sensitivity,
    Sequential,
    ZCDPAccountant,
)
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE


def timed(run: Callable[[], float]) -> tuple[float, float]:
    value = run()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return value, statistics.median(times)


def dp_sgd() -> None:
    from opacus.accountants import PRVAccountant
    from opacus.accountants import RDPAccountant as OpacusRDP

    gaussian = Gaussian(noise_scale=1.0, sensitivity=Sensitivity(value=1.0, norm=Norm.L2,
                                                                 relation=A))
    plan = Repeat(PoissonSubsample(gaussian, 0.01), 10_000)

    def opacus(kind: type) -> Callable[[], float]:
        def run() -> float:
            acct = kind()
            acct.history = [(1.0, 0.01, 10_000)]
            return float(acct.get_epsilon(delta=1e-5))
        return run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = [
            ("privkit RDP", timed(lambda: RDPAccountant().epsilon(plan, delta=1e-5))),
            ("opacus RDP", timed(opacus(OpacusRDP))),
            ("privkit PLD (certified)", timed(lambda: PLDAccountant().epsilon(plan, delta=1e-5))),
            ("opacus PRV", timed(opacus(PRVAccountant))),
        ]
    print("DP-SGD: q = 0.01, sigma = 1.0, 10,000 steps, delta = 1e-5")
    for name, (value, seconds) in rows:
        print(f"  {name:<26} epsilon {value:.6f}   {seconds * 1e3:8.1f} ms")
    rdp, ordp = rows[0][1][0], rows[1][1][0]
    print(f"  RDP relative difference to opacus: {abs(rdp / ordp - 1):.2e}; "
          f"time ratio privkit/opacus RDP {rows[0][1][1] / rows[1][1][1]:.2f}, "
          f"PLD/PRV {rows[2][1][1] / rows[3][1][1]:.3f}")


def closed_forms() -> None:
    plan = Repeat(Claimed(PureDP(epsilon=0.1), relation=A), 100)
    print("100 blocks of pure epsilon 0.1, delta 1e-5")
    for accountant in (OptimalAccountant(), AdvancedAccountant(), PLDAccountant()):
        print(f"  {accountant.name:<10} {accountant.epsilon(plan, delta=1e-5):.4f}")
    from privkit.composition import drv_epsilon

    print(f"  DRV alone  {drv_epsilon(0.1, 100, 1e-5):.4f}")


def heterogeneous() -> None:
    rng = np.random.default_rng(2026)
    laplaces = [Laplace(noise_scale=float(s), sensitivity=Sensitivity(value=1.0, norm=Norm.L1,
                                                                relation=A))
                for s in rng.uniform(20, 200, 500)]
    gaussians = [Gaussian(noise_scale=float(s), sensitivity=Sensitivity(
        value=1.0, norm=Norm.L2, relation=A)) for s in rng.uniform(20, 200, 500)]
    plan = Sequential(*laplaces, *gaussians)
    print("1,000 heterogeneous blocks (500 Laplace, 500 Gaussian), delta 1e-5")
    results = {}
    for accountant in (PLDAccountant(), RDPAccountant(), ZCDPAccountant()):
        value, seconds = timed(lambda a=accountant: a.epsilon(plan, delta=1e-5))
        results[accountant.name] = value
        print(f"  {accountant.name:<5} epsilon {value:.4f}   {seconds * 1e3:8.1f} ms")
    print(f"  PLD is {100 * (1 - results['pld'] / results['rdp']):.1f}% below RDP")


def hostile_shapes() -> None:
    import resource

    from privkit import available_accountants, tightest
    from privkit.plan_spec import plan_from_spec

    leaf = {"claimed": {"label": "q", "guarantee": {"pure_dp": {"epsilon": 0.01}}}}
    nested: dict[str, object] = leaf
    for _ in range(40):
        nested = {"repeat": {"count": 2, "block": nested}}
    deep: dict[str, object] = leaf
    for _ in range(350):
        deep = {"sequential": [deep, leaf]}
    specs = {"40 nested repeats of 2": nested,
             "repeat count 10^30": {"repeat": {"count": 10**30, "block": leaf}},
             "350 nested sequential": deep}
    print("Hostile shapes (pure 0.01 leaves), delta 1e-5: seconds per accountant")
    for label, spec in specs.items():
        plan = plan_from_spec(spec, relation="add_remove")
        cells = []
        for accountant in available_accountants():
            if not accountant.supports(plan):
                cells.append(f"{accountant.name} refused")
                continue
            _, seconds = timed(lambda a=accountant, p=plan: a.epsilon(p, delta=1e-5))
            cells.append(f"{accountant.name} {seconds:.3f}")
        result, seconds = timed(lambda p=plan: tightest(p, delta=1e-5).epsilon)
        print(f"  {label:<24} tightest {seconds:.3f} s (epsilon {result:.6g})")
        print("    " + ", ".join(cells))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak resident memory of this process: {peak:.0f} MB")


if __name__ == "__main__":
    hostile_shapes()
    print()
    dp_sgd()
    print()
    closed_forms()
    print()
    heterogeneous()
