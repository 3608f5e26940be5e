"""Neighbouring pairs of datasets for the transcript audit, one per channel of issue 22.

Each channel is a way an estimator's transcript can depend on one record outside its
accounted noise (issue 22, "The transcript is the release"). From an estimator's
:class:`~privkit.algorithms._audit_case.TranscriptCase` (a base dataset D and the records
below), the pair of a channel is D against D', where D' is D with one record **added**
(under add-remove) or with its **first record replaced** (under replace-one) by:

==================  ====================================================================
channel             the record
==================  ====================================================================
``new_label``       the case's ``record`` with ``new_label``, a label no record of D has
``record``          the case's ordinary ``record`` and ``label``
``non_finite``      ``record`` with its first entry NaN
``at_bound``        ``at_bound``, exactly at the declared data bound
``beyond_bound``    ``beyond_bound``, beyond it (to be clipped by a public rule)
``worst_case``      not a record: the case's own ``worst_case`` pair, as declared
==================  ====================================================================

A dataset is a tuple ``(X, y)`` (``y`` is None for an unsupervised estimator).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.audits.pairs import NeighbouringPair
from privkit.neighbouring import Neighbouring

__all__ = ["CHANNELS", "channel_pair", "channels", "check_case"]

#: Every channel and the record it adds or puts in place of D's first record.
CHANNELS = {
    "new_label": "a record with a label no other record has",
    "record": "an ordinary record",
    "non_finite": "a record with a non-finite entry (NaN)",
    "at_bound": "a record exactly at the declared bound",
    "beyond_bound": "a record beyond the declared bound",
    "worst_case": "the estimator's own worst-case pair",
}


def check_case(case: Any, owner: str) -> None:
    """A :class:`TranscriptCase` whose arrays fit together; otherwise an error naming the
    field at fault (the case is a public fixture: shapes are named, never rows)."""
    from privkit.algorithms._audit_case import TranscriptCase

    check.instance("case", case, TranscriptCase, owner)
    check.positive_finite("case.epsilon", case.epsilon, owner)
    check.delta("case.delta", case.delta, owner)
    check.instance("case.relation", case.relation, Neighbouring, owner)
    X = np.asarray(case.X)
    if X.ndim != 2 or X.shape[0] < 1 or X.dtype.kind not in "biuf":
        raise check.fail("case.X", f"an array of shape {X.shape}", "a 2-D numeric array with "
                         "at least one row", owner)
    d = X.shape[1]
    if case.y is not None and np.shape(case.y) != (X.shape[0],):
        raise check.fail("case.y", f"an array of shape {np.shape(case.y)}",
                         f"None or one label per row of X, shape ({X.shape[0]},)", owner)
    for field in ("record", "at_bound", "beyond_bound"):
        value = np.asarray(getattr(case, field))
        if value.shape != (d,) or value.dtype.kind not in "biuf":
            raise check.fail(f"case.{field}", f"an array of shape {value.shape}",
                             f"one numeric record of shape ({d},), like a row of X", owner)
    probes = np.asarray(case.probes)
    if probes.ndim != 2 or probes.shape[1] != d or probes.shape[0] < 1:
        raise check.fail("case.probes", f"an array of shape {probes.shape}",
                         f"a 2-D array of query points with {d} columns", owner)


def channels(case: Any) -> list[str]:
    """The channels that apply to ``case``: ``new_label`` needs labels and a new label,
    ``worst_case`` a declared pair."""
    names = list(CHANNELS)
    if case.y is None or case.new_label is None:
        names.remove("new_label")
    if case.worst_case is None:
        names.remove("worst_case")
    return names


def _label(case: Any) -> Any:
    return case.label if case.label is not None else np.asarray(case.y)[0]


def _labels(y: NDArray[Any], label: Any, owner: str, field: str) -> tuple[NDArray[Any],
                                                                          NDArray[Any]]:
    """``y`` and ``[label]`` in one dtype that holds both exactly (both sides of a pair
    must give the estimator labels of the same dtype)."""
    new = np.asarray([label])
    dtype = np.result_type(y, new)
    cast = new.astype(dtype)
    if cast[0] != label:
        raise check.fail(field, label, f"a label representable with the labels' dtype "
                         f"{y.dtype}", owner)
    return y.astype(dtype), cast


def _with(case: Any, record: NDArray[np.float64], label: Any, owner: str, field: str
          ) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """D and D' (floating-point rows on both sides, labels in one dtype)."""
    X = np.asarray(case.X, dtype=float)
    y = None if case.y is None else np.asarray(case.y)
    y_new: Any = None
    if y is not None:
        y, y_new = _labels(y, label, owner, field)
    if case.relation is Neighbouring.ADD_REMOVE:
        X2 = np.concatenate([X, record[None]])
        y2 = None if y is None else np.concatenate([y, y_new])
    else:
        X2 = X.copy()
        X2[0] = record
        y2 = None if y is None else np.concatenate([y_new, y[1:]])
    return (X, y), (X2, y2)


def channel_pair(case: Any, channel: str) -> NeighbouringPair:
    """The pair of datasets ``((X, y), (X', y'))`` of ``channel`` for ``case`` (see the
    module docstring), with the case's relation and a description of the change."""
    owner = "channel_pair"
    check_case(case, owner)
    if channel not in CHANNELS:
        raise check.fail("channel", channel, f"one of {', '.join(CHANNELS)}", owner)
    if channel not in channels(case):
        needs = "labels and a new_label" if channel == "new_label" else "a worst_case pair"
        raise check.fail("channel", channel, f"one of {', '.join(channels(case))} for this "
                         f"case", owner, f"the {channel} channel needs {needs}")
    if channel == "worst_case":
        first, second = case.worst_case
        return NeighbouringPair(first=tuple(first), second=tuple(second),
                                relation=case.relation, description=CHANNELS[channel])
    record = np.asarray(case.record, dtype=float)
    label: Any = _label(case) if case.y is not None else None
    if channel == "new_label":
        label = case.new_label
    elif channel == "non_finite":
        record = record.copy()
        record[0] = np.nan
    elif channel in ("at_bound", "beyond_bound"):
        record = np.asarray(getattr(case, channel), dtype=float)
    first, second = _with(case, record, label, owner, f"case.{channel}")
    verb = ("one record added" if case.relation is Neighbouring.ADD_REMOVE
            else "the first record replaced by")
    return NeighbouringPair(first=first, second=second, relation=case.relation,
                            description=f"{verb}: {CHANNELS[channel]}")
