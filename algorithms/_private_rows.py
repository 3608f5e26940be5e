"""The private rows and labels a ``fit`` receives: their schema is checked, their values
never are.

What a caller passes to ``fit`` is private data. Its *schema* is public (privkit's rule R8,
``DESIGN.md``, "The transcript is the release"): a container of numbers of two dimensions,
the number of features, one label per row, and the number of rows where n is public
(replace-one). A wrong schema is refused with a message that names the parameter and what
is allowed, never a value or the number of rows (R5). The *values* are never refused or
reported on (R3): a refusal that depends on one record reveals that record. So

* an entry that is not a finite number (NaN, an infinity, an overflow to infinity, an
  entry of an object array that is not a number, which becomes NaN) is kept, and marks
  its row: each estimator maps a row with a non-finite entry to its neutral record by the
  public rule its docstring states (:func:`~privkit.algorithms._bounds.finite_rows` finds
  them);
* a label is never looked at: one outside the label set, NaN or unhashable, is mapped to
  the neutral record by :mod:`~privkit.algorithms._labels`.

scikit-learn's ``validate_data`` cannot read private rows: it refuses a non-finite entry,
and several of its messages quote the data (a 1-D array printed whole, a string that does
not convert, the row counts of inputs whose lengths disagree). It is used here only to
record the schema (``n_features_in_``, ``feature_names_in_``) and, for sparse input, to
convert the container; its refusals are replaced (``privkit._validation.withheld``).

What legitimately differs between estimators is a keyword: whether a dask array is kept
lazy (the kernel family reads it in :mod:`~privkit.algorithms._dask_blocks`), whether a
sparse matrix is read (as CSR), and ``min_rows`` (1 where n is public, 0 where it is
private: under add-remove an empty dataset is a neighbour like any other, so fitting on it
must succeed). Query rows (``predict`` and friends) are not private: they are checked
strictly by :mod:`~privkit.algorithms._queries`.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

from ._dask_blocks import dask_row_blocks, is_dask_array

__all__ = ["private_labels", "private_rows"]

_TABLE = "a 2-D array of real numbers (rows x features)"

#: numpy's dtype kinds that hold no real numbers, as a refusal names them.
_KINDS = {"U": "text", "S": "bytes", "c": "complex numbers", "M": "dates",
          "m": "time spans", "V": "raw records"}


def private_rows(X: Any, *, owner: str, name: str = "X", estimator: Any = None,
                 min_rows: int = 0, sparse: bool = False, dask: bool = False,
                 chunk_size: int | None = None) -> Any:
    """``X`` as ``fit`` reads it: a float64 numpy array of shape (n, d), d >= 1, its
    non-finite entries kept (an entry of an object array that is not a number becomes
    NaN, silently).

    Refused, by schema only (``name``, what is allowed, ``owner``; no value, no row
    count): a sparse matrix unless ``sparse`` (then it comes back as a float64 CSR
    matrix), a ragged sequence, a dtype that holds no real numbers (text, complex,
    dates), an array that is not 2-D, no columns, and fewer than ``min_rows`` rows.

    ``dask``: a dask array is kept lazy, its structure checked (dimensions, columns) and
    nothing computed; with ``chunk_size`` it comes back in the row blocks of
    :func:`~privkit.algorithms._dask_blocks.dask_row_blocks` (persisted on a
    distributed cluster when they had to be made). Without ``dask``, a dask array is
    read into memory like any array-like. ``estimator``: its ``n_features_in_`` (and
    ``feature_names_in_`` for a data frame) are set as scikit-learn's ``validate_data``
    sets them (the schema, public).
    """
    if dask and is_dask_array(X):
        rows = X
        _check_shape(rows.shape, name, min_rows, owner)
        if chunk_size is not None:
            rows = dask_row_blocks(rows, chunk_size, persist=True)
    elif _is_sparse(X):
        if not sparse:
            raise check.fail(name, f"a sparse {type(X).__name__}", "a dense 2-D array",
                             owner, "sparse input is not supported; pass X.toarray()")
        rows = _sparse_rows(X, name, owner)
        _check_shape(rows.shape, name, min_rows, owner)
    else:
        rows = _dense_rows(X, name, owner)
        _check_shape(rows.shape, name, min_rows, owner)
    if estimator is not None:
        from sklearn.utils.validation import validate_data

        validate_data(estimator, X if hasattr(X, "columns") else rows, reset=True,
                      skip_check_array=True)
    return rows


def _is_sparse(X: Any) -> bool:
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and bool(sp.issparse(X))


def _dense_rows(X: Any, name: str, owner: str) -> NDArray[np.float64]:
    """X as a float64 array by the rules of :func:`private_rows` (the shape unchecked)."""
    raw = check.withheld(lambda: np.asarray(X), name, _TABLE, owner)  # ragged: refused
    kind = raw.dtype.kind
    if kind == "O":  # each entry by its own rule: one that is not a number becomes NaN
        flat = np.fromiter((_number(v) for v in raw.ravel()), dtype=np.float64,
                           count=raw.size)
        return flat.reshape(raw.shape)
    if kind not in "biuf":  # named by its kind: a text dtype's size is its longest entry's
        hint = "Complex data not supported" if kind == "c" else ""
        raise check.fail(name, f"an array of {_KINDS.get(kind, 'values that are not numbers')}",
                         "an array of real numbers", owner, hint)
    with np.errstate(over="ignore"):  # a long double beyond float64 becomes inf
        rows: NDArray[np.float64] = raw.astype(np.float64, copy=False)
    return rows


def _sparse_rows(X: Any, name: str, owner: str) -> Any:
    """A sparse X as a float64 CSR matrix, its non-finite entries kept."""
    from sklearn.utils import check_array

    if X.dtype.kind not in "biuf":
        raise check.fail(name, "a sparse matrix of values that are not real numbers",
                         "a matrix of real numbers", owner)
    return check.withheld(lambda: check_array(
        X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False,
        ensure_min_samples=0, ensure_min_features=0), name, _TABLE, owner)


def _number(value: Any) -> float:
    """``float(value)``, or NaN for anything that is not a number (never an error that
    would name the value)."""
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def _check_shape(shape: tuple[int, ...], name: str, min_rows: int, owner: str) -> None:
    """2-D, at least one column, at least ``min_rows`` rows; the message names the number
    of dimensions (public), and the shape in scikit-learn's words only where n is public
    (``min_rows`` > 0)."""
    if len(shape) != 2:
        raise check.fail(name, f"a {len(shape)}-D array", _TABLE, owner,
                         "Reshape your data: X.reshape(-1, 1) for a single feature")
    if shape[1] < 1:
        raise check.fail(name, "an array with no columns", "an array with at least one "
                         "feature", owner, _found(shape, "feature", 1, owner) if min_rows else "")
    if shape[0] < min_rows:  # min_rows > 0 only where n is public
        raise check.fail(name, "an array with fewer rows than allowed", "an array with at "
                         f"least {'one row' if min_rows == 1 else f'{min_rows} rows'} (n is "
                         "public: the guarantee is stated under replace-one)", owner,
                         _found(shape, "sample", min_rows, owner))


def _found(shape: tuple[int, ...], what: str, minimum: int, owner: str) -> str:
    """scikit-learn's words for a table too small (its estimator checks match them)."""
    count = shape[0] if what == "sample" else shape[1]
    return (f"Found array with {count} {what}(s) (shape={tuple(shape)}) while a minimum of "
            f"{minimum} is required by {owner}.")


def private_labels(y: Any, n_rows: int, *, owner: str) -> NDArray[Any]:
    """``y`` as ``fit`` reads it: a 1-D array, one label per row of X, its values never
    looked at (a label outside the label set, NaN or unhashable, is the neutral record
    of :mod:`~privkit.algorithms._labels`).

    A column vector is raveled with scikit-learn's ``DataConversionWarning`` (a matter
    of shape, which is public). Refused, by schema only: no ``y``, another shape, or a
    length other than X's (the message names neither length).
    """
    if y is None:
        raise check.fail("y", None, "one label per row of X", owner,
                         f"{owner} requires y to be passed, but the target y is None")
    allowed = "a 1-D array of labels, one per row of X (y should be a 1d array)"
    labels: NDArray[Any] = check.withheld(lambda: np.asarray(y), "y", allowed, owner)
    if labels.ndim == 2 and labels.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning

        warnings.warn("A column-vector y was passed when a 1d array was expected. Please "
                      "change the shape of y to (n_samples, ), for example using ravel().",
                      DataConversionWarning, stacklevel=3)
        labels = labels[:, 0]
    if labels.ndim != 1:
        raise check.fail("y", f"a {labels.ndim}-D array" if labels.ndim != 2 else
                         "a 2-D array with several columns", allowed, owner)
    if labels.shape[0] != n_rows:
        raise check.fail("y", "a different number of labels than X has rows",
                         "one label per row of X", owner)
    return labels
