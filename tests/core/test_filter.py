"""The budget filter: all-or-nothing spends, exact limits, thread safety, one state."""

import contextlib
import copy
import math
import multiprocessing
import os
import pickle
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _strategies import plans
from privkit import (
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    BudgetFilter,
    Claimed,
    IncompatibleCompositionError,
    InvalidParameterError,
    Neighbouring,
    PoissonSubsample,
    PureDP,
    UnsupportedPlanError,
)
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE


def state(f):
    """Everything a filter shows (its history with each entry's native cost, its total,
    relation, spent and remaining): what "unchanged" compares."""
    return (f.history, [e.cost for e in f.history], f.relation, f.spent, f.remaining)


def lap(eps, relation=A):
    return Laplace.for_epsilon(eps, sensitivity=1.0, relation=relation)


def test_spends_until_the_limit_then_refuses():
    """Ten spends of 0.1 fit a limit of 1 exactly (despite float rounding); the 11th is
    refused with a message giving the cost and what remains."""
    f = BudgetFilter(epsilon=1.0)
    for _ in range(10):
        f.spend(lap(0.1))
    with pytest.raises(BudgetExceededError) as info:
        f.spend(lap(0.1))
    assert "would exceed the remaining budget" in str(info.value)
    assert "epsilon=0.1" in str(info.value)
    assert f.spent.epsilon == pytest.approx(1.0)
    assert f.remaining.epsilon == pytest.approx(0.0, abs=1e-12)


def test_can_spend_changes_nothing():
    """can_spend answers without recording."""
    f = BudgetFilter(epsilon=1.0)
    assert f.can_spend(lap(0.6))
    assert not f.can_spend(lap(1.2))
    assert f.history == ()


def test_non_pure_block_must_name_its_delta():
    """A Gaussian spend needs delta=..., and both epsilon and delta are charged."""
    f = BudgetFilter(epsilon=5.0, delta=1e-5)
    g = Gaussian.for_gdp(0.5, sensitivity=1.0, relation=A)
    with pytest.raises(InvalidParameterError, match="has no pure-DP guarantee"):
        f.spend(g)
    entry = f.spend(g, delta=5e-6)
    assert entry.delta == 5e-6
    assert entry.epsilon == pytest.approx(g.epsilon_at(5e-6))
    assert f.spent.delta == 5e-6
    with pytest.raises(BudgetExceededError):
        f.spend(g, delta=6e-6)  # delta would total 1.1e-5


def test_zcdp_rule_adds_rho():
    """Under the zCDP rule rhos add up to the largest rho that fits the limit."""
    f = BudgetFilter(epsilon=1.0, delta=1e-6, accountant="zcdp")
    assert ZCDP(rho=f.rho_limit).epsilon_at(1e-6) == pytest.approx(1.0, rel=1e-9)
    g = Gaussian.for_zcdp(f.rho_limit / 4, sensitivity=1.0, relation=A)
    for _ in range(4):
        f.spend(g)
    with pytest.raises(BudgetExceededError):
        f.spend(g)
    assert f.spent.epsilon == pytest.approx(1.0, rel=1e-6)


def test_zcdp_filter_refuses_blocks_without_zcdp():
    """An (eps, delta) claim cannot be charged to a zCDP filter."""
    f = BudgetFilter(epsilon=1.0, delta=1e-6, accountant="zcdp")
    block = Claimed(ApproxDP(epsilon=0.1, delta=1e-9), relation=A)
    with pytest.raises(UnsupportedPlanError):
        f.spend(block)
    assert f.history == ()


def test_relation_is_fixed_by_the_first_spend():
    """After an ADD_REMOVE spend, a REPLACE_ONE block is refused."""
    f = BudgetFilter(epsilon=1.0)
    f.spend(lap(0.1))
    assert f.relation is A
    with pytest.raises(IncompatibleCompositionError, match="REPLACE_ONE"):
        f.spend(lap(0.1, relation=R))


def test_unsupported_plan_is_refused_without_change():
    """A plan with a node the filter's accountant cannot handle is refused whole."""
    f = BudgetFilter(epsilon=10.0, delta=1e-5)
    before = state(f)
    plan = PoissonSubsample(Gaussian.for_gdp(1.0, sensitivity=1.0, relation=A), 0.1)
    with pytest.raises(UnsupportedPlanError):
        f.spend(plan, delta=1e-6)
    assert state(f) == before


@given(plans(A, max_leaves=4), st.floats(min_value=0.05, max_value=3.0),
       st.sampled_from([None, 1e-7, 1e-3]))
def test_refused_spend_leaves_state_unchanged(plan, limit, delta):
    """Property: whatever the block, a spend that raises (over budget, missing delta)
    leaves the filter exactly as it was (history, native total, relation, spent,
    remaining); one that succeeds adds one entry."""
    f = BudgetFilter(epsilon=limit, delta=1e-5)
    f.spend(Claimed(PureDP(epsilon=limit / 2), relation=A))
    before = state(f)
    try:
        f.spend(plan, delta=delta)
    except (BudgetExceededError, InvalidParameterError):
        assert state(f) == before
    else:
        assert len(f.history) == 2


@given(plans(A, max_leaves=4))
def test_spent_plus_remaining_is_the_limit(plan):
    """Property: while within budget, spent + remaining == limit."""
    f = BudgetFilter(epsilon=50.0, delta=1e-3)
    with contextlib.suppress(BudgetExceededError):
        f.spend(plan, delta=1e-4)
    assert f.spent.epsilon + f.remaining.epsilon == pytest.approx(50.0)
    assert f.spent.delta + f.remaining.delta == pytest.approx(1e-3)


def test_eight_threads_never_exceed_the_limit():
    """8 threads spending 0.01 each as fast as they can: exactly 100 spends fit a limit
    of 1, none more, and the total never exceeds the limit."""
    f = BudgetFilter(epsilon=1.0)
    block = Claimed(PureDP(epsilon=0.01), relation=A)
    accepted = []
    start = threading.Barrier(8)

    def worker():
        start.wait()
        mine = 0
        for _ in range(50):
            try:
                f.spend(block)
                mine += 1
            except BudgetExceededError:
                pass
        accepted.append(mine)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(accepted) == len(f.history) == 100
    assert f.spent.epsilon <= 1.0 * (1 + 1e-12)


@pytest.mark.parametrize("copier", [pickle.dumps, copy.copy, copy.deepcopy],
                         ids=["pickle", "copy", "deepcopy"])
def test_filter_refuses_to_be_copied_and_says_how_to_share(copier):
    """A copy would spend on a state of its own (the pool's 8 spends of 0.6 into a limit
    of 1 were all accepted, the parent still at 0): pickling and copying are refused with
    a message naming the shared form; the filter is untouched."""
    f = BudgetFilter(epsilon=1.0)
    f.spend(lap(0.1))
    with pytest.raises(TypeError, match=r"cannot be pickled or copied.*budget\.shared\(\)"):
        copier(f)
    assert len(f.history) == 1


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="needs the fork start method")
def test_a_filter_inherited_by_fork_refuses_to_spend():
    """A forked child inherits a copy of the filter without pickling it; spending on that
    copy would never reach the parent, so it raises (naming budget.shared()) and the
    parent's filter is unchanged."""
    f = BudgetFilter(epsilon=1.0)
    reader, writer = multiprocessing.Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:  # the child: report what spend did, then leave at once
        try:
            f.spend(lap(0.5))
            writer.send("spent")
        except RuntimeError as error:
            writer.send(str(error))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    message = reader.recv()
    assert "inherited by process" in message
    assert "budget.shared()" in message
    assert f.history == ()
    f.spend(lap(0.5))  # the parent's filter still spends
    assert f.spent.epsilon == pytest.approx(0.5)


def test_comparison_slack_is_only_for_rounding():
    """A spend 0.4% over the limit is refused, in epsilon and in delta: the slack absorbs
    floating-point rounding (1e-12), nothing of privacy size."""
    f = BudgetFilter(epsilon=1.0, delta=1e-5)
    f.spend(Claimed(PureDP(epsilon=0.5), relation=A))
    with pytest.raises(BudgetExceededError):
        f.spend(Claimed(PureDP(epsilon=0.504), relation=A))
    g = Gaussian.for_gdp(0.1, sensitivity=1.0, relation=A)
    f.spend(g, delta=5e-6)
    with pytest.raises(BudgetExceededError):
        f.spend(g, delta=5.02e-6)


def _cks_rho(epsilon, delta):
    """The largest rho whose Canonne-Kamath-Steinke 2020 conversion (Corollary 13:
    eps = a rho + log(1 - 1/a) - (log delta + log a) / (a - 1), minimised over the order
    a) is at most epsilon: a dense grid of orders and a root finder, independent of
    privkit.conversions."""
    from scipy import optimize

    a = 1.0 + np.geomspace(1e-4, 1e4, 400_001)

    def eps(rho):
        return float(np.min(a * rho + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)))

    return optimize.brentq(lambda r: eps(r) - epsilon, 1e-9, epsilon)


def test_zcdp_limit_is_the_cks_rho():
    """The zCDP filter's limit for (1, 1e-6) is the CKS rho (to 1e-4): a Gaussian of
    0.999 of it fits, one of 1.01 of it does not."""
    f = BudgetFilter(epsilon=1.0, delta=1e-6, accountant="zcdp")
    rho = _cks_rho(1.0, 1e-6)
    assert f.rho_limit == pytest.approx(rho, rel=1e-4)
    assert f.can_spend(Gaussian.for_zcdp(0.999 * rho, sensitivity=1.0, relation=A))
    assert not f.can_spend(Gaussian.for_zcdp(1.01 * rho, sensitivity=1.0, relation=A))


def test_zcdp_remaining_can_be_spent():
    """After half the rho, `remaining.epsilon` is the pure epsilon a block may still have
    (sqrt(2 rho_left), Bun-Steinke Prop. 1.4): a Laplace block of exactly that fits, one
    1% larger does not; no delta can be spent per block."""
    f = BudgetFilter(epsilon=1.0, delta=1e-6, accountant="zcdp")
    f.spend(Gaussian.for_zcdp(f.rho_limit / 2, sensitivity=1.0, relation=A))
    left = f.remaining
    assert left.epsilon == pytest.approx(math.sqrt(f.rho_limit), rel=1e-9)
    assert left.delta == 0.0
    assert f.can_spend(Claimed(PureDP(epsilon=left.epsilon), relation=A))
    assert not f.can_spend(Claimed(PureDP(epsilon=1.01 * left.epsilon), relation=A))


def test_zcdp_filter_refuses_a_per_spend_delta():
    """spend(..., delta=) has no meaning under zCDP (each block is charged its rho): it
    is refused, naming the parameter, and nothing changes."""
    f = BudgetFilter(epsilon=1.0, delta=1e-6, accountant="zcdp")
    with pytest.raises(InvalidParameterError, match=r"`delta`.*not chosen per spend"):
        f.spend(Gaussian.for_zcdp(0.001, sensitivity=1.0, relation=A), delta=1e-7)
    assert f.history == ()


@pytest.mark.parametrize("name", ["advanced", "optimal", "rdp", "gdp", "pld"])
def test_filter_asks_the_accountant_and_quotes_its_note(name):
    """Accountants not valid for adaptively chosen blocks are refused with their own
    note (advanced: Rogers-Roth-Ullman-Vadhan 2016)."""
    from privkit import get_accountant

    accountant = get_accountant(name)
    assert not accountant.valid_for_adaptive_filter
    with pytest.raises(InvalidParameterError) as info:
        BudgetFilter(epsilon=1.0, delta=1e-6, accountant=name)
    assert accountant.adaptive_filter_note in str(info.value)
    if name == "advanced":
        assert "Rogers, Roth, Ullman, Vadhan" in str(info.value)
