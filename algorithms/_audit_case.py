"""What an estimator declares so that privkit can audit it end to end on its transcript.

An estimator's transcript is everything a caller receives from it: every public fitted
attribute (the trailing-underscore ones), predictions, probabilities and transforms on
probe points, warnings, and the exception type and message when ``fit`` raises.
:mod:`privkit.audits.transcript` fits the estimator many times on neighbouring datasets
built from the case below (one per channel: a record with a label no other record has, a
record added or removed or replaced, a non-finite record, a record at and beyond the
declared bound, the estimator's own worst-case pair) and bounds epsilon from below on the
whole transcript.

Each private estimator declares its case next to itself, as a mechanism declares its
worst case: a classmethod ``transcript_case(cls, *, declare_classes=True)`` returning a
:class:`TranscriptCase`. ``declare_classes`` chooses between a declared label set
(``classes=`` given) and a label set learnt privately; unsupervised estimators ignore it.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit.neighbouring import Neighbouring

__all__ = ["TranscriptCase"]


@attrs.frozen(kw_only=True)
class TranscriptCase:
    """A small, fast configuration of an estimator and a base dataset to audit it on.

    Parameters
    ----------
    estimator
        The configured, unfitted estimator (its ``random_state`` is replaced by the
        auditor for every fit). Small: one fit should take milliseconds. ``privkit
        audit`` fits it about 360 times per label mode (every channel at 20 + 10 fits per
        side), and the full tier in the test suite about 3,000 (200 + 50): at 3 ms a fit,
        a classifier's two label modes take about 2 s in ``privkit audit``, which runs
        every estimator within its 2-minute budget.
    X, y
        The base dataset D (``y`` is ``None`` for unsupervised estimators): a fixture,
        public, a few dozen rows inside the declared bounds.
    relation
        The neighbouring relation the estimator's guarantee is stated under.
    epsilon, delta
        The claim the transcript is audited against (the estimator's ``guarantee_`` at
        ``delta``, or ``paper_claim_`` when ``claim == "paper"``).
    record, label
        An ordinary in-domain record (and its label) used to add to, remove from or
        replace into D.
    new_label
        A label no record of D has (for a declared label set it is among ``classes``).
    at_bound, beyond_bound
        A record exactly at the declared data bound, and one beyond it (clipped or mapped
        into the domain by the estimator's stated rule).
    probes
        Query points for ``predict``, ``predict_proba``, ``decision_function``,
        ``score_samples`` and ``transform``.
    fit_params
        Extra keyword arguments of ``fit``.
    worst_case
        The estimator's own worst-case pair ``((X1, y1), (X2, y2))``, if it has one.
    claim
        ``"privkit"`` (privkit's guarantee; a violation is a bug) or ``"paper"`` (a source
        paper's claim privkit does not make).
    methods
        Query methods called on ``probes`` beyond the standard ones (for example
        ``("witness",)``); optional.
    """

    estimator: Any = attrs.field(eq=False)
    X: NDArray[np.float64] = attrs.field(eq=False)
    y: NDArray[Any] | None = attrs.field(eq=False)
    relation: Neighbouring
    epsilon: float
    delta: float
    record: NDArray[np.float64] = attrs.field(eq=False)
    label: Any = None
    new_label: Any = None
    at_bound: NDArray[np.float64] = attrs.field(eq=False)
    beyond_bound: NDArray[np.float64] = attrs.field(eq=False)
    probes: NDArray[np.float64] = attrs.field(eq=False)
    fit_params: dict[str, Any] = attrs.field(factory=dict, eq=False)
    worst_case: tuple[tuple[Any, Any], tuple[Any, Any]] | None = attrs.field(default=None,
                                                                             eq=False)
    claim: str = attrs.field(default="privkit",
                             validator=attrs.validators.in_(("privkit", "paper")))
    methods: tuple[str, ...] = attrs.field(default=(), converter=tuple, eq=False)
