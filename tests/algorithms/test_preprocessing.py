"""Public-bound preprocessing (silent, per record, nothing refused by value) and DPPCA's
0.2.0 conventions."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from privkit.algorithms import (
    DPPCA,
    PublicOneHotEncoder,
    PublicRangeScaler,
    PublicStandardScaler,
    RowNormClipper,
)

#: Any float64 entry: NaN, infinities and magnitudes near the largest float included.
ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=64)


def silently(transform, *args):
    """Run ``transform`` with every warning turned into an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return transform(*args)


def test_range_scaler_uses_declared_bounds_not_the_data():
    """[lower, upper] maps onto [0, 1] whatever the rows are; values outside are clipped
    onto the range silently (no warning, no count)."""
    X = np.array([[5.0, 0.0], [10.0, 50.0]])
    scaler = PublicRangeScaler([0.0, 0.0], [10.0, 100.0])
    np.testing.assert_allclose(scaler.fit_transform(X), [[0.5, 0.0], [1.0, 0.5]])
    np.testing.assert_allclose(scaler.inverse_transform(scaler.transform(X)), X)
    out = silently(scaler.transform, np.array([[20.0, -1e300], [1.0, 1.0]]))
    np.testing.assert_allclose(out, [[1.0, 0.0], [0.1, 0.01]])
    assert not hasattr(scaler, "n_clipped_")


def test_non_finite_values_pass_through_for_the_estimator_to_map():
    """NaN and infinities are not clipped (clipping +inf onto the bound would hide a
    non-finite query from the estimator's strict predict): they stay non-finite, with no
    warning, in fit and in transform, for each scaler and the row clipper."""
    X = np.array([[np.nan, 1.0], [np.inf, -np.inf], [0.5, 0.5]])
    for transformer in (PublicRangeScaler(0.0, 1.0), PublicStandardScaler(0.0, 1.0, bound=2.0),
                        RowNormClipper(2.0)):
        out = silently(transformer.fit_transform, X)
        np.testing.assert_array_equal(np.isfinite(out).all(axis=1), [False, False, True])
        if not isinstance(transformer, RowNormClipper):  # entry by entry
            np.testing.assert_array_equal(np.isfinite(out), np.isfinite(X))


def test_an_entry_that_is_not_a_number_is_nan_not_a_refusal():
    """A transformer maps private rows, so an object entry that is not a number (a stray
    string in a column) is never refused (a refusal would reveal that record) nor quoted:
    it becomes NaN, silently, in fit and transform, and its row is non-finite for the
    estimator's own neutral-record rule; the other rows are transformed as usual."""
    X = np.array([[0.5, "secret"], [0.25, 0.75]], dtype=object)
    for transformer in (PublicRangeScaler(0.0, 1.0), PublicStandardScaler(0.0, 1.0, bound=2.0),
                        RowNormClipper(2.0), PublicOneHotEncoder(n_levels=3)):
        out = silently(transformer.fit_transform, X)
        np.testing.assert_array_equal(np.isfinite(out).all(axis=1), [False, True])
        expected = silently(transformer.fit_transform, X[1:].astype(float))
        np.testing.assert_array_equal(out[1:], expected)


def test_standard_scaler_and_one_hot_and_row_clipper():
    """(x - c) / s with public constants, clipped to the bound silently; one-hot over
    declared levels; rows divided by the bound and clipped onto the unit ball."""
    X = np.array([[1.0, 4.0], [3.0, 8.0]])
    np.testing.assert_allclose(PublicStandardScaler([1.0, 4.0], [2.0, 4.0]).fit_transform(X),
                               [[0.0, 0.0], [1.0, 1.0]])
    np.testing.assert_allclose(
        silently(PublicStandardScaler(0.0, 1.0, bound=2.0).fit_transform, X),
        [[1.0, 2.0], [2.0, 2.0]])
    codes = np.array([[0, 2], [1, 0]])
    np.testing.assert_array_equal(PublicOneHotEncoder([2, 3]).fit_transform(codes),
                                  [[1, 0, 0, 0, 1], [0, 1, 1, 0, 0]])
    Z = RowNormClipper(5.0).fit_transform(np.array([[3.0, 4.0], [0.3, 0.4], [30.0, 40.0]]))
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), [1.0, 0.1, 1.0])
    assert RowNormClipper.privkit_public_bounds


def test_one_hot_codes_outside_the_levels_are_the_all_zero_indicator():
    """A finite code that is not a declared level (too large, negative, not an integer)
    is the stated neutral value, all-zero indicators, silently; a NaN code gives NaN
    indicators (left for the estimator's own rule)."""
    codes = np.array([[2.0, 0.0], [-1.0, 3.0], [0.5, 1e300], [np.nan, 2.0]])
    out = silently(PublicOneHotEncoder([2, 3]).fit_transform, codes)
    np.testing.assert_array_equal(out[:3], [[0, 0, 1, 0, 0], [0, 0, 0, 0, 0],
                                            [0, 0, 0, 0, 0]])
    assert np.all(np.isnan(out[3, :2]))
    np.testing.assert_array_equal(out[3, 2:], [0, 0, 1])


def test_row_clipper_keeps_sparse_input_sparse():
    import scipy.sparse as sp

    X = sp.csr_matrix(np.array([[3.0, 0.0, 4.0], [0.0, 0.0, 0.1]]))
    Z = RowNormClipper(1.0).fit_transform(X)
    assert sp.issparse(Z)
    np.testing.assert_allclose(Z.toarray(), [[0.6, 0.0, 0.8], [0.0, 0.0, 0.1]])


@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.just(3)), elements=ANY_FLOAT),
       st.integers(0, 5))
def test_transformers_are_per_record_maps(X, i):
    """Each output row depends on its own input row only (so any neighbouring relation is
    preserved): transforming one row alone gives the same row as transforming the whole
    array, for every input, non-finite and huge values included. And no transformer warns
    or raises on any input."""
    i = i % X.shape[0]
    for transformer in (PublicRangeScaler(-1.0, 1.0), PublicStandardScaler(0.5, 2.0, bound=1.0),
                        RowNormClipper(1.5), PublicOneHotEncoder(4)):
        fitted = silently(transformer.fit, X)
        whole = silently(fitted.transform, X)
        alone = silently(fitted.transform, X[i:i + 1])
        np.testing.assert_array_equal(whole[i:i + 1], alone)


@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.just(3)), elements=ANY_FLOAT))
def test_row_clipper_output_is_inside_the_unit_ball(X):
    """Every finite row leaves with norm at most 1 (huge finite rows included, whose
    squares overflow: they are clipped onto the ball, not zeroed)."""
    Z = silently(RowNormClipper(0.5).fit_transform, X)
    finite = np.isfinite(X).all(axis=1)
    assert np.all(np.linalg.norm(Z[finite], axis=1) <= 1.0 + 1e-12)
    big = finite & (np.abs(X).max(axis=1) > 1e200)
    np.testing.assert_allclose(np.linalg.norm(Z[big], axis=1), 1.0)


def test_dppca_defaults_and_inverse_transform():
    """n_components=None keeps every component (no failure on few features); with the
    full basis inverse_transform(transform(X)) is X (orthonormal components)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)) / 4
    pca = DPPCA(epsilon=1.0, random_state=0).fit(X)
    assert pca.components_.shape == (3, 3)
    np.testing.assert_allclose(pca.inverse_transform(pca.transform(X)), X, atol=1e-10)
    two = DPPCA(2, epsilon=1.0, random_state=0).fit(X)
    assert two.inverse_transform(two.transform(X)).shape == (200, 3)
    with pytest.raises(ValueError, match="`X` must be"):
        two.inverse_transform(X)
