"""What a classifier answers when its private label release kept fewer than two labels.

Without declared ``classes``, a classifier releases its label set privately
(:mod:`privkit.algorithms._labels`); when fewer than two labels clear the release's
threshold, no learning stage runs (there is nothing to separate). The classifier still
fits, and what it answers follows from the released ``classes_`` alone: ``predict``
returns the one released label for every query, and with none, or for a decision
function, the error below.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.exceptions import NotFittedError

__all__ = ["labels_without_model", "no_model"]


def no_model(estimator: Any) -> NotFittedError:
    """The error of a query that needs a model the label release left untrained."""
    return NotFittedError(
        f"{type(estimator).__name__} has no model: the private label release kept "
        f"{estimator.classes_.size} label(s) (classes_={estimator.classes_.tolist()}), "
        "fewer than the 2 a classifier needs, so no learning stage ran; declare the "
        "labels (classes=[...]) or give the release more records per label")


def labels_without_model(estimator: Any, n_rows: int) -> NDArray[Any]:
    """``predict`` without a model: the one released label for each of ``n_rows``
    queries, or :func:`no_model` when none was released."""
    classes: NDArray[Any] = estimator.classes_
    if classes.size != 1:
        raise no_model(estimator)
    labels: NDArray[Any] = np.full(n_rows, classes[0], dtype=classes.dtype)
    return labels
