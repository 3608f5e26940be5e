"""``privkit audit`` rows of the LP-SVM (van der Reijden 2019, "Solving linear programs to
train SVMs under differential privacy", Algorithm 3, on Hsu, Roth, Roughgarden, Ullman
2014, "Privately solving linear programs"): white box on the dense multiplicative weights'
steps under score insertion (:func:`audit_case`) and black box end to end on the public
estimator (``lp_svm_dmw_e2e``, run by :mod:`privkit.audits.end_to_end`). Each is declared
with :func:`~privkit.audits.registry.audit_row`, which ``privkit audit`` finds here.

.. versionadded:: 0.3.0
   (the white-box case moved from ``privkit.algorithms.lp._lp_svm_audit``, its
   declaration from ``privkit.audits.algorithm_cases`` and the end-to-end row from
   ``privkit.audits.end_to_end``)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit.audits.end_to_end import (
    FITS,
    GAUSS_DELTA,
    GAUSS_EPSILON,
    end_to_end_case,
    fit_system,
    pilot_claim,
)
from privkit.audits.pairs import NeighbouringPair
from privkit.audits.registry import AUDIT_DELTA, AuditCase, audit_row
from privkit.neighbouring import Neighbouring
from privkit.plan import Repeat

from .private_lp import calibrate_step_epsilon, score_sensitivity, step_mechanism

__all__ = ["LP_SVM_THREAT", "audit_case"]

R = Neighbouring.REPLACE_ONE


#: Threat model of :func:`audit_case`, printed by ``privkit audit``.
LP_SVM_THREAT = (
    "white box, score insertion (the exponential-mechanism analogue of gradient insertion, "
    "Nasr et al. 2023): every step's chosen vertex is observed; on D' the adversary's "
    "record moves that step's vertex scores by the declared L-infinity sensitivity "
    "2 OPT/s, up for the vertex least likely on D and down for the others; the other "
    "rows' scores and the multiplicative weights are the DMW run's on D (computed once "
    "per history). A real row with its label flipped moves the first step's scores by "
    "2 OPT p_0 = 1/2 of the declared bound here (p uniform over 6 rows, s = 3); at "
    "density 1 a real row attains it (the row lp_svm_dmw_e2e)")


@audit_row("lp_svm_dmw", estimator="LPSVMClassifier")
def audit_case(*, epsilon: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """The DMW iterations of the LP-SVM under score insertion, for ``privkit audit``.

    Hsu, Roth, Roughgarden, Ullman 2014 ("Privately solving linear programs"), Algorithm
    DenseMultiplicativeWeights: each iteration picks a vertex ``x_j = OPT e_j`` of the
    cost polytope by the exponential mechanism on the scores ``-(p . A_j) OPT`` of the
    current dense distribution ``p`` over constraints, then updates the weights of the
    constraints by their losses. The privacy analysis (privkit's accountant on
    ``Repeat(Exponential, T)``) only assumes that one row moves each step's scores by at
    most the declared sensitivity ``2 OPT / s`` in L-infinity (:func:`score_sensitivity`),
    whatever the history. So, as gradient insertion audits DP-SGD's accounting (Nasr,
    Hayes, Steinke, Balle, Tramer, Jagielski, Carlini, Terzis 2023), the pair here is
    the DMW run on a data set D against the same run with each step's scores moved by
    exactly that bound: up for the vertex least likely on D (vertex ``w-_0``, whose score
    is lowest), down for the others, which maximises that vertex's likelihood ratio
    (McSherry, Talwar 2007). Every step of D' is then an exponential mechanism at the
    declared sensitivity from D's, so the bound must stay below the claim.

    Six rows ``y x = (1, 0)``, two features (four vertices), OPT = 1, T = 2, density
    s = 3, slack score. The weights depend only on the history of choices (and on D), so
    they are computed once per history and the draws of many runs are made at once. The
    output is the history of chosen vertices (16 outcomes, audited by a histogram of
    likelihood ratios). Claim: privkit's tightest epsilon for ``Repeat(Exponential, 2)``
    at ``delta``, calibrated to ``epsilon``.
    """
    from privkit import tightest

    from ._lp_svm_forms import hard_margin_lp
    from .private_lp import dense_projection

    n, steps, s, opt = 6, 2, 3.0, 1.0
    sens = score_sensitivity("slack", density=s, optimum=opt)
    step = calibrate_step_epsilon(epsilon=epsilon, delta=delta, n_iterations=steps,
                                  sensitivity=sens)
    mechanism = step_mechanism(step, sens)
    eta = math.sqrt(math.log(n) / steps)
    rows = np.tile([1.0, 0.0], (n, 1))  # rows y_i x_i
    A, b, _ = hard_margin_lp(rows, np.ones(n))
    m = A.shape[1]

    def scores(log_weights: NDArray[np.float64], inserted: bool) -> NDArray[np.float64]:
        p = dense_projection(np.exp(log_weights - log_weights.max()), s)
        u: NDArray[np.float64] = -(p @ A) * opt
        if inserted:  # the record at the bound: the rarest vertex up, the others down
            target = int(np.argmin(u))
            u = u - sens
            u[target] += 2.0 * sens
        return u

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        inserted = bool(data["inserted"])
        weights: dict[int, NDArray[np.float64]] = {0: np.zeros(n)}
        code = np.zeros(size, dtype=np.int64)
        for _ in range(steps):
            choice = np.empty(size, dtype=np.int64)
            for key in np.unique(code):
                here = code == key
                choice[here] = mechanism.simulate(scores(weights[int(key)], inserted),
                                                  rng=rng, size=int(here.sum()))
            code = code * m + choice
            grown = {}
            for key in np.unique(code):
                parent, j = divmod(int(key), m)
                slack = b - A[:, j] * opt
                loss = np.clip(slack / (2.0 * (opt + 1.0)) + 0.5, 0.0, 1.0)
                grown[int(key)] = weights[parent] - eta * loss
            weights = grown
        return code

    claim = tightest(Repeat(mechanism, steps), delta=delta).epsilon
    pair = NeighbouringPair(first={"inserted": False}, second={"inserted": True},
                            relation=R, description="score insertion at the declared "
                            "sensitivity, every step")
    return AuditCase(system, pair, claim, delta, threat_model=LP_SVM_THREAT)


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
def _lp_svm_dmw_e2e(*, epsilon: float = 1.0, delta: float = 0.0) -> AuditCase:
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
    claim = pilot_claim(make, (X, y), delta=GAUSS_DELTA)
    return end_to_end_case(
        fit_system(make, lambda m: m.choices_), (X, y), (X, flipped), R,
        epsilon=claim, delta=GAUSS_DELTA,
        what="LPSVMClassifier's released choices_ (the vertex chosen)",
        how="seven one-feature rows, three with y x = 1 and four with y x = -1, the first's label "
            "flipped; count score with margin 1, density 1, T = 1, opt_share 0.02; calibrated at "
            f"({GAUSS_EPSILON}, {GAUSS_DELTA}), claim: its guarantee_ at delta {GAUSS_DELTA}. The "
            "flip moves the step's scores by the declared sensitivity 1/s in both directions",
        fits=FITS)
