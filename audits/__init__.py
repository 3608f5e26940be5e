"""privkit.audits: empirical tests of privacy claims.

Run the system under test many times on two neighbouring inputs, choose a rejection set
on one split of the draws, measure it on fresh draws, and turn the two frequencies into
a lower bound on epsilon that holds with the stated confidence. A claim is violated
only when that lower bound exceeds it.

Outputs may be numbers or vectors; NaN, infinities and missing outputs (``None``) are
events like any other, and floating-point outputs are also tested for the low-order-bit
leak of Mironov 2012 (:class:`Reachability`, and :class:`Granularity` when the pair
holds datasets). :func:`sequential_audit` stops early when a
violation is certain, with the confidence split over its stages.

:func:`audit_estimator` audits an estimator end to end on its whole transcript (every
public fitted attribute, predictions on probe points, warnings, exceptions) on the
neighbouring pairs of :mod:`privkit.audits.channels`; :func:`audit_channels` runs every
channel of an estimator's ``transcript_case`` (:mod:`privkit.audits.transcript`).

:mod:`privkit.audits.strategies` (hypothesis strategies, ``assert_dp``,
``assert_sensitivity``) and :mod:`privkit.audits.plots` (matplotlib) are imported on
demand, so ``import privkit.audits`` needs neither.

.. versionadded:: 0.1.0
"""

from privkit.audits.attacks import audit, draw, search_pairs, sequential_audit
from privkit.audits.distinguishers import (
    Bands,
    Best,
    Distinguisher,
    Histogram,
    Rule,
    Threshold,
    choose,
)
from privkit.audits.events import Events
from privkit.audits.floating import Granularity, Reachability
from privkit.audits.levels import LevelSets
from privkit.audits.lower_bounds import clopper_pearson, epsilon_lower_bound, gdp_mu_lower_bound
from privkit.audits.pairs import NeighbouringPair, canary_pairs, extreme_pairs, random_pairs
from privkit.audits.result import AuditResult, report
from privkit.audits.sensitivity import SensitivityResult, check_sensitivity
from privkit.audits.transcript import (
    TranscriptParts,
    TranscriptResult,
    audit_channels,
    audit_estimator,
    record_transcript,
)
from privkit.audits.vectors import Patterns, Projection

__all__ = [
    "AuditResult",
    "Bands",
    "Best",
    "Distinguisher",
    "Events",
    "Granularity",
    "Histogram",
    "LevelSets",
    "NeighbouringPair",
    "Patterns",
    "Projection",
    "Reachability",
    "Rule",
    "SensitivityResult",
    "Threshold",
    "TranscriptParts",
    "TranscriptResult",
    "audit",
    "audit_channels",
    "audit_estimator",
    "canary_pairs",
    "check_sensitivity",
    "choose",
    "clopper_pearson",
    "draw",
    "epsilon_lower_bound",
    "extreme_pairs",
    "gdp_mu_lower_bound",
    "random_pairs",
    "record_transcript",
    "report",
    "search_pairs",
    "sequential_audit",
]
