"""scikit-learn's input checks for privkit's estimators, without their cost when there is
nothing to check.

On a few hundred rows, ``validate_data`` and ``check_classification_targets`` take longer
than some of the models fit here (scikit-learn scans for dataframes and infers the target
type). For a plain float64 array and integer labels their answer is known: the arrays
come back unchanged and the target is accepted. Anything else takes scikit-learn's own
path, so its errors, warnings and conversions are unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def plain_rows(X: Any) -> bool:
    """True when scikit-learn's ``check_array(X, dtype=np.float64)`` would return X itself:
    a float64 ndarray (not a subclass), 2-D, with at least one row and one column, all
    finite (a finite sum implies finite entries; an overflowing sum only sends X down the
    full check)."""
    return (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
            and X.shape[0] > 0 and X.shape[1] > 0 and bool(np.isfinite(X.sum())))


def fit_inputs(estimator: Any, X: Any, y: Any) -> tuple[NDArray[np.float64], NDArray[Any]]:
    """``validate_data(estimator, X, y, dtype=np.float64)`` and
    ``check_classification_targets(y)``: ``(X, y)`` as a classifier's ``fit`` uses them,
    with ``n_features_in_`` (and ``feature_names_in_``) set or cleared."""
    if (plain_rows(X) and type(y) is np.ndarray and y.ndim == 1 and y.dtype.kind in "iu"
            and y.shape[0] == X.shape[0]):
        # what check_X_y would return unchanged, and integer labels, which
        # check_classification_targets always accepts ("binary" or "multiclass"): only
        # the feature names and n_features_in_ remain to be set, and a plain ndarray has
        # no feature names
        estimator.n_features_in_ = X.shape[1]
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        return X, y
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import validate_data

    X, y = validate_data(estimator, X, y, dtype=np.float64)
    check_classification_targets(y)
    return X, y


def predict_inputs(estimator: Any, X: Any) -> NDArray[np.float64]:
    """``validate_data(estimator, X, dtype=np.float64, reset=False)`` for a fitted
    estimator: X as its ``predict`` uses it."""
    from sklearn.utils.validation import validate_data

    if plain_rows(X):  # check_array would return X itself
        if (hasattr(estimator, "feature_names_in_")
                or X.shape[1] != getattr(estimator, "n_features_in_", None)):
            # scikit-learn's warning or error; otherwise its check has nothing to do
            validate_data(estimator, X, reset=False, skip_check_array=True)
        plain: NDArray[np.float64] = X
        return plain
    out: NDArray[np.float64] = validate_data(estimator, X, dtype=np.float64, reset=False)
    return out
