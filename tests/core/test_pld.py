"""The privacy loss distribution accountant: certified, tight, nested."""

import math

import numpy as np
import pytest
from hypothesis import given, settings

from _strategies import plans
from privkit import (
    GDP,
    Claimed,
    LaplaceDP,
    Neighbouring,
    Norm,
    Parallel,
    PLDAccountant,
    PoissonSubsample,
    PureDP,
    RDPAccountant,
    Repeat,
    SampleWithoutReplacement,
    Sensitivity,
    Sequential,
)
from privkit.mechanisms import Gaussian, Laplace
from privkit.pld import dominating_pld

A = Neighbouring.ADD_REMOVE
SIGMA_1 = Gaussian(noise_scale=1.0, sensitivity=Sensitivity(value=1.0, norm=Norm.L2, relation=A))


def test_dp_sgd_figure_is_certified_and_tight():
    """q = 0.01, sigma = 1, 10,000 steps, delta = 1e-5: the certified PLD epsilon is at
    most 6.20 (the tightest published accountants give about 6.188) and below RDP's
    6.7127."""
    plan = Repeat(PoissonSubsample(SIGMA_1, 0.01), 10_000)
    eps = PLDAccountant().epsilon(plan, delta=1e-5)
    assert 6.18 <= eps <= 6.20
    assert eps < RDPAccountant().epsilon(plan, delta=1e-5)


def test_rdp_matches_opacus_on_dp_sgd():
    """privkit's RDP equals opacus's RDP accountant on the same orders to 1e-6."""
    from opacus.accountants import RDPAccountant as OpacusRDP

    ours = RDPAccountant().epsilon(Repeat(PoissonSubsample(SIGMA_1, 0.01), 10_000), delta=1e-5)
    theirs = OpacusRDP()
    theirs.history = [(1.0, 0.01, 10_000)]
    assert ours == pytest.approx(theirs.get_epsilon(delta=1e-5), rel=1e-6)
    assert round(ours, 4) == 6.7127


@pytest.mark.parametrize("guarantee", [GDP(mu=0.7), LaplaceDP(epsilon=0.9),
                                       PureDP(epsilon=0.9)])
def test_discretisation_dominates_the_exact_profile(guarantee):
    """At 200 points (off the grid too) the discretised profile is at least the exact one
    and within 1e-5 of it."""
    pld = dominating_pld(guarantee.profile, step=1e-3, lowest=-12, highest=12)
    for eps in np.linspace(-1.0, 3.0, 200):
        exact = float(guarantee.profile(np.array([eps]))[0])
        ours = pld.delta_at(eps)
        assert exact - 1e-15 <= ours <= exact + 1e-5


def test_gaussian_compositions_are_not_undercounted_and_nearly_exact():
    """50 Gaussians of mu 0.2 compose to exactly sqrt(50) 0.2-GDP; PLD is above and
    within 1e-4 (its error is O(step^2) per block)."""
    plan = Repeat(Gaussian.for_gdp(0.2, sensitivity=1.0, relation=A), 50)
    exact = GDP(mu=math.sqrt(50) * 0.2).epsilon_at(1e-6)
    ours = PLDAccountant().epsilon(plan, delta=1e-6)
    assert exact <= ours <= exact + 1e-4


@settings(max_examples=12)
@given(plans(A, max_leaves=4))
def test_halving_the_step_never_raises_the_bound(plan):
    """Property: on a grid nested in a coarser one (step halved), the bound is never
    above the coarser one (connect-the-dots chords only get closer to the convex profile)."""
    coarse, fine = PLDAccountant(step=2e-3), PLDAccountant(step=1e-3)
    if not coarse.supports(plan):
        return
    assert fine.epsilon(plan, delta=1e-6) <= coarse.epsilon(plan, delta=1e-6) * (1 + 1e-9) + 1e-12


def test_parallel_is_the_worse_part():
    """Parallel parts cost the worse part: equal to that part's bound alone."""
    big = Gaussian.for_gdp(1.0, sensitivity=1.0, relation=A)
    small = Gaussian.for_gdp(0.2, sensitivity=1.0, relation=A)
    accountant = PLDAccountant()
    assert accountant.epsilon(Parallel(big, small), delta=1e-6) == pytest.approx(
        accountant.epsilon(big, delta=1e-6), abs=1e-4)


def test_full_sampling_is_no_sampling():
    """Poisson subsampling with rate 1 is the mechanism itself."""
    accountant = PLDAccountant()
    assert accountant.epsilon(PoissonSubsample(SIGMA_1, 1.0), delta=1e-6) == pytest.approx(
        accountant.epsilon(SIGMA_1, delta=1e-6), abs=1e-4)


def test_subsampling_directions_differ_and_the_worse_is_reported():
    """For Poisson subsampling the remove direction dominates at small delta; the
    accountant reports the worse of the two."""
    pair = PLDAccountant().pair(Repeat(PoissonSubsample(SIGMA_1, 0.05), 100))
    assert pair.remove.epsilon_at(1e-6) > pair.add.epsilon_at(1e-6)
    assert pair.epsilon_at(1e-6) == pair.remove.epsilon_at(1e-6)


def test_sampling_without_replacement_beats_rdp():
    """Under REPLACE_ONE, PLD's amplification bound is below WBK's RDP bound."""
    base = Gaussian.for_gdp(0.5, sensitivity=1.0, relation=Neighbouring.REPLACE_ONE)
    plan = Repeat(SampleWithoutReplacement(base, 100, 10_000), 500)
    assert PLDAccountant().epsilon(plan, delta=1e-5) < RDPAccountant().epsilon(plan, delta=1e-5)


def test_mixed_laplace_and_gaussian_plans():
    """A mix of Laplace and Gaussian blocks accounts below RDP and above each part."""
    lap = Laplace.for_epsilon(0.05, sensitivity=1.0, relation=A)
    gau = Gaussian.for_gdp(0.05, sensitivity=1.0, relation=A)
    plan = Sequential(Repeat(lap, 100), Repeat(gau, 100))
    pld = PLDAccountant().epsilon(plan, delta=1e-5)
    assert pld < RDPAccountant().epsilon(plan, delta=1e-5)
    assert pld > PLDAccountant().epsilon(Repeat(lap, 100), delta=1e-5)


def test_claimed_pure_blocks_are_accounted_as_randomized_response():
    """A claimed pure-DP block is accounted by its worst case, randomized response: at
    delta 1e-10 the PLD epsilon is RR's (0.3 up to one grid step). At delta = 0 a PLD
    cannot certify anything finite once rounding leaves any mass at +infinity; the
    basic accountant gives pure epsilon exactly."""
    block = Claimed(PureDP(epsilon=0.3), relation=A)
    rr = PureDP(epsilon=0.3).epsilon_at(1e-10)
    assert rr <= PLDAccountant().epsilon(block, delta=1e-10) <= rr + 1e-3


def test_sampling_without_replacement_amplifies_pure_dp_exactly():
    """A pure 1.0 block on 10 of 100 records (REPLACE_ONE) is log(1 + (m/n)(e - 1))-DP
    (Balle, Barthe, Gaboardi 2018, Theorem 10); at delta 1e-12 the PLD epsilon is that
    value up to two grid steps, and at 0.01 it is the amplified randomized response's
    (closed form: q * RR profile at log(1 + (e^eps - 1) / q))."""
    from privkit import PureDP as P

    block = Claimed(P(epsilon=1.0), relation=Neighbouring.REPLACE_ONE)
    plan = SampleWithoutReplacement(block, 10, 100)
    amplified = math.log1p(0.1 * math.expm1(1.0))
    eps = PLDAccountant().epsilon(plan, delta=1e-12)
    assert amplified - 1e-9 <= eps <= amplified + 2e-3

    def profile(t):
        return 0.1 * float(P(epsilon=1.0).profile(np.array([math.log1p(math.expm1(t) / 0.1)]))[0])

    from scipy import optimize

    exact = optimize.brentq(lambda t: profile(t) - 0.01, 0.0, amplified)
    assert exact - 1e-9 <= PLDAccountant().epsilon(plan, delta=0.01) <= exact + 2e-3


def test_huge_counts_are_refused_with_a_reason():
    """Repeat(block, 10**30) is beyond what FFT powers compute reliably: the PLD
    accountant refuses it (tightest records why and answers with the others)."""
    from privkit import UnsupportedPlanError, tightest

    plan = Repeat(Claimed(PureDP(epsilon=0.01), relation=A), 10**30)
    with pytest.raises(UnsupportedPlanError, match="pld accountant cannot"):
        PLDAccountant().epsilon(plan, delta=1e-5)
    assert "pld" in tightest(plan, delta=1e-5).refused


def test_nested_repeats_equal_the_flat_count():
    """12 nested Repeat(., 2) are 4096 runs: the same terms, the same answer."""
    nested = Claimed(PureDP(epsilon=0.01), relation=A)
    for _ in range(12):
        nested = Repeat(nested, 2)
    flat = PLDAccountant().epsilon(Repeat(Claimed(PureDP(epsilon=0.01), relation=A), 4096),
                                   delta=1e-5)
    assert PLDAccountant().epsilon(nested, delta=1e-5) == pytest.approx(flat, rel=1e-12)
