"""The LP-SVM as a linear program (van der Reijden 2019, eq. 4-5, after Mangasarian
1998): the soft-margin and hard-margin forms, and the non-private reference solved by
HiGHS.

.. versionadded:: 0.3.0
   Split from :mod:`privkit.algorithms.lp.lp_svm`, which still exports these names.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["hard_margin_lp", "soft_margin_lp", "solve_lp_svm"]


def soft_margin_lp(X: NDArray[np.float64], y: NDArray[np.float64], C: float
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(A, b, c)`` of the soft-margin LP-SVM in standard form (thesis eq. 4-5).

    Variables ``x = [w+, w-, xi]`` (all >= 0); minimise ``sum(w+ + w-) + C sum(xi)``
    subject to ``y_i x_i.(w+ - w-) >= 1 - xi_i``, written ``A x <= b`` with
    ``A = -[diag(y) X, -diag(y) X, I_n]`` and ``b = -1``.
    """
    n, p = X.shape
    YX = y[:, None] * X
    A = -np.hstack([YX, -YX, np.eye(n)])
    c = np.concatenate([np.ones(2 * p), np.full(n, C)])
    return A, -np.ones(n), c


def hard_margin_lp(X: NDArray[np.float64], y: NDArray[np.float64]
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(A, b, c)`` of the hard-margin LP the thesis hands to DMW after OPT (section 2.5):
    ``A = -[diag(y) X, -diag(y) X]``, ``b = -1``, ``c = 1`` (variables ``[w+, w-]``)."""
    p = X.shape[1]
    YX = y[:, None] * X
    return -np.hstack([YX, -YX]), -np.ones(X.shape[0]), np.ones(2 * p)


def solve_lp_svm(X: NDArray[np.float64], y: NDArray[np.float64], C: float = 1.0
                 ) -> tuple[NDArray[np.float64], float]:
    """The non-private soft-margin LP-SVM (thesis eq. 4) solved by HiGHS: ``(w, OPT)``.

    The reference against which the LP formulation is checked; uses
    ``scipy.optimize.linprog(method="highs")`` on :func:`soft_margin_lp` (sparse ``A``).
    """
    from scipy import optimize, sparse

    n, p = X.shape
    YX = y[:, None] * X
    A = -sparse.hstack([sparse.csr_matrix(YX), sparse.csr_matrix(-YX),
                        sparse.identity(n, format="csr")], format="csr")
    c = np.concatenate([np.ones(2 * p), np.full(n, C)])
    result = optimize.linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=(0, None), method="highs")
    if result.status != 0:
        raise RuntimeError(f"HiGHS did not solve the LP-SVM: {result.message}")
    x: NDArray[np.float64] = result.x
    return x[:p] - x[p:2 * p], float(result.fun)
