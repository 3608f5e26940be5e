"""Pair generators and search, the Gaussian f-DP bound, strategies, helpers, plots."""

import numpy as np
import pytest
from hypothesis import given, settings

from privkit import GDP, Neighbouring, Norm, Sensitivity
from privkit.audits import (
    NeighbouringPair,
    audit,
    canary_pairs,
    extreme_pairs,
    gdp_mu_lower_bound,
    random_pairs,
    search_pairs,
)
from privkit.audits.registry import CASES
from privkit.audits.strategies import (
    assert_dp,
    assert_sensitivity,
    guarantees,
    neighbouring_pairs,
    sensitivities,
)

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE


def noisy_sum(data, rng, size):
    """Claims 1-DP for records in [0, 1] (sensitivity 1), correctly: privkit's
    floating-point-safe release (``sum + numpy Laplace`` leaks through its low-order bits,
    which the default audit sees, issue 23)."""
    from privkit.mechanisms import Laplace

    mech = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
    return mech.release(float(np.clip(data, 0.0, 1.0).sum()), rng=rng, size=size)


def unclipped_sum(data, rng, size):
    """The same claim without clipping: records up to 3 make it 3-DP."""
    return np.asarray(data).sum() + rng.laplace(0.0, 1.0, size)


@pytest.mark.parametrize("relation", list(Neighbouring))
def test_generated_pairs_are_neighbours(relation):
    """Random and extreme pairs differ by one added/removed or replaced record, in the box."""
    pairs = (random_pairs(0.0, 2.0, n_records=6, relation=relation, count=10, rng=0)
             + extreme_pairs(0.0, 2.0, n_records=6, relation=relation, count=10, rng=1))
    for pair in pairs:
        a, b = pair.first, pair.second
        assert pair.relation is relation
        assert np.all((a >= 0) & (a <= 2)) and np.all((b >= 0) & (b <= 2))  # noqa: PT018
        if relation is R:
            assert a.shape == b.shape
            assert np.sum(a != b) <= 1
        else:
            assert abs(len(a) - len(b)) == 1


def test_canary_pair():
    """The canary pair inserts (or substitutes) exactly the canary record."""
    pair = canary_pairs(np.zeros((3, 2)), [5.0, 5.0], A)
    assert pair.second.shape == (4, 2)
    assert np.array_equal(pair.second[-1], [5.0, 5.0])
    assert canary_pairs(np.zeros((3, 2)), [5.0, 5.0], R).second.shape == (3, 2)


def test_search_finds_the_violating_pair():
    """Among random and extreme candidates the search picks a pair that exposes the
    unclipped sum (true epsilon 3 on extreme pairs) and the fresh audit flags it; the
    clipped version stays consistent on the same candidates."""
    candidates = (random_pairs(0.0, 3.0, n_records=5, relation=A, count=8, rng=1)
                  + extreme_pairs(0.0, 3.0, n_records=5, relation=A, count=8, rng=2))
    _, broken = search_pairs(unclipped_sum, candidates, epsilon=1.0, trials=200_000, rng=3)
    _, fine = search_pairs(noisy_sum, candidates, epsilon=1.0, trials=200_000, rng=3)
    assert broken.verdict == "violation"
    assert fine.verdict != "violation"


@pytest.mark.statistical
def test_gaussian_fdp_bound_is_tighter_for_gaussians_and_below_the_truth():
    """For the Gaussian mechanism the f-DP bound (Nasr et al. 2023) is below its true mu
    and tighter than the (epsilon, delta) bound (false-failure rate <= 5%, seeded). It is
    computed on the rejection set chosen for the (epsilon, delta) bound, a far-tail
    threshold, so it reaches about 0.87 of the true mu here rather than its optimum."""
    case = CASES["gaussian"](epsilon=1.0)
    result = audit(case.system, case.pair, epsilon=1.0, delta=1e-5, trials=1_000_000, rng=4)
    true_mu = 1.0 / 3.730631634815946
    assert 0.8 * true_mu < result.gdp_mu_lower <= true_mu
    assert result.lower_bound < result.gdp_epsilon_lower <= 1.0
    assert result.gdp_epsilon_lower == pytest.approx(
        GDP(mu=result.gdp_mu_lower).epsilon_at(1e-5))


def test_gdp_bound_is_zero_without_evidence():
    """Equal rates give mu = 0."""
    assert gdp_mu_lower_bound(500, 1000, 500, 1000, confidence=0.95) == 0.0


@settings(max_examples=10, deadline=None)
@given(neighbouring_pairs(A, record_low=0.0, record_high=1.0, max_size=8))
def test_documented_example_passes_for_correct_mechanism(pair):
    """The strategy + assert_dp example of privkit.audits.strategies: a correct mechanism
    passes on every generated pair."""
    assert_dp(noisy_sum, pair, epsilon=1.0, trials=20_000)


def test_assert_dp_raises_on_a_violation():
    """assert_dp raises AssertionError with the result when the claim is violated."""
    pair = NeighbouringPair(first=np.zeros(3), second=np.array([0.0, 0.0, 3.0]), relation=R)
    with pytest.raises(AssertionError, match="privacy claim violated"):
        assert_dp(unclipped_sum, pair, epsilon=1.0, trials=50_000)


def test_assert_sensitivity():
    """assert_sensitivity passes true declarations and raises on understated ones."""
    def total(data):
        return np.asarray(data).sum(axis=0)

    good = Sensitivity(value=1.0, norm=Norm.L1, relation=A)
    assert_sensitivity(total, good, record_low=[0.0], record_high=[1.0], rng=0)
    with pytest.raises(AssertionError, match="sensitivity exceeded"):
        assert_sensitivity(total, Sensitivity(value=0.5, norm=Norm.L1, relation=A),
                           record_low=[0.0], record_high=[1.0], rng=0)


@settings(max_examples=30)
@given(guarantees(), sensitivities())
def test_value_strategies_draw_valid_values(guarantee, sensitivity):
    """The public strategies only draw valid values (they round-trip through within)."""
    assert guarantee.within(guarantee)
    assert sensitivity.value > 0


def test_plots_draw_histograms_and_bounds():
    """Both plots produce figures with the expected labelled artists."""
    from privkit.audits.plots import plot_bound_against_draws, plot_output_histograms

    case = CASES["laplace"](epsilon=1.0)
    figure = plot_output_histograms(case.system, case.pair, draws=5_000)
    labels = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert labels == ["M(D)", "M(D')"]
    figure = plot_bound_against_draws(case.system, case.pair, epsilon=1.0,
                                      draws=(1_000, 10_000))
    line = figure.axes[0].get_lines()[0]
    assert len(line.get_xdata()) == 2
    assert max(line.get_ydata()) <= 1.0
