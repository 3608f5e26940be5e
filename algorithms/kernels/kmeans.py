"""Differentially private K-means: DP-Lloyd with noisy per-cluster sums and counts.

The algorithm is DPLloyd as analysed by D. Su, J. Cao, N. Li, E. Bertino, M. Lyu and
D. Lin, "Differentially private k-means clustering and a hybrid approach to private
optimization" (ACM TODS 2017; first as "Differentially private k-means clustering",
CODASPY 2016): every Lloyd iteration assigns each record to its nearest current centroid
(the centroids are already public), releases a noisy sum and a noisy count per cluster,
and takes ``noisy sum / noisy count`` as the next centroid.

Why this algorithm. Chang, Ghazi, Kumar and Manurangsi ("Locally private k-means in one
round", ICML 2021) and the earlier LSH-coreset algorithms have better worst-case
approximation ratios, but they are multi-stage constructions with large constants whose
running time grows quickly with the dimension; the K-means Nyström poster (B. Lee,
J. Ahn, C. Park, "Differential privacy in scalable general kernel learning via K-means
Nyström random features") needs centroids of a million 200-dimensional rows in seconds.
DPLloyd is one pass over the data per iteration, its only data access is a sum over
records (a map-reduce, so the same code runs on a dask cluster), and its proof is two
lines (below). Su et al. 2017 (Section 6) found it competitive when the number of
iterations is small and fixed in advance, which is what privkit does.

Privacy (the proof)
-------------------
Records are clipped onto the public L2 ball of radius ``r = data_radius``, and a record
with a non-finite entry is the *null record*, which joins no cluster and adds nothing to
any sum or count (both per-record maps; nothing is read from the data). Given the public
centroids, iteration t releases

* ``S = (sum_{x in C_1} x, ..., sum_{x in C_K} x)`` (a K x d matrix), and
* ``N = (|C_1|, ..., |C_K|)``.

Replacing one record x (in cluster a) by x' (in cluster b) changes S by ``-x`` in row a
and ``+x'`` in row b: L2 norm ``sqrt(||x||^2 + ||x'||^2) <= sqrt(2) r`` if a != b and
``||x' - x|| <= 2r`` if a = b, so ``Delta_2(S) = 2r``; N changes by -1 and +1 in two
coordinates, ``Delta_2(N) = sqrt(2)``. Replacing a record by the null record changes S by
``||x|| <= r`` and N by 1, within both bounds. Under ADD_REMOVE: ``Delta_2(S) = r``,
``Delta_2(N) = 1`` (the null record is the removed one). With Gaussian noise (the
default) each release is a Gaussian mechanism
of these sensitivities, hence mu-GDP (Dong, Roth, Su, "Gaussian differential privacy",
JRSS-B 2022, Theorem 2.7), and the T iterations are T adaptive repetitions: the plan is
``Repeat(Sequential(sum block, count block), T)``, composed by privkit's accountants
(exactly, for GDP: Dong-Roth-Su Corollary 3.3). The division, the empty-cluster rule and
the projection onto the ball are post-processing. ``noise="laplace"`` gives the pure-DP
DPLloyd of Su et al. (L1 sensitivities ``2 sqrt(d) r`` and 2 under REPLACE_ONE, since
``||x||_1 <= sqrt(d) ||x||_2``).

The initial centroids are drawn from ``random_state`` only (random directions), so they
are public.

Scale and dask
--------------
``fit`` accepts a numpy array or a ``dask.array.Array``. The data are cut into row blocks
of ``chunk_size`` rows; each block's partial sums and counts are computed by the same
numpy function, and the partials are added on the client in block order, so a dask
cluster and a single machine give bit-identical statistics, hence (with the noise drawn
on the client from the same seed) the same model.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   A row with a non-finite entry is the null record (it raised with the noiseless sums in
   the message); ``fit`` takes ``budget_filter`` and accepts zero rows; ``predict``
   refuses non-finite query rows; ``transcript_case``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClusterMixin

from privkit import _validation as check
from privkit.conversions import gdp_mu_for_approx_dp
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.mechanisms import Gaussian, Laplace
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Block, Repeat, Sequential

from .._audit_case import TranscriptCase
from .._certified import certified
from .._dask_blocks import dask_row_blocks, is_dask_array, map_pieces, piece_results
from .._private_rows import private_rows
from .._queries import query_rows
from .._spend import charge

__all__ = [
    "DPKMeans",
    "ball_factors",
    "block_statistics",
    "clip_to_ball",
    "kmeans_sensitivities",
    "map_row_blocks",
    "row_block_sums",
]

_OWNER = "DPKMeans"
#: Rows per score block inside one map-reduce block: the K-column score matrix of a
#: sub-block stays in cache (measured: 25% faster than whole 65536-row blocks at K = 256).
SUB_BLOCK = 4096


# -- data access: the only functions that touch records --------------------------------------


def _row_factors(X: NDArray[np.float64], radius: float
                 ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """``(min(1, r / ||x||) per row, which rows are finite)``; 0 for a non-finite row.

    The squared norms come from one pass; a row whose squared norm overflows (finite
    entries, norm above 1e154) is measured again after scaling by its largest entry, so
    it is clipped onto the ball like any other."""
    sq = np.einsum("ij,ij->i", X, X)
    factor: NDArray[np.float64] = np.minimum(1.0, radius / np.maximum(np.sqrt(sq), 1e-300))
    ok = np.isfinite(sq)
    if ok.all():
        return factor, ok
    bad = np.flatnonzero(~ok)
    rows = X[bad]
    finite = np.isfinite(rows).all(axis=1)
    factor[bad] = 0.0
    if finite.any():  # overflowing norms of finite rows: ||x|| = m ||x / m||
        big = rows[finite]
        scale = np.abs(big).max(axis=1)
        factor[bad[finite]] = np.minimum(1.0, (radius / scale)
                                         / np.linalg.norm(big / scale[:, None], axis=1))
        ok[bad[finite]] = True
    return factor, ok


def ball_factors(X: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """The per-row factors ``min(1, r / ||x||)`` of :func:`clip_to_ball` (no copy of X);
    0 for a row with a non-finite entry."""
    return _row_factors(X, radius)[0]


def clip_to_ball(X: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """Rows scaled back onto the L2 ball of the public ``radius`` (rows inside unchanged);
    a row with a non-finite entry becomes the zero row."""
    factor, ok = _row_factors(X, radius)
    out: NDArray[np.float64] = np.where(ok[:, None], X, 0.0) * factor[:, None]
    return out


def block_statistics(X: NDArray[Any], centroids: NDArray[np.float64], radius: float
                     ) -> NDArray[np.float64]:
    """One row block's per-cluster sums and counts, as a K x (d + 1) array.

    Rows are clipped to the ball of radius ``radius``, assigned to the nearest centroid
    (ties to the lowest index) and summed; the last column holds the counts. A row with a
    non-finite entry is the null record (module docstring): in no sum and no count.

    The clipped rows ``z_i = f_i x_i`` are never formed: the squared distance to ``c`` up
    to the row's own constant is ``|c|^2 - 2 f_i <x_i, c>``, one BLAS product ``X C^T``
    scaled by row, and the sums are ``sum_i f_i x_i``, a sparse (K x m) one-hot matrix
    holding the factors times X. Same statistics as clipping first, without an m x d copy
    (X is copied only when it holds a non-finite entry, to zero those rows).
    """
    from scipy import sparse

    Z = np.asarray(X, dtype=np.float64)
    k = centroids.shape[0]
    factor, ok = _row_factors(Z, radius)
    weight: NDArray[np.float64] | None = None
    if not ok.all():
        Z = np.where(ok[:, None], Z, 0.0)
        weight = ok.astype(np.float64)
    c_sq = np.einsum("ij,ij->i", centroids, centroids)[None, :]
    m = Z.shape[0]
    labels = np.empty(m, dtype=np.intp)
    for i in range(0, m, SUB_BLOCK):  # cache-sized score blocks (the data is not copied)
        scores = Z[i:i + SUB_BLOCK] @ centroids.T
        scores *= (-2.0 * factor[i:i + SUB_BLOCK])[:, None]
        scores += c_sq
        labels[i:i + SUB_BLOCK] = np.argmin(scores, axis=1)
    onehot = sparse.csr_matrix((factor, (labels, np.arange(m))), shape=(k, m))
    stats: NDArray[np.float64] = np.empty((k, Z.shape[1] + 1))
    stats[:, :-1] = onehot @ Z
    stats[:, -1] = np.bincount(labels, weights=weight, minlength=k)
    return stats


def row_block_sums(X: Any, function: Callable[[NDArray[Any]], NDArray[np.float64]],
                   chunk_size: int) -> NDArray[np.float64]:
    """``sum over row blocks of function(block)``, in block order, for numpy or dask X.

    The pieces are rows ``[i * chunk_size, (i + 1) * chunk_size)`` in both cases (a dask
    task reads one block of whole pieces, :func:`~privkit.algorithms._dask_blocks.dask_row_blocks`,
    and returns each piece's result), and the partial results are added in the same order
    on the client, so both give bit-identical results. With no rows, ``function`` sees one
    empty piece.
    """
    n = X.shape[0]
    if is_dask_array(X) and n > 0:
        from dask.base import compute
        from dask.delayed import delayed

        blocks = dask_row_blocks(X, chunk_size).to_delayed().ravel()
        tasks = [delayed(piece_results)(b, function, chunk_size) for b in blocks]
        partials = [p for block in compute(*tasks) for p in block]  # type: ignore[no-untyped-call]
    else:
        rows = np.asarray(X[:0]) if n == 0 else X
        partials = [function(rows[i:i + chunk_size]) for i in range(0, max(n, 1), chunk_size)]
    total: NDArray[np.float64] = functools.reduce(np.add, partials)
    return total


def map_row_blocks(X: Any, function: Callable[[NDArray[Any]], NDArray[np.float64]],
                   n_columns: int, chunk_size: int) -> Any:
    """``function`` applied to each ``chunk_size``-row piece: a numpy array for numpy X, a
    lazy dask array for dask X (blocks of whole pieces, as :func:`row_block_sums`)."""
    if is_dask_array(X):
        Y = dask_row_blocks(X, chunk_size)
        return Y.map_blocks(map_pieces, function, n_columns, chunk_size,
                            chunks=(Y.chunks[0], (n_columns,)), dtype=np.float64)
    out = np.empty((X.shape[0], n_columns))
    for i in range(0, X.shape[0], chunk_size):  # filled in place: no concatenation copy
        out[i:i + chunk_size] = function(X[i:i + chunk_size])
    return out


# -- privacy: sensitivities and the plan -------------------------------------------------------


def kmeans_sensitivities(radius: float, n_features: int, relation: Neighbouring,
                         norm: Norm) -> tuple[Sensitivity, Sensitivity]:
    """The sensitivities of DPLloyd's per-cluster sums and counts (module docstring).

    L2: sums ``2r`` (REPLACE_ONE) or ``r`` (ADD_REMOVE); counts ``sqrt(2)`` or 1.
    L1: sums ``2 sqrt(d) r`` or ``sqrt(d) r``; counts 2 or 1.
    """
    replace = relation is Neighbouring.REPLACE_ONE
    if norm is Norm.L2:
        s, c = (2.0 * radius, math.sqrt(2.0)) if replace else (radius, 1.0)
    elif norm is Norm.L1:
        root = math.sqrt(n_features)
        s, c = (2.0 * root * radius, 2.0) if replace else (root * radius, 1.0)
    else:
        raise check.fail("norm", norm, "Norm.L1 or Norm.L2", "kmeans_sensitivities")
    return (Sensitivity(value=s, norm=norm, relation=relation),
            Sensitivity(value=c, norm=norm, relation=relation))


class DPKMeans(ClusterMixin, BaseEstimator):  # type: ignore[misc]
    """Differentially private K-means (DPLloyd, Su et al. 2017) with a privkit plan.

    Parameters
    ----------
    n_clusters : int
        K.
    epsilon, delta : float
        The total budget of all iterations. With ``noise="gaussian"`` the per-iteration
        noise is calibrated so that the T-fold composition is exactly mu-GDP with the
        smallest mu meeting (epsilon, delta) (Balle and Wang 2018's exact profile);
        with ``noise="laplace"`` delta must be 0 and each iteration gets epsilon / T.
    n_iter : int
        T, the number of Lloyd iterations (fixed in advance: it is part of the plan).
    data_radius : float
        Public bound r on every record's L2 norm; records beyond are clipped onto it.
        Centre the data with a *public* centre first if it is not near the origin.
    count_share : float
        The fraction of each iteration's budget (of mu^2 for Gaussian noise, of epsilon
        for Laplace) spent on the counts; the rest goes to the sums.
    noise : {"gaussian", "laplace"}
    relation : {"replace_one", "add_remove"}
    chunk_size : int
        Rows per block of the map-reduce (numpy and dask alike).
    random_state : int, Generator or None
        Seeds the initial centroids and the noise.

    Attributes
    ----------
    cluster_centers_ : ndarray (K, d)
    noisy_counts_ : ndarray (K,)
        The last iteration's released counts.
    plan_, guarantee_, ledger_, paper_claim_
        ``paper_claim_`` is Su et al.'s epsilon-DP for the Laplace variant and None for
        the Gaussian one (which the paper does not analyse; its guarantee is privkit's).

    Public and private
    ------------------
    Public: every parameter above (K, T, the bound r, the budget and its split), the
    number of features, and the initial centroids (drawn from ``random_state`` only).
    Private: the rows, and their number under ``relation="add_remove"``. Everything
    fitted is a post-processing of the T noisy sums and counts: the centroids, the
    counts, which clusters are updated (a noisy count below a public threshold keeps the
    old centroid), and the iteration count (always T; there is no convergence test).
    Rows beyond r are clipped silently and a row with a non-finite entry is the null
    record (module docstring); fit succeeds on any number of rows, zero included, and no
    message or warning depends on the rows. ``predict`` queries are not private: a
    non-finite query row is an error.

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.algorithms.kernels.kmeans import DPKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-0.5, 0.05, (5000, 2)), rng.normal(0.5, 0.05, (5000, 2))])
    >>> km = DPKMeans(2, epsilon=1.0, delta=1e-6, n_iter=4, random_state=0).fit(X)
    >>> np.round(np.sort(km.cluster_centers_[:, 0]), 1).tolist()
    [-0.5, 0.5]
    >>> km.ledger_.compare(km.plan_).matches
    True
    """

    def __init__(self, n_clusters: int = 8, *, epsilon: float = 1.0, delta: float = 1e-5,
                 n_iter: int = 5, data_radius: float = 1.0, count_share: float = 0.2,
                 noise: str = "gaussian", relation: str = "replace_one",
                 chunk_size: int = 65536, random_state: Any = None) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.data_radius = data_radius
        self.count_share = count_share
        self.noise = noise
        self.relation = relation
        self.chunk_size = chunk_size
        self.random_state = random_state

    # -- the plan ---------------------------------------------------------------------------

    def _relation(self) -> Neighbouring:
        return Neighbouring.parse(self.relation, owner=_OWNER)

    def iteration_blocks(self, n_features: int) -> tuple[Gaussian | Laplace, Gaussian | Laplace]:
        """The (sum, count) mechanisms of one iteration."""
        check.positive_int("n_clusters", self.n_clusters, _OWNER)
        eps = check.positive_finite("epsilon", self.epsilon, _OWNER)
        t = check.positive_int("n_iter", self.n_iter, _OWNER)
        r = check.positive_finite("data_radius", self.data_radius, _OWNER)
        share = check.open_unit("count_share", self.count_share, _OWNER)
        check.positive_int("chunk_size", self.chunk_size, _OWNER)
        relation = self._relation()
        if self.noise == "gaussian":
            dlt = check.open_unit("delta", self.delta, _OWNER)
            s_sum, s_count = kmeans_sensitivities(r, n_features, relation, Norm.L2)
            mu = gdp_mu_for_approx_dp(epsilon=eps, delta=dlt) / math.sqrt(t)
            return (Gaussian.for_gdp(mu * math.sqrt(1.0 - share), sensitivity=s_sum),
                    Gaussian.for_gdp(mu * math.sqrt(share), sensitivity=s_count))
        if self.noise == "laplace":
            if self.delta != 0:
                raise check.fail("delta", self.delta, "0 with noise='laplace'", _OWNER,
                                 "Laplace DPLloyd is pure DP")
            s_sum, s_count = kmeans_sensitivities(r, n_features, relation, Norm.L1)
            return (Laplace.for_epsilon(eps * (1.0 - share) / t, sensitivity=s_sum),
                    Laplace.for_epsilon(eps * share / t, sensitivity=s_count))
        raise check.fail("noise", self.noise, "'gaussian' or 'laplace'", _OWNER)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``Repeat(Sequential(sum block, count block), n_iter)``, before any data is seen
        (the same for every ``n_samples``)."""
        check.positive_int("n_samples", n_samples, "plan")
        return self._plan(check.positive_int("n_features", n_features, "plan"))

    def _plan(self, n_features: int) -> Block:
        s, c = self.iteration_blocks(n_features)
        return Repeat(Sequential(s, c), check.positive_int("n_iter", self.n_iter, _OWNER))

    # -- fitting ----------------------------------------------------------------------------

    def initial_centroids(self, n_features: int, rng: np.random.Generator
                          ) -> NDArray[np.float64]:
        """K random directions at the common norm r/10, drawn from ``rng`` only (public).

        With equal norms the first assignment is by the largest ``<x, c>``: the first
        cells are cones around random directions, so every cluster starts with records
        whatever the data's spread (points drawn in the whole ball leave most cells empty
        in high dimension, as their norms, not directions, decide the assignment).
        """
        g = rng.normal(size=(self.n_clusters, n_features))
        g /= np.linalg.norm(g, axis=1, keepdims=True)
        out: NDArray[np.float64] = g * (0.1 * self.data_radius)
        return out

    def fit(self, X: Any, y: Any = None, budget_filter: Any = None) -> DPKMeans:
        """Run DPLloyd on X (numpy or dask, n x d); ``y`` is ignored.

        ``budget_filter``: a :class:`~privkit.BudgetFilter`; the plan is spent on it
        before any noise is drawn (refused with nothing run if it does not fit).
        """
        X = private_rows(X, owner=_OWNER, dask=True, chunk_size=check.positive_int(
            "chunk_size", self.chunk_size, _OWNER))
        d = int(X.shape[1])
        plan = self._plan(d)
        sum_block, count_block = self.iteration_blocks(d)
        charge(self, plan, budget_filter,
               delta=float(self.delta) if self.noise == "gaussian" else None)
        rng = np.random.default_rng(self.random_state)
        centroids = self.initial_centroids(d, rng)
        r = float(self.data_radius)
        counts = np.zeros(self.n_clusters)
        with Ledger() as ledger:
            for _ in range(self.n_iter):
                stats = row_block_sums(X, functools.partial(block_statistics,
                                                            centroids=centroids, radius=r),
                                       self.chunk_size)
                sums = np.asarray(sum_block.release(stats[:, :-1], rng=rng))
                counts = np.asarray(count_block.release(stats[:, -1], rng=rng))
                centroids = self._update(centroids, sums, counts,
                                         3.0 * count_block.noise_scale)
        self.cluster_centers_: NDArray[np.float64] = centroids
        self.noisy_counts_: NDArray[np.float64] = counts
        self.n_features_in_ = d
        self.plan_ = plan
        self.ledger_ = ledger
        if self.noise == "gaussian":
            self.guarantee_: Guarantee = certified(plan, delta=float(self.delta))
            self.paper_claim_: Guarantee | None = None
        else:
            self.guarantee_ = certified(plan, delta=0.0)
            self.paper_claim_ = PureDP(epsilon=self.epsilon)
        return self

    def _update(self, centroids: NDArray[np.float64], sums: NDArray[np.float64],
                counts: NDArray[np.float64], min_count: float) -> NDArray[np.float64]:
        """Post-processing: the noisy mean where the noisy count is at least
        ``max(1, min_count)`` (three standard deviations of the count noise, a public
        number), else the old centroid; projected onto the public ball."""
        ok = counts >= max(1.0, min_count)
        new = centroids.copy()
        new[ok] = sums[ok] / counts[ok, None]
        return clip_to_ball(new, self.data_radius)

    def fit_predict(self, X: Any, y: Any = None, budget_filter: Any = None) -> Any:
        """``fit(X)`` then ``predict(X)``. There is no ``labels_``: each private row's
        cluster is not a release; the caller, who holds X, gets the predictions."""
        return self.fit(X, budget_filter=budget_filter).predict(X)

    def predict(self, X: Any) -> Any:
        """The index of the nearest released centroid for each query row (finite rows of
        ``n_features_in_`` columns; anything else is an error)."""
        X = query_rows(self, X, "predict", dask=True)
        C = self.cluster_centers_

        def nearest(block: NDArray[Any]) -> NDArray[np.float64]:
            Z = np.asarray(block, dtype=np.float64)
            s = -2.0 * Z @ C.T + np.einsum("ij,ij->i", C, C)[None, :]
            idx: NDArray[np.float64] = np.argmin(s, axis=1).astype(np.float64)[:, None]
            return idx

        out = map_row_blocks(X, nearest, 1, self.chunk_size)
        return out[:, 0].astype(np.int64)

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """Two clusters of 12 rows in the unit disc, K = 2, two iterations, under
        add-remove (the row count is private); ``declare_classes`` does not apply."""
        rng = np.random.default_rng(2022)
        X = clip_to_ball(np.concatenate([rng.normal(-0.4, 0.1, (12, 2)),
                                         rng.normal(0.4, 0.1, (12, 2))]), 0.95)
        estimator = cls(2, epsilon=1.0, delta=1e-5, n_iter=2, data_radius=1.0,
                        relation="add_remove")
        return TranscriptCase(
            estimator=estimator, X=X, y=None, relation=Neighbouring.ADD_REMOVE,
            epsilon=1.0, delta=1e-5, record=np.array([0.3, -0.2]),
            at_bound=np.array([1.0, 0.0]), beyond_bound=np.array([40.0, 0.0]),
            probes=np.array([[0.5, 0.5], [-0.5, -0.5], [0.0, 0.0], [0.9, -0.1]]))
