"""The random-plan soundness suite of issue 25: no accountant undercounts, checked against
bounds certified by an independent library.

60 seeded random plans (compositions of repeated Laplace and Gaussian blocks, some Poisson
subsampled, under add-remove) are accounted by every privkit accountant that supports
them and by ``tightest``, at two deltas. dp_accounting (Google's PLD library, Doroshenko,
Ghazi, Kamath, Kumar, Manurangsi 2022, "Connect the dots: tighter discrete approximations
of privacy loss distributions") gives, on its own grid, an *optimistic* PLD (its losses
rounded down: a certified lower bound on the exact epsilon) and a *pessimistic* one (a
certified upper bound). Each privkit answer must be at least the optimistic bound (an
answer below it is an undercount), and the PLD accountant's own certified lower bound must
be at most the pessimistic one (a lower bound above a certified upper bound is false).

The comparisons are exact up to floating-point rounding in the two FFT compositions (a
relative 1e-6 allowance, far below any discretisation effect: the two libraries' grids
differ by orders of magnitude more); nothing is random at test time (the plans are drawn
from a fixed seed), so the test cannot fail by chance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privkit import (
    Neighbouring,
    Norm,
    PLDAccountant,
    PoissonSubsample,
    Repeat,
    Sensitivity,
    Sequential,
    UnsupportedPlanError,
    available_accountants,
    tightest,
)
from privkit.mechanisms import Gaussian, Laplace

pld_lib = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

A = Neighbouring.ADD_REMOVE
N_PLANS = 60
DELTAS = (1e-3, 1e-7)
#: Relative allowance for floating-point rounding in the two FFT compositions.
ROUNDING = 1e-6
#: dp_accounting's grid: coarse (cheap), and its bounds are certified at any spacing.
INTERVAL = 2e-3


def _draw(rng: np.random.Generator) -> list[tuple[str, float, float, int]]:
    """(kind, scale, sampling rate, count) for each part of one plan."""
    parts = []
    for _ in range(int(rng.integers(1, 4))):
        kind = "laplace" if rng.random() < 0.5 else "gaussian"
        sampled = rng.random() < 0.5
        scale = float(rng.uniform(0.8, 3.0) if sampled else rng.uniform(2.0, 30.0))
        rate = float(rng.uniform(0.01, 0.2)) if sampled else 1.0
        count = int(rng.integers(1, 300 if sampled else 40))
        parts.append((kind, scale, rate, count))
    return parts


def _plan(parts: list[tuple[str, float, float, int]]) -> Sequential:
    blocks = []
    for kind, scale, rate, count in parts:
        norm = Norm.L1 if kind == "laplace" else Norm.L2
        leaf_kind = Laplace if kind == "laplace" else Gaussian
        leaf = leaf_kind(noise_scale=scale,
                         sensitivity=Sensitivity(value=1.0, norm=norm, relation=A))
        block = leaf if rate == 1.0 else PoissonSubsample(leaf, rate)
        blocks.append(Repeat(block, count))
    return Sequential(*blocks)


def _peer(parts: list[tuple[str, float, float, int]], pessimistic: bool):
    """dp_accounting's PLD of the plan (both directions, add-remove)."""
    total = None
    for kind, scale, rate, count in parts:
        if kind == "laplace":
            one = pld_lib.from_laplace_mechanism(
                scale, sensitivity=1.0, pessimistic_estimate=pessimistic,
                value_discretization_interval=INTERVAL, sampling_prob=rate,
                use_connect_dots=pessimistic)
        else:
            one = pld_lib.from_gaussian_mechanism(
                scale, sensitivity=1.0, pessimistic_estimate=pessimistic,
                value_discretization_interval=INTERVAL, sampling_prob=rate,
                use_connect_dots=pessimistic)
        one = one.self_compose(count)
        total = one if total is None else total.compose(one)
    return total


PLANS = [_draw(rng) for rng in (np.random.default_rng([25, i]) for i in range(N_PLANS))]


@pytest.mark.slow
def test_no_accountant_undercounts_random_plans():
    """Every supporting accountant and tightest, at two deltas, on 60 plans: 0 answers
    below dp_accounting's optimistic (certified lower) bound; the PLD accountant's lower
    bound never above dp_accounting's pessimistic (certified upper) bound."""
    accountants = [a for a in available_accountants() if a.certified]
    undercounts: list[str] = []
    false_lowers: list[str] = []
    checked = 0
    for i, parts in enumerate(PLANS):
        plan = _plan(parts)
        low_pld, up_pld = _peer(parts, False), _peer(parts, True)
        for delta in DELTAS:
            floor = low_pld.get_epsilon_for_delta(delta)
            ceiling = up_pld.get_epsilon_for_delta(delta)
            answers = {"tightest": tightest(plan, delta=delta).epsilon}
            for a in accountants:
                try:
                    answers[a.name] = a.epsilon(plan, delta=delta)
                except UnsupportedPlanError:
                    continue
            for name, value in answers.items():
                checked += 1
                if value < floor * (1 - ROUNDING):
                    undercounts.append(f"plan {i} {parts} delta {delta}: {name} {value} "
                                       f"< certified lower bound {floor}")
            g = PLDAccountant().guarantee(plan, delta=delta)
            lower = g.epsilon_lower_at(delta)
            if math.isfinite(ceiling) and lower > ceiling * (1 + ROUNDING):
                false_lowers.append(f"plan {i} {parts} delta {delta}: PLD lower {lower} > "
                                    f"certified upper bound {ceiling}")
    assert checked >= N_PLANS * len(DELTAS) * 3  # tightest, pld, rdp at least
    assert not undercounts, "\n".join(undercounts)
    assert not false_lowers, "\n".join(false_lowers)
