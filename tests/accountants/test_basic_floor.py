"""The basic accountant's own lower bound stops adding pure epsilons once the sum passes
the answer it is compared with (issue 25: accountants that cannot win skipped cheaply)."""

import math

import pytest
from hypothesis import given, settings

from _blocks import gau, lap
from _strategies import plans
from privkit import (
    BasicAccountant,
    Neighbouring,
    Parallel,
    PLDAccountant,
    PostProcess,
    Repeat,
    Sequential,
    tightest,
    tightest_delta,
)

A = Neighbouring.ADD_REMOVE


def test_wide_plan_stops_early_and_is_skipped():
    """400 Laplace blocks of epsilon 0.1 (pure sum 40) and a Gaussian: the PLD certifies
    far less, so the partial sum passes it after a few dozen leaves; the floor is above
    the PLD's answer and below the full sum and basic's own answer, and tightest skips
    basic with it."""
    plan = Sequential(*[lap(0.1) for _ in range(400)], gau(0.5))
    evidence = PLDAccountant().guarantee(plan, delta=1e-5)
    answer = evidence.epsilon_at(1e-5)
    floor = BasicAccountant().lower_bound(plan, delta=1e-5, evidence=evidence)
    assert answer < floor < 40.0
    assert floor == pytest.approx(0.1 * (math.floor(answer / 0.1 + 1e-9) + 1))
    assert floor <= BasicAccountant().epsilon(plan, delta=1e-5)
    result = tightest(plan, delta=1e-5)
    assert "basic" in result.skipped
    assert "basic" not in result.by_accountant


def test_counts_multiply_and_other_nodes_are_passed_over():
    """Repeat multiplies a leaf's epsilon; PostProcess is walked through; a Parallel node
    is passed over (its parts' maximum adds a non-negative term, left out)."""
    plan = Sequential(PostProcess(Repeat(lap(0.5), 30)),
                      Parallel(lap(0.1), lap(0.2)), gau(1.0))
    evidence = PLDAccountant().guarantee(plan, delta=1e-5)
    floor = BasicAccountant().lower_bound(plan, delta=1e-5, evidence=evidence)
    assert floor > evidence.epsilon_at(1e-5)
    assert floor <= 15.0 + 1e-12  # at most the 30 runs of 0.5: the Parallel is not read
    no_evidence = BasicAccountant().lower_bound(plan, delta=1e-5)
    assert no_evidence == pytest.approx(15.2)  # the full pure sum (max of the parts)


def test_at_an_epsilon_below_the_pure_sum_no_delta_is_certified():
    """Asked for delta at an epsilon the partial sum passes, the floor is 1 (no delta is
    certified there), as basic's own answer."""
    plan = Repeat(lap(0.2), 50)  # pure sum 10
    assert BasicAccountant().lower_bound(plan, epsilon=3.0) == 1.0
    assert BasicAccountant().delta(plan, epsilon=3.0) == 1.0
    assert BasicAccountant().lower_bound(plan, epsilon=11.0) is None
    assert tightest_delta(plan, epsilon=3.0).delta < 1.0


@settings(max_examples=60, deadline=None)
@given(plans(A))
def test_the_floor_never_exceeds_the_answer(plan):
    """Property: with or without evidence, the floor is at most basic's answer (skipping
    on it can never hide a better answer)."""
    basic = BasicAccountant()
    if not basic.supports(plan):
        return
    answer = basic.epsilon(plan, delta=1e-5)
    pld = PLDAccountant()
    evidence = pld.guarantee(plan, delta=1e-5) if pld.supports(plan) else None
    for given_evidence in (None, evidence):
        floor = basic.lower_bound(plan, delta=1e-5, evidence=given_evidence)
        assert floor is None or floor <= answer * (1 + 1e-12)
