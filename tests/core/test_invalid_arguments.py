"""Every public constructor and function of the core refuses bad input clearly.

One table, in the manner of Hypothesis' test_direct_strategies.py: each row is a call
that must raise, the error type, and fragments its message must contain (the parameter's
name, the value received, and what is allowed).
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from privkit import (
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    BudgetFilter,
    Claimed,
    IncompatibleCompositionError,
    InvalidParameterError,
    Neighbouring,
    Norm,
    PoissonSubsample,
    PureDP,
    Repeat,
    SampleWithoutReplacement,
    Sensitivity,
    Sequential,
    as_generator,
    get_accountant,
    tightest,
)
from privkit.accountants import RDPAccountant

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE
LEAF = Claimed(PureDP(epsilon=1.0), relation=A)

CASES = [
    (PureDP, dict(epsilon=0.0), "`epsilon` must be a finite number > 0 for PureDP (got 0.0)"),
    (PureDP, dict(epsilon=-1.0), "(got -1.0)"),
    (PureDP, dict(epsilon=math.nan), "not NaN"),
    (PureDP, dict(epsilon=math.inf), "finite number > 0"),
    (PureDP, dict(epsilon=True), "a real number for PureDP (got True)"),
    (PureDP, dict(epsilon="1"), "a real number for PureDP (got '1')"),
    (ApproxDP, dict(epsilon=1.0, delta=1.5), "`delta` must be in [0, 1) for ApproxDP (got 1.5)"),
    (ApproxDP, dict(epsilon=1.0, delta=1.0), "in [0, 1)"),
    (ApproxDP, dict(epsilon=1.0, delta=-1e-9), "in [0, 1)"),
    (ApproxDP, dict(epsilon=1.0, delta=math.nan), "not NaN"),
    (ZCDP, dict(rho=0.0), "`rho` must be a finite number > 0 for ZCDP"),
    (GDP, dict(mu=-2.0), "`mu` must be a finite number > 0 for GDP (got -2.0)"),
    (RDP, dict(orders=[1.0], epsilons=[0.1]), "`orders` must be finite numbers > 1"),
    (RDP, dict(orders=[3.0, 2.0], epsilons=[0.1, 0.1]), "strictly increasing"),
    (RDP, dict(orders=[2.0], epsilons=[0.1, 0.2]), "one value per order"),
    (RDP, dict(orders=[2.0], epsilons=[-0.1]), "numbers >= 0"),
    (RDP, dict(orders="23", epsilons=[0.1]), "a sequence of real numbers"),
    (RDP, dict(orders=[], epsilons=[]), "non-empty"),
    (Sensitivity, dict(value=0.0, norm=Norm.L1, relation=A), "`value` must be a finite number > 0"),
    (Sensitivity, dict(value=-1.0, norm=Norm.L1, relation=A), "(got -1.0)"),
    (Sensitivity, dict(value=1.0, norm="l3", relation=A), "`norm` must be Norm.L1, Norm.L2"),
    (Sensitivity, dict(value=1.0, norm=Norm.L1, relation="x"),
     "`relation` must be Neighbouring.ADD_REMOVE or Neighbouring.REPLACE_ONE"),
    (Repeat, dict(block=LEAF, count=0), "`count` must be an integer >= 1 for Repeat (got 0)"),
    (Repeat, dict(block=LEAF, count=2.0), "an integer >= 1"),
    (Repeat, dict(block="a block", count=2), "`block` must be a privacy block"),
    (PoissonSubsample, dict(block=LEAF, sampling_rate=0.0), "`sampling_rate` must be in (0, 1]"),
    (PoissonSubsample, dict(block=LEAF, sampling_rate=1.5), "(got 1.5)"),
    (SampleWithoutReplacement, dict(block=LEAF, sample_size=11, population_size=10),
     "`sample_size` must be at most population_size=10"),
    (Claimed, dict(guarantee=1.0, relation=A), "`guarantee` must be a Guarantee"),
    (BudgetFilter, dict(epsilon=0.0), "`epsilon` must be a finite number > 0 for BudgetFilter"),
    (BudgetFilter, dict(epsilon=1.0, delta=1.0), "`delta` must be in [0, 1) for BudgetFilter"),
    (BudgetFilter, dict(epsilon=1.0, accountant="rdp"),
     "`accountant` must be 'basic' or 'zcdp'"),
    (BudgetFilter, dict(epsilon=1.0, accountant=RDPAccountant()), "one fixed order"),
    (BudgetFilter, dict(epsilon=1.0, accountant="pld"), "fixed in advance"),
    (BudgetFilter, dict(epsilon=1.0, accountant="advanced"), "Rogers, Roth, Ullman, Vadhan"),
    (BudgetFilter, dict(epsilon=1.0, accountant="zcdp"), "`delta` must be > 0 for a zCDP filter"),
    (BudgetFilter, dict(epsilon=1.0, relation="neighbours"), "`relation` must be"),
    (as_generator, dict(rng=1.5), "`rng` must be a numpy.random.Generator"),
    (as_generator, dict(rng=-1), "a seed >= 0"),
    (as_generator, dict(rng=True), "(got True)"),
    (get_accountant, dict(name="fastest"), "`name` must be one of 'basic', 'advanced'"),
    (RDPAccountant, dict(orders=[0.5, 2.0]), "`orders` must be a non-empty sequence"),
    (tightest, dict(plan=LEAF, delta=2.0), "`delta` must be in [0, 1) for tightest"),
]


@pytest.mark.parametrize(("function", "kwargs", "fragment"), CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_invalid_argument_raises_clear_error(function, kwargs, fragment):
    """The call raises InvalidParameterError whose message contains the fragment."""
    with pytest.raises(InvalidParameterError) as info:
        function(**kwargs)
    assert fragment in str(info.value)


def test_invalid_parameter_error_is_a_value_error():
    """Code written against the standard conventions catches privkit's errors."""
    with pytest.raises(ValueError, match="epsilon"):
        PureDP(epsilon=-1.0)


def test_mixing_relations_names_both_sides():
    """Composing blocks with different relations is refused, naming both."""
    replace = Claimed(PureDP(epsilon=1.0), relation=R, label="other")
    with pytest.raises(IncompatibleCompositionError) as info:
        Sequential(LEAF, replace)
    assert "REPLACE_ONE" in str(info.value)
    assert "ADD_REMOVE" in str(info.value)


@given(st.one_of(st.floats(max_value=0.0), st.just(math.nan), st.just(math.inf),
                 st.booleans(), st.text(max_size=3), st.none()))
def test_every_epsilon_parameter_refuses_non_positive_or_non_finite(value):
    """Property: PureDP, ApproxDP, ZCDP, GDP and BudgetFilter refuse any value that is
    not a finite number > 0 for their first parameter, naming it."""
    for make, name in ((lambda v: PureDP(epsilon=v), "epsilon"),
                       (lambda v: ApproxDP(epsilon=v, delta=0.0), "epsilon"),
                       (lambda v: ZCDP(rho=v), "rho"),
                       (lambda v: GDP(mu=v), "mu"),
                       (lambda v: BudgetFilter(epsilon=v), "epsilon")):
        with pytest.raises(InvalidParameterError, match=f"`{name}`"):
            make(value)


@given(st.one_of(st.floats(min_value=1.0), st.floats(max_value=-1e-300), st.just(math.nan)))
def test_every_delta_parameter_refuses_values_outside_unit_interval(value):
    """Property: delta outside [0, 1) is refused everywhere it is accepted."""
    with pytest.raises(InvalidParameterError, match="`delta`"):
        ApproxDP(epsilon=1.0, delta=value)
    with pytest.raises(InvalidParameterError, match="`delta`"):
        GDP(mu=1.0).epsilon_at(value)
    with pytest.raises(InvalidParameterError, match="`delta`"):
        BudgetFilter(epsilon=1.0, delta=value)
