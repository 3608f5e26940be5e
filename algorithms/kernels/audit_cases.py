"""``privkit audit`` rows of the kernel methods: K-means Nystrom (Lee, Ahn, Park), the
private kernel mean embedding (Balog, Tolstikhin, Scholkopf 2018, "Differentially private
database release via kernel mean embeddings") and DPKSVMEL against its paper's claim:
white box on the randomised stage (the builders sit in the estimators' modules) and black
box end to end on the public estimator (the rows ``NAME_e2e``, run by
:mod:`privkit.audits.end_to_end`). Each is declared with
:func:`~privkit.audits.registry.audit_row`, which ``privkit audit`` finds here.

.. versionadded:: 0.3.0
   (the declarations moved from ``privkit.audits.algorithm_cases`` and the end-to-end
   rows from ``privkit.audits.end_to_end``)
"""

from __future__ import annotations

from typing import Any

import attrs
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
from privkit.audits.registry import AUDIT_DELTA, AuditCase, audit_row
from privkit.neighbouring import Neighbouring

__all__: list[str] = []

R = Neighbouring.REPLACE_ONE


@audit_row("kmeans_nystrom", estimator="KMeansNystromClassifier")
def _kmeans_nystrom(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """White box on DP K-means' noisy sums (:func:`.nystrom.audit_case`)."""
    from .nystrom import audit_case

    case: AuditCase = audit_case(eps, delta)
    return case


@audit_row("kernel_mean", estimator="PrivateKernelMean")
def _kernel_mean(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """White box on the noisy mean embedding (:func:`.kernel_mean.audit_case`)."""
    from .kernel_mean import audit_case

    case: AuditCase = audit_case(eps, delta)
    return case


@audit_row("dpksvmel_paper", estimator="DPKSVMEL")
def _dpksvmel_paper(eps: float, delta: float = AUDIT_DELTA) -> AuditCase:
    """DPKSVMEL against the paper's claim (:func:`.dpksvmel.audit_case`)."""
    from .dpksvmel import audit_case

    case: AuditCase = attrs.evolve(audit_case(eps, delta), claim="paper")
    return case


@audit_row("kernel_mean_e2e", estimator="PrivateKernelMean")
def _kernel_mean_e2e(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
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
def _kmeans_nystrom_e2e(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
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
def _dpksvmel_paper_e2e(eps: float = 1.0, delta: float = 0.0) -> AuditCase:
    """DPKSVMEL against Theorem 1's PureDP(epsilon) (the paper's claim, which privkit does
    not make), on :func:`.dpksvmel.audit_case`'s pair: a released
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
