"""Pins for the constants the mutation probe of issue 25 found unpinned by the fast tier:
the RDP accountant's Poisson-subsampled Gaussian (against the exact sum at integer
orders) and disjoint pure parts under the advanced and optimal accountants (one run of
the largest part's epsilon)."""

import math

import numpy as np
import pytest

from privkit import (
    AdvancedAccountant,
    Neighbouring,
    OptimalAccountant,
    Parallel,
    PoissonSubsample,
    RDPAccountant,
    Repeat,
    Sequential,
)
from privkit import conversions as c
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE


def _mtz_integer_rdp(q: float, sigma: float, order: int) -> float:
    """Mironov, Talwar, Zhang 2019, "Renyi differential privacy of the sampled Gaussian
    mechanism", Section 3.3 (integer orders): ``log sum_k C(a, k) (1 - q)^(a - k) q^k
    exp((k^2 - k) / (2 sigma^2)) / (a - 1)``, summed exactly in log space."""
    terms = [math.log(math.comb(order, k)) + (order - k) * math.log1p(-q) + k * math.log(q)
             + (k * k - k) / (2 * sigma**2) for k in range(order + 1)]
    top = max(terms)
    return (top + math.log(sum(math.exp(t - top) for t in terms))) / (order - 1)


@pytest.mark.parametrize(("q", "sigma"), [(0.01, 1.0), (0.1, 2.0), (0.5, 0.8)])
def test_rdp_of_subsampled_gaussian_is_the_integer_order_sum(q, sigma):
    """The RDP accountant's curve for one Poisson-subsampled Gaussian step, and for 100
    of them, equals the exact sum at integer orders 2..12."""
    orders = np.arange(2.0, 13.0)
    step = PoissonSubsample(Gaussian.for_gdp(1.0 / sigma, sensitivity=1.0, relation=A), q)
    accountant = RDPAccountant(orders=orders)
    exact = np.array([_mtz_integer_rdp(q, sigma, int(a)) for a in orders])
    np.testing.assert_allclose(accountant.curve(step), exact, rtol=1e-10)
    np.testing.assert_allclose(accountant.curve(Repeat(step, 100)), 100 * exact, rtol=1e-10)


def test_disjoint_pure_parts_are_one_run_of_the_largest():
    """Parallel pure parts are one run of the largest part's epsilon (McSherry 2009,
    Theorem 4): the optimal accountant's answer is the pure block's own conversion
    (Kairouz, Oh, Viswanath 2015, Theorem 2.1), and the advanced one's for three such
    nodes is that of three runs of epsilon 1."""
    lap = [Laplace.for_epsilon(e, sensitivity=1.0, relation=A) for e in (0.5, 1.0)]
    node = Parallel(*lap)
    assert OptimalAccountant().epsilon(node, delta=1e-5) == pytest.approx(
        c.pure_dp_epsilon(epsilon=1.0, target_delta=1e-5), rel=1e-12)
    three = Sequential(node, node, node)
    same = Repeat(Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A), 3)
    assert AdvancedAccountant().epsilon(three, delta=1e-5) == pytest.approx(
        AdvancedAccountant().epsilon(same, delta=1e-5), rel=1e-12)
