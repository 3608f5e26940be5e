"""What a caller receives from one ``fit``, for the transcript tests (issue 22).

:func:`fit_transcript` fits an estimator and records what leaves it: the exception type
and message if ``fit`` raises, every warning (category and message), and the fitted
attributes (the public ones: a trailing underscore, not a leading one). Two views:

* ``discrete``: everything but the floating-point values of arrays (their shapes and
  dtypes are kept), so that two fits on neighbouring datasets with the same seed must
  agree on it exactly when nothing but accounted noise may tell them apart;
* ``values``: the arrays' values too, for channels whose neutral record makes the two
  datasets the same (then the whole transcript must be equal).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from privkit.algorithms.federated.flower import FlowerFedDPDRDPMLClassifier
from privkit.ledger import Ledger


def _describe(value: Any, *, values: bool) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and not values:
            return ("array", value.shape, value.dtype.str)
        return ("array", value.shape, value.dtype.str, value.tolist())
    if isinstance(value, Ledger):
        return ("ledger", value.entries)
    if isinstance(value, (list, tuple)):
        return [_describe(v, values=values) for v in value]
    if hasattr(value, "get_params") and hasattr(value, "fit"):  # a fitted sub-estimator
        return (type(value).__name__, public_attributes(value, values=values))
    if isinstance(value, (bool, int, float, str, np.generic)) or value is None:
        return value
    return repr(value)  # plans, guarantees, histories: public objects with a faithful repr


def public_attributes(estimator: Any, *, values: bool) -> dict[str, Any]:
    """The fitted attributes (``name_``, not ``_name`` or ``__name__``), described."""
    return {name: _describe(value, values=values) for name, value in vars(estimator).items()
            if name.endswith("_") and not name.startswith("_")}


def fit_transcript(estimator: Any, X: Any, y: Any = None, *, values: bool = False,
                   **fit_params: Any) -> dict[str, Any]:
    """Fit and describe what the caller receives (see the module docstring)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if y is None:
                estimator.fit(X, **fit_params)
            else:
                estimator.fit(X, y, **fit_params)
            error = None
        except Exception as exc:  # the transcript holds it
            error = (type(exc).__name__, str(exc))
    return {"error": error,
            "warnings": [(w.category.__name__, str(w.message)) for w in caught],
            "attributes": None if error else public_attributes(estimator, values=values)}


def _query_shapes(estimator: Any, probes: Any) -> dict[str, Any]:
    """The shape and dtype of every query answer on the probes (their values may carry
    accounted noise), or the error a query raises (which must follow from public facts)."""
    out = {}
    for method in ("predict", "predict_proba", "decision_function", "transform",
                   "score_samples"):
        if not hasattr(estimator, method):
            continue
        try:
            answer = np.asarray(getattr(estimator, method)(probes))
            out[method] = ("answer", answer.shape, answer.dtype.str)
        except Exception as exc:  # part of the transcript
            out[method] = ("error", type(exc).__name__, str(exc))
    return out


def channel_pair(case: Any, channel: str) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """D and D' of ``channel`` for a TranscriptCase, as :mod:`privkit.audits` builds them:
    the channel's record added (add-remove) or put in place of D's first record
    (replace-one). Channels: ``record``, ``new_label``, ``non_finite``, ``at_bound``,
    ``beyond_bound``."""
    from privkit.neighbouring import Neighbouring

    X = np.asarray(case.X, dtype=float)
    y = None if case.y is None else np.asarray(case.y)
    record = np.asarray(case.record, dtype=float).copy()
    label = case.label
    if channel == "new_label":
        label = case.new_label
    elif channel == "non_finite":
        record[0] = np.nan
    elif channel in ("at_bound", "beyond_bound"):
        record = np.asarray(getattr(case, channel), dtype=float)
    if case.relation is Neighbouring.ADD_REMOVE:
        X2 = np.vstack([X, record])
        y2 = None if y is None else np.append(y, label)
    else:
        X2 = X.copy()
        X2[0] = record
        y2 = None if y is None else np.concatenate([[label], y[1:]])
    return (X, y), (X2, y2)


def case_transcript(case: Any, data: tuple[Any, Any], seed: int, *, values: bool = False
                    ) -> dict[str, Any]:
    """The transcript of the case's estimator fitted on ``data`` with ``seed``, with the
    query answers' shapes on the case's probes."""
    from sklearn.base import clone

    estimator = clone(case.estimator).set_params(random_state=seed)
    out = fit_transcript(estimator, data[0], data[1], values=values, **case.fit_params)
    if out["error"] is None:
        out["queries"] = _query_shapes(estimator, case.probes)
    return out



class FailingFlower(FlowerFedDPDRDPMLClassifier):  # type: ignore[misc]
    """A Flower FedDPDR-DPML whose participant of 150 rows fails in the model phase (here,
    at module level, so the participants' processes can unpickle it)."""

    def participant_release(self, member: Any, phase: str, received: Any) -> Any:
        if phase == "model" and member.size == 150:
            raise ValueError("participant 1 failed")
        return super().participant_release(member, phase, received)
