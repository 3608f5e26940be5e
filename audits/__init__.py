"""privkit.audits: empirical tests of privacy claims.

Run the system under test many times on two neighbouring inputs, choose a rejection set
on one split of the draws, measure it on fresh draws, and turn the two frequencies into
a lower bound on epsilon that holds with the stated confidence. A claim is violated
only when that lower bound exceeds it.

.. versionadded:: 0.1.0
"""

from privkit.audits.attacks import audit, draw
from privkit.audits.distinguishers import Distinguisher, Histogram, Projection, Rule, Threshold
from privkit.audits.lower_bounds import clopper_pearson, epsilon_lower_bound
from privkit.audits.pairs import NeighbouringPair
from privkit.audits.result import AuditResult, report
from privkit.audits.sensitivity import SensitivityResult, check_sensitivity

__all__ = [
    "AuditResult",
    "Distinguisher",
    "Histogram",
    "NeighbouringPair",
    "Projection",
    "Rule",
    "SensitivityResult",
    "Threshold",
    "audit",
    "check_sensitivity",
    "clopper_pearson",
    "draw",
    "epsilon_lower_bound",
    "report",
]
