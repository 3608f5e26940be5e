"""Private training rows as the kernel-support estimators take them: the schema is checked,
the values never are.

What a caller passes to ``fit`` is private data. Its *schema* is public (privkit's rule R8:
a dense numeric array of two dimensions, the number of features, one label per row), so a
wrong schema is refused, with a message that names no value and no row count. Its
*values* are never refused or reported on (rule R3): an entry that is not a finite number
(NaN, an infinity, an object that is not a number) marks its row, and each estimator maps
a marked row to its neutral record by the public rule its docstring states. A label that
is not equal to itself (NaN) is no label: its record is neutral too.

The classifiers then take their label set from :mod:`~privkit.algorithms._labels`
(:func:`record_codes`), and predict the one label when fewer than two were released
(:func:`single_label`). Used by :mod:`~privkit.algorithms.svdd.svdd`,
:mod:`~privkit.algorithms.svdd.equilibrium` and :mod:`~privkit.algorithms.svdd.svm_baselines`.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

from ._labels import LabelSet, release_label_set

__all__ = ["record_codes", "single_label", "training_labels", "training_rows"]


def _number(value: Any) -> float:
    """``float(value)``, or NaN for anything that is not a number (never an error that
    would name the value)."""
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def training_rows(estimator: Any, X: Any, *, empty_allowed: bool
                  ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """``(A, finite)``: X as a float64 array of shape (n, d) and the mask of its rows whose
    entries are all finite numbers; sets ``n_features_in_`` (and ``feature_names_in_``
    for a data frame) as scikit-learn's ``validate_data`` does.

    Refused, by schema only: a sparse matrix, a ragged sequence, a dtype that holds no
    numbers (strings, complex, dates), an array that is not 2-D, no columns, and no rows
    unless ``empty_allowed`` (under ADD_REMOVE n is private, so an empty dataset is a
    neighbour like any other and must fit; under REPLACE_ONE n is public). Values are
    converted silently: an overflow to infinity, or an object that is not a number,
    marks the row as not finite.
    """
    import scipy.sparse as sp
    from sklearn.utils.validation import validate_data

    owner = type(estimator).__name__
    if sp.issparse(X):
        raise check.fail("X", "a sparse matrix", "a dense array (random Fourier features "
                         "are dense)", owner, "pass X.toarray()")
    try:
        raw = np.asarray(X)
    except ValueError as exc:  # a ragged sequence: numpy's message names no value
        raise check.fail("X", "a ragged sequence", "a 2-D array of numbers", owner) from exc
    kind = raw.dtype.kind
    A: NDArray[np.float64]
    if kind == "O":
        flat = np.fromiter((_number(v) for v in raw.ravel()), dtype=np.float64,
                           count=raw.size)
        A = flat.reshape(raw.shape)
    elif kind in "biuf":
        with np.errstate(over="ignore"):  # a long double beyond float64 becomes inf
            A = raw.astype(np.float64)
    else:
        hint = "Complex data not supported" if kind == "c" else ""
        raise check.fail("X", f"an array of dtype {raw.dtype.name}", "an array of real "
                         "numbers", owner, hint)
    if A.ndim != 2:
        raise check.fail("X", f"a {A.ndim}-D array", "a 2-D array (rows x features)", owner,
                         "reshape a single feature with X.reshape(-1, 1)")
    if A.shape[1] < 1:
        raise check.fail("X", "an array with no columns", "at least one feature", owner)
    if A.shape[0] == 0 and not empty_allowed:
        raise check.fail("X", "an array with no rows", "at least one row (n is public "
                         "under relation='replace_one')", owner)
    validate_data(estimator, X if hasattr(X, "columns") else A, reset=True,
                  skip_check_array=True)
    finite: NDArray[np.bool_] = np.asarray(np.isfinite(A).all(axis=1), dtype=bool)
    return A, finite


def training_labels(estimator: Any, y: Any, n_rows: int
                    ) -> tuple[NDArray[Any], NDArray[np.bool_]]:
    """``(labels, valid)``: y as a 1-D array and the mask of labels equal to themselves
    (a NaN is no label).

    A column vector is flattened, with scikit-learn's ``DataConversionWarning`` (its
    shape is schema). Refused, by schema only: no ``y``, another shape, or a length other
    than X's (the message names neither length).
    """
    owner = type(estimator).__name__
    if y is None:
        raise check.fail("y", None, "the labels of X's rows", owner,
                         f"{owner} requires y to be passed, but the target y is None")
    labels = np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning

        warnings.warn("A column-vector y was passed when a 1d array was expected. Please "
                      "change the shape of y to (n_samples,), for example using ravel().",
                      DataConversionWarning, stacklevel=3)
        labels = labels[:, 0]
    if labels.ndim != 1:
        raise check.fail("y", f"a {labels.ndim}-D array", "a 1-D array of labels", owner)
    if labels.shape[0] != n_rows:
        raise check.fail("y", "labels not one per row of X", "one label per row of X",
                         owner)
    if labels.dtype.kind in "fcO":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            valid = np.asarray(labels == labels, dtype=bool)
    else:
        valid = np.ones(labels.shape[0], dtype=bool)
    return labels, valid


def record_codes(labels: NDArray[Any], records: NDArray[np.bool_], *,
                 classes: NDArray[Any] | None, epsilon: float, delta: float,
                 relation: Any, rng: np.random.Generator, stage_uses_delta: bool,
                 owner: str) -> tuple[LabelSet, NDArray[np.int64]]:
    """The label set (declared, or released privately from the labels of ``records``
    alone) and every row's index in it: ``-1`` for a row that is not a record (its label
    or its features undefined) or whose label is not in the set, the neutral record of
    the estimator's stated rule."""
    label_set = release_label_set(labels[records], classes=classes, epsilon=epsilon,
                                  delta=delta, relation=relation, rng=rng,
                                  stage_uses_delta=stage_uses_delta, owner=owner)
    codes = np.full(labels.shape[0], -1, dtype=np.int64)
    if label_set.classes.size:
        codes[records] = label_set.codes(labels[records])
    return label_set, codes


def single_label(classes: NDArray[Any], n_queries: int, owner: str) -> NDArray[Any]:
    """The predictions of a classifier whose label set has fewer than two labels (no
    learning stage ran): the one label for every query, or, with no label, an error
    that depends on the released label set only."""
    if classes.size == 0:
        from privkit.errors import InvalidParameterError

        raise InvalidParameterError(
            f"{owner} released no label (the private label set is empty: no label had "
            "enough records to clear the stability threshold), so it has nothing to "
            "predict; declare the label set with classes=[...], or fit on more records "
            "per label or with a larger budget")
    out: NDArray[Any] = np.full(n_queries, classes[0])
    return out
