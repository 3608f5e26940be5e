"""``privkit audit`` rows of the kernel methods: K-means Nystrom (Lee, Ahn, Park), the
private kernel mean embedding (Balog, Tolstikhin, Scholkopf 2018, "Differentially private
database release via kernel mean embeddings") and DPKSVMEL against its paper's claim:
white box on the randomised stage (the builders are here, the estimators' modules hold
estimators only) and black box end to end on the public estimator (the rows
``NAME_e2e``, run by :mod:`privkit.audits.end_to_end`). Each is declared with
:func:`~privkit.audits.registry.audit_row`, which ``privkit audit`` finds here. Each
builder takes ``(*, epsilon, delta)``, keywords only.

.. versionadded:: 0.3.0
   (the declarations moved from ``privkit.audits.algorithm_cases``, the end-to-end
   rows from ``privkit.audits.end_to_end``, and the white-box builders from
   ``nystrom.audit_case``, ``kernel_mean.audit_case`` and ``dpksvmel.audit_case``)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privkit.audits.end_to_end import (
    FITS,
    GAUSS_DELTA,
    GAUSS_EPSILON,
    end_to_end_case,
    fit_system,
    pilot_claim,
    plan_epsilon,
)
from privkit.audits.pairs import NeighbouringPair
from privkit.audits.registry import AUDIT_DELTA, AuditCase, audit_row
from privkit.neighbouring import Neighbouring

__all__: list[str] = []

R = Neighbouring.REPLACE_ONE


@audit_row("kmeans_nystrom", estimator="KMeansNystromClassifier")
def _kmeans_nystrom(*, epsilon: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """White-box audit of the K-means Nyström pipeline on its DP K-means stage.

    The pipeline is :class:`~privkit.algorithms.kernels.nystrom.KMeansNystromClassifier`
    with K = 1, one DPLloyd iteration, ``kmeans_share = 0.95`` and ``count_share = 0.05``
    (so that the observed stage carries most of the claim); the claim tested is privkit's
    tightest epsilon for the *whole* pipeline's plan at ``delta`` (what ``guarantee_``
    reports).

    Pair (from the privacy analysis in :mod:`privkit.algorithms.kernels.kmeans`): four rows
    in the unit disc; the neighbour replaces the first row ``(r, 0)`` by ``(-r, 0)`` (a
    record at the public bound r = 1 replaced by its antipode, both in the same cluster),
    which moves the cluster sum by exactly its declared sensitivity ``2r`` and leaves the
    counts unchanged. The deterministic part (clipping, assignment, exact sums, by the
    module's own :func:`~privkit.algorithms.kernels.kmeans.block_statistics`) is computed
    once per input; each draw only redraws the Gaussian noise of the sums through the sum
    block's floating-point-safe ``release``. The statistic is the released sums projected
    on the direction in which the two inputs' exact sums differ (the Gaussian likelihood
    ratio: optimal). Observing the noisy sums is a white box (the pipeline publishes only
    the classifier); the counts (identical in law on the pair), the Nyström map and the
    learner are not observed, so the bound is a marginal of the pipeline's transcript and
    can never exceed the pipeline's true epsilon.
    """
    from privkit.accountants import tightest
    from privkit.algorithms import KMeansNystromClassifier

    from .kmeans import block_statistics

    radius = 1.0
    first = np.array([[radius, 0.0, 1.0], [0.3, 0.2, 0.0], [-0.1, 0.5, 1.0],
                      [0.0, -0.4, 0.0]])
    second = first.copy()
    second[0, :2] = [-radius, 0.0]
    model = KMeansNystromClassifier(1, epsilon=epsilon, delta=delta, classes=[0, 1],
                                    kernel="rbf", gamma=1.0, data_radius=radius, n_iter=1,
                                    kmeans_share=0.95, count_share=0.05, regularization=0.1)
    kmeans_epsilon, _ = model._budget(4, 2, 2, epsilon, delta)
    plan = model.plan(n_samples=4, n_features=2)
    km = model._kmeans(None, kmeans_epsilon, delta)
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

    pair = NeighbouringPair(first=first, second=second, relation=R,
                            description="a record at the public bound replaced by its "
                            "antipode (same cluster)")
    claim = tightest(plan, delta=delta).epsilon
    return AuditCase(system, pair, claim, delta, threat_model=(
        "white box on DP K-means' first noisy cluster sums (K = 1, one iteration, "
        f"kmeans_share 0.95, sum noise {sum_block.noise_scale:.4g} for sensitivity "
        f"{sum_block.sensitivity.value:.4g}); the exact sums are computed once per input "
        "and only the noise is redrawn; the Nyström map and the learner are not observed "
        "(a marginal of the pipeline's transcript)"))


@audit_row("kernel_mean", estimator="PrivateKernelMean")
def _kernel_mean(*, epsilon: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """The private kernel mean embedding (Gaussian noise, replace-one, n public) on a pair
    that attains its declared sensitivity.

    The map is Nyström with the linear kernel on the public landmarks ``e_1, e_2``, so
    ``phi(x) = x`` and the public feature-norm bound is the data radius ``r = 1``. The pair
    (from :func:`~privkit.algorithms.kernels.feature_mean.mean_sensitivities`: the mean
    moves by at most ``2B/n``): three rows in the unit disc; the neighbour replaces the
    first row ``(r, 0)`` by ``(-r, 0)``, which moves the mean by exactly ``2r/n``. The
    exact means are computed once per input by the estimator's own feature map; each draw
    only adds fresh noise through the mean block's floating-point-safe ``release``. The
    statistic is the released mean projected on the direction in which the two exact
    means differ (the Gaussian likelihood ratio). The claim is privkit's tightest epsilon
    for the estimator's plan at ``delta``, what ``guarantee_`` reports; the output
    observed is the whole release.
    """
    from privkit.accountants import tightest
    from privkit.algorithms import NystromMap, PrivateKernelMean

    landmarks = np.eye(2)
    model = PrivateKernelMean(2, epsilon=epsilon, delta=delta, feature_map="nystrom",
                              kernel="linear", landmarks=landmarks, data_radius=1.0,
                              noise="gaussian", relation="replace_one")
    first = np.array([[1.0, 0.0], [0.3, 0.2], [-0.1, 0.5]])
    second = first.copy()
    second[0] = [-1.0, 0.0]
    n, d = first.shape
    block, _ = model.mean_blocks(n_samples=n, n_features=d)
    fmap = NystromMap(landmarks, model._kernel(), data_radius=1.0)
    means = [np.asarray(fmap.transform(rows)).mean(axis=0) for rows in (first, second)]
    direction = (means[1] - means[0]) / np.linalg.norm(means[1] - means[0])

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        mean = means[0] if np.array_equal(np.asarray(data), first) else means[1]
        noisy = np.asarray(block.release(mean, rng=rng, size=size))
        return (noisy.reshape(size, -1) - means[0]) @ direction

    pair = NeighbouringPair(first=first, second=second, relation="replace_one",
                            description="a row at the public bound replaced by its antipode")
    claim = tightest(model.plan(n_samples=n, n_features=d), delta=delta).epsilon
    return AuditCase(system, pair, claim, delta, threat_model=(
        "the released embedding (Gaussian noise on the mean of phi(x) = x, Nyström on the "
        f"public landmarks e_1, e_2 with the linear kernel, n = {n} public, noise "
        f"{block.noise_scale:.4g} for L2 sensitivity {block.sensitivity.value:.4g}); the "
        "exact means are computed once per input and only the noise is redrawn"))


@audit_row("dpksvmel_paper", estimator="DPKSVMEL")
def _dpksvmel_paper(*, epsilon: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """DPKSVMEL against Theorem 1's claim ``PureDP(epsilon)`` (the paper's, which privkit
    does not make: ``claim="paper"``; ``delta`` is not used) on the pair of point 1 of
    :mod:`privkit.algorithms.kernels.dpksvmel`'s docstring: a group of more than k
    non-support vectors; the neighbour moves one member by 0.01 (it stays a non-support
    vector, so the SVM is unchanged).

    The released statistic is the adversary's test "some released support vector is the
    exact mean of a k-subset containing the original record": possible under the first
    dataset, impossible under the second. The SVM is trained once per dataset; each draw
    redraws only the hybrid mechanism's noise.
    """
    from itertools import combinations

    from privkit.algorithms import DPKSVMEL

    from .dpksvmel import _audit_data

    k = 2
    X, y, target = _audit_data(k)
    model = DPKSVMEL(epsilon=epsilon, k=k, lls=0.5, classes=[0, 1])
    eps, k, lls = model._validated()
    first = np.column_stack([X, y])
    second = first.copy()
    second[target, :2] += 0.01
    cache: dict[bytes, tuple[Any, Any]] = {}
    x_orig = X[target]

    def prepared(rows: Any) -> tuple[Any, Any]:
        key = rows.tobytes()
        if key not in cache:
            m = DPKSVMEL(epsilon=eps, k=k, lls=lls, classes=[0, 1]).fit(
                rows[:, :2], rows[:, 2].astype(int))
            others = [i for i in range(len(rows)) if i != target]
            means = np.array([(x_orig + rows[list(c), :2].sum(0)) / k
                              for c in combinations(others, k - 1)])
            cache[key] = (m, means)
        return cache[key]

    def system(rows: Any, rng: np.random.Generator, size: int) -> Any:
        m, means = prepared(np.asarray(rows, dtype=np.float64))
        Xd, yd = rows[:, :2], rows[:, 2].astype(int)
        out = np.zeros(size)
        for t in range(size):
            released, _ = m.private_support_vectors(Xd, yd, m.gamma_, eps, k, lls, rng)
            d = np.abs(released[:, None, :] - means[None, :, :]).max(-1)
            out[t] = float((d < 1e-12).any())
        return out

    pair = NeighbouringPair(first=first, second=second, relation=R)
    return AuditCase(system, pair, epsilon, 0.0, max_trials=10_000, claim="paper")


@audit_row("kernel_mean_e2e", estimator="PrivateKernelMean")
def _kernel_mean_e2e(*, epsilon: float = 1.0, delta: float = 0.0) -> AuditCase:
    """PrivateKernelMean (Gaussian noise on the mean embedding, replace-one, n public)
    with the linear-kernel Nyström map on the landmarks e_1, e_2 (phi(x) = x): three rows
    in the unit disc, the first, at the bound, replaced by its antipode, which moves the
    mean by its declared sensitivity 2/n. Released: ``embedding_``."""
    from privkit.algorithms import PrivateKernelMean

    def make(seed: int) -> Any:
        return PrivateKernelMean(2, epsilon=GAUSS_EPSILON, delta=GAUSS_DELTA,
                                 feature_map="nystrom", kernel="linear", landmarks=np.eye(2),
                                 data_radius=1.0, noise="gaussian", relation="replace_one",
                                 random_state=seed)

    first = np.array([[1.0, 0.0], [0.3, 0.2], [-0.1, 0.5]])
    second = first.copy()
    second[0] = [-1.0, 0.0]
    claim = plan_epsilon(make(0).plan(n_samples=3, n_features=2), delta=GAUSS_DELTA)
    return end_to_end_case(
        fit_system(make, lambda m: m.embedding_), (first, None), (second, None), R,
        epsilon=claim, delta=GAUSS_DELTA,
        what="PrivateKernelMean's released embedding_",
        how="three rows in the unit disc, the first (at the bound) replaced by its "
            f"antipode; calibrated at ({GAUSS_EPSILON}, {GAUSS_DELTA}), claim: "
            f"privkit's epsilon of its plan at delta {GAUSS_DELTA}")


#: Rows of the K-means row: enough that the noisy count passes DPKMeans' public threshold
#: (three of its standard deviations) on nearly every fit.
_KMEANS_ROWS = 40


@audit_row("kmeans_nystrom_e2e", estimator="KMeansNystromClassifier")
def _kmeans_nystrom_e2e(*, epsilon: float = 1.0, delta: float = 0.0) -> AuditCase:
    """KMeansNystromClassifier with K = 1, one iteration, kmeans_share 0.95: 40 rows, 39 at
    the origin and (1, 0), replaced by its antipode (the cluster sum moves by its
    sensitivity 2, the count not at all). Released: the landmark
    (``kmeans_.cluster_centers_``, noisy sum over noisy count) and the noisy count
    (``kmeans_.noisy_counts_``, published): their product's first coordinate is the noisy
    sum's, the Gaussian likelihood ratio's statistic. The landmark alone measured
    0.44-0.49 of the claim: the count's noise (a standard deviation of 5.4 on 40)
    multiplies the sum's, and the division does not wash it out."""
    from privkit.algorithms import KMeansNystromClassifier

    def make(seed: int) -> Any:
        return KMeansNystromClassifier(1, epsilon=GAUSS_EPSILON, delta=GAUSS_DELTA,
                                       classes=[0, 1], kernel="rbf", gamma=1.0,
                                       data_radius=1.0, n_iter=1, kmeans_share=0.95,
                                       count_share=0.05, regularization=0.1,
                                       random_state=seed)

    def release(model: Any) -> Any:
        # the noisy sum's first coordinate: the landmark times the noisy count
        return model.kmeans_.cluster_centers_[0, 0] * model.kmeans_.noisy_counts_[0]

    X = np.zeros((_KMEANS_ROWS, 2))
    X[0] = [1.0, 0.0]
    other = X.copy()
    other[0] = [-1.0, 0.0]
    y = np.arange(_KMEANS_ROWS) % 2
    claim = pilot_claim(make, (X, y), delta=GAUSS_DELTA)
    return end_to_end_case(
        fit_system(make, release), (X, y), (other, y), R, epsilon=claim, delta=GAUSS_DELTA,
        what="KMeansNystromClassifier's released landmark and noisy count "
             "(kmeans_.cluster_centers_ times kmeans_.noisy_counts_: the noisy cluster sum, its "
             "first coordinate, the direction the record moves)",
        how=f"{_KMEANS_ROWS - 1} rows at the origin and (1, 0), replaced by (-1, 0); K = 1, one "
            "iteration, kmeans_share 0.95, count_share 0.05; calibrated at "
            f"({GAUSS_EPSILON}, {GAUSS_DELTA}), claim: its guarantee_ at delta {GAUSS_DELTA}",
        fits=4 * FITS)


@audit_row("dpksvmel_paper_e2e", estimator="DPKSVMEL")
def _dpksvmel_paper_e2e(*, epsilon: float = 1.0, delta: float = 0.0) -> AuditCase:
    """DPKSVMEL against Theorem 1's PureDP(epsilon) (the paper's claim, which privkit does
    not make), on :func:`_dpksvmel_paper`'s pair: a released
    support vector that is the exact mean of a k-subset containing the original record
    is possible on the first dataset only."""
    from itertools import combinations

    from privkit.algorithms import DPKSVMEL

    from .dpksvmel import _audit_data

    k, claim = 2, 1.0
    X, y, target = _audit_data(k)
    moved = X.copy()
    moved[target] += 0.01
    others = [i for i in range(len(X)) if i != target]
    means = np.array([(X[target] + X[list(c)].sum(0)) / k
                      for c in combinations(others, k - 1)])

    def make(seed: int) -> Any:
        return DPKSVMEL(epsilon=claim, k=k, lls=0.5, classes=[0, 1], random_state=seed)

    def statistic(model: Any) -> Any:
        released = np.asarray(model.support_vectors_, dtype=float)
        gap = np.abs(released[:, None, :] - means[None, :, :]).max(-1)
        return float((gap < 1e-12).any())

    return end_to_end_case(
        fit_system(make, statistic), (X, y), (moved, y), R, epsilon=claim, delta=0.0,
        what="DPKSVMEL's released support_vectors_ (event: one is the exact mean of a k-subset "
             "holding the original record)",
        how="two tight clusters, one non-support member moved by 0.01; the paper's "
            f"PureDP({claim})", claim="paper", fits=200)
