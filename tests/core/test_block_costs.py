"""Each block's cost under each accountant pinned to an independent closed form, and
blocks that carry their own delta composed under every accountant against the exact
value (issue 25: the mutation probe's surviving under-counts were in exactly these
places).

Every reference here is written out in the test from its source, not taken from privkit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special, stats

from privkit import (
    ApproxDP,
    Claimed,
    Neighbouring,
    Norm,
    Repeat,
    Sensitivity,
    UnsupportedPlanError,
    available_accountants,
    get_accountant,
    tightest,
)
from privkit.guarantees import GDP, RDP, ZCDP
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE


def laplace(b: float) -> Laplace:
    return Laplace(noise_scale=b, sensitivity=Sensitivity(value=1.0, norm=Norm.L1, relation=A))


def gaussian(s: float) -> Gaussian:
    return Gaussian(noise_scale=s, sensitivity=Sensitivity(value=1.0, norm=Norm.L2, relation=A))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Exact epsilon of mu-GDP at delta (Balle, Wang 2018, Theorem 8:
    ``delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``)."""
    def excess(e: float) -> float:
        return (stats.norm.cdf(-e / mu + mu / 2)
                - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2) - delta)
    return float(optimize.brentq(excess, 0.0, 100.0, xtol=1e-13))


def laplace_rdp(alpha: float, b: float) -> float:
    """Laplace RDP (Mironov 2017, "Renyi differential privacy", Table II)."""
    return math.log(alpha / (2 * alpha - 1) * math.exp((alpha - 1) / b)
                    + (alpha - 1) / (2 * alpha - 1) * math.exp(-alpha / b)) / (alpha - 1)


@pytest.mark.parametrize("b", [0.5, 2.0, 10.0])
def test_laplace_costs(b):
    """Laplace(b), sensitivity 1: pure 1/b under basic; its exact epsilon at delta,
    ``1/b + 2 log(1 - delta)`` (from ``delta(eps) = 1 - e^((eps - 1/b) / 2)``), from the
    PLD accountant within its tolerance and never below; RDP equal to Mironov's table."""
    leaf = laplace(b)
    assert get_accountant("basic").epsilon(leaf, delta=0.0) == pytest.approx(1 / b, rel=1e-12)
    delta = 1e-3
    exact = 1 / b + 2 * math.log1p(-delta)
    pld = get_accountant("pld").epsilon(leaf, delta=delta)
    assert exact <= pld <= exact * (1 + 2e-3)
    curve = get_accountant("rdp").guarantee(leaf)
    assert isinstance(curve, RDP)
    for alpha, value in zip(curve.orders, curve.epsilons, strict=True):
        if 1 < alpha < 200:
            assert value == pytest.approx(laplace_rdp(alpha, b), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("sigma", [0.7, 2.0, 8.0])
def test_gaussian_costs(sigma):
    """Gaussian(sigma), sensitivity 1: GDP mu = 1/sigma (Dong, Roth, Su 2019), zCDP
    rho = 1/(2 sigma^2) (Bun, Steinke 2016, Prop. 1.6), RDP alpha/(2 sigma^2) (Mironov
    2017), and the exact epsilon at delta (Balle, Wang 2018) from gdp (exactly) and pld
    (within its tolerance, never below)."""
    leaf = gaussian(sigma)
    g = get_accountant("gdp").guarantee(leaf)
    assert isinstance(g, GDP)
    assert g.mu == pytest.approx(1 / sigma, rel=1e-12)
    z = get_accountant("zcdp").guarantee(leaf)
    assert isinstance(z, ZCDP)
    assert z.rho == pytest.approx(1 / (2 * sigma**2), rel=1e-12)
    curve = get_accountant("rdp").guarantee(leaf)
    assert isinstance(curve, RDP)
    for alpha, value in zip(curve.orders, curve.epsilons, strict=True):
        assert value == pytest.approx(alpha / (2 * sigma**2), rel=1e-12)
    for delta in (1e-3, 1e-8):
        exact = gaussian_epsilon(1 / sigma, delta)
        assert get_accountant("gdp").epsilon(leaf, delta=delta) == pytest.approx(exact,
                                                                                 rel=1e-8)
        pld = get_accountant("pld").epsilon(leaf, delta=delta)
        assert exact * (1 - 1e-9) <= pld <= exact * (1 + 2e-3)


def kov_delta(eps: float, delta0: float, k: int, eps_total: float) -> float:
    """Exact delta at ``eps_total`` of k runs of an (eps, delta0) block (Kairouz, Oh,
    Viswanath 2015, Theorem 3.3; Murtagh, Vadhan 2016): the worst pair is randomized
    response with an atom of mass delta0 at +infinity, so the composition's delta is
    ``1 - (1 - delta0)^k (1 - delta_RR)``, ``delta_RR`` summed over the binomial losses
    ``(k - 2i) eps``."""
    p = math.exp(eps) / (1 + math.exp(eps))
    total = 0.0
    for i in range(k + 1):
        log_c = special.gammaln(k + 1) - special.gammaln(i + 1) - special.gammaln(k - i + 1)
        forward = math.exp(log_c + (k - i) * math.log(p) + i * math.log1p(-p))
        backward = math.exp(log_c + i * math.log(p) + (k - i) * math.log1p(-p))
        total += max(forward - math.exp(eps_total) * backward, 0.0)
    return 1 - (1 - delta0) ** k * (1 - total)


@pytest.mark.parametrize(("eps", "delta0", "k"), [(0.5, 1e-6, 10), (0.1, 1e-7, 60),
                                                   (1.0, 1e-5, 3)])
def test_blocks_with_their_own_delta_under_every_accountant(eps, delta0, k):
    """k runs of a Claimed (eps, delta0) block: at a few epsilons, every accountant's delta
    is at least the exact value; the optimal accountant's equals it and the PLD's is within
    its tolerance (the block's own delta composed, not dropped)."""
    plan = Repeat(Claimed(ApproxDP(epsilon=eps, delta=delta0), relation=A, label="b"), k)
    for eps_total in np.linspace(0.3, 1.0, 3) * k * eps:
        exact = kov_delta(eps, delta0, k, float(eps_total))
        assert exact > k * delta0 * 0.99  # the blocks' own delta is part of it
        seen = []
        for a in available_accountants():
            if not a.certified:
                continue
            try:
                value = a.delta(plan, epsilon=float(eps_total))
            except UnsupportedPlanError:
                continue
            seen.append(a.name)
            assert value >= exact * (1 - 1e-9), (a.name, eps_total, value, exact)
            if a.name == "optimal":
                assert value == pytest.approx(exact, rel=1e-6, abs=1e-15)
            if a.name == "pld":
                assert value <= exact * 1.05 + 1e-12
        assert {"basic", "optimal", "pld"} <= set(seen)
        best = tightest(plan, delta=exact * 1.01).epsilon
        assert best <= eps_total * (1 + 1e-6)  # the tightest finds the exact pair's epsilon
