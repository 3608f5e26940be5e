"""The solvers of privkit's regularised ERM: L-BFGS polished by Newton steps, to an L2
gradient norm the caller chooses.

Both private ERM algorithms (:mod:`privkit.algorithms.linear.erm`) release a function of an
approximate minimiser, and both account for how approximate it is through the gradient
tolerance ``tol``: a point whose gradient has L2 norm at most ``tol`` is within
``tol / Lambda`` of the exact minimiser of a Lambda-strongly convex objective (Boyd,
Vandenberghe, *Convex Optimization*, eq. 9.11). So the solvers check that norm themselves
and never report anything else about their run: no iteration count, no convergence flag.
On rows of norm at most 1 the objectives are smooth and strongly convex, and every
tolerance the estimators accept (at least :data:`MIN_TOL`) is reached for every such
dataset; the error raised otherwise names only ``tol``.

.. versionadded:: 0.3.0
   Split from :mod:`privkit.algorithms.linear.erm`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._losses import MarginLoss

__all__ = ["MIN_TOL", "NEWTON_FROM", "NEWTON_MAX_UNKNOWNS", "solve_erm", "solve_multinomial"]

#: The smallest gradient tolerance the private estimators accept: far above the
#: floating-point floor of the gradient of a mean of losses of rows of norm at most 1
#: (about 1e-16 relative), so a solve to it succeeds on every dataset in the domain.
MIN_TOL = 1e-12

#: Largest number of unknowns for which the solvers polish with Newton steps (a dense
#: Hessian costs n d^2 to build and d^3 to factor); above it, L-BFGS alone.
NEWTON_MAX_UNKNOWNS = 400
#: The L2 gradient norm at which L-BFGS hands over to Newton steps.
NEWTON_FROM = 1e-4


def _lbfgs(objective: Any, start: NDArray[np.float64], tol: float,
           hessian: Any = None) -> NDArray[np.float64]:
    """A point whose gradient has L2 norm at most ``tol`` (checked, not assumed: scipy's
    ``gtol`` bounds the largest component only).

    With a ``hessian``: L-BFGS to ``max(tol, NEWTON_FROM)``, then Newton steps, each kept only if
    it lowers the gradient norm (halved up to three times if not: the Huber loss's
    curvature jumps). Near the minimiser of a smooth strongly convex objective Newton's
    method converges quadratically (Boyd, Vandenberghe, *Convex Optimization*,
    sec. 9.5.3), so a tight ``tol`` costs one or two Hessian solves instead of hundreds of
    L-BFGS iterations. Without one (or if Newton stalls): L-BFGS with ``gtol`` lowered
    tenfold until the L2 gradient norm is at most ``tol``.
    """
    from scipy import optimize

    def gradient_norm(w: NDArray[np.float64]) -> float:
        return float(np.linalg.norm(objective(w)[1]))

    def run_lbfgs(w: NDArray[np.float64], target: float) -> NDArray[np.float64]:
        gtol = target / math.sqrt(max(w.size, 1))
        for _ in range(4):
            result = optimize.minimize(objective, w, jac=True, method="L-BFGS-B",
                                       options={"gtol": gtol, "ftol": 0.0,
                                                "maxiter": 20_000, "maxcor": 20})
            w = np.asarray(result.x, dtype=np.float64)
            if gradient_norm(w) <= target:
                return w
            gtol /= 10.0
        return w

    w = run_lbfgs(start, tol if hessian is None else max(tol, NEWTON_FROM))
    if hessian is not None:
        norm = gradient_norm(w)
        for _ in range(30):
            if norm <= tol:
                return w
            step = np.linalg.solve(hessian(w), objective(w)[1])
            for fraction in (1.0, 0.5, 0.25, 0.125):   # the Huber loss's curvature jumps
                candidate = w - fraction * step
                candidate_norm = gradient_norm(candidate)
                if candidate_norm < norm:
                    break
            if not candidate_norm < norm:
                break
            w, norm = candidate, candidate_norm
        w = run_lbfgs(w, tol)
    if gradient_norm(w) <= tol:
        return w
    raise RuntimeError(f"the ERM solver did not reach the gradient tolerance tol={tol}")


def solve_erm(X: Any, y: NDArray[np.float64], loss: MarginLoss, regularization: float,
              linear: NDArray[np.float64] | None = None, tol: float = 1e-10
              ) -> NDArray[np.float64]:
    """argmin_w ``regularization/2 ||w||^2 + mean(loss(y X w)) + linear . w`` by L-BFGS,
    to an L2 gradient norm of at most ``tol`` (so, by strong convexity, within
    ``tol / regularization`` of the minimiser; Boyd, Vandenberghe, *Convex Optimization*,
    eq. 9.11). ``X`` may be a dense array or a scipy sparse matrix.

    The tests check the minimiser against cvxpy to solver tolerance.
    """
    n, d = X.shape
    b = np.zeros(d) if linear is None else linear

    def objective(w: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        z = y * (X @ w)
        value = float(0.5 * regularization * w @ w + np.mean(loss.value(z)) + b @ w)
        grad = regularization * w + X.T @ (loss.derivative(z) * y) / n + b
        return value, np.asarray(grad, dtype=np.float64)

    def hessian(w: NDArray[np.float64]) -> NDArray[np.float64]:
        curvature = loss.second_derivative(y * (X @ w)) / n
        weighted = X.multiply(curvature[:, None]) if hasattr(X, "multiply") else (
            X * curvature[:, None])
        gram = X.T @ weighted
        gram = gram.toarray() if hasattr(gram, "toarray") else np.asarray(gram)
        H: NDArray[np.float64] = gram + regularization * np.eye(d)
        return H

    return _lbfgs(objective, np.zeros(d), tol,
                  hessian if d <= NEWTON_MAX_UNKNOWNS else None)


def solve_multinomial(X: Any, labels: NDArray[np.int64], n_classes: int,
                      regularization: float, tol: float = 1e-10) -> NDArray[np.float64]:
    """argmin_W ``regularization/2 ||W||_F^2 + mean_i(logsumexp(W x_i) - w_{y_i} . x_i)``
    (multinomial logistic regression, one row of W per class), to an L2 gradient norm of
    at most ``tol``; ``labels`` are class indices in ``range(n_classes)``."""
    from scipy.special import logsumexp, softmax

    n, d = X.shape
    k = n_classes
    onehot = np.zeros((n, k))
    onehot[np.arange(n), labels] = 1.0

    def objective(flat: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        W = flat.reshape(k, d)
        scores = np.asarray(X @ W.T)
        value = float(0.5 * regularization * flat @ flat
                      + np.mean(logsumexp(scores, axis=1) - np.sum(scores * onehot, axis=1)))
        residual = softmax(scores, axis=1) - onehot
        grad = regularization * W + np.asarray((X.T @ residual).T) / n
        return value, grad.ravel()

    def hessian(flat: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Lambda I + 1/n sum_i (diag(p_i) - p_i p_i^T) (x) x_i x_i^T`` (dense rows)."""
        dense = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        p = softmax(dense @ flat.reshape(k, d).T, axis=1)
        outer = np.einsum("ia,ij,il->ajl", p, dense, dense)
        H = np.einsum("ab,ajl->ajbl", np.eye(k), outer)
        H -= np.einsum("ia,ib,ij,il->ajbl", p, p, dense, dense)
        full: NDArray[np.float64] = H.reshape(k * d, k * d) / n + regularization * np.eye(k * d)
        return full

    return _lbfgs(objective, np.zeros(k * d), tol,
                  hessian if k * d <= NEWTON_MAX_UNKNOWNS else None).reshape(k, d)
