"""What every fitted linear classifier of privkit shares: scores, labels from scores, the
strict checks of query rows, and the checks of training data that refuse nothing by value.

Training rows are private: their values (NaN, infinities, labels of any kind) are never
refused (each estimator maps them to its neutral record by a public rule), only their
public shape and schema are checked. Query rows, given to ``decision_function`` and
``predict``, are not private and are checked strictly: a non-finite query row is an error,
never a silent class (issue 22, R3 and R7).

.. versionadded:: 0.3.0
   Split from :mod:`privkit.algorithms.linear.erm`; the model may be absent when a private label
   set kept fewer than two labels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check
from privkit.neighbouring import Neighbouring

from .._audit_case import TranscriptCase

__all__ = ["LinearModel", "labels_from_scores", "private_fit_inputs", "transcript_fixture"]


def labels_from_scores(scores: NDArray[np.float64], classes: NDArray[Any]) -> NDArray[Any]:
    """Class labels from decision scores: the sign for two classes (one score per row),
    the largest score for one-vs-rest (one column per class)."""
    if scores.ndim == 1:
        labels: NDArray[Any] = np.where(scores > 0, classes[1], classes[0])
        return labels
    result: NDArray[Any] = classes[np.argmax(scores, axis=1)]
    return result


def private_fit_inputs(estimator: Any, X: Any, y: Any, *, accept_sparse: bool = False
                       ) -> tuple[Any, NDArray[Any]]:
    """``(X, y)`` for a ``fit`` on private rows: X as float64 (CSR if sparse and
    ``accept_sparse``), with ``n_features_in_`` set, its non-finite entries kept for the
    estimator's own public rule (an object or text array, a public schema, is converted
    entry by entry, an entry that is not a number becoming NaN); y one-dimensional, of
    X's length, its values unchecked (no ``check_classification_targets``: a label of an
    unexpected kind is a record outside ``classes_``, not an error). Only public facts
    are checked: shapes, dtype kinds, and that y is given."""
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the "
                         "target y is None")
    import scipy.sparse as sp
    from sklearn.utils import column_or_1d

    owner = f"{type(estimator).__name__}.fit"
    allowed = "a 2-D array of real numbers (one row per record)"
    if not sp.issparse(X):
        rows = check.withheld(lambda: np.asarray(X), "X", allowed, owner)
        if rows.ndim != 2:  # scikit-learn's own message would print the values
            raise ValueError(f"{type(estimator).__name__}: X must be a 2-D array (one row "
                             f"per record), got {rows.ndim} dimension(s); reshape it")
        if rows.dtype.kind in "OUS":
            X = _numbers(rows.astype(object))
    X = check.withheld(lambda: validate_data(
        estimator, X, dtype=np.float64, ensure_all_finite=False,
        accept_sparse="csr" if accept_sparse else False), "X", allowed, owner)
    labels = check.withheld(lambda: column_or_1d(y, warn=True), "y",
                            "a 1-D array of labels", owner)
    if labels.shape[0] != X.shape[0]:  # scikit-learn's message would print both counts
        raise check.private_fail("y", "one label per row of X", owner)
    return X, labels


def _numbers(values: NDArray[Any]) -> NDArray[np.float64]:
    """Entries of an object or text array (a schema, public) as floats, each by its own
    rule: one that is not a number becomes NaN, so its row is the estimator's neutral
    record. (numpy's conversion would refuse the whole array, naming the entry.)"""
    out = np.empty(values.shape, dtype=np.float64)
    for index, value in np.ndenumerate(values):
        try:
            out[index] = float(value)
        except (TypeError, ValueError, OverflowError):
            out[index] = np.nan
    return out


class LinearModel:
    """``decision_function`` and ``predict`` of a fitted linear classifier with
    ``coef_`` (one row per binary problem or class), ``intercept_`` and ``classes_``.

    A privkit classifier whose private label set kept fewer than two labels fits no model
    (no ``coef_``): ``predict`` then returns the one label released, and raises
    :class:`~sklearn.exceptions.NotFittedError` when none was; both follow from the
    released ``classes_`` alone.
    """

    coef_: NDArray[np.float64]
    intercept_: NDArray[np.float64]
    classes_: NDArray[Any]

    def _queries(self, X: Any) -> Any:
        """Query rows, checked strictly (finite, the fitted number of features)."""
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False, accept_sparse="csr")

    def _no_model(self) -> NotFittedError:
        return NotFittedError(
            f"{type(self).__name__} has no model: the private label release kept "
            f"{self.classes_.size} label(s) (classes_={self.classes_.tolist()}), fewer "
            "than the 2 a classifier needs, so no learning stage ran; declare the labels "
            "(classes=[...]) or give the release more records per label")

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        X = self._queries(X)
        if not hasattr(self, "coef_"):
            raise self._no_model()
        scores: NDArray[np.float64] = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores[:, 0] if self.coef_.shape[0] == 1 else scores

    def predict(self, X: Any) -> NDArray[Any]:
        if hasattr(self, "coef_") or getattr(self, "classes_", np.empty(0)).size != 1:
            return labels_from_scores(self.decision_function(X), self.classes_)
        X = self._queries(X)
        only: NDArray[Any] = np.full(X.shape[0], self.classes_[0], dtype=self.classes_.dtype)
        return only


def transcript_fixture(estimator: Any, *, epsilon: float, delta: float, new_label: Any = 2,
                       ) -> TranscriptCase:
    """The linear classifiers' :class:`~privkit.algorithms._audit_case.TranscriptCase`
    for ``estimator`` (REPLACE_ONE): D is 60 public rows of 2 features inside the unit
    ball, labels 0 and 1 (30 each, shifted apart along the first feature), which a
    private label release at epsilon 8 and delta 1e-3 passes almost always, and a label
    held by one record almost never; the record, the points at and beyond the norm bound
    1 and the probes are fixed."""
    rng = np.random.default_rng(22)
    y = np.repeat(np.array([0, 1]), 30)
    X = rng.uniform(-0.6, 0.6, size=(60, 2))
    X[:, 0] += np.where(y == 1, 0.1, -0.1)
    return TranscriptCase(
        estimator=estimator, X=X, y=y, relation=Neighbouring.REPLACE_ONE, epsilon=epsilon,
        delta=delta, record=np.array([0.3, -0.2]), label=1, new_label=new_label,
        at_bound=np.array([0.6, 0.8]), beyond_bound=np.array([3.0, 4.0]),
        probes=np.array([[0.5, 0.5], [-0.5, -0.5], [0.4, -0.3], [0.0, 0.0]]))
