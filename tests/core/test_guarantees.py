"""Guarantees: known values, independent cross-checks and conversion invariants."""

import math

import attrs
import numpy as np
import pytest
from hypothesis import assume, given
from scipy import integrate, stats

from _strategies import deltas, epsilons, guarantees, mus, rhos
from privkit import GDP, RDP, ZCDP, ApproxDP, PureDP
from privkit.conversions import DEFAULT_ORDERS


class TestPureDP:
    def test_epsilon_is_the_parameter_and_conversions_are_verbs(self):
        """``PureDP(epsilon=e).epsilon`` is e; the conversions give e at delta 0 and delta 0
        at e; ``attrs.asdict`` shows the public field."""
        g = PureDP(epsilon=0.7)
        assert g.epsilon == 0.7
        assert g.epsilon_at(0.0) == 0.7
        assert g.delta_at(0.7) == 0.0
        assert attrs.asdict(g) == {"epsilon": 0.7}

    def test_profile_equals_randomized_response_hockey_stick(self):
        """delta(t) equals the hockey-stick divergence of randomized response, computed
        directly from its two output distributions."""
        eps = 1.3
        p = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
        q = p[::-1]
        for t in (0.0, 0.4, 1.0, 1.29):
            direct = np.sum(np.maximum(p - math.exp(t) * q, 0.0))
            assert PureDP(epsilon=eps).delta_at(t) == pytest.approx(direct, rel=1e-12)

    def test_epsilon_inverts_delta(self):
        """epsilon(delta(t)) gives t back."""
        g = PureDP(epsilon=2.0)
        assert g.epsilon_at(g.delta_at(0.5)) == pytest.approx(0.5, rel=1e-12)

    def test_rdp_equals_randomized_response_renyi_divergence(self):
        """The RDP curve is the Renyi divergence of randomized response, computed directly,
        and never above min(eps, a eps^2 / 2) (Bun-Steinke Prop. 1.4)."""
        eps = 0.8
        p = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
        q = p[::-1]
        orders = np.array([1.5, 2.0, 10.0, 60.0])
        direct = [math.log(np.sum(p**a * q ** (1 - a))) / (a - 1) for a in orders]
        curve = PureDP(epsilon=eps).rdp(orders)
        np.testing.assert_allclose(curve, direct, rtol=1e-12)
        assert np.all(curve <= np.minimum(eps, orders * eps**2 / 2) + 1e-15)


class TestApproxDP:
    def test_parameters_come_back(self):
        """The parameters are public fields, and ``attrs.asdict`` names them."""
        g = ApproxDP(epsilon=1.0, delta=1e-6)
        assert (g.epsilon, g.delta) == (1.0, 1e-6)
        assert attrs.asdict(g) == {"epsilon": 1.0, "delta": 1e-6}

    def test_smaller_delta_implies_nothing(self):
        """(eps, delta) says nothing at a smaller delta: inf."""
        assert ApproxDP(epsilon=1.0, delta=1e-6).epsilon_at(1e-7) == math.inf

    def test_larger_delta_buys_smaller_epsilon(self):
        """At a larger delta the generalised randomized response gives a smaller epsilon,
        and converting back gives that delta."""
        g = ApproxDP(epsilon=1.0, delta=1e-6)
        eps = g.epsilon_at(1e-2)
        assert eps < 1.0
        assert g.delta_at(eps) == pytest.approx(1e-2, rel=1e-9)


class TestGDP:
    @pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0])
    @pytest.mark.parametrize("eps", [0.0, 0.5, 2.0])
    def test_delta_equals_numerical_hockey_stick(self, mu, eps):
        """delta(eps) equals the integral of max(0, N(mu,1) - e^eps N(0,1)), computed by
        quadrature (an independent computation of Dong-Roth-Su Cor. 2.13)."""

        def integrand(x):
            return max(stats.norm.pdf(x, loc=mu) - math.exp(eps) * stats.norm.pdf(x), 0.0)

        boundary = eps / mu + mu / 2  # where the two densities cross
        direct = integrate.quad(integrand, boundary, boundary + 40, epsabs=1e-14)[0]
        assert GDP(mu=mu).delta_at(eps) == pytest.approx(direct, rel=1e-7, abs=1e-14)

    def test_epsilon_is_certified(self):
        """The returned epsilon's delta is at most the target (upper end of the bracket)."""
        for mu in (0.05, 0.5, 2.0, 8.0):
            for delta in (1e-10, 1e-5, 0.1):
                eps = GDP(mu=mu).epsilon_at(delta)
                assert GDP(mu=mu).delta_at(eps) <= delta

    def test_known_value_matches_analytic_gaussian(self):
        """mu = 1 / 3.7306 (the analytic sigma for (1, 1e-5)) gives epsilon 1 at 1e-5."""
        assert GDP(mu=1 / 3.730631634815946).epsilon_at(1e-5) == pytest.approx(1.0, rel=1e-9)

    def test_rdp_matches_opacus_gaussian_rdp(self):
        """The RDP curve a mu^2/2 equals opacus's RDP for a full-batch Gaussian (q = 1)."""
        from opacus.accountants.analysis.rdp import compute_rdp

        orders = np.array(DEFAULT_ORDERS)
        theirs = compute_rdp(q=1.0, noise_multiplier=2.5, steps=1, orders=orders)
        np.testing.assert_allclose(GDP(mu=1 / 2.5).rdp(orders), theirs, rtol=1e-12)


class TestRDP:
    def test_conversion_matches_opacus(self):
        """RDP -> (eps, delta) agrees with opacus's get_privacy_spent on the same curve."""
        from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent

        orders = np.array(DEFAULT_ORDERS)
        curve = compute_rdp(q=0.01, noise_multiplier=1.0, steps=1000, orders=orders)
        theirs, _ = get_privacy_spent(orders=orders, rdp=curve, delta=1e-5)
        ours = RDP(orders=orders, epsilons=curve).epsilon_at(1e-5)
        assert ours == pytest.approx(theirs, rel=1e-12)

    def test_compose_adds_order_by_order(self):
        """compose adds the curves."""
        a = RDP(orders=[2.0, 4.0], epsilons=[0.1, 0.3])
        assert a.compose(a).epsilons == (0.2, 0.6)

    def test_rdp_at_orders_off_the_grid_uses_next_larger_order(self):
        """A bound at order 4 bounds order 3 (RDP is non-decreasing in the order); there
        is no bound above the largest order."""
        a = RDP(orders=[2.0, 4.0], epsilons=[0.1, 0.3])
        np.testing.assert_array_equal(a.rdp([3.0, 4.0, 5.0]), [0.3, 0.3, math.inf])


class TestZCDP:
    @given(rhos, deltas)
    def test_never_worse_than_bun_steinke(self, rho, delta):
        """The CKS conversion is at most rho + 2 sqrt(rho log(1/delta)) (BS16 Prop. 1.3)."""
        assert ZCDP(rho=rho).epsilon_at(delta) <= rho + 2 * math.sqrt(rho * math.log(1 / delta))

    @given(mus, deltas)
    def test_relaxations_never_report_less(self, mu, delta):
        """GDP is exact for the Gaussian; its zCDP relaxation, and the RDP relaxation on a
        grid of orders, never report a smaller epsilon than the exact one."""
        exact = GDP(mu=mu).epsilon_at(delta)
        via_zcdp = ZCDP(rho=mu * mu / 2).epsilon_at(delta)
        via_rdp = RDP.from_guarantee(GDP(mu=mu)).epsilon_at(delta)
        assert exact <= via_zcdp * (1 + 1e-9) + 1e-12
        assert via_zcdp <= via_rdp * (1 + 1e-9) + 1e-12

    def test_delta_inverts_epsilon(self):
        """delta(epsilon(d)) is d, to the precision of the order search."""
        g = ZCDP(rho=0.3)
        assert g.delta_at(g.epsilon_at(1e-6)) == pytest.approx(1e-6, rel=1e-6)


@given(guarantees, deltas, deltas)
def test_epsilon_is_non_increasing_in_delta(g, d1, d2):
    """Property: a larger delta never gives a larger epsilon."""
    lo, hi = sorted((d1, d2))
    assert g.epsilon_at(hi) <= g.epsilon_at(lo) * (1 + 1e-9) + 1e-12


@given(guarantees, epsilons, epsilons)
def test_delta_is_non_increasing_in_epsilon(g, e1, e2):
    """Property: a larger epsilon never gives a larger delta."""
    lo, hi = sorted((e1, e2))
    assert g.delta_at(hi) <= g.delta_at(lo) * (1 + 1e-9) + 1e-15


@given(guarantees, deltas)
def test_epsilon_and_delta_are_consistent(g, delta):
    """Property: the epsilon reported at delta needs no more than delta."""
    eps = g.epsilon_at(delta)
    assume(math.isfinite(eps) and eps > 0)
    assert g.delta_at(eps) <= delta * (1 + 1e-6) + 1e-15


@given(guarantees)
def test_every_guarantee_is_within_itself(g):
    """Property: within() is reflexive."""
    assert g.within(g)


class TestWithin:
    def test_pure_within_looser_pure_and_approx(self):
        """PureDP(0.5) is within PureDP(1) and ApproxDP(0.5, 1e-9), not within PureDP(0.4)."""
        g = PureDP(epsilon=0.5)
        assert g.within(PureDP(epsilon=1.0))
        assert g.within(ApproxDP(epsilon=0.5, delta=1e-9))
        assert not g.within(PureDP(epsilon=0.4))

    def test_zcdp_within_its_own_conversion_and_not_a_hair_tighter(self):
        """Boundaries from both sides: fits its conversion, not 1e-9 below it."""
        g = ZCDP(rho=0.1)
        eps = g.epsilon_at(1e-5)
        assert g.within(ApproxDP(epsilon=eps, delta=1e-5))
        assert not g.within(ApproxDP(epsilon=eps * (1 - 1e-9), delta=1e-5))

    def test_approx_never_within_pure_or_zcdp(self):
        """An (eps, delta>0) guarantee implies no pure-DP or zCDP budget."""
        g = ApproxDP(epsilon=0.1, delta=1e-9)
        assert not g.within(PureDP(epsilon=10.0))
        assert not g.within(ZCDP(rho=10.0))

    def test_gdp_budget_only_from_gdp(self):
        """GDP budgets are implied only by smaller-mu GDP guarantees."""
        assert GDP(mu=0.5).within(GDP(mu=1.0))
        assert not PureDP(epsilon=0.01).within(GDP(mu=1.0))

    def test_rdp_budget(self):
        """A Gaussian's RDP fits an RDP budget above its curve."""
        budget = RDP(orders=[2.0, 8.0], epsilons=[1.0, 4.0])
        assert GDP(mu=1.0).within(budget)
        assert not GDP(mu=1.1).within(budget)

    def test_within_refuses_non_guarantee(self):
        """within() names the bad budget."""
        with pytest.raises(ValueError, match="`budget` must be a Guarantee"):
            PureDP(epsilon=1.0).within(1.0)


def test_guarantees_are_frozen_and_hashable():
    """Guarantees are immutable values with value equality."""
    g = ApproxDP(epsilon=1.0, delta=1e-5)
    assert g == ApproxDP(epsilon=1.0, delta=1e-5)
    assert len({g, ApproxDP(epsilon=1.0, delta=1e-5)}) == 1
    with pytest.raises(AttributeError):
        g._epsilon = 2.0  # type: ignore[misc]
