"""Query rows: what a fitted estimator's ``predict``, ``decision_function``,
``predict_proba``, ``score_samples``, ``transform`` or ``witness`` reads.

Queries are not private (privkit's rule R7, ``DESIGN.md``, "The transcript is the
release"), so they are checked strictly, by scikit-learn's ``validate_data``: 2-D,
``n_features_in_`` columns (and the fitted feature names), every entry finite. A
non-finite query row is an error, never a silent class or NaN. Private rows, which are
never refused by value, are read by :mod:`~privkit.algorithms._private_rows`.

On a few hundred rows ``validate_data`` takes longer than some of the models predict
here; for a plain float64 array whose entries are finite its answer is known (the array
itself), so that case skips it, with the same result.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

from ._dask_blocks import is_dask_array

__all__ = ["query_rows"]


def _plain_rows(X: Any) -> bool:
    """True when scikit-learn's ``check_array(X, dtype=np.float64)`` would return X itself:
    a float64 ndarray (not a subclass), 2-D, with at least one row and one column, all
    finite (a finite sum implies finite entries; an overflowing sum only sends X down the
    full check)."""
    if not (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
            and X.shape[0] > 0 and X.shape[1] > 0):
        return False
    with np.errstate(over="ignore", invalid="ignore"):  # no warning: the full check says
        return bool(np.isfinite(X.sum()))


def query_rows(estimator: Any, X: Any, method: str, *, sparse: bool = False,
               dask: bool = False) -> Any:
    """X as the fitted ``estimator``'s ``method`` reads it: a float64 array (a CSR matrix
    for sparse X when ``sparse``), checked strictly; scikit-learn's
    ``NotFittedError`` before fit.

    ``dask``: a dask array stays lazy, its structure checked now and every block checked
    (finite entries) when it is computed; otherwise it is read into memory and checked
    like any array-like.
    """
    from sklearn.utils.validation import check_is_fitted, validate_data

    check_is_fitted(estimator)
    if dask and is_dask_array(X):
        return _dask_queries(estimator, X, method)
    if _plain_rows(X):  # check_array would return X itself
        if (hasattr(estimator, "feature_names_in_")
                or X.shape[1] != getattr(estimator, "n_features_in_", None)):
            # scikit-learn's warning or error; otherwise its check has nothing to do
            validate_data(estimator, X, reset=False, skip_check_array=True)
        plain: NDArray[np.float64] = X
        return plain
    return validate_data(estimator, X, dtype=np.float64, reset=False,
                         accept_sparse="csr" if sparse else False)


def _dask_queries(estimator: Any, X: Any, method: str) -> Any:
    """A dask X of query rows, checked block by block when it is computed."""
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
