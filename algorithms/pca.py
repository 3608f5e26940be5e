"""Private PCA by Gaussian noise on the second-moment matrix, and DPDR-DPML.

Wang et al. 2024: Algorithm 2 ("DPDR") and Algorithm 3 ("DPDR-DPML").

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.guarantees import ApproxDP, Guarantee
from privkit.ledger import Ledger
from privkit.mechanisms import AnalyzeGauss
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Sequential

from ._bounds import clipped_rows, warn_if_preprocessed
from .erm import ObjectivePerturbationClassifier

__all__ = ["DPPCA", "DPDRDPMLClassifier", "private_subspace"]

R = Neighbouring.REPLACE_ONE


def spend(budget_filter: Any, plan: Block, delta: float) -> None:
    """Charge ``plan`` to ``budget_filter`` (if any) before anything runs: with the
    basic rule the plan declares its ``delta``; a zCDP filter charges its own rho."""
    if budget_filter is None:
        return
    if budget_filter.accountant == "basic":
        budget_filter.spend(plan, delta=delta)
    else:
        budget_filter.spend(plan)


def calibrated_shares(epsilon: float, delta: float, share: float,
                      plan_for: Any) -> tuple[float, float]:
    """(epsilon1, epsilon2) in the ratio ``share : 1 - share``, scaled up by the largest
    factor s >= 1 for which privkit's tightest accountant certifies the composed plan
    ``plan_for(s share epsilon, s (1 - share) epsilon)`` at (epsilon, delta), to a
    relative 1e-4 below the budget (bisection; the certified epsilon grows with s).

    Wang et al. 2024 (Theorem 4.3) adds epsilon1 + epsilon2 by basic composition; composing the
    Gaussian PCA block's profile with the classifier's is tighter, so the same budget
    buys less noise."""
    def spent(s: float) -> float:
        return float(tightest(plan_for(s * share * epsilon, s * (1 - share) * epsilon),
                              delta=delta).epsilon)

    lo, hi = 1.0, 1.0
    if spent(1.0) > epsilon * (1 + 1e-9):
        return share * epsilon, (1 - share) * epsilon  # cannot happen: basic composition
    while spent(hi * 2.0) <= epsilon:
        hi *= 2.0
        if hi > 1e6:
            break
    lo, hi = hi, hi * 2.0
    while hi - lo > 1e-5 * lo:
        mid = 0.5 * (lo + hi)
        if spent(mid) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo * share * epsilon, lo * (1 - share) * epsilon


def pca_block(epsilon: float, delta: float, calibration: str) -> AnalyzeGauss:
    """The Analyze Gauss block of DPDR under REPLACE_ONE, rows of norm at most 1.

    ``calibration="analytic"`` is the smallest noise that meets (epsilon, delta) exactly
    (Balle, Wang 2018); ``"classic"`` is Wang et al.'s ``sigma = sqrt(2 ln(1.25/delta)) Δ / eps``
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
    """Differentially private PCA (Wang et al. 2024 Algorithm 2, Dwork et al. 2014).

    Releases ``X^T X + E`` with symmetric Gaussian noise E (Analyze Gauss) and projects on
    the top ``n_components`` eigenvectors of the noisy matrix (post-processing, free).

    Parameters
    ----------
    n_components : int or None, default None
        k; ``None`` keeps every component (``n_features``), as scikit-learn's PCA.
    epsilon, delta : float
        The budget, (epsilon, delta)-DP under REPLACE_ONE.
    row_norm_bound : float
        Public bound B on row norms; rows are divided by B and clipped to norm 1.
    calibration : {"analytic", "classic"}
    random_state : int, Generator or None

    Notes
    -----
    Wang et al.'s Lemma 4.1 states the sensitivity of ``X^T X`` is 1 for datasets differing
    in one row, but its computation removes the row rather than replacing it: under
    replacement the upper triangle moves by up to ``sqrt(2)`` (attained by two orthogonal
    unit rows; :func:`privkit.mechanisms.second_moment_sensitivity`). privkit calibrates
    with sqrt(2); ``paper_claim_`` keeps the paper's (epsilon, delta), and ``guarantee_``
    is computed from the block that ran. The analytic calibration spends (epsilon, delta)
    exactly (Balle, Wang 2018), so ``guarantee_`` meets the budget with equality.
    ``inverse_transform`` maps projections back (``Y components_``): post-processing.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       ``n_components=None`` by default; ``inverse_transform``; ``fit(budget_filter=)``.
    """

    def __init__(self, n_components: int | None = None, *, epsilon: float = 0.05,
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

    def fit(self, X: Any, y: Any = None, budget_filter: Any = None) -> DPPCA:
        """Release the private subspace; sets ``components_`` (k x d) and the accounting.
        ``budget_filter`` (a :class:`~privkit.BudgetFilter`) is charged the block, with
        ``delta``, before anything runs."""
        X = validate_data(self, X, dtype=np.float64)
        warn_if_preprocessed(self)
        n, d = X.shape
        k = d if self.n_components is None else check.positive_int(
            "n_components", self.n_components, "DPPCA")
        if k > d:
            raise check.fail("n_components", k, f"at most n_features={d}", "DPPCA")
        block = self.plan(n_samples=n, n_features=d)
        Z = clipped_rows(X, self.row_norm_bound, owner="DPPCA")
        spend(budget_filter, block, self.delta)
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

    def inverse_transform(self, X: Any) -> NDArray[np.float64]:
        """Projections back in feature space: ``X components_`` (post-processing)."""
        check_is_fitted(self)
        Y = np.asarray(X, dtype=np.float64)
        if Y.ndim != 2 or Y.shape[1] != self.components_.shape[0]:
            raise check.fail("X", f"shape {Y.shape}",
                             f"(n, {self.components_.shape[0]}) projections", "DPPCA")
        restored: NDArray[np.float64] = Y @ self.components_
        return restored


@functools.lru_cache(maxsize=256)
def _cached_budget(kind: Any, params: tuple[tuple[str, Any], ...],
                   n_samples: int, n_classes: int) -> tuple[float, float]:
    """:meth:`ReducedDimensionSVM._budget` for an estimator of class ``kind`` with these
    parameters: a pure function of them, memoised because each calibration runs the
    tightest accountant about 40 times and refits (cross-validation, scikit-learn's
    checks, grid searches) repeat it with the same parameters."""
    model = kind(**dict(params))
    eps, delta, share = model._shares()
    return calibrated_shares(eps, delta, share,
                             lambda e1, e2: model._part_plan(n_samples, n_classes, e1, e2))


class ReducedDimensionSVM(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """The parameters, budget split and classifier shared by Wang et al.'s pipelines
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

    def _shares(self) -> tuple[float, float, float]:
        """(epsilon, delta, pca_share), validated."""
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        share = check.open_unit("pca_share", self.pca_share, owner)
        return eps, check.open_unit("delta", self.delta, owner), share

    def _part_plan(self, n_samples: int, n_classes: int, epsilon1: float,
                   epsilon2: float) -> Block:
        """One data holder's plan: ``Sequential(PCA block, classifier plan)``."""
        k = check.positive_int("n_components", self.n_components, type(self).__name__)
        return Sequential(pca_block(epsilon1, self.delta, self.calibration),
                          self._classifier(epsilon2, np.arange(n_classes)).plan(
                              n_samples=n_samples, n_features=k))

    def _budget(self, n_samples: int, n_classes: int) -> tuple[float, float]:
        """(epsilon1, epsilon2) for one data holder of ``n_samples`` rows.

        ``calibration="analytic"``: in the ratio ``pca_share : 1 - pca_share``, scaled so
        that privkit's tightest accountant spends (epsilon, delta) exactly (to 1e-4,
        :func:`calibrated_shares`). ``"classic"`` reproduces Wang et al. 2024: ``pca_share *
        epsilon`` and the rest, added by basic composition (its Theorem 4.3)."""
        eps, delta, share = self._shares()
        if self.calibration == "classic":
            return share * eps, (1.0 - share) * eps
        params = self.get_params(deep=False)
        params.pop("random_state", None)  # the budget does not depend on the seed
        try:
            kind = cast("Hashable", type(self))  # classes hash by identity
            return _cached_budget(kind, tuple(sorted(params.items())), n_samples, n_classes)
        except TypeError:  # an unhashable parameter: calibrate without the cache
            return calibrated_shares(eps, delta, share, lambda e1, e2: self._part_plan(
                n_samples, n_classes, e1, e2))

    def _classifier(self, epsilon2: float, classes: Any) -> ObjectivePerturbationClassifier:
        """The objective-perturbation SVM on projected rows (their norm is at most 1),
        with an intercept (augmented rows, see :mod:`privkit.algorithms.erm`), for the
        label set ``classes``."""
        return ObjectivePerturbationClassifier(
            epsilon=epsilon2, classes=classes, loss=self.loss, huber_h=self.huber_h,
            regularization=self.regularization, row_norm_bound=1.0)


class DPDRDPMLClassifier(ReducedDimensionSVM):
    """DPDR-DPML (Wang et al. 2024 Algorithm 3): private PCA, then objective-perturbation SVM.

    Parameters
    ----------
    epsilon, delta : float
        The total budget: ``pca_share * epsilon`` goes to the PCA (with delta), the rest to
        the classifier (pure). Wang et al.'s defaults: epsilon 0.1, delta 1e-4, share 0.5.
    n_components : int
        k (default 20).
    regularization, huber_h, loss : as for :class:`ObjectivePerturbationClassifier`.
    row_norm_bound, calibration, random_state : as for :class:`DPPCA`.

    Notes
    -----
    Projected rows ``U^T x`` have norm at most ``||x|| <= 1`` (U has orthonormal
    columns), so the classifier's analysis applies unchanged. ``guarantee_`` is the
    tightest accountant's bound for the plan ``Sequential(PCA block, classifier blocks)``
    at ``delta``, and the two parts' budgets are scaled so that it equals
    ``(epsilon, delta)`` (``calibration="analytic"``; see ``_budget``); the paper claims
    ``(epsilon, delta)`` by basic composition (its Theorem 4.3), which needs more noise.

    .. versionadded:: 0.1.0
    """

    def _parts(self, n_samples: int, classes: Any
               ) -> tuple[DPPCA, ObjectivePerturbationClassifier]:
        eps1, eps2 = self._budget(n_samples, len(classes))
        pca = DPPCA(self.n_components, epsilon=eps1, delta=self.delta,
                    row_norm_bound=1.0, calibration=self.calibration)
        return pca, self._classifier(eps2, classes)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``Sequential(PCA block, classifier plan)``, known before any data is seen."""
        check.positive_int("n_features", n_features, "plan")
        n = check.positive_int("n_samples", n_samples, "plan")
        k = check.positive_int("n_classes", n_classes, "plan")
        return self._part_plan(n, k, *self._budget(n, k))

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> DPDRDPMLClassifier:
        """Fit privately; ``budget_filter`` is charged the whole plan before anything runs."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        warn_if_preprocessed(self)
        classes = np.unique(y)
        n_classes = classes.size
        if n_classes < 2:  # what the inner classifier checked before it took classes=
            raise check.fail("y", f"{n_classes} class", "at least 2 classes",
                             type(self).__name__)
        pca, clf = self._parts(X.shape[0], classes)
        Z = clipped_rows(X, self.row_norm_bound, owner=type(self).__name__)
        plan = self.plan(n_samples=X.shape[0], n_features=X.shape[1], n_classes=n_classes)
        spend(budget_filter, plan, self.delta)
        rng = np.random.default_rng(self.random_state)
        seeds = rng.spawn(2)
        pca.random_state = seeds[0]
        clf.random_state = seeds[1]
        with Ledger() as ledger:
            pca.fit(Z)
            clf.fit(pca.transform(Z), y)
        self.pca_ = pca
        self.classifier_ = clf
        self.classes_ = clf.classes_
        self.plan_ = plan
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

