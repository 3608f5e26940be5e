"""Every mechanism round-trips through the JSON plan format and composes in plans."""

import json

import pytest

from privkit import Neighbouring, Repeat, Sequential, plan_from_spec, plan_to_spec, tightest
from privkit.mechanisms import (
    AnalyzeGauss,
    DiscreteGaussian,
    DiscreteLaplace,
    Exponential,
    Gaussian,
    L2Laplace,
    Laplace,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
    SparseVector,
)

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE

MECHANISMS = [
    Laplace.for_epsilon(0.3, sensitivity=2.0, relation=A),
    Gaussian.for_approx_dp(1.0, 1e-6, sensitivity=1.0, relation=A),
    L2Laplace.for_epsilon(0.5, sensitivity=1.0, relation=A),
    DiscreteLaplace.for_epsilon(0.5, sensitivity=1.0, relation=A),
    DiscreteGaussian.for_zcdp(0.1, sensitivity=1.0, relation=A),
    Exponential.for_epsilon(0.5, sensitivity=1.0, relation=A, monotone=True),
    ReportNoisyMax.for_epsilon(0.5, sensitivity=1.0, relation=A),
    PermuteAndFlip.for_epsilon(0.5, sensitivity=1.0, relation=A),
    SparseVector.for_epsilon(1.0, sensitivity=1.0, relation=A, max_positives=3),
    AnalyzeGauss.for_approx_dp(1.0, 1e-6, row_norm_bound=1.0, relation=A),
]


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: type(m).__name__)
def test_round_trip_through_plan_files(mechanism):
    """to_spec, JSON and plan_from_spec give back an equal mechanism."""
    spec = json.loads(json.dumps(plan_to_spec(Repeat(mechanism, 2))))
    assert plan_from_spec(spec["plan"], relation=spec["relation"]) == Repeat(mechanism, 2)


def test_randomized_response_round_trips_under_replace_one():
    """Randomized response is local (REPLACE_ONE) and reads only in such plans."""
    rr = RandomizedResponse.for_epsilon(1.0, n_categories=3)
    spec = plan_to_spec(rr)
    assert spec["relation"] == "replace_one"
    assert plan_from_spec(spec["plan"], relation="replace_one") == rr
    with pytest.raises(ValueError, match="local randomizer"):
        plan_from_spec(spec["plan"], relation="add_remove")


def test_exponential_mechanisms_compose_by_bounded_range():
    """100 exponential mechanisms at eps 0.1: zCDP via bounded range (eta^2/8) beats the
    basic sum by far and beats treating them as pure DP blocks (eps^2/2)."""
    from privkit import Claimed, PureDP

    em = Exponential.for_epsilon(0.1, sensitivity=1.0, relation=A)
    result = tightest(Repeat(em, 100), delta=1e-6)
    as_pure = tightest(Repeat(Claimed(PureDP(epsilon=0.1), relation=A), 100), delta=1e-6)
    assert result.epsilon < as_pure.epsilon < result.by_accountant["basic"]
    assert result.by_accountant["basic"] == pytest.approx(10.0)


def test_mixed_plan_accounts():
    """A plan with every kind of block is accounted by at least the basic accountant."""
    plan = Sequential(*MECHANISMS)
    result = tightest(plan, delta=1e-5)
    assert 0 < result.epsilon <= result.by_accountant["basic"]
