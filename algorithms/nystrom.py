"""Nyström features for any positive-definite kernel, and private kernel learning with
DP K-means Nyström features.

B. Lee, J. Ahn, C. Park, "Differential privacy in scalable general kernel learning via
K-means Nyström random features" (poster, KAIST): (1) an epsilon/2-DP K-means gives K
centroids ``z_1..z_K``; (2) with ``[k(z_i, z_j)] = U Sigma U^T``,

    ``phi(x) = Sigma^{+1/2} U^T [k(z_1, x), ..., k(z_K, x)]^T``

(post-processing of the centroids); (3) an epsilon/2-DP linear learner on ``phi(x)``.
The map is Williams and Seeger's Nyström method ("Using the Nyström method to speed up
kernel machines", NIPS 2000) with the landmarks of Zhang, Tsang and Kwok ("Improved
Nyström low-rank approximation and error analysis", ICML 2008: K-means centres).

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

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.plan import Block, PostProcess, Sequential

from .kmeans import (
    SUB_BLOCK,
    DPKMeans,
    ball_factors,
    clip_to_ball,
    is_dask_array,
    map_row_blocks,
)

__all__ = [
    "KMeansNystromClassifier",
    "Kernel",
    "NystromMap",
    "kernel_approximation_error",
]

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
                A = A * factor[:, None]
            F = np.matmul(self.kernel(A, self.landmarks), self.projection.T,
                          out=out[i:i + SUB_BLOCK])
            F *= ball_factors(F, self.norm_bound)[:, None]
        return out

    def transform(self, X: Any) -> Any:
        """phi(X): numpy in, numpy out; dask in, lazy dask out (same row blocks)."""
        if not is_dask_array(X):
            X = np.asarray(X, dtype=np.float64)
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


class KMeansNystromClassifier(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Private kernel classification: DP K-means -> Nyström map -> private linear learner.

    Lee, Ahn and Park's pipeline (module docstring) with :class:`DPKMeans` (DPLloyd,
    Gaussian noise) and privkit's private linear learners on the features.

    Parameters
    ----------
    n_components : int
        K, the number of centroids (and features).
    epsilon, delta : float
        The total budget, split between DP K-means (at ``delta``) and the learner (pure)
        in the ratio ``kmeans_share : 1 - kmeans_share`` (the poster's split is 1/2) and
        scaled so that privkit's tightest accountant certifies the whole plan at exactly
        ``(epsilon, delta)`` (to 1e-4; :func:`privkit.algorithms.pca.calibrated_shares`):
        composing the Gaussian K-means with the learner is tighter than the sum, so each
        stage gets a little more than its share. ``delta = 0`` runs the pure-DP (Laplace)
        DPLloyd, as the poster's claim, where the sum is exact.
    kernel, gamma, degree, coef0, kernel_bound
        The kernel (:class:`Kernel`).
    data_radius : float
        Public bound r on ``||x||_2`` (rows beyond it are clipped).
    n_iter, count_share : DP K-means' parameters (:class:`DPKMeans`).
    learner : {"output", "objective"}
        :class:`OutputPerturbationClassifier` (default) or
        :class:`ObjectivePerturbationClassifier`
        (REPLACE_ONE, pure DP), with ``row_norm_bound = kappa`` (the public bound on
        ``||phi(x)||``).
    loss, regularization, huber_h, tol : the learner's parameters (output perturbation's
        sensitivity accounts for the solver tolerance ``tol``).
    chunk_size : int
    random_state : int or None

    Notes
    -----
    Privacy: the plan is ``Sequential(PostProcess(Repeat(Sequential(sum, count), T)),
    learner)``: K-means releases centroids; the Nyström map is a function of the centroids
    (post-processing); the learner runs on ``phi(x_i)``, whose norm is at most kappa for
    *every* x (not only the data), so its sensitivity analysis (Chaudhuri, Monteleoni,
    Sarwate 2011, Theorems 6 and 9, for rows of norm <= 1 after dividing by kappa) holds
    whatever the centroids are; adaptive sequential composition covers the data reuse.
    ``fit`` accepts dask arrays: K-means and the features run blockwise on the cluster,
    and the features (n x K) are gathered for the learner.

    ``paper_claim_`` is the poster's ``epsilon/2 + epsilon/2``: ``PureDP(epsilon)``; this
    implementation's K-means uses Gaussian noise (tighter composition over iterations), so
    its guarantee is approximate DP at ``delta``, as ``guarantee_`` says.
    """

    def __init__(self, n_components: int = 64, *, epsilon: float = 1.0, delta: float = 1e-5,
                 kernel: Any = "rbf", gamma: float | None = None, degree: int = 2,
                 coef0: float = 1.0, kernel_bound: float | None = None,
                 data_radius: float = 1.0, n_iter: int = 5, count_share: float = 0.2,
                 kmeans_share: float = 0.5, learner: str = "output", loss: str = "huber",
                 regularization: float = 1e-3, huber_h: float = 0.5, tol: float = 1e-8,
                 chunk_size: int = 65536, random_state: Any = None) -> None:
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_bound = kernel_bound
        self.data_radius = data_radius
        self.n_iter = n_iter
        self.count_share = count_share
        self.kmeans_share = kmeans_share
        self.learner = learner
        self.loss = loss
        self.regularization = regularization
        self.huber_h = huber_h
        self.tol = tol
        self.chunk_size = chunk_size
        self.random_state = random_state

    # -- components ---------------------------------------------------------------------------

    def _kernel(self) -> Kernel:
        return Kernel(self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                      kernel_bound=self.kernel_bound)

    def _budget(self, n_samples: int, n_features: int, n_classes: int) -> tuple[float, float]:
        """(K-means epsilon, learner epsilon): the ``kmeans_share`` split scaled so the
        tightest accountant spends exactly ``(epsilon, delta)`` (see ``epsilon``)."""
        from .pca import calibrated_shares

        owner = type(self).__name__
        share = check.open_unit("kmeans_share", self.kmeans_share, owner)
        epsilon = check.positive_finite("epsilon", self.epsilon, owner)
        kappa = self._kappa(n_features)
        return calibrated_shares(epsilon, self.delta, share, lambda e1, e2: self._plan(
            n_samples, n_features, n_classes, kappa, e1, e2))

    def _kappa(self, n_features: int) -> float:
        """The public bound on the feature norm (the kernel's bound on the data ball)."""
        radius = check.positive_finite("data_radius", self.data_radius, type(self).__name__)
        return math.sqrt(self._kernel().bound(radius, n_features))

    def _plan(self, n_samples: int, n_features: int, n_classes: int, kappa: float,
              kmeans_epsilon: float, learner_epsilon: float) -> Block:
        km = self._kmeans(None, kmeans_epsilon).plan(n_samples=n_samples,
                                                     n_features=n_features)
        learn = self._learner(kappa, None, learner_epsilon, np.arange(n_classes)).plan(
            n_samples=n_samples, n_features=self.n_components)
        return Sequential(PostProcess(km, "Nyström map of the private centroids"), learn)

    def _kmeans(self, seed: Any, epsilon: float) -> DPKMeans:
        return DPKMeans(self.n_components, epsilon=epsilon, delta=self.delta,
                        n_iter=self.n_iter, data_radius=self.data_radius,
                        count_share=self.count_share, relation="replace_one",
                        noise="laplace" if self.delta == 0 else "gaussian",
                        chunk_size=self.chunk_size, random_state=seed)

    def _learner(self, kappa: float, seed: Any, epsilon: float, classes: Any) -> Any:
        from .erm import ObjectivePerturbationClassifier, OutputPerturbationClassifier

        learners = {"objective": ObjectivePerturbationClassifier,
                    "output": OutputPerturbationClassifier}
        if self.learner not in learners:
            raise check.fail("learner", self.learner, "'objective' or 'output'",
                             type(self).__name__)
        return learners[self.learner](epsilon=epsilon, classes=classes, loss=self.loss,
                                      huber_h=self.huber_h,
                                      regularization=self.regularization,
                                      row_norm_bound=kappa, tol=self.tol,
                                      random_state=seed)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """The whole pipeline's plan, one tree (see Notes)."""
        return self._plan(n_samples, n_features, n_classes, self._kappa(n_features),
                          *self._budget(n_samples, n_features, n_classes))

    # -- fitting ------------------------------------------------------------------------------

    def fit(self, X: Any, y: Any) -> KMeansNystromClassifier:
        """Fit privately on numpy or dask X (n x d) and labels y (numpy, n)."""
        owner = type(self).__name__
        if not is_dask_array(X):
            X = np.asarray(X, dtype=np.float64)
        if len(X.shape) != 2:
            raise check.fail("X", f"an array of shape {X.shape}", "a 2-D array", owner)
        y = np.asarray(y)
        n, d = (int(v) for v in X.shape)
        if y.shape != (n,):
            raise check.fail("y", f"an array of shape {y.shape}", f"shape ({n},)", owner)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise check.fail("y", f"{self.classes_.size} class", "at least 2 classes", owner)
        k = int(self.classes_.size)
        kmeans_epsilon, learner_epsilon = self._budget(n, d, k)
        plan = self._plan(n, d, k, self._kappa(d), kmeans_epsilon, learner_epsilon)
        seeds = np.random.SeedSequence(self.random_state).spawn(2)
        kernel = self._kernel()
        with Ledger() as ledger:
            km = self._kmeans(np.random.default_rng(seeds[0]), kmeans_epsilon).fit(X)
            fmap = NystromMap(km.cluster_centers_, kernel, data_radius=self.data_radius,
                              chunk_size=self.chunk_size)
            F = fmap.transform(X)
            if is_dask_array(F):
                F = F.compute()
            clf = self._learner(fmap.norm_bound, np.random.default_rng(seeds[1]),
                                learner_epsilon, self.classes_).fit(F, y)
        self.kmeans_ = km
        self.feature_map_ = fmap
        self.linear_ = clf
        self.n_features_in_ = d
        self.plan_ = plan
        self.ledger_ = ledger
        self.guarantee_: Guarantee = tightest(plan, delta=self.delta).guarantee
        self.paper_claim_: Guarantee = PureDP(epsilon=self.epsilon)
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        F = self.feature_map_.transform(X)
        if is_dask_array(F):
            F = F.compute()
        out: NDArray[np.float64] = self.linear_.decision_function(F)
        return out

    def predict(self, X: Any) -> NDArray[Any]:
        from .erm import labels_from_scores

        return labels_from_scores(self.decision_function(X), self.classes_)


def audit_case(epsilon: float, delta: float = 1e-5) -> Any:
    """White-box audit of the K-means Nyström pipeline on its DP K-means stage.

    The pipeline is :class:`KMeansNystromClassifier` with K = 1, one DPLloyd iteration,
    ``kmeans_share = 0.95`` and ``count_share = 0.05`` (so that the observed stage carries
    most of the claim); the claim tested is privkit's tightest epsilon for the *whole*
    pipeline's plan at ``delta`` (what ``guarantee_`` reports).

    Pair (from the privacy analysis in :mod:`privkit.algorithms.kmeans`): four rows in the
    unit disc; the neighbour replaces the first row ``(r, 0)`` by ``(-r, 0)`` (a record at
    the public bound r = 1 replaced by its antipode, both in the same cluster), which moves
    the cluster sum by exactly its declared sensitivity ``2r`` and leaves the counts
    unchanged. The deterministic part (clipping, assignment, exact sums, by the module's
    own :func:`~privkit.algorithms.kmeans.block_statistics`) is computed once per input;
    each draw only redraws the Gaussian noise of the sums through the sum block's
    floating-point-safe ``release``. The statistic is the released sums projected on the
    direction in which the two inputs' exact sums differ (the Gaussian likelihood ratio:
    optimal). Observing the noisy sums is a white box (the pipeline publishes only the
    classifier); the counts (identical in law on the pair), the Nyström map and the
    learner are not observed, so the bound is a marginal of the pipeline's transcript and
    can never exceed the pipeline's true epsilon.
    """
    from privkit.audits.pairs import NeighbouringPair
    from privkit.audits.registry import AuditCase
    from privkit.neighbouring import Neighbouring

    from .kmeans import block_statistics

    radius = 1.0
    first = np.array([[radius, 0.0, 1.0], [0.3, 0.2, 0.0], [-0.1, 0.5, 1.0],
                      [0.0, -0.4, 0.0]])
    second = first.copy()
    second[0, :2] = [-radius, 0.0]
    model = KMeansNystromClassifier(1, epsilon=epsilon, delta=delta, kernel="rbf", gamma=1.0,
                                    data_radius=radius, n_iter=1, kmeans_share=0.95,
                                    count_share=0.05, regularization=0.1)
    kmeans_epsilon, _ = model._budget(4, 2, 2)
    plan = model.plan(n_samples=4, n_features=2)
    km = model._kmeans(None, kmeans_epsilon)
    sum_block, _ = km.iteration_blocks(2)
    centroids = km.initial_centroids(2, np.random.default_rng(0))
    exact = {bool(rows[0, 0] > 0): block_statistics(rows[:, :2], centroids, radius)[:, :-1]
             for rows in (first, second)}
    difference = exact[False] - exact[True]
    direction = (difference / np.linalg.norm(difference)).ravel()

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        centre = exact[bool(np.asarray(data)[0, 0] > 0)]
        noisy = np.asarray(sum_block.release(centre, rng=rng, size=size))
        return (noisy.reshape(size, -1) - exact[True].ravel()) @ direction

    pair = NeighbouringPair(first=first, second=second, relation=Neighbouring.REPLACE_ONE,
                            description="a record at the public bound replaced by its "
                            "antipode (same cluster)")
    claim = tightest(plan, delta=delta).epsilon
    return AuditCase(system, pair, claim, delta, threat_model=(
        "white box on DP K-means' first noisy cluster sums (K = 1, one iteration, "
        f"kmeans_share 0.95, sum noise {sum_block.noise_scale:.4g} for sensitivity "
        f"{sum_block.sensitivity.value:.4g}); the exact sums are computed once per input "
        "and only the noise is redrawn; the Nyström map and the learner are not observed "
        "(a marginal of the pipeline's transcript)"))
