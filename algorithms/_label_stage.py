"""A classifier's label set as its plan sees it, the budget its learning stage keeps, and
what it predicts when the label release leaves fewer than two labels.

:mod:`privkit.algorithms._labels` releases a label set (or takes the declared one); the
helpers here are what a classifier built on it needs around that release:

* :func:`planned_labels`: the :class:`~privkit.algorithms._labels.LabelSet` a plan is
  built from before any data is seen: the declared set, or an empty set that carries the
  stability histogram (and its cost) that ``fit`` will run;
* :func:`stage_budget`: what is left for the learning stage, ``(epsilon - epsilon_L,
  delta - delta_L)``;
* :func:`labels_without_model`: predictions when no learning stage ran (one released
  label: that label for every row; none: an error that depends on the release only).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.neighbouring import Neighbouring

from ._labels import LabelSet, _histogram, label_budget

__all__ = ["labels_without_model", "planned_labels", "stage_budget"]


def planned_labels(classes: NDArray[Any] | None, *, epsilon: float, delta: float,
                   relation: Neighbouring, stage_uses_delta: bool, owner: str) -> LabelSet:
    """The label set before any data: ``classes`` (declared, free), or an empty set that
    carries the stability histogram :func:`~privkit.algorithms._labels.release_label_set`
    will run, at ``label_budget(epsilon, delta)`` (which refuses ``delta == 0``)."""
    if classes is not None:
        return LabelSet(classes=classes)
    eps_l, delta_l = label_budget(epsilon, delta, stage_uses_delta=stage_uses_delta,
                                  owner=owner)
    return LabelSet(classes=np.empty(0), block=_histogram(eps_l, delta_l, relation),
                    epsilon=eps_l, delta=delta_l)


def stage_budget(labels: LabelSet, epsilon: float, delta: float) -> tuple[float, float]:
    """``(epsilon, delta)`` of the learning stage: the whole budget for a declared label
    set, what the label release leaves otherwise."""
    return epsilon - labels.epsilon, delta - labels.delta


def labels_without_model(classes: NDArray[Any], n_rows: int, owner: str) -> NDArray[Any]:
    """Predictions of a classifier whose label release kept fewer than two labels (no
    learning stage ran): the one label for every row, or, with none, an error that
    depends on the released (empty) label set only."""
    if classes.size == 0:
        raise check.fail("classes_", "an empty label set", "at least one label to predict",
                         owner, "the private label release kept no label (no label had "
                         "enough records for its noisy count to clear the threshold); "
                         "declare classes= or raise epsilon")
    labels: NDArray[Any] = np.full(n_rows, classes[0], dtype=classes.dtype)
    return labels
