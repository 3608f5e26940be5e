"""A mechanism defined here, in one class, with no other edit: it is planned, accounted
by every accountant that handles its guarantees, written to and read from a plan file,
released (safely, into the ledger) and audited through the registry."""

import json
from typing import ClassVar

import attrs
import pytest

from privkit import (
    AdditiveMechanism,
    BasicAccountant,
    Ledger,
    OptimalAccountant,
    PureDP,
    Repeat,
    Sensitivity,
    WorstCase,
    available_accountants,
    plan_from_spec,
    plan_to_spec,
    registered_mechanisms,
    tightest,
)
from privkit.audits import audit
from privkit.audits.registry import CASES
from privkit.mechanism import noise_scale_field, sensitivity_field
from privkit.mechanisms import standard_laplace


@attrs.frozen(kw_only=True)
class UserCount(AdditiveMechanism):
    """Laplace noise on a count, written from scratch in a user's file."""

    kind: ClassVar[str] = "test_user_count"
    noise_scale: float = noise_scale_field()
    sensitivity: Sensitivity = sensitivity_field("l1")

    def guarantees(self):
        return (PureDP(epsilon=self.sensitivity.value / self.noise_scale),)

    def standard_noise(self, query_ndim):
        return standard_laplace

    @classmethod
    def worst_case(cls, *, epsilon, delta):
        one = Sensitivity(value=1.0, norm="l1", relation="add_remove")
        return WorstCase(cls(noise_scale=1.0 / epsilon, sensitivity=one), 0.0, 1.0)


COUNT = UserCount(noise_scale=4.0, sensitivity=Sensitivity(value=1.0, norm="l1",
                                                           relation="add_remove"))
PLAN = Repeat(COUNT, 4)  # four runs of a pure 0.25-DP block


def test_it_is_registered_by_its_kind():
    """Defining the class registered it."""
    assert registered_mechanisms()["test_user_count"] is UserCount


def test_every_accountant_that_handles_it_accounts_it():
    """Every registered accountant that supports it certifies no less than the exact
    optimal composition (Kairouz-Oh-Viswanath) at delta 1e-6, and the basic sum at delta
    0 is exactly 4 x 0.25 = 1; the tightest finds 1 at delta 0."""
    exact = OptimalAccountant().epsilon(PLAN, delta=1e-6)
    assert exact < 1.0
    handled = []
    for accountant in available_accountants():
        if not accountant.supports(PLAN):
            continue
        handled.append(accountant.name)
        assert accountant.epsilon(PLAN, delta=1e-6) >= exact - 1e-9
    assert {"basic", "advanced", "optimal", "zcdp", "rdp", "pld"} <= set(handled)
    assert BasicAccountant().epsilon(PLAN, delta=0.0) == pytest.approx(1.0, rel=1e-12)
    assert tightest(PLAN, delta=0.0).epsilon == pytest.approx(1.0)


def test_it_round_trips_through_a_plan_file():
    """The plan-file form is derived from its fields, and read back equal."""
    document = json.loads(json.dumps(plan_to_spec(PLAN)))
    assert document["plan"] == {"repeat": {"count": 4, "block": {
        "test_user_count": {"noise_scale": 4.0, "l1_sensitivity": 1.0}}}}
    assert plan_from_spec(document["plan"], relation=document["relation"]) == PLAN


def test_it_releases_into_the_ledger():
    """release is the base class's floating-point-safe path, recorded by the one rule."""
    with Ledger() as ledger:
        COUNT.release(10.0, rng=0)
        COUNT.release([1.0, 2.0], rng=0, size=3)
    assert ledger.compare(PLAN).matches


def test_it_is_audited_through_its_worst_case():
    """Its audit case comes from worst_case; the claim holds and the bound is close."""
    case = CASES["test_user_count"](epsilon=1.0)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=200_000, rng=0)
    assert result.verdict == "consistent"
    assert result.lower_bound > 0.9
