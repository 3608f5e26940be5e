"""The label set's public rules (privkit.algorithms._labels): codes and counts never
raise on label values, NaN and unhashable labels are no label, and what the learning
stage gets never exceeds the total after the release's share."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privkit import Neighbouring
from privkit.algorithms._labels import (
    LABEL_SHARE,
    LabelSet,
    declared_classes,
    label_counts,
    label_release,
    release_label_set,
)
from privkit.errors import InvalidParameterError


def test_codes_never_raise_and_map_every_odd_label_outside():
    """Declared {0, 1, 2}: labels of another type, None, NaN and an unhashable list are
    outside (-1); 2.0 and True compare equal to 2 and 1, as Python's == says."""
    labels = LabelSet(classes=np.array([0, 1, 2]))
    y = np.empty(8, dtype=object)
    y[:] = [0, "1", None, [1], math.nan, 2.0, True, 7]
    np.testing.assert_array_equal(labels.codes(y), [0, -1, -1, -1, -1, 2, 1, -1])
    np.testing.assert_array_equal(labels.codes(np.array([0.0, np.nan, 1.5, 2.0])),
                                  [0, -1, -1, 2])
    np.testing.assert_array_equal(labels.codes(np.array(["0", "b"])), [-1, -1])
    assert LabelSet(classes=np.array([])).codes(np.array([1, 2])).tolist() == [-1, -1]


@given(st.lists(st.integers(-3, 6), max_size=30),
       st.sets(st.integers(-2, 5), min_size=2, max_size=6))
def test_codes_agree_with_a_plain_search(y, classes):
    """Independent value: each label's index in the sorted classes by a Python loop."""
    ordered = sorted(classes)
    expected = [ordered.index(v) if v in classes else -1 for v in y]
    codes = LabelSet(classes=np.array(ordered)).codes(np.array(y, dtype=np.int64))
    assert codes.tolist() == expected


def test_label_counts_skip_nan_and_unhashable_labels():
    """NaN and unhashable labels are no label (their records are neutral); mixed types are
    counted and given a fixed order."""
    labels, counts = label_counts(np.array([1.0, np.nan, 1.0, 3.0, np.nan]))
    np.testing.assert_array_equal(labels, [1.0, 3.0])
    np.testing.assert_array_equal(counts, [2, 1])
    y = np.empty(6, dtype=object)
    y[:] = ["a", 1, [2], math.nan, "a", 1]
    labels, counts = label_counts(y)
    assert labels.tolist() == [1, "a"]
    assert counts.tolist() == [2, 2]


def test_declared_classes_refuse_nan():
    with pytest.raises(InvalidParameterError, match="labels other than NaN"):
        declared_classes([0.0, np.nan], "Owner")


def test_release_of_no_label_is_recorded_and_releases_nothing():
    """An empty (or all-NaN) y still runs the release, which keeps nothing."""
    from privkit import Ledger

    with Ledger() as ledger:
        out = release_label_set(np.array([np.nan, np.nan]), classes=None, epsilon=1.0,
                                delta=1e-5, relation=Neighbouring.REPLACE_ONE,
                                rng=np.random.default_rng(0), stage_uses_delta=False,
                                owner="test")
    assert out.classes.size == 0
    assert len(ledger) == 1


@given(st.floats(1e-6, 100.0), st.floats(1e-12, 0.5), st.booleans())
def test_the_stage_never_gets_more_than_the_rest(epsilon, delta, uses_delta):
    """rest(): the release's cost plus the stage's share stays within the total, in
    floating point, and is the total to 1e-12."""
    planned = label_release(epsilon, delta, relation=Neighbouring.REPLACE_ONE,
                            stage_uses_delta=uses_delta, owner="test")
    assert planned.epsilon == pytest.approx(LABEL_SHARE * epsilon)
    eps_rest, delta_rest = planned.rest(epsilon, delta)
    assert planned.epsilon + eps_rest <= epsilon
    assert planned.delta + delta_rest <= delta
    assert planned.epsilon + eps_rest == pytest.approx(epsilon, rel=1e-12)
