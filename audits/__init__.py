"""privkit.audits: empirical tests of privacy claims.

Run the system under test many times on two neighbouring inputs, choose a rejection set
on one split of the draws, measure it on fresh draws, and turn the two frequencies into
a lower bound on epsilon that holds with the stated confidence. A claim is violated
only when that lower bound exceeds it.

Outputs may be numbers or vectors; NaN, infinities and missing outputs (``None``) are
events like any other, and floating-point outputs are also tested for the low-order-bit
leak of Mironov 2012 (:class:`Reachability`). :func:`sequential_audit` stops early when a
violation is certain, with the confidence split over its stages.

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
    Events,
    Histogram,
    Patterns,
    Projection,
    Reachability,
    Rule,
    Threshold,
    choose,
)
from privkit.audits.lower_bounds import clopper_pearson, epsilon_lower_bound, gdp_mu_lower_bound
from privkit.audits.pairs import NeighbouringPair, canary_pairs, extreme_pairs, random_pairs
from privkit.audits.result import AuditResult, report
from privkit.audits.sensitivity import SensitivityResult, check_sensitivity

__all__ = [
    "AuditResult",
    "Bands",
    "Best",
    "Distinguisher",
    "Events",
    "Histogram",
    "NeighbouringPair",
    "Patterns",
    "Projection",
    "Reachability",
    "Rule",
    "SensitivityResult",
    "Threshold",
    "audit",
    "canary_pairs",
    "check_sensitivity",
    "choose",
    "clopper_pearson",
    "draw",
    "epsilon_lower_bound",
    "extreme_pairs",
    "gdp_mu_lower_bound",
    "random_pairs",
    "report",
    "search_pairs",
    "sequential_audit",
]
