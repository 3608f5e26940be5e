"""Nyström features for any positive-definite kernel, with a public bound on their norm.

The map is Williams and Seeger's Nyström method ("Using the Nyström method to speed up
kernel machines", NIPS 2000): with landmarks ``z_1..z_K`` and
``[k(z_i, z_j)] = U Sigma U^T``,

    ``phi(x) = Sigma^{+1/2} U^T [k(z_1, x), ..., k(z_K, x)]^T``.

The public norm bound
---------------------
``<phi(x), phi(y)> = k_Z(x)^T K_ZZ^+ k_Z(y)`` is the RKHS inner product of the
orthogonal projections of ``k(x, .)`` and ``k(y, .)`` onto ``span{k(z_i, .)}``, so

    ``||phi(x)||_2^2 = ||P k(x, .)||_H^2 <= ||k(x, .)||_H^2 = k(x, x) <= kappa^2``,

where ``kappa^2 = sup_{||x|| <= r} k(x, x)`` on the public domain (the ball of radius
``data_radius``). Dropping tiny eigenvalues (the pseudo-inverse) projects onto a smaller
subspace, so the bound still holds; :meth:`NystromMap.transform` also clips every row to
``kappa`` so that the bound holds in floating point. For the built-in kernels
(:class:`Kernel`): RBF and Laplacian ``kappa^2 = 1``; polynomial
``(gamma <x, y> + coef0)^degree`` with ``coef0 >= 0``: ``kappa^2 = (gamma r^2 + coef0)^degree``;
linear ``r^2``; a callable kernel needs its bound passed as ``kernel_bound`` (public).

A row with a non-finite entry maps to the zero feature vector (inside the bound).

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   Split from :mod:`privkit.algorithms.kernels.nystrom` (the private pipeline); non-finite rows
   map to the zero feature vector.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

from .._dask_blocks import is_dask_array
from .kmeans import SUB_BLOCK, ball_factors, clip_to_ball, map_row_blocks

__all__ = ["Kernel", "KernelFunction", "NystromMap", "kernel_approximation_error"]


KernelFunction = Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]]


def _sq_dists(A: NDArray[np.float64], B: NDArray[np.float64]) -> NDArray[np.float64]:
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    out: NDArray[np.float64] = np.maximum(sq, 0.0)
    return out


class Kernel:
    """A positive-definite kernel with its public bound ``sup_{||x|| <= r} k(x, x)``.

    Parameters
    ----------
    kind : {"rbf", "laplacian", "poly", "linear"} or callable
        ``rbf``: ``exp(-gamma ||x - y||^2)``; ``laplacian``: ``exp(-gamma ||x - y||_1)``;
        ``poly``: ``(gamma <x, y> + coef0)^degree``; ``linear``: ``<x, y>``; or a callable
        ``k(A, B) -> (len(A), len(B)) matrix`` (it must be positive definite; the
        Nyström map checks its landmark matrix).
    gamma : float or None
        Default ``1 / n_features``.
    degree : int
    coef0 : float
        >= 0 for the polynomial kernel (so that its bound is attained at ``||x|| = r``).
    kernel_bound : float or None
        ``kappa^2 = sup k(x, x)`` over the public domain; required for a callable kernel,
        derived for the built-in ones.
    """

    def __init__(self, kind: str | KernelFunction = "rbf", *, gamma: float | None = None,
                 degree: int = 2, coef0: float = 1.0, kernel_bound: float | None = None
                 ) -> None:
        owner = "Kernel"
        if not callable(kind) and kind not in ("rbf", "laplacian", "poly", "linear"):
            raise check.fail("kernel", kind, "'rbf', 'laplacian', 'poly', 'linear' or a "
                             "callable k(A, B)", owner)
        if gamma is not None:
            check.positive_finite("gamma", gamma, owner)
        check.positive_int("degree", degree, owner)
        check.nonnegative_finite("coef0", coef0, owner)
        if kernel_bound is not None:
            check.positive_finite("kernel_bound", kernel_bound, owner)
        elif callable(kind):
            raise check.fail("kernel_bound", None, "a number >= sup k(x, x) over the public "
                             "domain", owner, "a callable kernel's bound cannot be derived")
        self.kind = kind
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_bound = kernel_bound

    def _gamma(self, d: int) -> float:
        return 1.0 / d if self.gamma is None else float(self.gamma)

    def __call__(self, A: NDArray[np.float64], B: NDArray[np.float64]) -> NDArray[np.float64]:
        d = A.shape[1]
        if callable(self.kind):
            return np.asarray(self.kind(A, B), dtype=np.float64)
        if self.kind == "rbf":
            return np.exp(-self._gamma(d) * _sq_dists(A, B))
        if self.kind == "laplacian":
            l1 = np.abs(A[:, None, :] - B[None, :, :]).sum(-1)
            lap: NDArray[np.float64] = np.exp(-self._gamma(d) * l1)
            return lap
        if self.kind == "poly":
            out: NDArray[np.float64] = (self._gamma(d) * (A @ B.T) + self.coef0) ** self.degree
            return out
        lin: NDArray[np.float64] = A @ B.T
        return lin

    def bound(self, data_radius: float, n_features: int) -> float:
        """``kappa^2 = sup_{||x||_2 <= r} k(x, x)`` (module docstring)."""
        if self.kernel_bound is not None:
            return float(self.kernel_bound)
        r2 = float(data_radius) ** 2
        if self.kind in ("rbf", "laplacian"):
            return 1.0
        if self.kind == "poly":
            return float((self._gamma(n_features) * r2 + self.coef0) ** self.degree)
        return r2

    def __repr__(self) -> str:
        name = getattr(self.kind, "__name__", self.kind)
        return (f"Kernel({name!r}, gamma={self.gamma}, degree={self.degree}, "
                f"coef0={self.coef0}, kernel_bound={self.kernel_bound})")


class NystromMap:
    """``phi(x) = Sigma^{+1/2} U^T k_Z(x)`` for landmarks Z (Williams and Seeger 2000).

    Parameters
    ----------
    landmarks : ndarray (K, d)
        Public points (private centroids, or a subsample: then the map itself reveals
        those records and is not private).
    kernel : Kernel
    data_radius : float
        The public bound r on ``||x||``; inputs are clipped to it, and ``norm_bound`` is
        ``sqrt(kernel.bound(r, d))``.
    rcond : float
        Eigenvalues below ``rcond * largest`` are dropped (the pseudo-inverse).
    chunk_size : int
        Row block size for numpy and dask inputs.

    Raises
    ------
    InvalidParameterError
        If the landmark kernel matrix has an eigenvalue below ``-1e-8 * largest``: the
        kernel is not positive semi-definite.
    """

    def __init__(self, landmarks: NDArray[np.float64], kernel: Kernel, *, data_radius: float,
                 rcond: float = 1e-10, chunk_size: int = 65536) -> None:
        owner = "NystromMap"
        Z = np.asarray(landmarks, dtype=np.float64)
        if Z.ndim != 2 or Z.shape[0] < 1:
            raise check.fail("landmarks", f"an array of shape {Z.shape}", "a (K, d) array",
                             owner)
        self.data_radius = check.positive_finite("data_radius", data_radius, owner)
        self.kernel = kernel
        self.landmarks = Z
        self.chunk_size = check.positive_int("chunk_size", chunk_size, owner)
        K = kernel(Z, Z)
        K = 0.5 * (K + K.T)
        values, vectors = np.linalg.eigh(K)
        top = float(max(values.max(), 0.0))
        if values.min() < -1e-8 * max(top, 1e-300):
            raise check.fail("kernel", kernel, "a positive semi-definite kernel", owner,
                             f"its landmark matrix has eigenvalue {values.min():.3g}")
        keep = values > rcond * top
        #: ``Sigma^{+1/2} U^T`` restricted to the kept eigenvalues: shape (rank, K).
        self.projection: NDArray[np.float64] = (vectors[:, keep] / np.sqrt(values[keep])).T
        self.n_components = int(keep.sum())
        self.norm_bound = math.sqrt(kernel.bound(self.data_radius, Z.shape[1]))

    def _transform_block(self, X: NDArray[Any]) -> NDArray[np.float64]:
        X = np.asarray(X, dtype=np.float64)
        out: NDArray[np.float64] = np.empty((X.shape[0], self.n_components))
        for i in range(0, X.shape[0], SUB_BLOCK):  # cache-sized kernel blocks
            A = X[i:i + SUB_BLOCK]
            factor = ball_factors(A, self.data_radius)
            if np.any(factor < 1.0):  # copy only when some row lies outside the ball
                A = clip_to_ball(A, self.data_radius)
            F = np.matmul(self.kernel(A, self.landmarks), self.projection.T,
                          out=out[i:i + SUB_BLOCK])
            scale = ball_factors(F, self.norm_bound)
            scale[factor == 0.0] = 0.0  # a non-finite input row: the zero feature vector
            F *= scale[:, None]
            if not scale.all():  # 0 * nan is nan: zero those rows outright
                F[scale == 0.0] = 0.0
        return out

    def transform(self, X: Any) -> Any:
        """phi(X): numpy in, numpy out; dask in, lazy dask out (same row blocks).

        Rows beyond ``data_radius`` are clipped onto it; a row with a non-finite entry
        maps to the zero feature vector (inside the feature bound, so the sensitivity
        analyses that use ``norm_bound`` hold for it). Estimators validate query rows
        before they call this; during ``fit`` it is the stated rule for private rows."""
        if not is_dask_array(X):
            X = check.withheld(lambda: np.asarray(X, dtype=np.float64), "X",
                               "an array of real numbers", "NystromMap.transform")
        return map_row_blocks(X, self._transform_block, self.n_components, self.chunk_size)

    @classmethod
    def from_subsample(cls, X: Any, n_landmarks: int, kernel: Kernel, *, data_radius: float,
                       random_state: Any = None) -> NystromMap:
        """Uniform-subsample Nyström (Williams and Seeger 2000). NOT private: the landmarks
        are records of X and are part of the released map."""
        rng = np.random.default_rng(random_state)
        idx = np.sort(rng.choice(X.shape[0], size=n_landmarks, replace=False))
        Z = np.asarray(X[idx], dtype=np.float64)
        return cls(clip_to_ball(Z, data_radius), kernel, data_radius=data_radius)


def kernel_approximation_error(X: NDArray[np.float64], features: NDArray[np.float64],
                               kernel: Kernel, *, ord: Literal["fro"] | int = "fro") -> float:
    """``||K - Phi Phi^T|| / ||K||`` on the rows of X (``ord``: "fro" or 2)."""
    K = kernel(X, X)
    E = K - features @ features.T
    return float(np.linalg.norm(E, ord) / np.linalg.norm(K, ord))
