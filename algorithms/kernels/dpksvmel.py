"""DPKSVMEL put to the test: the paper's algorithm, what it reveals, and a private variant.

The paper: Sun, Yang, Li, Zhang, "Differentially private kernel support vector machines
based on the exponential and Laplace hybrid mechanism" (Security and Communication
Networks, 2021; DPKSVMEL: Algorithm 1, sections 4.1-4.4, Theorem 1). A kernel SVM is trained
as usual (LIBSVM defaults: RBF, C = 1, gamma = 1 / n_features); every non-support vector
x_i joins the group of the support vector x_j that maximises the similarity
``Q_ij = y_i y_j K(x_i, x_j)`` (eq. 7), unless that similarity is below ``LLs`` (or
negative: the labels differ); a group with more than k members releases, in place of its
support vector, the mean of k members drawn by the exponential mechanism with score
``Q_ij`` and sensitivity ``1 - LLs`` (eq. 8); a smaller group releases its support vector
plus Laplace noise of scale ``Delta_lm / epsilon`` per attribute, with
``Delta_lm = sqrt(-ln(LLs) / gamma)`` (eq. 9: the group's radius, since
``exp(-gamma R^2) = LLs``; the text's eq. 9 is garbled, it says "sqrt(-log(LLs))" with
gamma 1/n folded in). The dual coefficients and the intercept are released as trained.

Theorem 1 claims epsilon-DP. What the released model reveals about one record
-----------------------------------------------------------------------------
1. **Exact group means.** In a group of more than k non-support vectors the released point
   is the exact mean of k records; no noise is added to it. Replace one member x of the
   group by a nearby x' that is still not a support vector (the SVM, its groups and its
   coefficients are then unchanged: non-support vectors do not enter the dual solution).
   With probability p > 0 the output contains ``mean(S)`` for a k-subset S containing x,
   a value that has probability 0 under the neighbour. So for every epsilon,
   ``P[M(D) in E] > e^epsilon P[M(D') in E] + delta`` for all ``delta < p``: the release
   is not (epsilon, delta)-DP for any finite epsilon and any delta below p (p is the
   selection probability, typically above 1/2 when the group has k + 1 members).
2. **Laplace noise on a record with the wrong sensitivity.** The Laplace branch perturbs the
   support vector itself, a record. Replacing that record can move it anywhere in the data
   domain (or turn it into a non-support vector), not within the group radius; the noise
   scale ``R / epsilon`` is calibrated to the radius, so the branch is at best
   ``(diameter / R) epsilon``-DP per coordinate, and unbounded on an unbounded domain.
3. **Unprotected parts.** The dual coefficients ``alpha_j y_j``, the intercept, the number
   of support vectors and which branch each group takes are functions of the data released
   without noise; Theorem 1's "parallel composition" over groups does not apply because
   the groups are themselves data-dependent (one record can change every group's
   membership through the SVM solution).

So privkit certifies **nothing** for the faithful algorithm: ``guarantee_`` is ``None`` and
``paper_claim_`` keeps the paper's ``PureDP(epsilon)``. The audit row ``dpksvmel_paper``
(:mod:`privkit.algorithms.kernels.audit_cases`) builds the pair of point 1 and certifies
an epsilon lower bound far above any claim.

The nearest private variant (:class:`DPKSVMELCorrected`)
-------------------------------------------------------
Keep the paper's idea (release "group means" in place of support vectors, and an RBF
kernel classifier on them) and make every released quantity private:

* the groups are Voronoi cells of public centroids and each released point is a noisy
  mean of its group: DP K-means (DPLloyd with Laplace noise, Su et al. 2017; pure
  epsilon/2-DP by the Laplace mechanism and sequential composition, see
  :mod:`privkit.algorithms.kernels.kmeans`) replaces "SV -> mean of k group members";
* the coefficients on the released points are not the raw dual coefficients but a
  private linear classifier on the features ``K(z_j, x)`` (Nyström-whitened): output
  perturbation (Chaudhuri, Monteleoni, Sarwate 2011, Algorithm 1 / Corollary 8) of a
  Huber-loss SVM, pure epsilon/2-DP, with the public feature bound ``kappa = 1`` for the
  RBF kernel (:mod:`privkit.algorithms.kernels.nystrom`).

By sequential composition the whole model is epsilon-DP (REPLACE_ONE), the same form as
the paper's claim, and privkit's accountant certifies it from the plan. This is exactly
:class:`~privkit.algorithms.kernels.nystrom.KMeansNystromClassifier` with the paper's kernel
(RBF, gamma = 1/d) and Laplace noise; data bounds (the radius of the public domain) are
public parameters.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   ``audit_case`` moved to the row ``dpksvmel_paper`` of
   :mod:`privkit.algorithms.kernels.audit_cases`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from privkit import _validation as check
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.neighbouring import Neighbouring

from .._audit_case import TranscriptCase
from .._labels import declared_classes, label_budget, release_label_set
from .._private_rows import private_labels, private_rows
from .._queries import query_rows
from .nystrom import KMeansNystromClassifier

__all__ = ["DPKSVMEL", "DPKSVMELCorrected"]


def _rbf(A: NDArray[np.float64], B: NDArray[np.float64], gamma: float) -> NDArray[np.float64]:
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    out: NDArray[np.float64] = np.exp(-gamma * np.maximum(sq, 0.0))
    return out


class DPKSVMEL(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """DPKSVMEL, faithful (Algorithm 1 of the paper), on scikit-learn's SVC.

    Parameters
    ----------
    epsilon : float
        The paper's privacy budget (used by both branches, as in section 4.2); with a
        private label set, what is left after the label release.
    k : int
        Members averaged in the exponential branch.
    lls : float
        LLs, the lower limit of the similarity, in (0, 1).
    C : float
        SVC's C (LIBSVM default 1).
    gamma : float or None
        RBF gamma (LIBSVM default ``1 / n_features``).
    classes : array-like of 2 labels, or None
        The public label set (the algorithm is binary). ``None``: released by
        :mod:`privkit.algorithms._labels`' stability histogram, which needs ``delta > 0``.
    delta : float, default 0
        Used only without ``classes``: the label release's delta.
    random_state : int, Generator or None

    Attributes
    ----------
    classes_ : ndarray
        The declared labels, or the released ones (fewer than 2 when the release kept
        fewer: then no SVM is trained and ``predict`` returns the one label, or refuses
        when none was released).
    svc_ : the trained (non-private) SVC, or None when fewer than two of ``classes_``
        have rows
    support_vectors_ : ndarray
        The released (perturbed) support vectors.
    dual_coef_, intercept_ : released as trained.
    branch_ : ndarray of str
        "exponential" or "laplace" per support vector.
    guarantee_ : None
        privkit certifies nothing for this algorithm (module docstring); never a number.
    paper_claim_ : Guarantee
        Theorem 1's claim, ``PureDP(epsilon)``, composed with the label release's cost
        when the label set is released (``ApproxDP(epsilon, delta)``).

    Public and private
    ------------------
    Public: the parameters above and the number of features; n (replace-one, the
    paper's setting). privkit certifies nothing for this algorithm, so no row is
    protected; the rules still keep the transcript free of what the algorithm itself
    does not release: a record whose label is not in ``classes_`` or with a non-finite
    entry is removed before the SVM is trained, silently; no message holds a value. It
    cannot spend on a budget filter (it has no guarantee to spend); use
    :class:`DPKSVMELCorrected`. Queries to ``predict`` and ``decision_function`` are
    checked strictly: a non-finite query row is an error.

    Notes
    -----
    The exponential branch draws k members without replacement with probabilities
    proportional to ``exp(epsilon Q_ij / (2 (1 - LLs)))``, by the Gumbel-top-k trick
    (Vieira 2014; Kool, van Hoof, Welling 2019, "Stochastic beams and where to find
    them"), which equals k successive draws of the exponential mechanism without
    replacement; the paper does not say how its budget is split over the k draws and uses
    epsilon for each.
    """

    def __init__(self, *, epsilon: float = 1.0, k: int = 2, lls: float = 0.5, C: float = 1.0,
                 gamma: float | None = None, classes: Any = None, delta: float = 0.0,
                 random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.k = k
        self.lls = lls
        self.C = C
        self.gamma = gamma
        self.classes = classes
        self.delta = delta
        self.random_state = random_state

    def _validated(self) -> tuple[float, int, float]:
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        k = check.positive_int("k", self.k, owner)
        lls = check.open_unit("lls", self.lls, owner)
        check.positive_finite("C", self.C, owner)
        if self.gamma is not None:
            check.positive_finite("gamma", self.gamma, owner)
        delta = check.delta("delta", self.delta, owner)
        declared = declared_classes(self.classes, owner)
        if declared is None:
            label_budget(eps, delta, stage_uses_delta=False, owner=owner)
        elif declared.size != 2:
            raise check.fail("classes", self.classes, "None or 2 labels", owner,
                             "DPKSVMEL is a binary classifier")
        return eps, k, lls

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> DPKSVMEL:
        """Algorithm 1 on the rows whose label is in ``classes_`` (see "Public and
        private"). ``budget_filter`` is refused: privkit certifies nothing to spend."""
        from sklearn.svm import SVC

        owner = type(self).__name__
        eps, k, lls = self._validated()
        if budget_filter is not None:
            raise check.fail("budget_filter", budget_filter, "None", owner, "privkit "
                             "certifies no guarantee for DPKSVMEL, so it has nothing to "
                             "spend; DPKSVMELCorrected is private")
        X = private_rows(X, owner=owner, dask=True)
        y = private_labels(y, int(X.shape[0]), owner=owner)
        rng = np.random.default_rng(self.random_state)
        with Ledger():
            labels = release_label_set(
                y, classes=declared_classes(self.classes, owner), epsilon=eps,
                delta=float(self.delta), relation=Neighbouring.REPLACE_ONE, rng=rng,
                stage_uses_delta=False, owner=owner)
        if labels.classes.size > 2:
            raise check.fail("classes", None, "2 labels", owner, "Only binary "
                             "classification is supported. The released label set has "
                             f"{labels.classes.size}: declare the two labels")
        self.classes_ = labels.classes
        eps_rest = labels.rest(eps, float(self.delta))[0]
        self.gamma_ = 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)
        self.n_features_in_ = int(X.shape[1])
        self.guarantee_: Guarantee | None = None
        self.paper_claim_: Guarantee | None = labels.guarantee(PureDP(epsilon=eps_rest), 0.0)
        keep = (labels.codes(y) >= 0) & np.isfinite(X).all(axis=1)
        Xk, yk = X[keep], y[keep]
        self.svc_: Any = None
        self.support_vectors_ = np.empty((0, X.shape[1]))
        self.branch_ = np.empty(0, dtype=object)
        self.dual_coef_ = np.empty((1, 0))
        self.intercept_ = np.zeros(1)
        present = np.unique(yk)
        if present.size == 2:
            self.svc_ = SVC(C=self.C, kernel="rbf", gamma=self.gamma_).fit(Xk, yk)
            self.support_vectors_, self.branch_ = self.private_support_vectors(
                Xk, yk, self.gamma_, eps_rest, k, lls, rng)
            self.dual_coef_ = self.svc_.dual_coef_.copy()
            self.intercept_ = self.svc_.intercept_.copy()
        elif present.size == 1 and self.classes_.size == 2:  # the constant classifier
            self.intercept_ = np.array([1.0 if present[0] == self.classes_[1] else -1.0])
        return self
    def groups(self, X: NDArray[np.float64], y: NDArray[Any], gamma: float, lls: float
               ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """For every non-support vector, its group (support-vector index, -1 if discarded)
        and its similarity ``Q_ij`` (eq. 7, sections 4.1 and Algorithm 1 lines 2-3)."""
        sv = self.svc_.support_
        non = np.setdiff1d(np.arange(len(X)), sv)
        sign = np.where(y == self.classes_[1], 1.0, -1.0)
        Q = sign[non, None] * sign[None, sv] * _rbf(X[non], X[sv], gamma)
        best = np.argmax(Q, axis=1)
        sim = Q[np.arange(len(non)), best]
        group = np.where(sim >= lls, best, -1)
        return group, sim

    def private_support_vectors(self, X: NDArray[np.float64], y: NDArray[Any], gamma: float,
                                eps: float, k: int, lls: float, rng: np.random.Generator
                                ) -> tuple[NDArray[np.float64], NDArray[Any]]:
        """Algorithm 1 lines 4-14 (one draw of the hybrid mechanism)."""
        sv = self.svc_.support_
        non = np.setdiff1d(np.arange(len(X)), sv)
        group, sim = self.groups(X, y, gamma, lls)
        gumbel_scale = 2.0 * (1.0 - lls) / eps  # exponential mechanism, eq. 8
        laplace_scale = math.sqrt(-math.log(lls) / gamma) / eps  # eq. 9
        out = X[sv].copy()
        branch = np.empty(len(sv), dtype=object)
        for j in range(len(sv)):
            members = np.flatnonzero(group == j)
            if members.size > k:
                keys = sim[members] + rng.gumbel(scale=gumbel_scale, size=members.size)
                chosen = members[np.argsort(-keys)[:k]]
                out[j] = X[non[chosen]].mean(axis=0)
                branch[j] = "exponential"
            else:
                out[j] = X[sv[j]] + rng.laplace(scale=laplace_scale, size=X.shape[1])
                branch[j] = "laplace"
        return out, branch

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        """``sum_j (alpha_j y_j) K(sv_j^private, x) + b`` (the paper's eq. 2) at the query
        rows (finite, ``n_features_in_`` columns)."""
        A = query_rows(self, X, "decision_function", dask=True)
        scores: NDArray[np.float64] = (_rbf(A, self.support_vectors_, self.gamma_)
                                       @ self.dual_coef_[0] + self.intercept_[0])
        return scores

    def predict(self, X: Any) -> NDArray[Any]:
        """The label of each query row: by the sign of :meth:`decision_function`, or the
        one released label."""
        check_is_fitted(self)
        if self.classes_.size < 2:
            if self.classes_.size == 0:
                raise check.fail("classes_", "no label", "at least one released label",
                                 f"{type(self).__name__}.predict", "the label release kept "
                                 "none: declare classes, or fit on more rows per label")
            return np.full(len(query_rows(self, X, "predict", dask=True)), self.classes_[0])
        out: NDArray[Any] = np.where(self.decision_function(X) > 0, self.classes_[1],
                                     self.classes_[0])
        return out

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # the paper's algorithm is binary
        return tags

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """The paper's claim on its own terms (``claim="paper"``; privkit makes none):
        two clusters of 22 rows, labels 0 and 1, replace-one. Declared: ``classes=[0,
        1]`` at epsilon 1 (the algorithm is binary, so the new label 2 lies outside the
        declared set and its record is removed). Released: epsilon 20 and delta 1e-5, so
        that the label release (at epsilon 2) keeps labels held by 22 rows. The
        worst-case pair is the audit row ``dpksvmel_paper``'s
        (:mod:`privkit.algorithms.kernels.audit_cases`)."""
        X, y, target = _audit_data(18)
        moved = X.copy()
        moved[target] += 0.01
        if declare_classes:
            estimator, eps, delta = cls(epsilon=1.0, classes=[0, 1]), 1.0, 0.0
        else:
            estimator, eps, delta = cls(epsilon=20.0, delta=1e-5), 20.0, 1e-5
        return TranscriptCase(
            estimator=estimator, X=X, y=y, relation=Neighbouring.REPLACE_ONE, epsilon=eps,
            delta=delta, record=np.array([0.9, 1.1]), label=1, new_label=2,
            at_bound=np.array([1.5, 1.5]), beyond_bound=np.array([40.0, 40.0]),
            probes=np.array([[1.0, 1.0], [-1.0, -1.0], [0.0, 0.0], [1.0, -1.0]]),
            worst_case=((X, y), (moved, y)), claim="paper")


class DPKSVMELCorrected(KMeansNystromClassifier):
    """The nearest epsilon-DP variant of DPKSVMEL (module docstring, with the proof).

    :class:`~privkit.algorithms.kernels.nystrom.KMeansNystromClassifier` with the paper's kernel
    (RBF, gamma = 1 / n_features), a pure-DP stage (Laplace DPLloyd and output
    perturbation) and ``n_components`` playing the role of the number of released
    support points. ``paper_claim_`` is the paper's ``PureDP(epsilon)``; ``guarantee_``
    is privkit's for what ran, and they agree when ``classes`` is declared.

    Public and private
    ------------------
    As :class:`~privkit.algorithms.kernels.nystrom.KMeansNystromClassifier`. The label set is
    public when ``classes`` is given (then the whole model is pure epsilon-DP, as the
    paper's claim); without it, it is released privately at ``LABEL_SHARE`` of epsilon
    and at ``delta``, which must then be > 0 (a label set cannot be released under pure
    DP), and the stage stays pure at the rest: ``(epsilon, delta)``-DP end to end.
    """

    def __init__(self, n_components: int = 16, *, epsilon: float = 1.0, delta: float = 0.0,
                 classes: Any = None, data_radius: float = 1.0, n_iter: int = 3,
                 count_share: float = 0.2, kmeans_share: float = 0.5,
                 regularization: float = 1e-2, huber_h: float = 0.5, tol: float = 1e-8,
                 random_state: Any = None) -> None:
        super().__init__(n_components, epsilon=epsilon, delta=delta, classes=classes,
                         kernel="rbf", data_radius=data_radius, n_iter=n_iter,
                         count_share=count_share, kmeans_share=kmeans_share,
                         learner="output", regularization=regularization, huber_h=huber_h,
                         tol=tol, random_state=random_state)

    def _stage_uses_delta(self) -> bool:
        return False

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """:meth:`KMeansNystromClassifier.transcript_case` with the paper's kernel (gamma
        = 1/2) and a pure stage: declared, ``classes=[0, 1, 2]`` at epsilon 1 and delta 0;
        released, epsilon 20 and delta 1e-5 (the label release's)."""
        return cls._case(declare_classes, {}, delta=0.0)


def _audit_data(k: int) -> tuple[NDArray[np.float64], NDArray[np.int64], int]:
    """Two tight clusters; a group with more than k members; the index of a member."""
    rng = np.random.default_rng(0)
    plus = np.array([1.0, 1.0]) + 0.05 * rng.normal(size=(k + 4, 2))
    minus = np.array([-1.0, -1.0]) + 0.05 * rng.normal(size=(k + 4, 2))
    X = np.concatenate([plus, minus])
    y = np.array([1] * len(plus) + [0] * len(minus))
    return X, y, 0
