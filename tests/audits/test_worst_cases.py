"""The worst-case pairs of the selection mechanisms and the sparse vector: their exact
epsilons (the ceilings) against independent computations, and their audits' power."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privkit.audits import audit
from privkit.audits.registry import CASES
from privkit.mechanisms import Exponential, PermuteAndFlip, ReportNoisyMax, SparseVector


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_sparse_vector_ceiling_matches_quadrature(epsilon):
    """The pair's exact epsilon (trapezoid rule in worst_case) equals scipy's adaptive
    quadrature of the same integral to 1e-6."""
    worst = SparseVector.worst_case(epsilon=epsilon, delta=0.0)
    svt, m = worst.mechanism, len(worst.first) - 1

    def law(shift):
        def density(r):
            return (stats.laplace.pdf(r, scale=svt.threshold_scale)
                    * stats.laplace.cdf(r + shift, scale=svt.query_scale) ** m
                    * stats.laplace.sf(r - shift, scale=svt.query_scale))

        bound = 60 * max(svt.threshold_scale, svt.query_scale)
        return integrate.quad(density, -bound, bound, limit=500, points=[-1, 0, 1])[0]

    true = math.log(law(1.0) / law(0.0))
    assert worst.ceiling * epsilon == pytest.approx(min(true, epsilon), abs=1e-6)
    assert np.array_equal(worst.second, np.concatenate([-np.ones(m), [1.0]]))


def test_exponential_ceiling_closed_form():
    """Gumbel-max selection: P'[0] = e^(eps/2) / (e^(eps/2) + (k-1) e^(-eps/2)) (McSherry
    and Talwar's probabilities), so the pair's epsilon is log(k P'[0])."""
    for epsilon in (0.1, 1.0, 4.0):
        worst = Exponential.worst_case(epsilon=epsilon, delta=0.0)
        k = len(worst.first)
        p = math.exp(epsilon / 2) / (math.exp(epsilon / 2) + (k - 1) * math.exp(-epsilon / 2))
        assert worst.ceiling == pytest.approx(min(1.0, math.log(k * p) / epsilon), rel=1e-9)


@pytest.mark.parametrize("cls", [ReportNoisyMax, PermuteAndFlip])
def test_noisy_max_ceilings_match_monte_carlo(cls):
    """The win probability behind the ceiling (an integral) agrees with 100,000 seeded
    draws of the mechanism on D' to within 5 standard errors (false-failure rate below
    1e-6)."""
    worst = cls.worst_case(epsilon=1.0, delta=0.0)
    k = len(worst.first)
    draws = worst.mechanism.simulate(worst.second, rng=0, size=100_000)
    observed = float(np.mean(draws == 0))
    win = math.exp(worst.ceiling * 1.0) / k  # ceiling = log(k P'[0]) / epsilon here
    assert abs(observed - win) <= 5 * math.sqrt(win * (1 - win) / 100_000)


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("name", ["exponential", "report_noisy_max", "permute_and_flip",
                                  "sparse_vector"])
def test_selection_and_sparse_vector_pairs_reach_09_of_the_claim(name):
    """At epsilon 1 and 10^6 draws per side the audit certifies at least 0.9 of the claim
    (issue 11: these pairs gave 0.64, 0.69, 0.82 and 0.18), and never more than the claim
    (valid with probability 95%; seeded)."""
    case = CASES[name](epsilon=1.0)
    result = audit(case.system, case.pair, epsilon=case.epsilon, trials=1_000_000,
                   rng=[31, len(name)], name=name)
    assert 0.9 <= result.lower_bound <= 1.0, str(result)
