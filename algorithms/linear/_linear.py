"""What every fitted linear classifier of privkit shares: scores, labels from scores and
the transcript case.

Training rows are private: their values (NaN, infinities, labels of any kind) are never
refused (each estimator maps them to its neutral record by a public rule), only their
public shape and schema are checked (:mod:`~privkit.algorithms._private_rows`). Query
rows, given to ``decision_function`` and ``predict``, are not private and are checked
strictly (:mod:`~privkit.algorithms._queries`): a non-finite query row is an error, never
a silent class (issue 22, R3 and R7).

.. versionadded:: 0.3.0
   Split from :mod:`privkit.algorithms.linear.erm`; the model may be absent when a private label
   set kept fewer than two labels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.exceptions import NotFittedError

from privkit.neighbouring import Neighbouring

from .._audit_case import TranscriptCase
from .._queries import query_rows

__all__ = ["LinearModel", "labels_from_scores", "transcript_fixture"]


def labels_from_scores(scores: NDArray[np.float64], classes: NDArray[Any]) -> NDArray[Any]:
    """Class labels from decision scores: the sign for two classes (one score per row),
    the largest score for one-vs-rest (one column per class)."""
    if scores.ndim == 1:
        labels: NDArray[Any] = np.where(scores > 0, classes[1], classes[0])
        return labels
    result: NDArray[Any] = classes[np.argmax(scores, axis=1)]
    return result


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

    def _no_model(self) -> NotFittedError:
        return NotFittedError(
            f"{type(self).__name__} has no model: the private label release kept "
            f"{self.classes_.size} label(s) (classes_={self.classes_.tolist()}), fewer "
            "than the 2 a classifier needs, so no learning stage ran; declare the labels "
            "(classes=[...]) or give the release more records per label")

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        X = query_rows(self, X, "decision_function", sparse=True)
        if not hasattr(self, "coef_"):
            raise self._no_model()
        scores: NDArray[np.float64] = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores[:, 0] if self.coef_.shape[0] == 1 else scores

    def predict(self, X: Any) -> NDArray[Any]:
        if hasattr(self, "coef_") or getattr(self, "classes_", np.empty(0)).size != 1:
            return labels_from_scores(self.decision_function(X), self.classes_)
        X = query_rows(self, X, "predict", sparse=True)
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
