"""Shared tests over every registered mechanism: the list comes from the registry, so a
new mechanism is covered by defining it (no edit here)."""

import math

import attrs
import numpy as np
import pytest
from scipy import stats

from privkit import AdditiveMechanism, Ledger, Sensitivity, registered_mechanisms
from privkit.errors import InvalidParameterError

KINDS = sorted(registered_mechanisms())
ALPHA = 1e-3


def example(kind):
    worst = registered_mechanisms()[kind].worst_case(epsilon=1.0, delta=1e-6)
    if worst is None:
        pytest.skip(f"{kind} has no worst case to build an example from")
    return worst


def bad_values(value):
    """Values no numeric, integer or boolean field of a mechanism accepts."""
    if isinstance(value, bool):
        return [1, "yes", None]
    if isinstance(value, int):
        return [0, 2.5, True, "2", -3]
    return [-1.0, math.nan, math.inf, "1", True, None]


@pytest.mark.parametrize("kind", KINDS)
def test_every_field_refuses_bad_values_naming_the_field(kind):
    """attrs.evolve re-runs the validators: each bad value raises InvalidParameterError
    (a ValueError and a TypeError) whose message names the field and the value."""
    mechanism = example(kind).mechanism
    for field in attrs.fields(type(mechanism)):
        value = getattr(mechanism, field.name)
        if not field.init or isinstance(value, Sensitivity) or field.alias == "relation":
            continue
        for bad in bad_values(value):
            with pytest.raises(InvalidParameterError) as info:
                attrs.evolve(mechanism, **{field.alias: bad})
            assert f"`{field.alias}`" in str(info.value)
            assert isinstance(info.value, TypeError)
            assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("kind", KINDS)
def test_one_release_call_is_one_run_and_size_counts_draws(kind):
    """The ledger's one rule: a call is one run whatever the value's shape; size=(2, 3)
    is six runs."""
    worst = example(kind)
    mechanism = worst.mechanism
    with Ledger() as ledger:
        mechanism.release(worst.first, rng=0, **worst.options)
        mechanism.release(worst.first, rng=0, size=(2, 3), **worst.options)
    assert ledger.count(mechanism) == 7


@pytest.mark.statistical
@pytest.mark.parametrize("kind", KINDS)
def test_the_safe_release_has_the_law_of_the_plain_draw(kind):
    """For real-valued additive mechanisms, the floating-point-safe release and the plain
    simulation draw the same law: two-sample KS on the first coordinate, 20,000 draws
    each, seeded (false-failure rate ALPHA = 1e-3 per mechanism over seeds)."""
    worst = example(kind)
    mechanism = worst.mechanism
    if not isinstance(mechanism, AdditiveMechanism):
        pytest.skip(f"{kind} is not additive")
    safe = np.asarray(mechanism.release(worst.first, rng=1, size=20_000, **worst.options))
    if safe.dtype.kind != "f":
        pytest.skip(f"{kind} releases integers (its release is its exact sampler)")
    plain = np.asarray(mechanism.simulate(worst.first, rng=2, size=20_000, **worst.options))
    first = (slice(None),) + (0,) * (safe.ndim - 1)
    assert stats.ks_2samp(safe[first], plain[first]).pvalue > ALPHA
