"""Exponential mechanism, report noisy max and permute-and-flip."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from _stats import ALPHA
from privkit import BoundedRange, Neighbouring, PureDP
from privkit.conversions import bounded_range_delta
from privkit.mechanisms import Exponential, PermuteAndFlip, ReportNoisyMax

R = Neighbouring.REPLACE_ONE
A = Neighbouring.ADD_REMOVE


def softmax(x):
    z = np.exp(x - np.max(x))
    return z / z.sum()


@pytest.mark.statistical
def test_exponential_mechanism_samples_the_softmax():
    """Frequencies of 200,000 selections match exp(eps u / 2Δ) / Z (chi-square).
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    u = np.array([0.0, 1.0, 2.5, 3.0, -1.0])
    m = Exponential.for_epsilon(1.0, sensitivity=1.0, relation=R)
    draws = m.release(u, rng=3, size=200_000)
    observed = np.bincount(draws, minlength=5)
    assert stats.chisquare(observed, softmax(u / 2) * 200_000).pvalue > ALPHA
    wrong = stats.chisquare(observed, softmax(u / 1.9) * 200_000).pvalue  # 5% too sharp
    assert wrong < ALPHA


def test_factor_two_is_needed_and_sufficient():
    """Exact worst-case privacy loss of the exponential mechanism: all utilities 0 on D,
    candidate 0 up by Δ and the rest down by Δ on D' (k = 10^6 candidates). With
    scale 2Δ/eps the loss approaches but never exceeds eps; without the factor 2 (scale
    Δ/eps) it approaches 2 eps."""
    eps, k = 1.0, 10**6

    def worst_log_ratio(scale):
        p = 1.0 / k
        q = math.exp(1 / scale) / (math.exp(1 / scale) + (k - 1) * math.exp(-1 / scale))
        return math.log(q / p)

    m = Exponential.for_epsilon(eps, sensitivity=1.0, relation=R)
    assert 0.99 * eps < worst_log_ratio(m.noise_scale) <= eps
    assert worst_log_ratio(m.noise_scale / 2) > 1.9 * eps


def test_monotone_utilities_use_half_the_scale():
    """monotone=True gives scale Δ/eps, still eps-DP: with all utilities moving up by
    at most Δ the exact worst log ratio stays below eps."""
    m = Exponential.for_epsilon(1.0, sensitivity=1.0, relation=A, monotone=True)
    assert m.noise_scale == 1.0
    assert m.epsilon_at(0.0) == pytest.approx(1.0)
    k = 10**6  # candidate 0 up by Δ, others unchanged: ratio -> e^eps, never above
    q = math.exp(1.0) / (math.exp(1.0) + k - 1)
    assert math.log(q * k) <= 1.0


def test_zcdp_calibration_round_trips():
    """for_zcdp gives rho back through bounded range (eta^2 / 8)."""
    m = Exponential.for_zcdp(0.02, sensitivity=1.0, relation=R)
    assert m.zcdp_rho() == pytest.approx(0.02, rel=1e-12)


def test_exponential_guarantees_are_bounded_range_and_pure():
    """eps-bounded range (first) and eps-DP; zCDP eps^2/8."""
    m = Exponential.for_epsilon(0.5, sensitivity=2.0, relation=R)
    assert m.guarantees() == (BoundedRange(eta=0.5), PureDP(epsilon=0.5))
    assert m.zcdp_rho() == pytest.approx(0.5**2 / 8)


@given(st.floats(min_value=0.01, max_value=10.0), st.floats(min_value=0.0, max_value=10.0))
def test_bounded_range_profile_equals_brute_force_over_t(eta, eps):
    """The closed-form BR profile equals the maximum over t of the generalised randomized
    response RR(eta, t) (Dong-Durfee-Rogers 2020), found by a grid of 20,001 t's."""
    t = np.linspace(0.0, 1.0, 20_001)
    x = np.exp(t * eta)
    c = math.exp(-eta)
    q = (1 - x * c) / (x * (1 - c))
    brute = float(np.max(q * np.maximum(x - math.exp(eps), 0.0)))
    exact = bounded_range_delta(eta, eps)
    assert brute <= exact * (1 + 1e-9) + 1e-15  # the grid never beats the maximum
    assert exact <= brute + 1e-6 * max(1.0, eta)  # and the maximum is (nearly) attained


def test_bounded_range_is_tighter_than_pure():
    """eta-BR implies eta-DP and strictly less delta at every eps < eta."""
    for eps in (0.0, 0.3, 0.9):
        assert BoundedRange(eta=1.0).delta_at(eps) < PureDP(epsilon=1.0).delta_at(eps)
    assert BoundedRange(eta=1.0).within(PureDP(epsilon=1.0))
    assert not BoundedRange(eta=1.0).within(PureDP(epsilon=0.99))
    assert BoundedRange(eta=1.0).epsilon_at(0.0) == pytest.approx(1.0)


def permute_and_flip_exact(u, scale):
    """P(output = r) by enumerating every permutation (McKenna, Sheldon 2020, Alg. 1)."""
    k = len(u)
    accept = np.exp((u - u.max()) / scale)
    probs = np.zeros(k)
    perms = list(itertools.permutations(range(k)))
    for perm in perms:
        reach = 1.0
        for r in perm:
            probs[r] += reach * accept[r]
            reach *= 1 - accept[r]
    return probs / len(perms)


@pytest.mark.statistical
def test_permute_and_flip_matches_its_definition():
    """Report-noisy-max with exponential noise has the permute-and-flip law, computed
    by enumerating all 24 permutations of 4 candidates (chi-square, n = 200,000).
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    u = np.array([0.0, 1.5, 2.0, 0.5])
    m = PermuteAndFlip.for_epsilon(1.0, sensitivity=1.0, relation=R)
    observed = np.bincount(m.release(u, rng=4, size=200_000), minlength=4)
    expected = permute_and_flip_exact(u, m.noise_scale) * 200_000
    assert stats.chisquare(observed, expected).pvalue > ALPHA
    assert stats.chisquare(observed, softmax(u / m.noise_scale) * 200_000).pvalue < ALPHA


def test_report_noisy_max_privacy_and_shapes():
    """RNM is pure eps-DP only; vectorised over rows of utilities."""
    m = ReportNoisyMax.for_epsilon(2.0, sensitivity=1.0, relation=A)
    assert m.guarantees() == (PureDP(epsilon=2.0),)
    out = m.release(np.zeros(7), rng=0, size=5)
    assert out.shape == (5,)
    assert out.max() < 7
    with pytest.raises(ValueError, match="1-d array of utilities"):
        m.release(np.zeros((3, 7)), rng=0)  # three selections are three runs: call thrice


@pytest.mark.statistical
def test_report_noisy_max_two_candidates_probability():
    """For two candidates, P(select the higher) = P(L1 - L2 > -gap): for the difference
    of two Laplace(b) variables this is 1 - (1/2 + g/(4b)) e^(-g/b) (closed form).
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    m = ReportNoisyMax(noise_scale=1.5, sensitivity=Exponential.for_epsilon(
        1.0, sensitivity=1.0, relation=A).sensitivity)
    gap, b = 1.0, 1.5
    draws = m.release([0.0, gap], rng=5, size=200_000)
    p = 1 - (0.5 + gap / (4 * b)) * math.exp(-gap / b)
    assert stats.binomtest(int(draws.sum()), 200_000, p).pvalue > ALPHA
