"""The SVDD dual as Park (2022) solved it: cvxopt's dense quadratic program, for timing
privkit's solver against the thesis' own solver family in the same process.

Park 2022 eq. 4.2 on feature rows ``Phi`` of equal norm (random Fourier features):
``min beta^T K beta`` over ``0 <= beta <= nu``, ``sum beta = 1``, with the dense Gram
matrix ``K = Phi Phi^T`` (n x n) and the box written as 2n dense inequalities, which is
what ``cvxopt.solvers.qp`` with dense matrices does (Andersen, Dahl, Vandenberghe,
"CVXOPT: a Python package for convex optimization"). Its memory grows as n^2, so the
runner times it only up to ``MAX_ROWS`` rows.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

__all__ = ["MAX_ROWS", "dense_qp_svdd", "time_svdd_solvers"]

#: The largest n the dense QP is run on (its matrices take about 24 n^2 bytes).
MAX_ROWS = 2500


def dense_qp_svdd(Phi: NDArray[np.float64], nu: float) -> NDArray[np.float64]:
    """The dual weights ``beta`` by cvxopt's dense QP (module docstring); ``n nu >= 1``."""
    from cvxopt import matrix, solvers

    n = Phi.shape[0]
    K = Phi @ Phi.T
    P = matrix(2.0 * K)
    q = matrix(np.zeros(n))
    G = matrix(np.vstack([np.eye(n), -np.eye(n)]))
    h = matrix(np.concatenate([np.full(n, nu), np.zeros(n)]))
    A = matrix(np.ones((1, n)))
    b = matrix(np.ones(1))
    solvers.options["show_progress"] = False
    solution = solvers.qp(P, q, G, h, A, b)
    beta: NDArray[np.float64] = np.asarray(solution["x"]).ravel()
    return beta


def time_svdd_solvers(Phi: NDArray[np.float64], nu: float) -> tuple[float, float, float]:
    """CPU seconds of privkit's SVDD solver and of the dense QP on the same problem, and the
    relative difference of the two centres' squared norms (the objective)."""
    from privkit.algorithms.svdd._svdd_dual import svdd_centre

    start = time.process_time()
    ours = svdd_centre(Phi, nu)
    privkit_seconds = time.process_time() - start
    start = time.process_time()
    beta = dense_qp_svdd(Phi, nu)
    qp_seconds = time.process_time() - start
    centre = Phi.T @ beta
    a = np.asarray(ours.centre, dtype=np.float64)
    gap = abs(float(a @ a) - float(centre @ centre)) / max(float(centre @ centre), 1e-300)
    return privkit_seconds, qp_seconds, gap
