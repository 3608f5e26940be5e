"""Private kernel mean embeddings and a private MMD two-sample test.

The kernel mean embedding of a sample ``x_1..x_n`` is ``mu = (1/n) sum_i k(x_i, .)`` in the
RKHS H of k (Smola, Gretton, Song, Schölkopf, "A Hilbert space embedding for
distributions", ALT 2007). With a finite feature map ``phi: X -> R^D`` whose inner
products approximate k, privkit releases the private mean of the features

    ``m~ = (1/n) sum_i phi(x_i) + E``,   E Gaussian or Laplace noise,

as in M. Balog, I. Tolstikhin, B. Schölkopf, "Differentially private database release via
kernel mean embeddings" (ICML 2018), Section 4 (random Fourier features, Gaussian
mechanism on the RFF mean), and in the K-means Nyström poster of B. Lee, J. Ahn, C. Park
("Differential privacy in scalable general kernel learning via K-means Nyström random
features"), which replaces the random features by a Nyström map on private K-means
centroids so that any positive-definite kernel can be used.

Three feature maps (``feature_map``)
------------------------------------
* ``"rff"``: random Fourier features of the RBF kernel (Rahimi and Recht 2007), drawn from
  ``random_state`` only (public); ``||phi(x)|| = 1`` exactly (Balog et al.'s setting).
* ``"kmeans_nystrom"``: DP K-means (:class:`~privkit.algorithms.kernels.kmeans.DPKMeans`) on the
  same private data spends ``kmeans_share`` of the budget, then the Nyström map of the
  private centroids (post-processing); ``||phi(x)|| <= kappa`` (see
  :mod:`privkit.algorithms.kernels.nystrom_map`).
* ``"nystrom"``: a Nyström map on landmarks that the caller passes as ``landmarks`` and
  declares **public**. A uniform subsample of the private data is *not* public: the
  landmarks are part of the released map (Williams and Seeger's map needs them to
  evaluate ``k(z_j, x)``), so a subsample of the private rows would publish those rows
  verbatim, and privkit certifies nothing for it. Draw the landmarks from public data of
  the same population (the Adult benchmark uses rows of the separate test split as a
  stand-in), or use ``"kmeans_nystrom"``.

Sensitivity (the proof)
-----------------------
Every map has a public bound ``B >= sup_x ||phi(x)||_2`` that does not depend on the data.
A row with a non-finite entry (or whose features overflow) is the *null record*: under
add-remove it is removed (in neither the sum nor the count), under replace-one its
feature vector is 0, inside the bound B, so both proofs below cover it.

* ``relation="replace_one"`` (n is public, as under bounded DP): replacing ``x`` by ``x'``
  moves the mean by ``(phi(x') - phi(x)) / n``, so ``Delta_2 = 2B / n`` (attained by two
  records with antipodal features) and ``Delta_1 = 2 sqrt(D) B / n`` (from
  ``||v||_1 <= sqrt(D) ||v||_2``). This is Balog et al.'s sensitivity ``2/n`` for
  ``B = 1`` (their Section 4, Gaussian mechanism).
* ``relation="add_remove"`` (n is private): the sum ``sum_i phi(x_i)`` (``Delta_2 = B``,
  ``Delta_1 = sqrt(D) B``) and the count (``Delta = 1``) are released separately and the
  mean is ``noisy sum / max(noisy count, 1)`` (post-processing). ``count_share`` of the
  budget goes to the count.

Gaussian noise (the default) is calibrated in Gaussian DP: the whole fit is mu-GDP with
the mu that meets ``(epsilon, delta)`` exactly (Dong, Roth, Su, "Gaussian differential
privacy", JRSS-B 2022, Corollary 2.13 and 3.3), its square split between the stages;
Laplace noise gives pure epsilon-DP with the epsilon split linearly. The plan is
``Sequential(PostProcess(DP K-means), mean blocks)`` (or the mean blocks alone) and
``guarantee_`` is privkit's tightest accountant on it.

The sensitivities and the block sums of a bounded feature mean, shared with the private
MMD two-sample test (:mod:`privkit.algorithms.kernels.mmd_test`), are in
:mod:`privkit.algorithms.kernels.feature_mean`.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   The null record for non-finite rows (they raised with the noiseless sums in the
   message), zero rows under add-remove, ``budget_filter``, strict ``witness`` queries,
   ``transcript_case``; the MMD test moved to :mod:`privkit.algorithms.kernels.mmd_test`,
   ``mean_sensitivities`` and ``feature_sums`` to :mod:`privkit.algorithms.kernels.feature_mean`
   (still importable from here), ``audit_case`` to the row ``kernel_mean`` of
   :mod:`privkit.algorithms.kernels.audit_cases`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator

from privkit import _validation as check
from privkit.conversions import gdp_mu_for_approx_dp
from privkit.guarantees import GDP, ApproxDP, Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.mechanisms import Gaussian, Laplace
from privkit.neighbouring import Neighbouring, Norm
from privkit.plan import Block, PostProcess, Sequential

from .._audit_case import TranscriptCase
from .._certified import certified
from .._private_rows import private_rows
from .._queries import query_rows
from .._spend import charge
from .feature_mean import feature_sums, mean_sensitivities
from .kmeans import DPKMeans
from .nystrom_map import Kernel, NystromMap
from .random_features import RandomFourierFeatures

__all__ = [
    "PrivateKernelMean",
    "feature_sums",
    "kme_distance",
    "mean_sensitivities",
]

_OWNER = "PrivateKernelMean"
_MAPS = ("rff", "kmeans_nystrom", "nystrom")


class _RFFMap:
    """Random Fourier features with the interface of :class:`NystromMap` (transform,
    norm_bound, n_components, kernel)."""

    def __init__(self, n_components: int, gamma: float, n_features: int, seed: Any) -> None:
        self.rff = RandomFourierFeatures(n_components, gamma=gamma, random_state=seed)
        self.rff.fit(np.zeros((1, n_features)))
        self.n_components = n_components
        self.norm_bound = 1.0
        self.kernel = Kernel("rbf", gamma=gamma)

    def transform(self, X: Any) -> NDArray[np.float64]:
        return self.rff.transform(X)


class PrivateKernelMean(BaseEstimator):  # type: ignore[misc]
    """A differentially private kernel mean embedding (module docstring).

    Parameters
    ----------
    n_components : int
        D: the number of random features, or K, the number of landmarks / centroids.
    epsilon, delta : float
        The total budget (``delta = 0`` with ``noise="laplace"``).
    feature_map : {"rff", "kmeans_nystrom", "nystrom"}
    kernel, gamma, degree, coef0, kernel_bound
        The kernel (:class:`~privkit.algorithms.kernels.nystrom.Kernel`); ``"rff"`` needs
        ``kernel="rbf"`` (gamma default ``1 / n_features``).
    landmarks : ndarray (K, d) or None
        Public landmarks for ``feature_map="nystrom"`` (never rows of the private data).
    data_radius : float
        Public bound on ``||x||_2`` (rows beyond are clipped by the Nyström maps).
    noise : {"gaussian", "laplace"}
    relation : {"replace_one", "add_remove"}
    kmeans_share : float
        Share of the budget (of mu^2, or of epsilon for Laplace) spent on DP K-means.
    count_share : float
        Share of the mean's budget spent on the count under ``add_remove``.
    n_iter : int
        DP K-means iterations.
    chunk_size : int
    random_state : int or None

    Attributes
    ----------
    embedding_ : ndarray (D,)
        The private mean of the features ``m~``.
    feature_map_ : the fitted map (``transform``, ``norm_bound``, ``kernel``)
    noise_scale_ : float
        The standard deviation of the mean's noise per coordinate (replace-one), or of
        the sum's noise (add-remove).
    n_samples_ : float
        The public n (replace-one) or the released noisy count (add-remove).
    kmeans_ : DPKMeans
        The private centroids' fit (``feature_map="kmeans_nystrom"`` only).
    plan_, guarantee_, ledger_, paper_claim_
        ``paper_claim_``: Balog et al.'s (epsilon, delta) for ``"rff"`` with Gaussian
        noise, the poster's epsilon for ``"kmeans_nystrom"``, else None.

    Public and private
    ------------------
    Public: every parameter above (the landmarks of ``feature_map="nystrom"`` included,
    which is why they must never be rows of the private data), the bound r and the
    feature bound B it implies, the number of features, the random features (drawn from
    ``random_state`` only) and, under ``relation="replace_one"`` only, n (the noise scale
    is ``2B/n``). Private: the rows, and n under ``"add_remove"``, where it is released
    as a noisy count. The embedding, the count and the K-means centroids are noisy
    releases; every other attribute is a function of the parameters. Rows beyond r are
    clipped silently, a row with a non-finite entry is the null record (module
    docstring), and fit succeeds under add-remove on any number of rows, zero included
    (replace-one needs n >= 1: n is public there). ``witness`` queries are not private:
    a non-finite query row is an error.

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.algorithms.kernels.kernel_mean import PrivateKernelMean
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(20000, 3))
    >>> kme = PrivateKernelMean(200, epsilon=1.0, delta=1e-6, random_state=0).fit(X)
    >>> kme.embedding_.shape, round(kme.guarantee_.epsilon_at(1e-6), 3)
    ((200,), 1.0)
    """

    def __init__(self, n_components: int = 100, *, epsilon: float = 1.0, delta: float = 1e-5,
                 feature_map: str = "rff", kernel: Any = "rbf", gamma: float | None = None,
                 degree: int = 2, coef0: float = 1.0, kernel_bound: float | None = None,
                 landmarks: Any = None, data_radius: float = 1.0, noise: str = "gaussian",
                 relation: str = "replace_one", kmeans_share: float = 0.5,
                 count_share: float = 0.1, n_iter: int = 5, chunk_size: int = 65536,
                 random_state: Any = None) -> None:
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.feature_map = feature_map
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_bound = kernel_bound
        self.landmarks = landmarks
        self.data_radius = data_radius
        self.noise = noise
        self.relation = relation
        self.kmeans_share = kmeans_share
        self.count_share = count_share
        self.n_iter = n_iter
        self.chunk_size = chunk_size
        self.random_state = random_state

    # -- budget and plan ----------------------------------------------------------------------

    def _kernel(self) -> Kernel:
        return Kernel(self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                      kernel_bound=self.kernel_bound)

    def _validate(self) -> tuple[Neighbouring, float, float]:
        check.positive_int("n_components", self.n_components, _OWNER)
        eps = check.positive_finite("epsilon", self.epsilon, _OWNER)
        check.positive_finite("data_radius", self.data_radius, _OWNER)
        check.positive_int("chunk_size", self.chunk_size, _OWNER)
        if self.feature_map not in _MAPS:
            raise check.fail("feature_map", self.feature_map, "'rff', 'kmeans_nystrom' or "
                             "'nystrom'", _OWNER)
        if self.feature_map == "rff":
            if self.kernel != "rbf":
                raise check.fail("kernel", self.kernel, "'rbf' with feature_map='rff'",
                                 _OWNER, "random Fourier features approximate the RBF kernel")
            if self.n_components % 2:
                raise check.fail("n_components", self.n_components, "an even number with "
                                 "feature_map='rff'", _OWNER)
        if self.feature_map == "nystrom" and self.landmarks is None:
            raise check.fail("landmarks", None, "a (K, d) array of public points", _OWNER,
                             "feature_map='nystrom' needs public landmarks; a subsample "
                             "of the private data is released with the map")
        if self.noise == "gaussian":
            dlt = check.open_unit("delta", self.delta, _OWNER)
        elif self.noise == "laplace":
            if self.delta != 0:
                raise check.fail("delta", self.delta, "0 with noise='laplace'", _OWNER)
            dlt = 0.0
        else:
            raise check.fail("noise", self.noise, "'gaussian' or 'laplace'", _OWNER)
        relation = Neighbouring.parse(self.relation, owner=_OWNER)
        if self.feature_map == "kmeans_nystrom":
            check.open_unit("kmeans_share", self.kmeans_share, _OWNER)
        if relation is Neighbouring.ADD_REMOVE:
            check.open_unit("count_share", self.count_share, _OWNER)
        return relation, eps, dlt

    def _norm_bound(self, n_features: int) -> float:
        if self.feature_map == "rff":
            return 1.0
        return math.sqrt(self._kernel().bound(self.data_radius, n_features))

    def _budgets(self) -> tuple[float, float]:
        """(K-means share, mean share) of mu^2 (Gaussian) or of epsilon (Laplace)."""
        share = float(self.kmeans_share) if self.feature_map == "kmeans_nystrom" else 0.0
        return share, 1.0 - share

    def _kmeans(self, seed: Any) -> DPKMeans:
        relation, eps, dlt = self._validate()
        km_share, _ = self._budgets()
        if self.noise == "gaussian":
            mu = gdp_mu_for_approx_dp(epsilon=eps, delta=dlt)
            eps_km = GDP(mu=mu * math.sqrt(km_share)).epsilon_at(dlt)
            noise = "gaussian"
        else:
            eps_km, noise = eps * km_share, "laplace"
        return DPKMeans(self.n_components, epsilon=eps_km, delta=dlt, n_iter=self.n_iter,
                        data_radius=self.data_radius, noise=noise, relation=relation.value,
                        chunk_size=self.chunk_size, random_state=seed)

    def mean_blocks(self, *, n_samples: int | None, n_features: int
                    ) -> tuple[Gaussian | Laplace, Gaussian | Laplace | None]:
        """The mean's mechanisms: ``(mean, None)`` (replace-one, for the public
        ``n_samples``) or ``(sum, count)`` (add-remove, ``n_samples`` unused)."""
        relation, eps, dlt = self._validate()
        _, share = self._budgets()
        norm = Norm.L2 if self.noise == "gaussian" else Norm.L1
        first, count = mean_sensitivities(self._norm_bound(n_features), self.n_components,
                                          n_samples=n_samples, relation=relation, norm=norm)
        c_share = float(self.count_share) if count is not None else 0.0
        if self.noise == "gaussian":
            mu = gdp_mu_for_approx_dp(epsilon=eps, delta=dlt) * math.sqrt(share)
            a: Gaussian | Laplace = Gaussian.for_gdp(mu * math.sqrt(1.0 - c_share),
                                                     sensitivity=first)
            b: Gaussian | Laplace | None = (
                None if count is None else Gaussian.for_gdp(mu * math.sqrt(c_share),
                                                            sensitivity=count))
        else:
            a = Laplace.for_epsilon(eps * share * (1.0 - c_share), sensitivity=first)
            b = None if count is None else Laplace.for_epsilon(eps * share * c_share,
                                                               sensitivity=count)
        return a, b

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``Sequential(PostProcess(DP K-means), mean [, count])`` or the mean blocks
        (``n_samples`` enters only under replace-one, where it is public)."""
        n = check.positive_int("n_samples", n_samples, "plan")
        return self._plan(n, check.positive_int("n_features", n_features, "plan"))

    def _plan(self, n_samples: int | None, n_features: int) -> Block:
        a, b = self.mean_blocks(n_samples=n_samples, n_features=n_features)
        mean: Block = a if b is None else Sequential(a, b)
        if self.feature_map != "kmeans_nystrom":
            return mean
        km = self._kmeans(None)._plan(n_features)
        return Sequential(PostProcess(km, "Nyström map of the private centroids"), mean)

    def _public_map(self, n_features: int, seed: Any) -> Any:
        """The feature map when it does not depend on the data (``"rff"``, ``"nystrom"``);
        ``None`` for ``"kmeans_nystrom"``."""
        if self.feature_map == "rff":
            gamma = 1.0 / n_features if self.gamma is None else float(self.gamma)
            return _RFFMap(self.n_components, gamma, n_features, seed)
        if self.feature_map == "nystrom":
            landmarks = np.asarray(self.landmarks, dtype=np.float64)
            if landmarks.ndim != 2 or landmarks.shape[1] != n_features:
                raise check.fail("landmarks", f"an array of shape {landmarks.shape}",
                                 f"a (K, {n_features}) array (the data's features)", _OWNER)
            return NystromMap(landmarks, self._kernel(), data_radius=self.data_radius,
                              chunk_size=self.chunk_size)
        return None

    # -- fitting ------------------------------------------------------------------------------

    def fit(self, X: Any, y: Any = None, budget_filter: Any = None) -> PrivateKernelMean:
        """Release the private mean embedding of X (numpy or dask, n x d); y is ignored.

        ``budget_filter``: a :class:`~privkit.BudgetFilter`; the plan is spent on it
        before any noise is drawn (refused with nothing run if it does not fit).
        """
        X = private_rows(X, owner=_OWNER, dask=True, chunk_size=check.positive_int(
            "chunk_size", self.chunk_size, _OWNER))
        n, d = (int(v) for v in X.shape)
        relation, _, _ = self._validate()
        public_n = n if relation is Neighbouring.REPLACE_ONE else None
        if public_n == 0:
            raise check.fail("X", "no rows", "at least one row under relation="
                             "'replace_one' (n is public there)", _OWNER)
        plan = self._plan(public_n, d)
        first, count = self.mean_blocks(n_samples=public_n, n_features=d)
        seeds = np.random.SeedSequence(self.random_state).spawn(3)
        fmap = self._public_map(d, np.random.default_rng(seeds[0]))
        charge(self, plan, budget_filter,
               delta=float(self.delta) if self.noise == "gaussian" else None)
        rng = np.random.default_rng(seeds[2])
        with Ledger() as ledger:
            if fmap is None:
                km = self._kmeans(np.random.default_rng(seeds[1])).fit(X)
                self.kmeans_ = km
                fmap = NystromMap(km.cluster_centers_, self._kernel(),
                                  data_radius=self.data_radius, chunk_size=self.chunk_size)
            stats = feature_sums(X, fmap.transform, self.chunk_size)
            if count is None:
                self.embedding_: NDArray[np.float64] = np.asarray(
                    first.release(stats[:-1] / n, rng=rng), dtype=np.float64)
                self.n_samples_: float = float(n)
            else:
                noisy_sum = np.asarray(first.release(stats[:-1], rng=rng), dtype=np.float64)
                self.n_samples_ = float(np.asarray(count.release(stats[-1], rng=rng)))
                self.embedding_ = noisy_sum / max(self.n_samples_, 1.0)
        self.feature_map_ = fmap
        self.noise_scale_ = float(first.noise_scale)
        self.n_features_in_ = d
        self.plan_ = plan
        self.ledger_ = ledger
        self.guarantee_: Guarantee = certified(plan, delta=float(self.delta))
        claim: Guarantee | None = None
        if self.feature_map == "rff" and self.noise == "gaussian":
            claim = ApproxDP(epsilon=self.epsilon, delta=self.delta)
        elif self.feature_map == "kmeans_nystrom":
            claim = PureDP(epsilon=self.epsilon) if self.noise == "laplace" else ApproxDP(
                epsilon=self.epsilon, delta=self.delta)
        self.paper_claim_: Guarantee | None = claim
        return self

    def witness(self, X: Any) -> NDArray[np.float64]:
        """The released embedding evaluated at the query rows of X: ``<m~, phi(x)>``, the
        private estimate of ``(1/n) sum_i k(x_i, x)``. Queries are not private: rows
        must be finite, with ``n_features_in_`` columns."""
        Q = query_rows(self, X, "witness", dask=True)
        F = np.asarray(self.feature_map_.transform(Q))
        out: NDArray[np.float64] = F @ self.embedding_
        return out

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """24 rows in the unit disc, 8 random Fourier features, under add-remove (the
        row count is private and released as a noisy count); ``declare_classes`` does
        not apply."""
        X = np.random.default_rng(2018).uniform(-0.6, 0.6, size=(24, 2))
        estimator = cls(8, epsilon=1.0, delta=1e-5, gamma=1.0, relation="add_remove")
        return TranscriptCase(
            estimator=estimator, X=X, y=None, relation=Neighbouring.ADD_REMOVE,
            epsilon=1.0, delta=1e-5, record=np.array([0.3, -0.2]),
            at_bound=np.array([1.0, 0.0]), beyond_bound=np.array([40.0, 0.0]),
            probes=np.array([[0.5, 0.5], [-0.5, -0.5], [0.0, 0.0], [0.9, -0.1]]))


def kme_distance(embedding: NDArray[np.float64], feature_map: Any, X: NDArray[np.float64],
                 kernel: Any, *, chunk_size: int = 2048) -> float:
    """The KME error ``D(v, X) = sqrt(max(0, ||v||^2 - 2 <v, phi_bar(X)> + mean K_XX))``.

    Here ``phi_bar(X) = (1/n) sum phi(x_i)`` and ``mean K_XX = (1/n^2) sum_{i,j}
    k(x_i, x_j) = ||mu_X||_H^2``. For a Nyström map ``phi(x) = Sigma^{-1/2} U^T k_Z(x)``, the
    vector v is the RKHS element ``g_v = sum_j (U Sigma^{-1/2} v)_j k(z_j, .)`` (with
    ``||g_v||_H = ||v||`` and ``<g_v, k(x, .)>_H = <v, phi(x)>``), so D is exactly the RKHS
    distance ``||g_v - mu_X||_H`` to the exact (full-kernel) mean embedding. For random
    Fourier features, the same expansion with ``<v, phi(x)>`` as the evaluation of v is the
    plug-in estimate of Balog et al. (their embeddings are compared through the kernel);
    it equals ``||v - phi_bar||^2 + (||mu_X||_H^2 - ||phi_bar||^2)``, where the second
    term is the random features' own approximation error (of either sign: hence the
    ``max(0, .)``). ``mean K_XX`` is computed exactly in row blocks (O(n^2 d))."""
    X = np.asarray(X, dtype=np.float64)
    v = np.asarray(embedding, dtype=np.float64)
    n = X.shape[0]
    phi_bar = np.asarray(feature_map.transform(X)).mean(axis=0)
    total = 0.0
    for i in range(0, n, chunk_size):
        total += float(kernel(X[i:i + chunk_size], X).sum())
    sq = float(v @ v) - 2.0 * float(v @ phi_bar) + total / n**2
    return math.sqrt(max(sq, 0.0))
