"""Accountants: closed forms, refusals, and the no-undercount invariant."""

import math

import numpy as np
import pytest
from hypothesis import given

from _blocks import gau, lap
from _strategies import plans
from privkit import (
    GDP,
    ApproxDP,
    BasicAccountant,
    Claimed,
    Neighbouring,
    Parallel,
    PoissonSubsample,
    PostProcess,
    PureDP,
    RDPAccountant,
    Repeat,
    Sequential,
    UnsupportedPlanError,
    ZCDPAccountant,
    available_accountants,
    tightest,
    tightest_delta,
)
from privkit.mechanisms import Gaussian, Laplace
from privkit.plan import Leaf

A = Neighbouring.ADD_REMOVE


class TestBasicAccountant:
    def test_sequential_sums_parallel_takes_max_repeat_multiplies(self):
        """Pure blocks: 0.1 + 3 x 0.2 + max(0.3, 0.1 + 0.1) = 1.0."""
        plan = Sequential(lap(0.1), Repeat(lap(0.2), 3),
                          Parallel(lap(0.3), Sequential(lap(0.1), lap(0.1))))
        assert BasicAccountant().epsilon(plan, delta=0.0) == pytest.approx(1.0, rel=1e-15)

    def test_post_processing_is_free(self):
        """PostProcess costs what its block costs."""
        assert BasicAccountant().epsilon(PostProcess(lap(0.3)), delta=0.0) == \
            pytest.approx(0.3)

    def test_delta_is_split_over_non_pure_runs(self):
        """Two Gaussians and a Laplace at delta = 2e-5: each Gaussian gets 1e-5."""
        g = gau(0.5)
        plan = Sequential(g, lap(0.5), g)
        expected = 2 * GDP(mu=0.5).epsilon_at(1e-5) + 0.5
        assert BasicAccountant().epsilon(plan, delta=2e-5) == pytest.approx(expected, rel=1e-12)

    def test_non_pure_plan_at_delta_zero_is_infinite(self):
        """A Gaussian has no pure-DP guarantee: epsilon at delta = 0 is inf."""
        assert BasicAccountant().epsilon(gau(0.5), delta=0.0) == math.inf

    def test_delta_of_basic_is_certified(self):
        """delta(plan, eps) returns a delta at which epsilon(plan) <= eps."""
        plan = Sequential(gau(0.3), gau(0.4), lap(0.2))
        d = BasicAccountant().delta(plan, epsilon=2.0)
        assert 0 < d < 1
        assert BasicAccountant().epsilon(plan, delta=d) <= 2.0

    def test_guarantee_of_a_pure_plan_is_pure_dp(self):
        """guarantee() is the native one: the sum of pure epsilons as PureDP."""
        g = BasicAccountant().guarantee(Repeat(lap(0.25), 4))
        assert g == PureDP(epsilon=1.0)

    def test_guarantee_of_a_mixed_plan_splits_delta_when_asked(self):
        """For non-pure blocks the native guarantee converts only when asked: at 2e-5,
        each of the two Gaussians gets 1e-5 (independent value: GDP's exact epsilon)."""
        g = BasicAccountant().guarantee(Sequential(gau(0.5), lap(0.5), gau(0.5)))
        assert g.epsilon_at(2e-5) == pytest.approx(2 * GDP(mu=0.5).epsilon_at(1e-5) + 0.5,
                                                   rel=1e-12)


class TestRefusals:
    def test_unsupported_node_names_the_accountants_that_can(self):
        """A PoissonSubsample node is refused by basic, naming the node, rdp and pld."""
        plan = Sequential(gau(1.0), PoissonSubsample(gau(1.0), 0.01))
        with pytest.raises(UnsupportedPlanError) as info:
            BasicAccountant().epsilon(plan, delta=1e-5)
        message = str(info.value)
        assert "PoissonSubsample (rate=0.01)" in message
        assert "accountants that can: rdp, pld" in message

    def test_node_no_accountant_handles_is_said_so(self):
        """Poisson subsampling under REPLACE_ONE has no analysis here: every accountant
        refuses it and says no available accountant handles it."""
        replace = Gaussian.for_gdp(1.0, sensitivity=1.0, relation=Neighbouring.REPLACE_ONE)
        plan = PoissonSubsample(replace, 0.01)
        with pytest.raises(UnsupportedPlanError, match="no available accountant handles it"):
            BasicAccountant().epsilon(plan, delta=1e-5)
        with pytest.raises(UnsupportedPlanError, match="no accountant supports this plan"):
            tightest(plan, delta=1e-5)

    def test_unsupported_leaf_names_accountants_that_can(self):
        """A block with only an (eps, delta) claim is refused by zCDP, which names basic."""
        block = Claimed(ApproxDP(epsilon=1.0, delta=1e-6), relation=A, label="vendor")
        with pytest.raises(UnsupportedPlanError, match="accountants that can: basic"):
            ZCDPAccountant().epsilon(block, delta=1e-5)

    def test_tightest_reports_refusals(self):
        """tightest uses the accountants that can and lists the others with reasons."""
        block = Claimed(ApproxDP(epsilon=1.0, delta=1e-6), relation=A, label="vendor")
        result = tightest(Repeat(block, 2), delta=1e-5)
        assert result.accountant in ("basic", "optimal", "pld")
        assert "gdp" in result.refused  # tried first
        assert {"zcdp", "rdp"} <= set(result.refused) | set(result.skipped)
        assert set(result.refused).isdisjoint(result.skipped)
        assert result.epsilon < 2.0  # the generalised RR profile buys a little at 5e-6 each
        explained = result.explain()
        for name in ("zcdp", "rdp", "gdp"):
            assert name in explained

    def test_supports_never_raises(self):
        """supports() answers without raising or changing anything."""
        plan = PoissonSubsample(gau(1.0), 0.5)
        assert [a.name for a in available_accountants() if a.supports(plan)] == ["rdp", "pld"]


class TestTightest:
    def test_gaussian_composition_is_exact_and_skips_the_rest(self):
        """For 50 Gaussians the GDP accountant is exact (Dong, Roth, Su 2019, Cor. 3.3):
        tightest returns its value as both bounds and runs no other accountant, saying
        why; asked to run them all, basic is more than twice as large."""
        plan = Repeat(gau(0.1), 50)
        result = tightest(plan, delta=1e-5)
        assert result.accountant == "gdp"
        assert result.epsilon == pytest.approx(GDP(mu=math.sqrt(50) * 0.1).epsilon_at(1e-5))
        assert result.lower == result.epsilon
        assert set(result.skipped) >= {"pld", "rdp", "zcdp", "basic"}
        assert "exact" in result.skipped["basic"]
        assert "gdp wins" in result.explain()
        every = tightest(plan, delta=1e-5, accountants=available_accountants()[:1])
        assert result.epsilon < 0.5 * every.by_accountant["basic"]

    def test_table_lists_every_accountant(self):
        """The text table has a row per accountant and marks the tightest."""
        table = tightest(Repeat(gau(0.1), 5), delta=1e-5).table()
        assert "<- tightest" in table
        for name in ("basic", "zcdp", "rdp"):
            assert name in table

    def test_tightest_delta(self):
        """tightest_delta gives the smallest certified delta at an epsilon."""
        result = tightest_delta(Repeat(gau(0.1), 50), epsilon=3.0)
        assert result.delta == min(result.by_accountant.values())
        exact = GDP(mu=math.sqrt(50) * 0.1).delta_at(3.0)  # ~ 8e-6
        assert exact <= result.delta < 10 * exact


def exact_gdp_mu(plan):
    """The exact GDP parameter of a plan of Gaussians (Dong-Roth-Su 2019, Cor. 3.3:
    mu's compose in quadrature; disjoint parts take the max)."""
    if isinstance(plan, Leaf):
        return plan.guarantee().mu
    if isinstance(plan, Sequential):
        return math.sqrt(sum(exact_gdp_mu(b) ** 2 for b in plan.steps))
    if isinstance(plan, Parallel):
        return max(exact_gdp_mu(b) for b in plan.parts)
    if isinstance(plan, Repeat):
        return math.sqrt(plan.count) * exact_gdp_mu(plan.block)
    return exact_gdp_mu(plan.block)


def gaussian_only(plan):
    return all(isinstance(leaf, Gaussian) for leaf in _leaves(plan))


def _leaves(plan):
    from privkit.plan import leaf_counts

    return list(leaf_counts(plan))


@given(plans(A))
def test_no_accountant_undercounts_gaussian_plans(plan):
    """Property: for plans of Gaussians the exact privacy is GDP(mu) with mu composed in
    quadrature; no accountant reports an epsilon below the exact one."""
    if not gaussian_only(plan):
        return
    exact = GDP(mu=exact_gdp_mu(plan)).epsilon_at(1e-5)
    checked = [a for a in available_accountants() if a.supports(plan)]
    assert {"basic", "zcdp", "rdp", "gdp", "pld"} <= {a.name for a in checked}
    for accountant in checked:
        assert accountant.epsilon(plan, delta=1e-5) >= exact * (1 - 1e-9)


@given(plans(A))
def test_no_accountant_undercounts_pure_plans_at_delta_zero(plan):
    """Property: for plans of Laplace mechanisms the privacy loss reaches the sum of the
    epsilons (max over disjoint parts) with positive probability, so no accountant may
    report less at delta = 0."""
    if not all(isinstance(leaf, Laplace) for leaf in _leaves(plan)):
        return
    exact = BasicAccountant().epsilon(plan, delta=0.0)
    for accountant in available_accountants():
        if accountant.supports(plan):
            assert accountant.epsilon(plan, delta=0.0) >= exact * (1 - 1e-12)


@pytest.mark.slow
@given(plans(A))
def test_tightest_never_exceeds_basic_composition(plan):
    """Property: tightest's certified lower bound is at most basic composition (which
    is at least the exact value), its answer is within the skipping tolerance (1e-3) of
    basic's or below it, and it equals the best accountant it ran."""
    result = tightest(plan, delta=1e-6)
    basic = BasicAccountant().epsilon(plan, delta=1e-6)
    assert result.lower <= basic
    assert result.epsilon <= basic * (1 + 1e-3) + 1e-12
    assert result.epsilon == min(result.by_accountant.values())


@pytest.mark.slow
@given(plans(A, max_leaves=4))
def test_adding_a_block_never_decreases_cost(plan):
    """Property: composition cost never decreases as blocks are added, for every
    accountant, and does not depend on the order of the steps."""
    extra = gau(0.2)
    for accountant in available_accountants():
        if not (accountant.supports(plan) and accountant.supports(Sequential(plan, extra))):
            continue
        before = accountant.epsilon(plan, delta=1e-6)
        after = accountant.epsilon(Sequential(plan, extra), delta=1e-6)
        swapped = accountant.epsilon(Sequential(extra, plan), delta=1e-6)
        assert after >= before * (1 - 1e-12)
        assert swapped == pytest.approx(after, rel=1e-9)


def test_rdp_accountant_matches_opacus_for_full_batch_gaussian():
    """100 Gaussian steps with noise multiplier 2: privkit's RDP epsilon equals opacus's
    RDP accountant on the same orders (q = 1)."""
    from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent

    accountant = RDPAccountant()
    ours = accountant.epsilon(Repeat(gau(0.5), 100), delta=1e-5)
    curve = compute_rdp(q=1.0, noise_multiplier=2.0, steps=100, orders=accountant.orders)
    theirs, _ = get_privacy_spent(orders=accountant.orders, rdp=curve, delta=1e-5)
    assert ours == pytest.approx(theirs, rel=1e-12)


def test_rdp_curve_of_laplace_plan_is_exact_sum():
    """The RDP accountant adds the Laplace mechanism's exact curves."""
    accountant = RDPAccountant(orders=[2.0, 5.0])
    curve = accountant.curve(Repeat(lap(0.5), 4))
    np.testing.assert_allclose(curve, 4 * lap(0.5).rdp([2.0, 5.0]))


def test_zcdp_of_pure_block_is_half_epsilon_squared():
    """The zCDP accountant charges eps^2/2 for a pure block (Bun-Steinke Prop. 1.4)."""
    from privkit.accountants import zcdp_rho

    assert zcdp_rho(Repeat(Claimed(PureDP(epsilon=0.2), relation=A), 10)) == pytest.approx(0.2)


class TestNativeGuarantees:
    def test_each_accountant_returns_its_own_kind(self):
        """guarantee(plan) is native: GDP(mu) exactly for Gaussians (0.3 and 0.4 compose
        to 0.5), ZCDP(rho) = mu^2 / 2, an RDP curve, a PLD; converted only when asked."""
        from privkit import GDPAccountant, PLDAccountant
        from privkit.guarantees import RDP, ZCDP
        from privkit.pld import PLDGuarantee

        plan = Sequential(gau(0.3), gau(0.4))
        g = GDPAccountant().guarantee(plan)
        assert isinstance(g, GDP)
        assert g.mu == pytest.approx(0.5, rel=1e-15)
        z = ZCDPAccountant().guarantee(plan)
        assert isinstance(z, ZCDP)
        assert z.rho == pytest.approx(0.125, rel=1e-15)
        r = RDPAccountant(orders=[2.0, 4.0]).guarantee(plan)
        assert isinstance(r, RDP)
        assert r.epsilons == pytest.approx((0.25, 0.5), rel=1e-15)
        p = PLDAccountant().guarantee(plan)
        assert isinstance(p, PLDGuarantee)
        exact = GDP(mu=0.5).epsilon_at(1e-6)
        assert exact <= p.epsilon_at(1e-6) <= exact + 1e-4
        assert GDPAccountant().epsilon(plan, delta=1e-6) == g.epsilon_at(1e-6)


class TestLargeCounts:
    """Issue 10 item 5: a repeated block costs time logarithmic in its count, memory
    independent of it; nesting is a product of counts."""

    @staticmethod
    def nested(block, depth):
        for _ in range(depth):
            block = Repeat(block, 2)
        return block

    def test_forty_nested_repeats_are_a_product(self):
        """40 nested Repeat(., 2) of a pure 0.01 block: basic gives 2^40 * 0.01 and zCDP
        2^40 * 0.01^2 / 2 (closed forms); every accepting accountant answers."""
        from privkit import ZCDPAccountant as Z

        plan = self.nested(Claimed(PureDP(epsilon=0.01), relation=A), 40)
        assert BasicAccountant().epsilon(plan, delta=0.0) == pytest.approx(2**40 * 0.01,
                                                                           rel=1e-15)
        assert Z().guarantee(plan).rho == pytest.approx(2**40 * 0.01**2 / 2, rel=1e-15)
        for accountant in available_accountants():
            if accountant.supports(plan):
                assert accountant.epsilon(plan, delta=1e-5) > 0

    def test_count_of_ten_to_the_thirty(self):
        """Repeat(block, 10**30): GDP's mu is 10^15 mu_0 exactly; advanced matches its
        closed form with the count as a multiplier (hand formula below)."""
        from privkit import AdvancedAccountant, GDPAccountant

        g = Repeat(gau(1e-16), 10**30)
        assert GDPAccountant().guarantee(g).mu == pytest.approx(0.1, rel=1e-12)
        e, k, d = 1e-20, 10**30, 1e-6
        plan = Repeat(Claimed(PureDP(epsilon=e), relation=A), k)
        drv = math.sqrt(2 * k * math.log(1 / d)) * e + k * e * math.expm1(e)
        s, v = k * e * math.tanh(e / 2), k * e * e
        kov = min(k * e, s + math.sqrt(2 * v * math.log(math.e + math.sqrt(v) / d)),
                  s + math.sqrt(2 * v * math.log(1 / d)))
        assert AdvancedAccountant().epsilon(plan, delta=d) == pytest.approx(
            min(k * e, drv, kov), rel=1e-9)
        for accountant in available_accountants():
            if accountant.supports(plan):
                assert accountant.epsilon(plan, delta=d) >= 0


def test_wang_balle_kasiviswanathan_theorem_9_by_hand():
    """Sampling 10 of 100 records without replacement from a Gaussian with RDP
    a mu^2 / 2 (mu = 0.5, no pure epsilon): WBK 2019 Theorem 9 at orders 2 and 3,
    evaluated by hand (g = 0.1; the min picks 4 (e^e(2) - 1) over 2 e^e(2))."""
    from privkit import SampleWithoutReplacement

    base = Gaussian.for_gdp(0.5, sensitivity=1.0, relation=Neighbouring.REPLACE_ONE)
    plan = SampleWithoutReplacement(base, 10, 100)
    g, e2, e3 = 0.1, 0.25, 0.375
    second = min(4 * math.expm1(e2), 2 * math.exp(e2))
    order2 = math.log(1 + g**2 * 1 * second) / 1
    order3 = math.log(1 + g**2 * 3 * second + g**3 * 1 * math.exp(2 * e3) * 2) / 2
    curve = RDPAccountant(orders=[2.0, 3.0]).curve(plan)
    np.testing.assert_allclose(curve, [order2, order3], rtol=1e-12)
