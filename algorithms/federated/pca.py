"""Private PCA by Gaussian noise on the second-moment matrix, and DPDR-DPML.

Wang et al. 2024, "Differentially private SVMs with knowledge aggregation": Algorithm 2
("DPDR") and Algorithm 3 ("DPDR-DPML").

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   The transcript is the release (issue 22): ``classes=`` for the classifiers (or a label
   set released privately), non-finite rows and labels outside ``classes_`` mapped to
   neutral records instead of refused, messages that never quote the data, and
   ``transcript_case``.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any, cast

import attrs
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

from .._audit_case import TranscriptCase
from .._bounds import clipped_rows, warn_if_preprocessed
from .._certified import certified
from .._few_labels import labels_without_model, no_model
from .._labels import LabelSet, declared_classes, label_release, release_label_set, total_claim
from .._private_rows import private_labels, private_rows
from .._spend import charge
from ..linear.erm import ObjectivePerturbationClassifier

__all__ = ["DPPCA", "DPDRDPMLClassifier", "private_subspace"]

R = Neighbouring.REPLACE_ONE


def calibrated_shares(*, epsilon: float, delta: float, share: float,
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


def pca_block(*, epsilon: float, delta: float, calibration: str) -> AnalyzeGauss:
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
    """The top-k eigenvectors (columns, largest first) of the noisy second moment of rows
    Z, computed alone by LAPACK's syevr (a full eigh of 784 x 784 costs about 7 times)."""
    from scipy.linalg import eigh
    noisy = block.release(Z.T @ Z, rng=rng)
    vectors = eigh(noisy, subset_by_index=[len(noisy) - k, len(noisy) - 1], driver="evr")[1]
    top: NDArray[np.float64] = np.ascontiguousarray(vectors[:, ::-1])
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

    Public and private
    ------------------
    Public: the schema (``n_features_in_``), n (REPLACE_ONE), ``row_norm_bound`` and the
    parameters above. Rows are mapped into the unit ball by a per-record public rule,
    silently (:func:`~privkit.algorithms._bounds.clipped_rows`): divided by B, clipped
    onto the bound when beyond it, and a row with a non-finite entry becomes the zero row,
    which adds nothing to ``X^T X``. ``components_`` is a post-processing of the one noisy
    release; nothing else depends on the rows. ``transform`` and ``inverse_transform``
    take queries, not private rows: a non-finite entry there is an error.

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
    .. versionchanged:: 0.3.0
       Rows beyond the bound are clipped silently and non-finite rows are zero rows
       (were: a warning, an error); ``transcript_case``.
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
        check.positive_finite("row_norm_bound", self.row_norm_bound, owner)
        return pca_block(epsilon=eps, delta=dlt, calibration=self.calibration)

    def fit(self, X: Any, y: Any = None, budget_filter: Any = None) -> DPPCA:
        """Release the private subspace; sets ``components_`` (k x d) and the accounting.
        ``budget_filter`` (a :class:`~privkit.BudgetFilter`) is charged the block, with
        ``delta``, before anything runs."""
        owner = "DPPCA"
        block = self.plan(n_samples=1, n_features=1)  # the parameters, before the data
        X = private_rows(X, owner=owner, estimator=self, min_rows=1)
        warn_if_preprocessed(self)
        d = X.shape[1]
        k = d if self.n_components is None else check.positive_int(
            "n_components", self.n_components, owner)
        if k > d:
            raise check.fail("n_components", k, f"at most n_features={d}", owner)
        Z = clipped_rows(X, self.row_norm_bound, owner=owner)
        charge(self, block, budget_filter, delta=self.delta)
        with Ledger() as ledger:
            U = private_subspace(Z, block, k, np.random.default_rng(self.random_state))
        self.components_ = U.T
        self.plan_ = block
        self.ledger_ = ledger
        self.guarantee_: Guarantee = certified(block, delta=float(self.delta))
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
        if not np.isfinite(Y).all():
            raise check.fail("X", "projections with a non-finite entry",
                             "finite projections", "DPPCA")
        restored: NDArray[np.float64] = Y @ self.components_
        return restored

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """One component of 60 rows in the unit disc at epsilon 1, delta 1e-3
        (:func:`transcript_fixture` without its labels)."""
        case = transcript_fixture(cls(1, epsilon=1.0, delta=1e-3), rows_per_label=30,
                                  epsilon=1.0, delta=1e-3)
        return attrs.evolve(case, y=None, label=None, new_label=None)


def transcript_fixture(estimator: Any, *, rows_per_label: int, epsilon: float,
                       delta: float) -> TranscriptCase:
    """The :class:`~privkit.algorithms._audit_case.TranscriptCase` of this module's
    estimators (REPLACE_ONE): ``2 rows_per_label`` public rows of 2 features inside the
    unit disc, labels 0 and 1 shifted apart along the first feature; the record, the
    points at and beyond the norm bound 1 and the probes are fixed."""
    rng = np.random.default_rng(22)
    y = np.repeat(np.array([0, 1]), rows_per_label)
    X = rng.uniform(-0.6, 0.6, size=(y.size, 2))
    X[:, 0] += np.where(y == 1, 0.1, -0.1)
    return TranscriptCase(
        estimator=estimator, X=X, y=y, relation=R, epsilon=epsilon, delta=delta,
        record=np.array([0.3, -0.2]), label=1, new_label=2, at_bound=np.array([0.6, 0.8]),
        beyond_bound=np.array([3.0, 4.0]),
        probes=np.array([[0.5, 0.5], [-0.5, -0.5], [0.4, -0.3], [0.0, 0.0]]))


@functools.lru_cache(maxsize=256)
def _cached_budget(kind: Any, params: tuple[tuple[str, Any], ...], n_samples: int,
                   n_classes: int, epsilon: float, delta: float) -> tuple[float, float]:
    """:meth:`ReducedDimensionSVM._budget` for an estimator of class ``kind`` with these
    parameters: a pure function of them, memoised because each calibration runs the
    tightest accountant about 40 times and refits (cross-validation, scikit-learn's
    checks, grid searches, audits) repeat it with the same parameters."""
    model = kind(**dict(params))
    return calibrated_shares(epsilon=epsilon, delta=delta, share=model.pca_share,
                             plan_for=lambda e1, e2: model._part_plan(
        n_samples, n_classes, e1, e2, delta))


class ReducedDimensionSVM(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """The parameters, label set, budget split and classifier shared by Wang et al.'s
    pipelines (:class:`DPDRDPMLClassifier`, and the federated one built on it)."""

    def __init__(self, *, epsilon: float = 0.1, delta: float = 1e-4, classes: Any = None,
                 n_components: int = 20, pca_share: float = 0.5,
                 regularization: float = 0.01, huber_h: float = 0.5, loss: str = "huber",
                 row_norm_bound: float = 1.0, calibration: str = "analytic",
                 random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.n_components = n_components
        self.pca_share = pca_share
        self.regularization = regularization
        self.huber_h = huber_h
        self.loss = loss
        self.row_norm_bound = row_norm_bound
        self.calibration = calibration
        self.random_state = random_state

    def _planned_labels(self) -> LabelSet:
        """Every public parameter checked, before any data; the label set as planned:
        the declared one, or the release to come (LABEL_SHARE of epsilon and of delta:
        the PCA stage uses delta)."""
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        dlt = check.open_unit("delta", self.delta, owner)
        check.open_unit("pca_share", self.pca_share, owner)
        check.positive_int("n_components", self.n_components, owner)
        check.positive_finite("row_norm_bound", self.row_norm_bound, owner)
        if self.calibration not in ("analytic", "classic"):
            raise check.fail("calibration", self.calibration, "'analytic' or 'classic'", owner)
        self._classifier(1.0, np.arange(2)).plan(n_samples=1, n_features=1)  # its checks
        declared = declared_classes(self.classes, owner)
        if declared is not None:
            return LabelSet(classes=declared)
        return label_release(eps, dlt, relation=R, stage_uses_delta=True, owner=owner)

    def _n_classes(self, labels: LabelSet, n_classes: int | None) -> int:
        """The number of labels a plan is for: the declared number (``n_classes``, if
        given, must equal it), or ``n_classes`` released labels (default 2)."""
        if not labels.released:
            if n_classes is not None and check.positive_int(
                    "n_classes", n_classes, "plan") != labels.classes.size:
                raise check.fail("n_classes", n_classes, f"{labels.classes.size}, the "
                                 "number of declared classes, or None", "plan")
            return int(labels.classes.size)
        return 2 if n_classes is None else check.positive_int("n_classes", n_classes, "plan")

    def _part_plan(self, n_samples: int, n_classes: int, epsilon1: float,
                   epsilon2: float, delta: float) -> Block:
        """One data holder's learning stage: ``Sequential(PCA block, classifier plan)``."""
        return Sequential(pca_block(epsilon=epsilon1, delta=delta, calibration=self.calibration),
                          self._classifier(epsilon2, np.arange(n_classes)).plan(
                              n_samples=n_samples, n_features=int(self.n_components)))

    def _stage(self, labels: LabelSet, n_samples: int, n_classes: int
               ) -> tuple[Block, float, float, float]:
        """``(plan, epsilon1, epsilon2, delta)`` of one data holder's learning stage on
        what the label release leaves of the budget."""
        eps, dlt = labels.rest(float(self.epsilon), float(self.delta))
        eps1, eps2 = self._budget(n_samples, n_classes, eps, dlt)
        return self._part_plan(n_samples, n_classes, eps1, eps2, dlt), eps1, eps2, dlt

    def _budget(self, n_samples: int, n_classes: int, epsilon: float, delta: float
                ) -> tuple[float, float]:
        """(epsilon1, epsilon2) for a stage of budget (epsilon, delta) on ``n_samples`` rows.

        ``calibration="analytic"``: in the ratio ``pca_share : 1 - pca_share``, scaled so
        that privkit's tightest accountant spends (epsilon, delta) exactly (to 1e-4,
        :func:`calibrated_shares`). ``"classic"`` reproduces Wang et al. 2024: ``pca_share *
        epsilon`` and the rest, added by basic composition (its Theorem 4.3)."""
        share = float(self.pca_share)
        if self.calibration == "classic":
            return share * epsilon, (1.0 - share) * epsilon
        params = self.get_params(deep=False)
        for unused in ("random_state", "classes", "epsilon", "delta"):
            params.pop(unused, None)  # the split depends on none of them
        try:
            kind = cast("Hashable", type(self))  # classes hash by identity
            return _cached_budget(kind, tuple(sorted(params.items())), n_samples, n_classes,
                                  epsilon, delta)
        except TypeError:  # an unhashable parameter: calibrate without the cache
            return calibrated_shares(epsilon=epsilon, delta=delta, share=share,
                                     plan_for=lambda e1, e2: self._part_plan(
                n_samples, n_classes, e1, e2, delta))

    def _classifier(self, epsilon2: float, classes: Any) -> ObjectivePerturbationClassifier:
        """The objective-perturbation SVM on projected rows (their norm is at most 1),
        with an intercept (augmented rows, see :mod:`privkit.algorithms.linear.erm`), for the
        label set ``classes`` (a record whose label is outside it is the zero augmented
        row)."""
        return ObjectivePerturbationClassifier(
            epsilon=epsilon2, classes=classes, loss=self.loss, huber_h=self.huber_h,
            regularization=self.regularization, row_norm_bound=1.0)

    def _charge(self, labels: LabelSet, stage: Block | None, budget_filter: Any) -> None:
        """Spend before anything is drawn: the plan for a declared label set, the whole
        (epsilon, delta) for a released one (its learning stage is known only after)."""
        if labels.released:
            block: Block = total_claim(float(self.epsilon), float(self.delta), R,
                                       f"{type(self).__name__}: private label set, then "
                                       "the learning stage")
        else:
            assert stage is not None
            block = stage
        charge(self, block, budget_filter, delta=float(self.delta))

    def _labels_only(self, X: Any) -> NDArray[Any]:
        """Predictions when no learning stage ran (fewer than two released labels)."""
        rows = validate_data(self, X, dtype=np.float64, reset=False)
        return labels_without_model(self, rows.shape[0])


class DPDRDPMLClassifier(ReducedDimensionSVM):
    """DPDR-DPML (Wang et al. 2024 Algorithm 3): private PCA, then objective-perturbation SVM.

    Parameters
    ----------
    epsilon, delta : float
        The total budget: ``pca_share * epsilon`` goes to the PCA (with delta), the rest to
        the classifier (pure). Wang et al.'s defaults: epsilon 0.1, delta 1e-4, share 0.5.
    classes : array-like or None
        The label set, public. ``None``: released privately by a stability histogram with
        ``LABEL_SHARE`` of epsilon and of delta; the two stages share the rest.
    n_components : int
        k (default 20).
    regularization, huber_h, loss : as for :class:`ObjectivePerturbationClassifier`.
    row_norm_bound, calibration, random_state : as for :class:`DPPCA`.

    Public and private
    ------------------
    Public: the declared ``classes``, the schema, n (REPLACE_ONE: the budget split and
    the classifier's calibration depend on it) and the parameters above. Records are
    mapped by per-record public rules, silently: rows as in :class:`DPPCA` (clipped onto
    ``row_norm_bound``; a non-finite row is the zero row), in both stages; a record whose
    label is outside ``classes_`` (undeclared, or suppressed by the label release) still
    counts in the PCA stage, which reads no label, and is the zero augmented row of the
    classifier stage, which moves no gradient. With fewer than two released labels no
    learning stage runs: ``predict`` returns the one label (none: an error that follows
    from the empty ``classes_``).

    Notes
    -----
    Projected rows ``U^T x`` have norm at most ``||x|| <= 1`` (U has orthonormal
    columns), so the classifier's analysis applies unchanged. ``guarantee_`` is the
    tightest accountant's bound for the plan ``Sequential(PCA block, classifier blocks)``
    at ``delta``, and the two parts' budgets are scaled so that it equals
    ``(epsilon, delta)`` (``calibration="analytic"``; see ``_budget``); the paper claims
    ``(epsilon, delta)`` by basic composition (its Theorem 4.3), which needs more noise.
    With a private label set the label release and that stage compose by basic
    composition (:meth:`~privkit.algorithms._labels.LabelSet.guarantee`).

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.3.0
       ``classes``; records are mapped, never refused; ``transcript_case``.
    """

    def plan(self, *, n_samples: int, n_features: int, n_classes: int | None = None) -> Block:
        """The label release (``classes=None``), then ``Sequential(PCA block, classifier
        plan)`` for ``n_classes`` labels (the declared number; 2 by default when the label
        set is released), known before any data is seen."""
        labels = self._planned_labels()
        check.positive_int("n_features", n_features, "plan")
        n = check.positive_int("n_samples", n_samples, "plan")
        k = self._n_classes(labels, n_classes)
        plan = labels.plan(self._stage(labels, n, k)[0] if k >= 2 else None)
        assert plan is not None
        return plan

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> DPDRDPMLClassifier:
        """Fit privately; ``budget_filter`` is charged before anything is drawn (the plan
        when ``classes`` is declared, the whole (epsilon, delta) otherwise)."""
        owner = type(self).__name__
        planned = self._planned_labels()
        X = private_rows(X, owner=owner, estimator=self, min_rows=1)
        y = private_labels(y, X.shape[0], owner=owner)
        warn_if_preprocessed(self)
        n = X.shape[0]
        declared_stage = None if planned.released else self._stage(
            planned, n, planned.classes.size)[0]
        self._charge(planned, declared_stage, budget_filter)
        for stale in ("pca_", "classifier_"):
            self.__dict__.pop(stale, None)
        rng = np.random.default_rng(self.random_state)
        stage, stage_delta = None, float(self.delta)
        with Ledger() as ledger:
            labels = release_label_set(y, classes=None if planned.released
                                       else planned.classes, epsilon=float(self.epsilon),
                                       delta=float(self.delta), relation=R, rng=rng,
                                       stage_uses_delta=True, owner=owner)
            if labels.classes.size >= 2:
                stage, eps1, eps2, stage_delta = self._stage(labels, n, labels.classes.size)
                pca = DPPCA(self.n_components, epsilon=eps1, delta=stage_delta,
                            row_norm_bound=1.0, calibration=self.calibration)
                clf = self._classifier(eps2, labels.classes)
                pca.random_state, clf.random_state = rng.spawn(2)
                Z = clipped_rows(X, self.row_norm_bound, owner=owner)
                pca.fit(Z)
                clf.fit(pca.transform(Z), y)
                self.pca_, self.classifier_ = pca, clf
        self.classes_ = labels.classes
        plan = labels.plan(stage)
        assert plan is not None
        self.plan_ = plan
        self.ledger_ = ledger
        guarantee = labels.guarantee(
            None if stage is None else certified(stage, delta=stage_delta),
            stage_delta)
        assert guarantee is not None
        self.guarantee_: Guarantee = guarantee
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if not hasattr(self, "classifier_"):
            raise no_model(self)
        scores: NDArray[np.float64] = self.classifier_.decision_function(
            self.pca_.transform(X / self.row_norm_bound))
        return scores

    def predict(self, X: Any) -> NDArray[Any]:
        check_is_fitted(self)
        if not hasattr(self, "classifier_"):
            return self._labels_only(X)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        labels: NDArray[Any] = self.classifier_.predict(
            self.pca_.transform(X / self.row_norm_bound))
        return labels

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """One principal component and the SVM on 100 rows of 2 features in the unit disc
        (:func:`transcript_fixture`) at epsilon 8, delta 1e-3. Released, each label of 50
        records clears the histogram's threshold (about 24.6 at epsilon 0.8, delta 1e-4)
        but for a chance near 2e-5, and a label held by one record almost never does;
        declared: ``classes=[0, 1, 2]``."""
        model = cls(epsilon=8.0, delta=1e-3, n_components=1, regularization=0.1,
                    classes=[0, 1, 2] if declare_classes else None)
        return transcript_fixture(model, rows_per_label=50, epsilon=8.0, delta=1e-3)
