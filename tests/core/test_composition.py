"""Advanced, optimal and GDP composition: closed forms and invariants."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privkit import (
    AdvancedAccountant,
    ApproxDP,
    Claimed,
    GDPAccountant,
    InvalidParameterError,
    LooseBoundWarning,
    Neighbouring,
    OptimalAccountant,
    PLDAccountant,
    PoissonSubsample,
    PureDP,
    Repeat,
    Sequential,
    UnsupportedPlanError,
    available_accountants,
    tightest,
)
from privkit.composition import (
    drv_epsilon,
    kov_heterogeneous_epsilon,
    optimal_homogeneous_delta,
    optimal_homogeneous_epsilon,
    reijden_composition_epsilon,
)
from privkit.mechanisms import Gaussian

A = Neighbouring.ADD_REMOVE


def pure(eps):
    return Claimed(PureDP(epsilon=eps), relation=A, label="block")


def test_hand_computed_closed_forms():
    """100 blocks of pure 0.1 at delta 1e-5: optimal 4.3068, Dwork-Rothblum-Vadhan 5.8502
    (hand computation: sqrt(200 ln 1e5) 0.1 + 10 (e^0.1 - 1) = 4.7985 + 1.0517)."""
    assert round(optimal_homogeneous_epsilon(epsilon=0.1, delta=0.0, count=100, target_delta=1e-5),
                 4) == 4.3068
    assert round(drv_epsilon(epsilon=0.1, count=100, delta_slack=1e-5), 4) == 5.8502
    plan = Repeat(pure(0.1), 100)
    assert round(OptimalAccountant().epsilon(plan, delta=1e-5), 4) == 4.3068
    assert AdvancedAccountant().epsilon(plan, delta=1e-5) == pytest.approx(
        min(10.0, drv_epsilon(epsilon=0.1, count=100, delta_slack=1e-5),
            kov_heterogeneous_epsilon([0.1] * 100, 1e-5)))


def test_optimal_delta_is_the_binomial_sum_for_two_blocks():
    """k = 2: the composed randomized responses have losses 2e, 0, -2e with binomial
    masses; delta at 0 is p^2 - q^2 (direct computation)."""
    e = 0.7
    p, q = math.exp(e) / (1 + math.exp(e)), 1 / (1 + math.exp(e))
    assert optimal_homogeneous_delta(epsilon=e, delta=0.0, count=2,
                                     target_epsilon=0.0) == pytest.approx(p * p - q * q, rel=1e-12)


@settings(max_examples=25)
@given(st.floats(min_value=0.01, max_value=1.0), st.integers(min_value=1, max_value=60),
       st.floats(min_value=1e-9, max_value=1e-2))
def test_optimal_is_below_advanced_and_basic_and_pld_agrees(eps, k, delta):
    """Property: the exact optimum never exceeds the advanced or basic bounds, and the
    PLD accountant never reports less than the optimum. Its excess is at most one grid
    step (1e-3) per block: randomized response's loss atoms +-eps need not lie on the
    grid, and at tiny delta epsilon is the top of the support, which the pessimistic
    discretisation moves up by at most a step per block."""
    plan = Repeat(pure(eps), k)
    optimal = OptimalAccountant().epsilon(plan, delta=delta)
    assert optimal <= AdvancedAccountant().epsilon(plan, delta=delta) * (1 + 1e-12)
    assert optimal <= k * eps * (1 + 1e-12)
    pld = PLDAccountant().epsilon(plan, delta=delta)
    assert optimal * (1 - 1e-9) <= pld <= optimal + k * 1e-3
    for accountant in available_accountants():  # nobody undercounts the exact optimum
        if accountant.supports(plan):
            assert accountant.epsilon(plan, delta=delta) >= optimal * (1 - 1e-9)


def test_optimal_refuses_heterogeneous_plans():
    """Heterogeneous optimal composition is #P-hard: the plan is refused, naming it."""
    with pytest.raises(UnsupportedPlanError, match="optimal accountant cannot"):
        OptimalAccountant().epsilon(Sequential(pure(0.1), pure(0.2)), delta=1e-5)


def test_seed003_form_is_valid_only_for_small_epsilon():
    """Van der Reijden's sqrt(8 T log 1/delta) eps exceeds the exact DRV bound for small eps
    (so it is valid there) and undercounts it for large eps (so privkit never uses it)."""
    assert (reijden_composition_epsilon(epsilon=0.01, count=100, delta=1e-5)
            >= drv_epsilon(epsilon=0.01, count=100, delta_slack=1e-5))
    assert (reijden_composition_epsilon(epsilon=2.0, count=100, delta=1e-5)
            < drv_epsilon(epsilon=2.0, count=100, delta_slack=1e-5))


class TestGDPAccountant:
    def test_gaussian_plans_compose_in_quadrature(self):
        """Two Gaussians with mu 0.3 and 0.4 compose to exactly 0.5-GDP."""
        g1 = Gaussian.for_gdp(0.3, sensitivity=1.0, relation=A)
        g2 = Gaussian.for_gdp(0.4, sensitivity=1.0, relation=A)
        assert GDPAccountant().mu(Sequential(g1, g2)) == pytest.approx(0.5)

    def test_clt_is_an_approximation_that_tightest_refuses(self):
        """The CLT for subsampled Gaussians warns, and tightest will not use it."""
        step = PoissonSubsample(Gaussian.for_gdp(1.0, sensitivity=1.0, relation=A), 0.01)
        clt = GDPAccountant(clt=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mu = clt.mu(Repeat(step, 10_000))
        assert any(issubclass(w.category, LooseBoundWarning) for w in caught)
        assert mu == pytest.approx(0.01 * math.sqrt(10_000 * math.expm1(1.0)))
        assert not GDPAccountant().supports(step)
        with pytest.raises(InvalidParameterError, match="computes an approximation"):
            tightest(Repeat(step, 10), delta=1e-5, accountants=[clt])


def test_advanced_spends_only_the_slack_left_by_the_blocks_deltas():
    """20 runs of (0.1, 1e-7) at target 1e-5: the composition theorem gets
    delta_slack = 1 - (1 - 1e-5) / (1 - 1e-7)^20 (about 8e-6), not the whole 1e-5
    (hand formula: DRV and KOV at that slack)."""
    k, e, d0, target = 20, 0.1, 1e-7, 1e-5
    plan = Repeat(Claimed(ApproxDP(epsilon=e, delta=d0), relation=A), k)
    slack = 1 - (1 - target) / (1 - d0) ** k
    expected = min(k * e, drv_epsilon(epsilon=e, count=k, delta_slack=slack),
                   kov_heterogeneous_epsilon([e] * k, slack))
    assert AdvancedAccountant().epsilon(plan, delta=target) == pytest.approx(expected,
                                                                             rel=1e-9)
    # the blocks' own deltas exceed a smaller target: nothing is certified
    assert AdvancedAccountant().epsilon(plan, delta=1e-6) == math.inf


def test_optimal_delta_for_many_runs_bounds_the_exact_sum():
    """Above EXACT_SUM_LIMIT runs the binomial-CDF form is used: it is at least the exact
    sum (computed here term by term from binomial probabilities) and within 1e-6 of it."""
    from scipy import stats

    from privkit.composition import EXACT_SUM_LIMIT

    k, e, t = EXACT_SUM_LIMIT + 1, 0.01, 2.0
    p = math.exp(e) / (1 + math.exp(e))
    ell = np.arange(k + 1)
    terms = stats.binom.pmf(ell, k, 1 - p) - math.exp(t) * stats.binom.pmf(ell, k, p)
    exact = 1 - (1 - 1e-9) ** k * (1 - float(np.sum(np.maximum(terms, 0.0))))
    ours = optimal_homogeneous_delta(epsilon=e, delta=1e-9, count=k, target_epsilon=t)
    assert exact * (1 - 1e-12) <= ours <= exact * (1 + 1e-6)


def test_optimal_answers_up_to_its_limit_and_refuses_beyond():
    """10^10 runs of a 1e-6 block: at most advanced, and near the central limit of k
    randomized responses, GDP(sqrt(k) eps) (a sanity floor at 90%; the CLT is not a
    bound). 10^30 runs are refused with the standard error; tightest uses the others."""
    from privkit import GDP

    plan = Repeat(pure(1e-6), 10**10)
    optimal = OptimalAccountant().epsilon(plan, delta=1e-6)
    assert optimal <= AdvancedAccountant().epsilon(plan, delta=1e-6) * (1 + 1e-9)
    assert optimal >= 0.9 * GDP(mu=0.1).epsilon_at(1e-6)
    huge = Repeat(pure(1e-20), 10**30)
    with pytest.raises(UnsupportedPlanError, match="optimal accountant cannot"):
        OptimalAccountant().epsilon(huge, delta=1e-6)
    assert tightest(huge, delta=1e-6).refused.keys() >= {"optimal"}


def test_optimal_composition_of_huge_epsilons_does_not_overflow():
    """Blocks with epsilon above 709 (exp overflows a double) are accounted: two pure
    800-DP runs are exactly 1600-DP, and at a positive delta no worse."""
    from privkit.composition import optimal_homogeneous_delta, optimal_homogeneous_epsilon

    assert optimal_homogeneous_delta(epsilon=800.0, delta=0.0, count=2,
                                     target_epsilon=1600.0) == 0.0
    assert optimal_homogeneous_epsilon(epsilon=800.0, delta=0.0, count=2,
                                       target_delta=1e-5) <= 1600.0


@pytest.mark.parametrize(("epsilon", "count", "target"),
                         [(0.01, 80, 0.648), (1.0, 609, 449.0), (0.5, 40, 19.9)])
def test_optimal_delta_of_pure_runs_is_positive_below_k_epsilon(epsilon, count, target):
    """k pure runs are not (t, 0)-DP for any t < k eps ([KOV15] Thm 3.3: the l = 0 term
    p^k - e^t q^k is positive). The sum is checked against mpmath at 60 digits; it was
    lost against 1 in 1 - (1 - sum) (80 runs of 0.01 read as pure 0.648, not 0.8)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    p = mpmath.e ** epsilon / (1 + mpmath.e ** epsilon)
    q = 1 - p
    exact = mpmath.fsum(max(mpmath.binomial(count, j) * (p ** (count - j) * q ** j
                                                         - mpmath.e ** target * p ** j
                                                         * q ** (count - j)), 0)
                        for j in range(count + 1))
    ours = optimal_homogeneous_delta(epsilon=epsilon, delta=0.0, count=count, target_epsilon=target)
    assert ours > 0.0
    assert ours == pytest.approx(float(exact), rel=1e-9)
    assert optimal_homogeneous_epsilon(epsilon=epsilon, delta=0.0, count=count,
                                       target_delta=0.0) == count * epsilon
    assert OptimalAccountant().epsilon(Repeat(pure(epsilon), count), delta=0.0) == pytest.approx(
        count * epsilon)


def test_optimal_delta_rounds_an_underflow_up():
    """Below k eps the delta is positive even when it is below the smallest float; the
    answer is then that float (an upper bound), never 0; at k eps it is exactly 0."""
    # only l = 0 is live: p^k (1 - e^(t - k eps)) = e^(-1383) or so, below 5e-324
    assert optimal_homogeneous_delta(epsilon=0.01, delta=0.0, count=2000,
                                     target_epsilon=19.999) == math.ulp(0.0)
    assert optimal_homogeneous_delta(epsilon=0.01, delta=0.0, count=2000,
                                     target_epsilon=20.0) == 0.0
    assert optimal_homogeneous_epsilon(epsilon=0.1, delta=1e-9, count=10,
                                       target_delta=0.0) == math.inf
