"""Rows as privkit's kernel estimators read them: private rows for ``fit`` (structure
checked, values never), query rows for ``predict`` and friends (checked strictly), numpy
or dask alike.

Under add-remove the number of rows is private, so no check here depends on it, and no
message names a value or the number of rows of private data (the transcript rules of
issue 22). Query rows are not private: a non-finite query row is an error, never a
silent answer.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

__all__ = ["is_dask_array", "private_labels", "private_rows", "query_rows"]


def is_dask_array(X: Any) -> bool:
    """True for a ``dask.array.Array`` (without importing dask when it is not loaded)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _is_sparse(X: Any) -> bool:
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and bool(sp.issparse(X))


def private_rows(X: Any, owner: str, name: str = "X") -> Any:
    """The private rows as fit reads them: a float64 numpy array (or a dask array), 2-D
    with at least one column and any number of rows, zero included (under add-remove the
    row count is private, so it never decides whether fit succeeds).

    Only the structure is checked (dense and real, the number of dimensions and of
    columns: the public schema); no message names a value or the number of rows.
    """
    if not is_dask_array(X):
        if _is_sparse(X):
            raise check.fail(name, "a sparse matrix", "a dense array", owner,
                             "sparse input is not supported")
        allowed = "a numeric 2-D array (n_samples, n_features)"
        X = check.withheld(lambda: np.asarray(X), name, allowed, owner)
        if X.dtype.kind == "c":
            raise check.fail(name, "complex data", "a real array", owner,
                             "Complex data not supported")
        X = check.withheld(lambda: X.astype(np.float64, copy=False), name, allowed, owner)
    if len(X.shape) != 2 or X.shape[1] < 1:
        raise check.fail(name, f"a {len(X.shape)}-D array" if len(X.shape) != 2 else
                         "an array without columns", "a 2-D array (n_samples, n_features) "
                         "with at least one feature", owner)
    return X


def query_rows(estimator: Any, X: Any, method: str) -> Any:
    """Query rows for a fitted estimator's ``method`` (predict, transform, ...): they are
    not private, so they are checked strictly (scikit-learn's ``validate_data``: 2-D,
    ``n_features_in_`` columns, every entry finite); a dask array is checked block by
    block when it is computed. A non-finite row is an error, never a silent answer."""
    from sklearn.utils.validation import check_is_fitted, validate_data

    check_is_fitted(estimator)
    if not is_dask_array(X):
        out: NDArray[np.float64] = validate_data(estimator, X, dtype=np.float64, reset=False)
        return out
    owner = f"{type(estimator).__name__}.{method}"
    d = int(estimator.n_features_in_)
    if len(X.shape) != 2 or X.shape[1] != d:
        raise check.fail("X", f"a dask array of {len(X.shape)} dimensions and "
                         f"{X.shape[-1]} columns", f"a 2-D array with {d} columns", owner)

    def finite(block: NDArray[Any]) -> NDArray[np.float64]:
        rows = np.asarray(block, dtype=np.float64)
        if not np.isfinite(rows).all():
            raise check.fail("X", "a row with a non-finite entry", "finite query rows",
                             owner)
        return rows

    return X.map_blocks(finite, dtype=np.float64)


def private_labels(y: Any, n_rows: int, owner: str) -> NDArray[Any]:
    """One label per private row, as a 1-D array: a column vector is raveled with
    scikit-learn's ``DataConversionWarning`` (a matter of shape, which is public); the
    values are never checked (a label outside the label set is a neutral record, by the
    estimator's stated rule) nor named."""
    if y is None:
        raise check.fail("y", None, "one label per row of X", owner,
                         "requires y to be passed, but the target y is None")
    labels = np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        import warnings

        from sklearn.exceptions import DataConversionWarning

        warnings.warn("A column-vector y was passed when a 1d array was expected; it is "
                      "raveled", DataConversionWarning, stacklevel=3)
        labels = labels.ravel()
    if labels.ndim != 1 or labels.shape[0] != n_rows:
        raise check.fail("y", f"a {labels.ndim}-D array" if labels.ndim != 1 else
                         "a different number of labels than rows of X",
                         "one label per row of X (y should be a 1d array)", owner)
    return labels
