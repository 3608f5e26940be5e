"""Sensitivity.in_norm and as_replace_one against independent values (issue 25: every
conversion of a sensitivity between norms pinned).

The tight factor from norm ``a`` to norm ``b`` in dimension d is
``max {||v||_b : ||v||_a <= 1}``, a maximum of a convex function over a convex ball,
attained at an extreme point of the ball. The L1 and L-infinity balls have finitely many
(``+-e_i``, and ``{-1, 1}^d``), so their factors are found here by enumerating them; the
L2 ball's are Cauchy-Schwarz's ``sqrt(d)`` (attained at ``(1, ..., 1) / sqrt(d)``) and 1
(attained at ``e_1``), checked by the attaining vector and by random vectors never above.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privkit import Neighbouring, Norm, Sensitivity
from privkit.errors import InvalidParameterError

NORMS = (Norm.L1, Norm.L2, Norm.LINF)
ORD = {Norm.L1: 1, Norm.L2: 2, Norm.LINF: math.inf}


def _extreme_points(norm: Norm, d: int) -> list[np.ndarray]:
    if norm is Norm.L1:
        return [s * np.eye(d)[i] for i in range(d) for s in (-1.0, 1.0)]
    if norm is Norm.LINF:
        return [np.array(v) for v in itertools.product((-1.0, 1.0), repeat=d)]
    raise AssertionError("the L2 ball has no finite set of extreme points")


def _tight_factor(source: Norm, target: Norm, d: int) -> float:
    """The factor by enumeration (L1, L-infinity sources) or Cauchy-Schwarz (L2)."""
    if source is Norm.L2:
        return math.sqrt(d) if target is Norm.L1 else 1.0
    return max(float(np.linalg.norm(v, ORD[target])) for v in _extreme_points(source, d))


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("source", NORMS)
@pytest.mark.parametrize("target", NORMS)
def test_in_norm_is_the_tight_factor(source, target, d):
    """Every conversion equals the tight factor (neither looser nor, worse, smaller)."""
    s = Sensitivity(value=0.7, norm=source, relation=Neighbouring.ADD_REMOVE)
    converted = s.in_norm(target, dimension=d)
    assert converted.norm is target
    assert converted.relation is Neighbouring.ADD_REMOVE
    assert converted.value == pytest.approx(0.7 * _tight_factor(source, target, d),
                                            rel=1e-15)


@pytest.mark.parametrize("d", [1, 4, 9])
def test_l2_factors_are_attained(d):
    """The L2 factors are attained: (1, ..., 1) / sqrt(d) has L1 norm sqrt(d), e_1 has
    L-infinity norm 1 (so Cauchy-Schwarz's factors cannot be lowered)."""
    flat = np.full(d, 1.0 / math.sqrt(d))
    s = Sensitivity(value=1.0, norm=Norm.L2, relation=Neighbouring.REPLACE_ONE)
    assert float(np.linalg.norm(flat, 1)) == pytest.approx(
        s.in_norm(Norm.L1, dimension=d).value)
    assert s.in_norm(Norm.LINF).value == float(np.linalg.norm(np.eye(d)[0], np.inf))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=12),
       st.sampled_from(NORMS), st.sampled_from(NORMS))
def test_no_vector_exceeds_the_converted_bound(values, source, target):
    """Soundness for every vector: ``||v||_target <= factor * ||v||_source``, with the
    factor from in_norm (a bound of ``||v||_source`` converted)."""
    v = np.array(values)
    size = float(np.linalg.norm(v, ORD[source]))
    if size == 0.0:
        return
    s = Sensitivity(value=size, norm=source, relation=Neighbouring.ADD_REMOVE)
    bound = s.in_norm(target, dimension=v.size).value
    assert float(np.linalg.norm(v, ORD[target])) <= bound * (1 + 1e-12)


def test_growing_conversion_needs_the_dimension():
    """Towards a larger norm the factor grows with d: no dimension, no conversion (the
    error names the parameter); towards a smaller one the dimension is not needed."""
    s = Sensitivity(value=1.0, norm=Norm.LINF, relation=Neighbouring.ADD_REMOVE)
    with pytest.raises(InvalidParameterError, match="dimension"):
        s.in_norm(Norm.L1)
    with pytest.raises(InvalidParameterError, match="dimension"):
        s.in_norm(Norm.L2, dimension=0)
    assert Sensitivity(value=3.0, norm=Norm.L1, relation="add_remove").in_norm(
        Norm.LINF).value == 3.0


def test_replace_one_is_twice_add_remove():
    """Replacing a record is removing it and adding another: the triangle inequality
    gives twice the add/remove bound, tight for a sum query (one record's value moves
    the sum by 1 under add/remove, and by 2 when it is replaced, -1 by +1)."""
    s = Sensitivity(value=1.0, norm=Norm.L1, relation=Neighbouring.ADD_REMOVE)
    data = np.array([0.3, -1.0, 0.5])
    added = abs(np.sum(np.append(data, 1.0)) - np.sum(data))
    replaced = abs(np.sum(np.where(np.arange(3) == 1, 1.0, data)) - np.sum(data))
    assert s.value == added
    assert s.as_replace_one().value == replaced == 2.0
    already = s.as_replace_one()
    assert already.as_replace_one() is already
