"""``privkit audit`` rows of the LP-SVM (van der Reijden 2019, "Solving linear programs to
train SVMs under differential privacy", Algorithm 3, on Hsu, Roth, Roughgarden, Ullman
2014, "Privately solving linear programs"): white box on the dense multiplicative weights'
steps under score insertion (:mod:`._lp_svm_audit`) and black box end to end on the public
estimator (``lp_svm_dmw_e2e``, run by :mod:`privkit.audits.end_to_end`). Each is declared
with :func:`~privkit.audits.registry.audit_row`, which ``privkit audit`` finds here.

.. versionadded:: 0.3.0
   (the declaration moved from ``privkit.audits.algorithm_cases`` and the end-to-end row
   from ``privkit.audits.end_to_end``)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privkit.audits.end_to_end import (
    FITS,
    GAUSS_DELTA,
    GAUSS_EPSILON,
    end_to_end_case,
    fit_system,
    pilot_claim,
)
from privkit.audits.registry import AUDIT_DELTA, AuditCase, audit_row
from privkit.neighbouring import Neighbouring

__all__: list[str] = []

R = Neighbouring.REPLACE_ONE


@audit_row("lp_svm_dmw", estimator="LPSVMClassifier")
def _lp_svm_dmw(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """White box, score insertion (:func:`._lp_svm_audit.audit_case`)."""
    from ._lp_svm_audit import audit_case

    case: AuditCase = audit_case(eps, delta)
    return case


#: The LP-SVM row's rows (one feature): three with ``y x = +1``, four with ``y x = -1``.
#: With ``margin`` 1 a row counts at the vertex ``+OPT`` iff ``y x >= 0`` and at ``-OPT``
#: iff ``y x <= 0``, whatever OPT (Algorithm 2's output) is; with density 1 (``s = n``)
#: the dense projection is uniform, so the scores are ``(3/7, 4/7)`` and flipping the
#: first row's label moves them by ``(-1/7, +1/7)``: the declared sensitivity ``1 / s``,
#: in both directions (the exponential mechanism's full range). The base score gap
#: ``-1/7`` puts the step's log-odds at ``-eta/2`` and ``-3 eta/2``: the pair's epsilon at
#: delta 0.05 is 0.999 of the claim (a binary law).
_LP_ROWS = (np.ones((7, 1)), np.array([1, 1, 1, 0, 0, 0, 0]))


@audit_row("lp_svm_dmw_e2e", estimator="LPSVMClassifier")
def _lp_svm_dmw_e2e(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """LPSVMClassifier (the dense multiplicative-weights LP solver, each step's vertex
    chosen by the exponential mechanism, count score, one public step, ``opt_share``
    0.02): :data:`_LP_ROWS`, the first row's label flipped. Released: the chosen vertex
    ``choices_`` (``coef_`` is ``OPT`` times it)."""
    from privkit.algorithms import LPSVMClassifier

    def make(seed: int) -> Any:
        return LPSVMClassifier(epsilon=GAUSS_EPSILON, delta=GAUSS_DELTA, classes=[0, 1],
                               quality="count", margin=1.0, density=1.0, n_iterations=1,
                               opt_share=0.02, regularization=0.1, random_state=seed)

    X, y = _LP_ROWS
    flipped = y.copy()
    flipped[0] = 0
    claim = pilot_claim(make, (X, y), GAUSS_DELTA)
    return end_to_end_case(
        fit_system(make, lambda m: m.choices_), (X, y), (X, flipped), R, claim, GAUSS_DELTA,
        "LPSVMClassifier's released choices_ (the vertex chosen)",
        "seven one-feature rows, three with y x = 1 and four with y x = -1, the first's label "
        "flipped; count score with margin 1, density 1, T = 1, opt_share 0.02; calibrated at "
        f"({GAUSS_EPSILON}, {GAUSS_DELTA}), claim: its guarantee_ at delta {GAUSS_DELTA}. The "
        "flip moves the step's scores by the declared sensitivity 1/s in both directions",
        fits=FITS)
