"""Plans: construction, printing, serialisation and leaf counting."""

import json

import attrs
import pytest
from hypothesis import given

from _strategies import plans
from privkit import (
    ZCDP,
    Claimed,
    InvalidParameterError,
    Neighbouring,
    Parallel,
    PoissonSubsample,
    PostProcess,
    PureDP,
    Repeat,
    SampleWithoutReplacement,
    Sequential,
    plan_from_spec,
    plan_to_spec,
)
from privkit.mechanisms import Gaussian, Laplace
from privkit.plan import leaf_counts

A = Neighbouring.ADD_REMOVE
LAP = Laplace.for_epsilon(0.5, sensitivity=1.0, relation=A)
GAU = Gaussian.for_gdp(0.5, sensitivity=1.0, relation=A)


def test_tree_draws_every_node():
    """print(plan) draws the tree with every node and leaf on its own line."""
    plan = Sequential(LAP, Repeat(GAU, 3), Parallel(LAP, PostProcess(GAU, "mean")))
    assert plan.tree().splitlines() == [
        "Sequential [add_remove]",
        "├── Laplace(noise_scale=2, l1_sensitivity=1): LaplaceDP(ε=0.5)",
        "├── Repeat ×3",
        "│   └── Gaussian(noise_scale=2, l2_sensitivity=1): GDP(μ=0.5)",
        "└── Parallel (disjoint parts)",
        "    ├── Laplace(noise_scale=2, l1_sensitivity=1): LaplaceDP(ε=0.5)",
        "    └── PostProcess: mean",
        "        └── Gaussian(noise_scale=2, l2_sensitivity=1): GDP(μ=0.5)",
    ]


def test_plans_are_frozen_values():
    """Plans compare by value and cannot be mutated."""
    assert Sequential(LAP, GAU) == Sequential(LAP, GAU)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Sequential(LAP).steps = ()  # type: ignore[misc]


def test_empty_composition_is_refused():
    """A Sequential or Parallel needs at least one block."""
    with pytest.raises(InvalidParameterError, match="at least one block"):
        Sequential()
    with pytest.raises(InvalidParameterError, match="at least one block"):
        Parallel()


def test_leaf_counts_multiply_through_repeat():
    """leaf_counts counts runs: Repeat multiplies, parts and steps add."""
    plan = Sequential(Repeat(Sequential(LAP, Repeat(GAU, 2)), 3), Parallel(LAP, LAP))
    assert leaf_counts(plan) == {LAP: 5, GAU: 6}


def test_subsampling_nodes_are_data():
    """Subsampling nodes exist, validate and print, even before an accountant uses them."""
    node = PoissonSubsample(GAU, 0.01)
    assert node.label() == "PoissonSubsample (rate=0.01)"
    assert SampleWithoutReplacement(GAU, 10, 100).label() == \
        "SampleWithoutReplacement (10 of 100)"


@given(plans(A))
def test_plans_round_trip_through_json(plan):
    """Property: writing a plan to the JSON format and reading it back gives an equal plan."""
    document = json.loads(json.dumps(plan_to_spec(plan)))
    assert plan_from_spec(document["plan"], relation=document["relation"]) == plan


def test_claimed_block_round_trips():
    """A Claimed block keeps its guarantee and label through JSON."""
    block = Claimed(ZCDP(rho=0.25), relation=A, label="third-party step")
    spec = plan_to_spec(Sequential(block, block))
    assert plan_from_spec(spec["plan"], relation="add_remove") == Sequential(block, block)


@pytest.mark.parametrize(("spec", "fragment"), [
    ({"sequential": []}, "non-empty list"),
    ({"laplace": {"noise_scale": 1.0, "epsilon": 1.0, "l1_sensitivity": 1.0}},
     "unknown key(s) ['epsilon']"),
    ({"laplace": {"scael": 1.0}}, "unknown key(s) ['scael']"),
    ({"gaussian": {"noise_scale": 1.0}}, "a sensitivity is never assumed"),
    ({"gaussian": {"noise_scale": "4", "l2_sensitivity": 1.0}},
     "`noise_scale` must be a real number"),
    ({"repeat": {"count": 2}}, "with the key(s) ['block']"),
    ({"teleport": {}}, "(got 'teleport')"),
    ({"laplace": {}, "gaussian": {}}, "exactly one key"),
    ({"claimed": {"guarantee": {"pure": {"epsilon": 1}}}}, "(got 'pure')"),
    ({"repeat": {"count": 0, "block": {"laplace": {"noise_scale": 1.0, "l1_sensitivity": 1}}}},
     "`count` must be"),
])
def test_bad_plan_specs_are_refused_clearly(spec, fragment):
    """Malformed plan files raise InvalidParameterError saying what is wrong."""
    with pytest.raises(InvalidParameterError) as info:
        plan_from_spec(spec, relation="add_remove")
    assert fragment in str(info.value)


def test_spec_leaves_take_the_documents_relation():
    """Every leaf read from a document gets the document's relation."""
    plan = plan_from_spec({"sequential": [{"laplace": {"noise_scale": 1.0,
                                                       "l1_sensitivity": 1.0}},
                                          {"claimed": {"guarantee": {"pure_dp": {"epsilon": 1}}}}]},
                          relation="replace_one")
    assert plan.relation is Neighbouring.REPLACE_ONE
    assert all(leaf.relation is Neighbouring.REPLACE_ONE for leaf in leaf_counts(plan))


def test_claimed_block_prints_its_label_and_guarantee():
    """str(Claimed) shows the label and the claim."""
    assert str(Claimed(PureDP(epsilon=1.0), relation=A, label="vendor")) == "vendor: PureDP(ε=1)"
