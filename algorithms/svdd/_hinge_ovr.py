"""The one-vs-rest hinge SVM on random Fourier features that Park 2022's baselines
(:mod:`privkit.algorithms.svdd.svm_baselines`) share: liblinear's solve, the base estimator
(parameters, the label set, the neutral records, predictions), and the transcript
cases' data.

.. versionadded:: 0.3.0
   (the solver moved here from :mod:`privkit.algorithms.svdd.svm_baselines`, where it was
   added in 0.2.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin

from privkit import _validation as check
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Sequential

from .._audit_case import TranscriptCase
from .._labels import (
    LabelSet,
    _histogram,
    declared_classes,
    label_budget,
    record_codes,
    single_label,
    total_claim,
)
from .._private_rows import private_labels, private_rows
from .._queries import query_rows
from .._spend import charge
from ..kernels.random_features import RandomFourierFeatures

__all__ = ["CASE_PROBES", "OneVsRestSVM", "R", "case", "hinge_svm", "hinge_svm_ovr"]

R = Neighbouring.REPLACE_ONE


def _liblinear_hinge(Phi: NDArray[np.float64], labels: NDArray[Any], nu: float,
                     every_label: NDArray[Any]) -> NDArray[np.float64]:
    """liblinear's dual coordinate descent (Hsieh et al. 2008) as scikit-learn's
    ``LinearSVC(loss="hinge", C=nu, fit_intercept=False, dual=True, tol=1e-6)`` runs it,
    through the solver function its ``fit`` calls (``sklearn.svm._base._fit_liblinear``):
    the inputs are already validated features, and ``LinearSVC.fit``'s re-validation and
    target-type inference took a third of a fit on a small set. The coordinate order's
    seed is fixed (0), so a fit is reproducible; it is public randomness, drawn
    independently of the data.

    One zero row is appended per label of ``every_label``: a zero row adds the constant
    ``nu hinge(0)`` to the objective and leaves the minimiser where it was, and liblinear
    then sees every label (it refuses rows of a single label, and sizes its one-vs-rest
    output by the labels present), so the output's shape is fixed by ``every_label``."""
    import warnings

    import sklearn
    from sklearn.svm._base import _fit_liblinear

    rows = np.vstack([Phi, np.zeros((every_label.size, Phi.shape[1]))])
    targets = np.concatenate([labels, every_label])
    with warnings.catch_warnings(), sklearn.config_context(
            assume_finite=True, skip_parameter_validation=True):
        warnings.simplefilter("ignore")
        coef, _, _ = _fit_liblinear(
            rows, targets, C=nu, fit_intercept=False, intercept_scaling=1.0,
            class_weight=None, penalty="l2", dual=True, verbose=0, max_iter=20_000,
            tol=1e-6, random_state=0, multi_class="ovr", loss="hinge")
    W: NDArray[np.float64] = np.asarray(coef, dtype=np.float64)
    return W


def hinge_svm(Phi: NDArray[np.float64], signs: NDArray[np.float64], nu: float
              ) -> NDArray[np.float64]:
    """``argmin_w 1/2 ||w||^2 + nu sum_i hinge(y_i w . phi_i)`` (no bias), by liblinear's
    dual coordinate descent (Hsieh et al. 2008) as scikit-learn's ``LinearSVC`` runs it
    (:func:`_liblinear_hinge`); any signs, all of one sign or no row included."""
    w: NDArray[np.float64] = _liblinear_hinge(Phi, signs, nu, np.array([-1.0, 1.0])).ravel()
    return w


def hinge_svm_ovr(Phi: NDArray[np.float64], codes: NDArray[np.int64], nu: float,
                  n_classes: int | None = None) -> NDArray[np.float64]:
    """The one-vs-rest weights of ``n_classes >= 3`` classes (default: the largest code
    plus one), row k solving :func:`hinge_svm` with labels ``+1`` for class k and ``-1``
    otherwise, in one liblinear call (its one-vs-rest loop solves the same problems; one
    call saves scikit-learn's per-fit validation, most of the time on small data). A
    class with no row gets the weights of its all-negative problem."""
    c = int(codes.max()) + 1 if n_classes is None else n_classes
    return _liblinear_hinge(Phi, codes, nu, np.arange(c))


class OneVsRestSVM(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """The base of SVM WEIGHT, OUTPUT and SEMI: hinge SVMs without bias on random
    features, one-vs-rest (one problem for two classes); see
    :mod:`privkit.algorithms.svdd.svm_baselines` for what each releases and what is public."""

    def __init__(self, *, epsilon: float = 1.0, delta: float | None = 0.0, nu: float = 0.05,
                 gamma: float = 1.0, n_components: int = 400, classes: Any = None,
                 random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.nu = nu
        self.gamma = gamma
        self.n_components = n_components
        self.classes = classes
        self.random_state = random_state

    def _check(self, n_features: int | None = None) -> NDArray[Any] | None:
        """Every public parameter, before any data is touched; the declared label set."""
        owner = type(self).__name__
        check.positive_finite("epsilon", self.epsilon, owner)
        check.positive_finite("nu", self.nu, owner)
        RandomFourierFeatures.check_parameters(self.n_components, self.gamma, n_features,
                                               owner)
        return declared_classes(self.classes, owner)

    def _delta(self, n_samples: int) -> float:
        """The validated delta (n, public under REPLACE_ONE, is used by SVM SEMI's
        default)."""
        return check.delta("delta", self.delta, type(self).__name__)

    def _label_budget(self, delta: float) -> tuple[float, float]:
        """(epsilon, delta) of the label release, or (0, 0) when ``classes`` is declared;
        raises before any data is touched when the label set is private and delta 0."""
        if self.classes is not None:
            return 0.0, 0.0
        return label_budget(self.epsilon, delta, stage_uses_delta=self._stage_uses_delta,
                            owner=type(self).__name__)

    _stage_uses_delta = False

    def _label_plan(self, stage: Block, delta: float) -> Block:
        """``stage`` after the label release when ``classes`` is not declared."""
        if self.classes is None:
            eps_l, delta_l = self._label_budget(delta)
            return Sequential(_histogram(eps_l, delta_l, R), stage)
        return stage

    def _prepare(self, X: Any, y: Any) -> tuple[NDArray[np.float64], NDArray[Any]]:
        """Validate the parameters and X's and y's schema (nothing of their values), and
        draw the public feature map: ``(rows, labels)``."""
        self._check()
        A = private_rows(X, owner=type(self).__name__, estimator=self, min_rows=1)
        self._check(A.shape[1])
        labels = private_labels(y, A.shape[0], owner=type(self).__name__)
        for name in ("coef_", "_w"):  # a refit with fewer than two labels sets neither
            self.__dict__.pop(name, None)
        self._rng = np.random.default_rng(self.random_state)
        self.features_ = RandomFourierFeatures(self.n_components, self.gamma,
                                               int(self._rng.integers(2**63))).fit(A)
        return A, labels

    def _charge(self, budget: Block | None, delta: float, budget_filter: Any) -> None:
        """Charge ``budget`` (the plan, with declared classes) or the whole
        ``(epsilon, delta)`` (a private label set) on the filter, before any noise."""
        claim = budget if self.classes is not None else total_claim(
            self.epsilon, delta, R, f"{type(self).__name__}: the label set released "
            "privately, then the SVM")
        if claim is not None:
            charge(self, claim, budget_filter, delta=delta)

    def _records(self, A: NDArray[np.float64], labels: NDArray[Any], delta: float
                 ) -> tuple[LabelSet, NDArray[np.float64], NDArray[np.int64]]:
        """Release the label set and map the rows: ``(label set, features of the
        records, their codes)``. A record is neutral (dropped: a zero feature row) when
        its features are undefined or its label is not in the set (NaN included)."""
        Phi, defined = self.features_.transform_defined(A)
        label_set, codes = record_codes(
            labels, defined, classes=declared_classes(self.classes, "fit"),
            epsilon=self.epsilon, delta=delta, relation=R, rng=self._rng,
            stage_uses_delta=self._stage_uses_delta, owner=type(self).__name__)
        self.classes_ = label_set.classes
        kept = codes[defined]
        return label_set, Phi[kept >= 0], kept[kept >= 0]

    def _weights(self, Phi: NDArray[np.float64], codes: NDArray[np.int64]
                 ) -> NDArray[np.float64]:
        """One weight vector per one-vs-rest problem (one for two classes)."""
        c = self.classes_.size
        if c == 2:
            return hinge_svm(Phi, np.where(codes == 1, 1.0, -1.0), self.nu)[None, :]
        return hinge_svm_ovr(Phi, codes, self.nu, c)

    def _labels(self, scores: NDArray[np.float64]) -> NDArray[Any]:
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]  # type: ignore[no-any-return]
        return self.classes_[np.argmax(scores, axis=1)]  # type: ignore[no-any-return]

    def _problems(self, n_classes: int) -> int:
        return 1 if n_classes <= 2 else n_classes

    def _decision(self, X: Any) -> NDArray[np.float64]:
        """``phi(X) W^T`` for validated queries; one column for two classes, raveled."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "coef_")
        Q = query_rows(self, X, "decision_function")
        out: NDArray[np.float64] = self.features_.transform_queries(Q) @ self.coef_.T
        return out[:, 0] if out.shape[1] == 1 else out

    def _predict(self, X: Any) -> NDArray[Any]:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "classes_")
        if self.classes_.size < 2:
            return single_label(self.classes_, query_rows(self, X, "predict").shape[0],
                                type(self).__name__)
        return self._labels(self.decision_function(X))


def case(cls: Any, declare_classes: bool, declared_delta: float, **fit_params: Any
         ) -> TranscriptCase:
    """A baseline's transcript case: 48 rows of two 2-D blobs (labels 0 and 1, 24 each),
    F = 4, REPLACE_ONE. With ``classes=[0, 1, 2]`` (2 is the new label no record has),
    epsilon 1 and ``declared_delta``; with a private label set, epsilon 8 and delta 1e-3,
    so that each label's 24 records are near the stability threshold (about 25) and the
    release is exercised both ways. No data bound: the map is defined on every finite
    row, so the bound records are rows far out (the second may overflow, and is then a
    neutral record)."""
    rng = np.random.default_rng(0)
    y = np.arange(48) % 2
    X = np.array([[-1.0, 0.0], [1.0, 0.0]])[y] + 0.5 * rng.normal(size=(48, 2))
    epsilon, delta = (1.0, declared_delta) if declare_classes else (8.0, 1e-3)
    params: dict[str, Any] = {"classes": [0, 1, 2]} if declare_classes else {}
    estimator = cls(epsilon=epsilon, delta=delta, nu=0.1, gamma=0.5, n_components=4,
                    random_state=0, **params)
    return TranscriptCase(
        estimator=estimator, X=X, y=y, relation=R, epsilon=epsilon, delta=delta,
        record=np.array([0.5, 0.5]), label=1, new_label=2 if declare_classes else 7,
        at_bound=np.array([1e6, -1e6]), beyond_bound=np.array([1e300, -1e300]),
        probes=CASE_PROBES, fit_params=fit_params)


#: The transcript cases' probes (and SVM SEMI's public Z).
CASE_PROBES = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [3.0, 3.0]])
