"""The PLD accountant's two-sided answers against independent values."""

import math

import numpy as np
import pytest

from privkit import (
    GDP,
    ApproxDP,
    Claimed,
    LaplaceDP,
    Neighbouring,
    PLDAccountant,
    PureDP,
    Repeat,
    Sequential,
)
from privkit.composition import optimal_homogeneous_epsilon
from privkit.pld import discretise

A = Neighbouring.ADD_REMOVE


@pytest.mark.parametrize("guarantee", [GDP(mu=0.7), LaplaceDP(epsilon=0.9),
                                       PureDP(epsilon=0.9), ApproxDP(epsilon=0.5, delta=1e-3)])
def test_upper_and_lower_pld_sandwich_the_exact_profile(guarantee):
    """At 20,001 points of [-3, 4], off the grid too, the upper curve is at least the
    exact profile and the lower curve at most (up to 1e-15 of rounding)."""
    floor = getattr(guarantee, "delta", 0.0)
    up, lo = discretise(guarantee._profile_nonnegative, step=1e-2, lowest=-12, highest=12,
                        floor=floor)
    e = np.linspace(-3.0, 4.0, 20_001)
    exact = guarantee.profile(e)
    assert np.all(up.profile(e) >= exact - 1e-15)
    assert np.all(lo.profile(e) <= exact + 1e-15)


def test_gaussian_compositions_are_bracketed():
    """50 Gaussians of mu 0.2 compose to exactly sqrt(50) 0.2-GDP (Dong, Roth, Su 2019,
    Cor. 3.3), as claimed leaves so that the GDP merge is not used: the PLD's lower
    and upper bounds bracket it."""
    plan = Repeat(Sequential(Claimed(GDP(mu=0.2), relation=A), Claimed(LaplaceDP(epsilon=1e-9),
                                                                       relation=A)), 50)
    exact = GDP(mu=math.sqrt(50) * 0.2).epsilon_at(1e-6)
    lower, upper = PLDAccountant().bounds(plan, delta=1e-6)
    assert lower <= exact <= upper
    assert upper - exact < 1e-2


@pytest.mark.parametrize(("epsilon", "delta", "count"), [(0.1, 0.0, 100), (0.3, 1e-7, 40)])
def test_blocks_with_their_own_delta_match_kov(epsilon, delta, count):
    """k runs of a claimed (eps, delta) block: the exact answer is Kairouz-Oh-Viswanath's
    Theorem 3.3 (privkit.composition, itself pinned to 4.3068 for 100 x 0.1); the PLD's
    bounds bracket it and its upper bound is within 1%."""
    block = Claimed(ApproxDP(epsilon=epsilon, delta=delta) if delta else PureDP(
        epsilon=epsilon), relation=A)
    exact = optimal_homogeneous_epsilon(epsilon=epsilon, delta=delta, count=count,
                                        target_delta=1e-5)
    lower, upper = PLDAccountant().bounds(Repeat(block, count), delta=1e-5)
    assert lower <= exact * (1 + 1e-9)
    assert exact <= upper * (1 + 1e-9)
    assert upper <= exact * 1.01
