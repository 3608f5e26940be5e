"""Private PCA by Gaussian noise on the second-moment matrix, and DPDR-DPML.

Seed 004 (Wang et al. 2024): Algorithm 2 ("DPDR") and Algorithm 3 ("DPDR-DPML").

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.guarantees import ApproxDP, Guarantee
from privkit.ledger import Ledger
from privkit.mechanisms import AnalyzeGauss
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Sequential

from .erm import ObjectivePerturbationClassifier, clipped_rows

__all__ = ["DPPCA", "DPDRDPMLClassifier", "private_subspace"]

R = Neighbouring.REPLACE_ONE


def pca_block(epsilon: float, delta: float, calibration: str) -> AnalyzeGauss:
    """The Analyze Gauss block of DPDR under REPLACE_ONE, rows of norm at most 1.

    ``calibration="analytic"`` is the smallest noise that meets (epsilon, delta) exactly
    (Balle, Wang 2018); ``"classic"`` is seed 004's ``sigma = sqrt(2 ln(1.25/delta)) Δ / eps``
    (only valid for epsilon < 1). Either way Δ is the true replace-one sensitivity
    sqrt(2), not the paper's 1 (see :class:`DPPCA`).
    """
    if calibration == "analytic":
        return AnalyzeGauss.for_approx_dp(epsilon=epsilon, delta=delta, row_norm_bound=1.0,
                                          relation=R)
    if calibration == "classic":
        from privkit.mechanisms import classic_gaussian_sigma, second_moment_sensitivity

        sens = second_moment_sensitivity(1.0, R)
        sigma = classic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sens.value)
        return AnalyzeGauss(noise_scale=sigma, row_norm_bound=1.0, relation=R)
    raise check.fail("calibration", calibration, "'analytic' or 'classic'", "DPPCA")


def private_subspace(Z: NDArray[np.float64], block: AnalyzeGauss, k: int,
                     rng: np.random.Generator) -> NDArray[np.float64]:
    """The top-k eigenvectors (columns) of the noisy second-moment matrix of rows Z."""
    noisy = block.release(Z.T @ Z, rng=rng)
    values, vectors = np.linalg.eigh(noisy)
    top: NDArray[np.float64] = vectors[:, np.argsort(values)[::-1][:k]]
    return top


class DPPCA(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    """Differentially private PCA (seed 004 Algorithm 2, Dwork et al. 2014).

    Releases ``X^T X + E`` with symmetric Gaussian noise E (Analyze Gauss) and projects on
    the top ``n_components`` eigenvectors of the noisy matrix (post-processing, free).

    Parameters
    ----------
    n_components : int
        k.
    epsilon, delta : float
        The budget, (epsilon, delta)-DP under REPLACE_ONE.
    row_norm_bound : float
        Public bound B on row norms; rows are divided by B and clipped to norm 1.
    calibration : {"analytic", "classic"}
    random_state : int, Generator or None

    Notes
    -----
    Seed 004's Lemma 4.1 states the sensitivity of ``X^T X`` is 1 for datasets differing
    in one row, but its computation removes the row rather than replacing it: under
    replacement the upper triangle moves by up to ``sqrt(2)`` (attained by two orthogonal
    unit rows; :func:`privkit.mechanisms.second_moment_sensitivity`). privkit calibrates
    with sqrt(2); ``paper_claim_`` keeps the paper's (epsilon, delta), and ``guarantee_``
    is computed from the block that ran.

    .. versionadded:: 0.1.0
    """

    def __init__(self, n_components: int = 20, *, epsilon: float = 0.05,
                 delta: float = 1e-4, row_norm_bound: float = 1.0,
                 calibration: str = "analytic", random_state: Any = None) -> None:
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.row_norm_bound = row_norm_bound
        self.calibration = calibration
        self.random_state = random_state

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> AnalyzeGauss:
        """One Analyze Gauss block (the data's shape does not change it)."""
        owner = "DPPCA"
        check.positive_int("n_samples", n_samples, owner)
        check.positive_int("n_features", n_features, owner)
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        dlt = check.open_unit("delta", self.delta, owner)
        return pca_block(eps, dlt, self.calibration)

    def fit(self, X: Any, y: Any = None) -> DPPCA:
        """Release the private subspace; sets ``components_`` (k x d) and the accounting."""
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        k = check.positive_int("n_components", self.n_components, "DPPCA")
        if k > d:
            raise check.fail("n_components", k, f"at most n_features={d}", "DPPCA")
        block = self.plan(n_samples=n, n_features=d)
        Z = clipped_rows(X, self.row_norm_bound)
        with Ledger() as ledger:
            U = private_subspace(Z, block, k, np.random.default_rng(self.random_state))
        self.components_ = U.T
        self.plan_ = block
        self.ledger_ = ledger
        self.guarantee_: Guarantee = tightest(block, delta=self.delta).guarantee
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return self

    def transform(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        projected: NDArray[np.float64] = X @ self.components_.T
        return projected


class ReducedDimensionSVM(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """The parameters, budget split and classifier shared by seed 004's pipelines
    (:class:`DPDRDPMLClassifier`, and the federated one built on it)."""

    def __init__(self, *, epsilon: float = 0.1, delta: float = 1e-4, n_components: int = 20,
                 pca_share: float = 0.5, regularization: float = 0.01, huber_h: float = 0.5,
                 loss: str = "huber", row_norm_bound: float = 1.0,
                 calibration: str = "analytic", random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.n_components = n_components
        self.pca_share = pca_share
        self.regularization = regularization
        self.huber_h = huber_h
        self.loss = loss
        self.row_norm_bound = row_norm_bound
        self.calibration = calibration
        self.random_state = random_state

    def _budget(self) -> tuple[float, float]:
        """(epsilon1, epsilon2): ``pca_share`` of epsilon to the PCA, the rest to the SVM."""
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        share = check.open_unit("pca_share", self.pca_share, owner)
        check.open_unit("delta", self.delta, owner)
        return share * eps, (1.0 - share) * eps

    def _classifier(self, epsilon2: float) -> ObjectivePerturbationClassifier:
        """The objective-perturbation SVM on projected rows (their norm is at most 1)."""
        return ObjectivePerturbationClassifier(
            epsilon=epsilon2, loss=self.loss, huber_h=self.huber_h,
            regularization=self.regularization, row_norm_bound=1.0)


class DPDRDPMLClassifier(ReducedDimensionSVM):
    """DPDR-DPML (seed 004 Algorithm 3): private PCA, then objective-perturbation SVM.

    Parameters
    ----------
    epsilon, delta : float
        The total budget: ``pca_share * epsilon`` goes to the PCA (with delta), the rest to
        the classifier (pure). Seed 004's defaults: epsilon 0.1, delta 1e-4, share 0.5.
    n_components : int
        k (default 20).
    regularization, huber_h, loss : as for :class:`ObjectivePerturbationClassifier`.
    row_norm_bound, calibration, random_state : as for :class:`DPPCA`.

    Notes
    -----
    Projected rows ``U^T x`` have norm at most ``||x|| <= 1`` (U has orthonormal
    columns), so the classifier's analysis applies unchanged. ``guarantee_`` is the
    tightest accountant's bound for the plan ``Sequential(PCA block, classifier blocks)``
    at ``delta``; the paper claims ``(epsilon, delta)`` (its Theorem 4.3).

    .. versionadded:: 0.1.0
    """

    def _parts(self) -> tuple[DPPCA, ObjectivePerturbationClassifier]:
        eps1, eps2 = self._budget()
        pca = DPPCA(self.n_components, epsilon=eps1, delta=self.delta,
                    row_norm_bound=self.row_norm_bound, calibration=self.calibration)
        return pca, self._classifier(eps2)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``Sequential(PCA block, classifier plan)``, known before any data is seen."""
        pca, clf = self._parts()
        k = check.positive_int("n_components", self.n_components, type(self).__name__)
        return Sequential(pca.plan(n_samples=n_samples, n_features=n_features),
                          clf.plan(n_samples=n_samples, n_features=k, n_classes=n_classes))

    def fit(self, X: Any, y: Any) -> DPDRDPMLClassifier:
        X, y = validate_data(self, X, y, dtype=np.float64)
        pca, clf = self._parts()
        rng = np.random.default_rng(self.random_state)
        seeds = rng.spawn(2)
        pca.random_state = seeds[0]
        clf.random_state = seeds[1]
        with Ledger() as ledger:
            pca.fit(X)
            clf.fit(pca.transform(clipped_rows(X, self.row_norm_bound)), y)
        self.pca_ = pca
        self.classifier_ = clf
        self.classes_ = clf.classes_
        self.plan_ = self.plan(n_samples=X.shape[0], n_features=X.shape[1],
                               n_classes=self.classes_.size)
        self.ledger_ = ledger
        self.guarantee_: Guarantee = tightest(self.plan_, delta=self.delta).guarantee
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores: NDArray[np.float64] = self.classifier_.decision_function(
            self.pca_.transform(X / self.row_norm_bound))
        return scores

    def predict(self, X: Any) -> NDArray[Any]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        projected = self.pca_.transform(X / self.row_norm_bound)
        labels: NDArray[Any] = self.classifier_.predict(projected)
        return labels

