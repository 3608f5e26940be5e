"""Public row bounds (privkit.algorithms._bounds): a per-record, silent map into the unit
ball, and the data owner's own diagnostic."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from privkit.algorithms import RowReport, clipped_rows, inspect_rows

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=64)
ROWS = hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 4)),
                  elements=ANY_FLOAT)


@given(ROWS, st.floats(1e-3, 1e3))
def test_clipped_rows_is_a_silent_per_record_map_into_the_unit_ball(X, bound):
    """For every input (NaN, infinities and overflowing rows included): no warning, every
    row finite with norm at most 1, a non-finite row the zero row, a finite row within the
    bound divided by it, and each row's image a function of that row alone."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z = clipped_rows(X, bound)
        alone = np.vstack([clipped_rows(X[i:i + 1], bound) for i in range(len(X))])
    np.testing.assert_array_equal(Z, alone)
    assert np.all(np.isfinite(Z))
    assert np.all(np.linalg.norm(Z, axis=1) <= 1.0 + 1e-12)
    finite = np.isfinite(X).all(axis=1)
    assert np.all(Z[~finite] == 0.0)
    with np.errstate(over="ignore"):
        inside = finite & (np.linalg.norm(X, axis=1) <= bound)
    np.testing.assert_allclose(Z[inside], X[inside] / bound, rtol=1e-12, atol=1e-300)


def test_sparse_rows_map_as_dense_ones():
    import scipy.sparse as sp

    X = np.array([[3.0, 0.0, 4.0], [0.0, np.nan, 0.0], [0.1, 0.0, 0.0]])
    Z = clipped_rows(sp.csr_matrix(X), 2.0)
    assert sp.issparse(Z)
    np.testing.assert_allclose(Z.toarray(), clipped_rows(X, 2.0))
    np.testing.assert_allclose(clipped_rows(X, 2.0), [[0.6, 0, 0.8], [0, 0, 0], [0.05, 0, 0]])


def test_inspect_rows_counts_for_the_data_owner():
    """The diagnostic counts non-finite rows and finite rows beyond the bound (a row on
    the bound is not beyond it); it is documented as not private."""
    X = np.array([[3.0, 4.0], [0.6, 0.8], [np.inf, 0.0], [1e200, 1e200], [0.0, 0.0]])
    assert inspect_rows(X, row_norm_bound=1.0) == RowReport(
        n_rows=5, non_finite=1, beyond_bound=2, row_norm_bound=1.0)
    assert "NOT PRIVATE" in inspect_rows.__doc__
    with pytest.raises(ValueError, match="`row_norm_bound` must be a finite number > 0"):
        inspect_rows(X, row_norm_bound=0.0)
