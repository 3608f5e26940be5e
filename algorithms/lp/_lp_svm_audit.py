"""The white-box audit case of the LP-SVM's dense multiplicative weights (score
insertion), registered as ``lp_svm_dmw`` for ``privkit audit``.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   Moved from :mod:`privkit.algorithms.lp.lp_svm` (which still exports ``audit_case``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

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
    "3 OPT/s, up for the vertex least likely on D and down for the others; the other "
    "rows' scores and the multiplicative weights are the DMW run's on D (computed once "
    "per history). A real row with its label flipped moves the first step's scores by "
    "2 OPT p_0 = 1/3 of the declared bound here (p uniform over 6 rows); that black-box "
    "pair certified 0.17 of the claim")


def audit_case(epsilon: float, delta: float = 1e-5) -> Any:
    """The DMW iterations of the LP-SVM under score insertion, for ``privkit audit``.

    Hsu, Roth, Roughgarden, Ullman 2014 ("Privately solving linear programs"), Algorithm
    DenseMultiplicativeWeights: each iteration picks a vertex ``x_j = OPT e_j`` of the
    cost polytope by the exponential mechanism on the scores ``-(p . A_j) OPT`` of the
    current dense distribution ``p`` over constraints, then updates the weights of the
    constraints by their losses. The privacy analysis (privkit's accountant on
    ``Repeat(Exponential, T)``) only assumes that one row moves each step's scores by at
    most the declared sensitivity ``3 OPT / s`` in L-infinity (:func:`score_sensitivity`),
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
    from privkit.audits.pairs import NeighbouringPair
    from privkit.audits.registry import AuditCase

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
