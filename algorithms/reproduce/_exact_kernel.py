"""Park 2022's SVM OUTPUT and SVM SEMI as the thesis ran them: with the exact RBF kernel
(its section 6.3 and 7.3: only the proposed method and SVM WEIGHT use the 400 random
features), for ``privkit reproduce park2022``.

The SVM: one-vs-rest hinge SVMs without intercept in the kernel's feature space H,
``min_w 1/2 ||w||_H^2 + nu sum_i hinge(s_i <w, phi(x_i)>)`` (nu = C/n, Table 7.1), by
dual coordinate descent on the precomputed kernel matrix (Hsieh, Chang, Lin, Keerthi,
Sundararajan, "A dual coordinate descent method for large-scale linear SVM", ICML 2008,
Algorithm 1, with ``<phi(x_i), phi(x_j)> = K_ij``), all problems in one sweep, to a
largest projected-gradient violation of ``TOL``. The decision value of a point z is
``f(z) = sum_i beta_i s_i K(z, x_i)``.

What each releases and privkit's guarantee (replace-one, n public, as the thesis):

* **SVM OUTPUT** (Jain, Thakurta, "Differentially private learning with kernels", ICML
  2013, interactive setting): the publisher keeps the training rows and answers each
  query z with Laplace noise on its c decision values; the thesis releases nothing else
  (its section 6.3: "the algorithm should use train data for inference, thus cannot
  publish parameters alone"). The RKHS has ``K(z, z) = 1``, the objective is 1-strongly
  convex in H and a changed record moves one ``nu``-Lipschitz term, so
  ``||w_D - w_D'||_H <= 2 nu`` and each decision value moves by at most ``2 nu`` (the
  argument of :mod:`privkit.algorithms.svdd.svm_baselines`, which never uses the dimension of
  the feature space): one query's c values have L1 sensitivity ``2 nu c``. The thesis
  charges epsilon **per query**: m test queries are ``m epsilon``-DP by sequential
  composition, and that total is privkit's guarantee for the row (for Table 7.3's
  shuttle: m = 609 at 10%, 1,827 at 30%, so the thesis' "epsilon 0.01" is privkit's
  6.09 and 18.27). The bound needs the exact minimiser of an SVM **without intercept**;
  an intercept (scikit-learn's SVC has one) has no such stability bound and then no
  finite guarantee is proven. The solver's residual (``TOL``) is not charged, as for
  liblinear in :mod:`privkit.algorithms.svdd.svm_baselines`.
* **SVM SEMI** (Jain, Thakurta 2013, semi-interactive): the user hands over the test
  points Z (public); the publisher adds Gaussian noise to the decision values on Z
  (L2 sensitivity ``2 nu ||Phi_Z||_op = 2 nu sqrt(lambda_max(K_ZZ))`` per problem, the
  c problems calibrated jointly to ``(epsilon, delta = 1/n)`` as
  :meth:`privkit.algorithms.svdd.svm_baselines.SVMSemiClassifier.plan` does) and releases the
  minimum-norm least-squares fit ``w = sum_j alpha_j phi(z_j)``, ``alpha = K_ZZ^+
  noisy``: a post-processing of the Gaussian release on public points, so
  ``(epsilon, 1/n)``-DP, with the same exact-minimiser, no-intercept condition.
* ``epsilon=None``: no noise (the thesis' "non-private" column).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray

__all__ = ["TOL", "ExactKernelOutput", "ExactKernelSemi", "kernel_svm_ovr", "rbf"]

#: Largest projected-gradient violation of the dual at which the descent stops (libsvm's
#: default stopping tolerance).
TOL = 1e-3
MAX_EPOCHS = 2000


def rbf(A: NDArray[np.float64], B: NDArray[np.float64], gamma: float) -> NDArray[np.float64]:
    """``exp(-gamma ||a - b||^2)`` for every row pair (the thesis' kernel)."""
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    K: NDArray[np.float64] = np.exp(-gamma * np.maximum(sq, 0.0))
    return K


def kernel_svm_ovr(K: NDArray[np.float64], S: NDArray[np.float64], nu: float,
                   tol: float = TOL) -> NDArray[np.float64]:
    """Dual coefficients ``beta_ik s_ik`` (n x k) of the k bias-free hinge SVMs with signs
    ``S`` (n x k, +-1) on the kernel matrix ``K`` (module docstring): cyclic coordinate
    descent over the rows in a fixed public order, every problem at once."""
    n, k = S.shape
    beta = np.zeros((n, k))
    F = np.zeros((n, k))  # decision values on the training rows
    diag = np.maximum(np.diag(K).copy(), 1e-12)

    def violation(G: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        """The projected gradient's largest entry per row (0 where the box is optimal)."""
        pg = np.where(b <= 0.0, np.minimum(G, 0.0), np.where(b >= nu, np.maximum(G, 0.0), G))
        out: NDArray[np.float64] = np.abs(pg).max(axis=-1)
        return out

    for _ in range(MAX_EPOCHS):
        # the rows whose projected gradient exceeds the tolerance at the epoch's start are
        # swept in order (the others are optimal to the tolerance and are checked again
        # at the next epoch); no violating row left: converged
        rows = np.flatnonzero(violation(S * F - 1.0, beta) > tol)
        if rows.size == 0:
            break
        for i in rows:
            g = S[i] * F[i] - 1.0  # the dual objective's gradient in beta_i
            b = beta[i]
            new = np.clip(b - g / diag[i], 0.0, nu)
            step = (new - b) * S[i]
            if not step.any():
                continue
            beta[i] = new
            F += np.outer(K[i], step)
    coef: NDArray[np.float64] = beta * S
    return coef


def _signs(codes: NDArray[np.int64], c: int) -> NDArray[np.float64]:
    """+-1 targets of the one-vs-rest problems (one problem for two classes)."""
    if c == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(c)[None, :], 1.0, -1.0)


def _labels(scores: NDArray[np.float64], classes: NDArray[Any]) -> NDArray[Any]:
    picks = (scores[:, 0] > 0).astype(int) if scores.shape[1] == 1 else np.argmax(scores, 1)
    out: NDArray[Any] = classes[picks]
    return out


class _ExactKernelSVM:
    """The shared fit: the k bias-free SVMs on the exact kernel (module docstring)."""

    def __init__(self, *, nu: float, gamma: float, classes: Any) -> None:
        self.nu, self.gamma = nu, gamma
        self.classes = np.asarray(classes)

    def fit(self, X: NDArray[np.float64], y: NDArray[Any]) -> Self:
        codes = np.searchsorted(self.classes, y)
        self._X = X
        self._coef = kernel_svm_ovr(rbf(X, X, self.gamma), _signs(codes, self.classes.size),
                                    self.nu)
        return self

    def share(self, other: _ExactKernelSVM) -> bool:
        """Take ``other``'s fitted SVM when its (nu, gamma, classes) are these (Table 7.1
        gives SEMI and OUTPUT the same values on most data sets); whether it did."""
        same = (other.nu, other.gamma) == (self.nu, self.gamma) and np.array_equal(
            other.classes, self.classes)
        if same:
            self._X, self._coef = other._X, other._coef
        return same

    def decision(self, Q: NDArray[np.float64]) -> NDArray[np.float64]:
        """The noise-free decision values of the queries (n_queries x k)."""
        scores: NDArray[np.float64] = rbf(Q, self._X, self.gamma) @ self._coef
        return scores


class ExactKernelOutput(_ExactKernelSVM):
    """SVM OUTPUT on the exact kernel (module docstring): ``predict(Q, epsilon, rng)``
    answers each query with Laplace noise of scale ``2 nu k / epsilon`` on its k values
    (``epsilon`` per query, the thesis' accounting; ``None``: no noise)."""

    def predict(self, Q: NDArray[np.float64], epsilon: float | None,
                rng: np.random.Generator) -> NDArray[Any]:
        from privkit.mechanisms import Laplace
        from privkit.neighbouring import Neighbouring, Norm, Sensitivity

        scores = self.decision(Q)
        if epsilon is not None:
            k = scores.shape[1]
            sens = Sensitivity(value=2.0 * self.nu * k, norm=Norm.L1,
                               relation=Neighbouring.REPLACE_ONE)
            one = Laplace.for_epsilon(epsilon, sensitivity=sens)
            scores = np.array([one.release(s, rng=rng) for s in scores])
        return _labels(scores, self.classes)

    @staticmethod
    def guarantee_epsilon(epsilon: float, n_queries: int) -> float:
        """privkit's guarantee for ``n_queries`` answers at ``epsilon`` each (pure DP)."""
        return epsilon * n_queries


class ExactKernelSemi(_ExactKernelSVM):
    """SVM SEMI on the exact kernel (module docstring): ``release(Z, epsilon, delta, rng)``
    returns the published ``alpha`` on the public Z; ``predict(Q, alpha)`` labels queries
    with ``w = sum_j alpha_j phi(z_j)``."""

    def prepare(self, Z: NDArray[np.float64]) -> None:
        """The public side, once per Z: ``K_ZZ``'s eigen-decomposition (its operator norm
        for the sensitivity, its pseudo-inverse for the least-squares fit) and the noise-
        free decision values on Z."""
        self._Z = Z
        vals, vecs = np.linalg.eigh(rbf(Z, Z, self.gamma))
        self._vals, self._vecs = vals, vecs
        self._fz = self.decision(Z)

    def release(self, epsilon: float | None, delta: float,
                rng: np.random.Generator) -> NDArray[np.float64]:
        from privkit.mechanisms import Gaussian
        from privkit.neighbouring import Neighbouring, Norm, Sensitivity

        noisy = self._fz
        if epsilon is not None:
            k = noisy.shape[1]
            op = math.sqrt(max(float(self._vals[-1]), 0.0))
            sens = Sensitivity(value=2.0 * self.nu * op, norm=Norm.L2,
                               relation=Neighbouring.REPLACE_ONE)
            whole = Gaussian.for_approx_dp(epsilon=epsilon, delta=delta, sensitivity=sens)
            one = Gaussian(noise_scale=math.sqrt(k) * whole.noise_scale, sensitivity=sens)
            noisy = np.column_stack([one.release(noisy[:, j], rng=rng) for j in range(k)])
        keep = self._vals > np.finfo(np.float64).eps * len(self._vals) * self._vals[-1]
        V = self._vecs[:, keep]
        alpha: NDArray[np.float64] = V @ ((V.T @ noisy) / self._vals[keep][:, None])
        return alpha

    def predict(self, Q: NDArray[np.float64], alpha: NDArray[np.float64]) -> NDArray[Any]:
        return _labels(rbf(Q, self._Z, self.gamma) @ alpha, self.classes)
