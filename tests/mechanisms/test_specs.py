"""Every registered mechanism round-trips through the JSON plan format and composes in
plans; the list of mechanisms comes from the registry, never from this file."""

import json

import pytest

from privkit import (
    BasicAccountant,
    Claimed,
    PureDP,
    Repeat,
    Sequential,
    plan_from_spec,
    plan_to_spec,
    registered_mechanisms,
    tightest,
)
from privkit.errors import InvalidParameterError
from privkit.mechanisms import Exponential, RandomizedResponse

KINDS = sorted(registered_mechanisms())


def example(kind):
    """A calibrated instance of the mechanism registered as ``kind``."""
    cls = registered_mechanisms()[kind]
    worst = cls.worst_case(epsilon=1.0, delta=1e-6)
    if worst is None:
        pytest.skip(f"{kind} has no worst case to build an example from")
    return worst.mechanism


def test_every_built_in_mechanism_is_registered():
    """The registry holds the built-in kinds (a new one joins every shared test)."""
    assert {"laplace", "gaussian", "l2_laplace", "discrete_laplace", "discrete_gaussian",
            "exponential", "report_noisy_max", "permute_and_flip", "randomized_response",
            "sparse_vector", "analyze_gauss", "objective_perturbation"} <= set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_through_plan_files(kind):
    """to_spec, JSON and plan_from_spec give back an equal mechanism (inside a Repeat)."""
    mechanism = example(kind)
    spec = json.loads(json.dumps(plan_to_spec(Repeat(mechanism, 2))))
    assert plan_from_spec(spec["plan"], relation=spec["relation"]) == Repeat(mechanism, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_field_is_an_error_not_a_default(kind):
    """Dropping any required key of a written mechanism is refused (a missing sensitivity
    was once read as 1)."""
    mechanism = example(kind)
    body = mechanism.to_spec()[kind]
    required = [k for k in body if k.endswith("_sensitivity") or k in ("noise_scale",)]
    for key in required:
        broken = {k: v for k, v in body.items() if k != key}
        with pytest.raises(InvalidParameterError, match=key):
            plan_from_spec({kind: broken}, relation=mechanism.relation)


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_key_is_an_error(kind):
    """A typo in a plan file does not pass silently."""
    mechanism = example(kind)
    body = dict(mechanism.to_spec()[kind], noise_sclae=1.0)
    with pytest.raises(InvalidParameterError, match="noise_sclae"):
        plan_from_spec({kind: body}, relation=mechanism.relation)


def test_randomized_response_reads_only_under_replace_one():
    """Randomized response is local (REPLACE_ONE) and reads only in such plans."""
    rr = RandomizedResponse.for_epsilon(1.0, n_categories=3)
    spec = plan_to_spec(rr)
    assert spec["relation"] == "replace_one"
    assert plan_from_spec(spec["plan"], relation="replace_one") == rr
    with pytest.raises(InvalidParameterError, match="'replace_one' for a randomized_response"):
        plan_from_spec(spec["plan"], relation="add_remove")


def test_exponential_mechanisms_compose_by_bounded_range():
    """100 exponential mechanisms at eps 0.1: zCDP via bounded range (eta^2/8) beats the
    basic sum by far and beats treating them as pure DP blocks (eps^2/2)."""
    em = Exponential.for_epsilon(0.1, sensitivity=1.0, relation="add_remove")
    result = tightest(Repeat(em, 100), delta=1e-6)
    as_pure = tightest(Repeat(Claimed(PureDP(epsilon=0.1), relation="add_remove"), 100),
                       delta=1e-6)
    basic = BasicAccountant().epsilon(Repeat(em, 100), delta=1e-6)  # tightest skips it
    assert result.epsilon < as_pure.epsilon < basic
    assert basic == pytest.approx(10.0)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_mixed_plan_accounts(relation):
    """A plan of every registered kind that holds under ``relation`` is accounted by at
    least the basic accountant, below its sum."""
    blocks = [m for m in (example(k) for k in KINDS) if m.relation.value == relation]
    assert len(blocks) >= 2
    result = tightest(Sequential(*blocks), delta=1e-5)
    assert 0 < result.epsilon <= result.by_accountant["basic"]
