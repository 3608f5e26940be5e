"""Clopper-Pearson intervals and the epsilon lower bound."""

import math

import numpy as np
import pytest
from scipy import stats

from privkit.audits import clopper_pearson, epsilon_lower_bound


@pytest.mark.parametrize(("k", "n"), [(0, 50), (3, 50), (25, 50), (50, 50), (4000, 100_000)])
def test_one_sided_bounds_match_scipy_exact_interval(k, n):
    """One-sided bounds at alpha equal scipy's exact two-sided interval at 1 - 2 alpha."""
    lower, upper = clopper_pearson(k, n, 0.025)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert float(lower) == pytest.approx(ci.low, abs=1e-12)
    assert float(upper) == pytest.approx(ci.high, abs=1e-12)


def test_bound_is_below_the_true_ratio_and_approaches_it():
    """With hits exactly at the expected counts for a true ratio e, the bound is below 1
    and within 0.02 of it for 10^6 draws."""
    n = 1_000_000
    p, q = 0.2, 0.2 / math.e
    bound = float(epsilon_lower_bound(int(p * n), n, int(q * n), n, delta=0.0, confidence=0.95))
    assert 0.98 < bound < 1.0


def test_delta_and_more_sets_lower_the_bound():
    """A larger delta or a Bonferroni correction over more sets only lowers the bound."""
    args = (2000, 10_000, 800, 10_000)
    base = float(epsilon_lower_bound(*args, delta=0.0, confidence=0.95))
    assert float(epsilon_lower_bound(*args, delta=0.01, confidence=0.95)) < base
    assert float(epsilon_lower_bound(*args, delta=0.0, confidence=0.95, sets=10)) < base


def test_no_evidence_gives_zero():
    """Equal frequencies, or hits below delta, certify nothing."""
    assert float(epsilon_lower_bound(100, 1000, 100, 1000, delta=0.0, confidence=0.95)) == 0.0
    assert float(epsilon_lower_bound(1, 10**6, 0, 10**6, delta=1e-5, confidence=0.95)) == 0.0
    assert np.all(epsilon_lower_bound([5, 50], 100, [5, 5], 100, delta=0.0,
                                      confidence=0.9) >= 0)
