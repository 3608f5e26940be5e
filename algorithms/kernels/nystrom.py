"""Private kernel learning with DP K-means Nyström features (the feature map itself is in
:mod:`privkit.algorithms.kernels.nystrom_map`).

B. Lee, J. Ahn, C. Park, "Differential privacy in scalable general kernel learning via
K-means Nyström random features" (poster, KAIST): (1) an epsilon/2-DP K-means gives K
centroids ``z_1..z_K``; (2) with ``[k(z_i, z_j)] = U Sigma U^T``,

    ``phi(x) = Sigma^{+1/2} U^T [k(z_1, x), ..., k(z_K, x)]^T``

(post-processing of the centroids); (3) an epsilon/2-DP linear learner on ``phi(x)``.
The map is Williams and Seeger's Nyström method ("Using the Nyström method to speed up
kernel machines", NIPS 2000) with the landmarks of Zhang, Tsang and Kwok ("Improved
Nyström low-rank approximation and error analysis", ICML 2008: K-means centres).

The map's public norm bound ``kappa`` (:mod:`privkit.algorithms.kernels.nystrom_map`) is what
makes the learner's sensitivity analysis hold whatever the private centroids are.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   ``audit_case`` moved to the row ``kmeans_nystrom`` of
   :mod:`privkit.algorithms.kernels.audit_cases`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from privkit import _validation as check
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, PostProcess, Sequential

from .._audit_case import TranscriptCase
from .._certified import certified
from .._dask_blocks import is_dask_array
from .._labels import LabelSet, declared_classes, label_release, release_label_set, total_claim
from .._private_rows import private_labels, private_rows
from .._queries import query_rows
from .._spend import charge
from .kmeans import DPKMeans, clip_to_ball
from .nystrom_map import Kernel, KernelFunction, NystromMap, kernel_approximation_error

__all__ = [
    "KMeansNystromClassifier",
    "Kernel",
    "KernelFunction",
    "NystromMap",
    "kernel_approximation_error",
]

R = Neighbouring.REPLACE_ONE


@functools.lru_cache(maxsize=256)
def _calibrated(kind: Any, params: tuple[tuple[str, Any], ...], n_samples: int,
                n_features: int, n_classes: int, epsilon: float, delta: float
                ) -> tuple[float, float]:
    """:meth:`KMeansNystromClassifier._split`, memoised: a pure function of public
    parameters found by bisection over privkit's accountants (about 0.1 s), which every
    fit with the same parameters would otherwise repeat."""
    model: KMeansNystromClassifier = kind(**dict(params))
    return model._split(n_samples, n_features, n_classes, epsilon, delta)


class KMeansNystromClassifier(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Private kernel classification: DP K-means -> Nyström map -> private linear learner.

    Lee, Ahn and Park's pipeline (module docstring) with :class:`DPKMeans` (DPLloyd,
    Gaussian noise) and privkit's private linear learners on the features.

    Parameters
    ----------
    n_components : int
        K, the number of centroids (and features).
    epsilon, delta : float
        The total budget. The learning stage (DP K-means at ``delta``, the learner pure)
        splits it in the ratio ``kmeans_share : 1 - kmeans_share`` (the poster's split
        is 1/2) scaled so that privkit's tightest accountant certifies the stage at
        exactly its budget (to 1e-4; :func:`privkit.algorithms.federated.pca.calibrated_shares`):
        composing the Gaussian K-means with the learner is tighter than the sum, so each
        part gets a little more than its share. ``delta = 0`` runs the pure-DP (Laplace)
        DPLloyd, as the poster's claim, where the sum is exact.
    classes : array-like or None
        The public label set. ``None``: released privately first
        (:mod:`privkit.algorithms._labels`, ``LABEL_SHARE`` of epsilon and of delta,
        which must then be > 0); the stage gets the rest.
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

    Attributes
    ----------
    classes_ : ndarray
        The declared labels, or the released ones; with fewer than 2 released no stage
        runs (no ``kmeans_``, ``feature_map_``, ``linear_``) and ``predict`` returns the
        one label, or refuses when none was released.
    kmeans_, feature_map_, linear_ : the three stages' fitted parts (the learner's
        labels are the indices of ``classes_``).
    plan_, guarantee_, ledger_, paper_claim_

    Public and private
    ------------------
    Public: the parameters above, the label set when ``classes`` is given, the bound r
    and the feature bound kappa, the number of features, and n (the relation is
    replace-one: the learner's sensitivity is ``O(1 / n)``). Private: the rows and their
    labels; the label set without ``classes``. A row beyond r is clipped silently; a row
    with a non-finite entry is the null record of DP K-means, the zero feature vector of
    the map and the zero augmented row of the learner; a record whose label is not in
    ``classes_`` takes part in K-means (which reads no label) and is the learner's zero
    augmented row, which moves no gradient. No warning or message depends on the rows.
    Queries to ``predict`` and ``decision_function`` are checked strictly.

    Notes
    -----
    Privacy: the stage's plan is ``Sequential(PostProcess(Repeat(Sequential(sum,
    count), T)), learner)``: K-means releases centroids; the Nyström map is a function
    of the centroids (post-processing); the learner runs on ``phi(x_i)``, whose norm is
    at most kappa for *every* x (not only the data), so its sensitivity analysis
    (Chaudhuri, Monteleoni, Sarwate 2011, Theorems 6 and 9, for rows of norm <= 1 after
    dividing by kappa) holds whatever the centroids are; adaptive sequential composition
    covers the data reuse. With a private label set, the release comes first and the
    stage is calibrated, for whatever set comes out, to what is left; the two compose by
    basic composition (:meth:`LabelSet.guarantee`). ``fit`` accepts dask arrays: K-means
    and the features run blockwise on the cluster, and the features (n x K) are
    gathered for the learner.

    ``paper_claim_`` is the poster's ``epsilon/2 + epsilon/2``: ``PureDP(epsilon)``; this
    implementation's K-means uses Gaussian noise (tighter composition over iterations), so
    its guarantee is approximate DP at ``delta``, as ``guarantee_`` says.
    """

    def __init__(self, n_components: int = 64, *, epsilon: float = 1.0, delta: float = 1e-5,
                 classes: Any = None, kernel: Any = "rbf", gamma: float | None = None,
                 degree: int = 2, coef0: float = 1.0, kernel_bound: float | None = None,
                 data_radius: float = 1.0, n_iter: int = 5, count_share: float = 0.2,
                 kmeans_share: float = 0.5, learner: str = "output", loss: str = "huber",
                 regularization: float = 1e-3, huber_h: float = 0.5, tol: float = 1e-8,
                 chunk_size: int = 65536, random_state: Any = None) -> None:
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
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

    # -- public parameters ------------------------------------------------------------------

    def _stage_uses_delta(self) -> bool:
        """Whether the learning stage spends delta (Gaussian DP K-means); pure otherwise."""
        return float(self.delta) > 0.0

    def _validated(self) -> NDArray[Any] | None:
        """The declared label set, after every public parameter is checked (``classes=
        None`` with ``delta == 0`` is refused here, before any data)."""
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        delta = check.delta("delta", self.delta, owner)
        check.positive_int("n_components", self.n_components, owner)
        check.open_unit("kmeans_share", self.kmeans_share, owner)
        check.positive_finite("data_radius", self.data_radius, owner)
        if self.learner not in ("objective", "output"):
            raise check.fail("learner", self.learner, "'objective' or 'output'", owner)
        self._kernel()
        declared = declared_classes(self.classes, owner)
        if declared is None:
            label_release(eps, delta, relation=R, stage_uses_delta=self._stage_uses_delta(),
                          owner=owner)
        return declared

    def _labels_planned(self, declared: NDArray[Any] | None) -> LabelSet:
        """The label set's cost before the data: nothing when declared."""
        if declared is not None:
            return LabelSet(classes=declared)
        return label_release(float(self.epsilon), float(self.delta), relation=R,
                             stage_uses_delta=self._stage_uses_delta(),
                             owner=type(self).__name__)

    def _stage_budget(self, labels: LabelSet) -> tuple[float, float]:
        """The learning stage's (epsilon, delta): what the label release leaves
        (:meth:`LabelSet.rest`; no delta for a pure stage)."""
        epsilon, delta = labels.rest(float(self.epsilon), float(self.delta))
        return epsilon, delta if self._stage_uses_delta() else 0.0

    def _kernel(self) -> Kernel:
        return Kernel(self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                      kernel_bound=self.kernel_bound)

    def _kappa(self, n_features: int) -> float:
        """The public bound on the feature norm (the kernel's bound on the data ball)."""
        radius = check.positive_finite("data_radius", self.data_radius, type(self).__name__)
        return math.sqrt(self._kernel().bound(radius, n_features))

    # -- the plan -----------------------------------------------------------------------------

    def _budget(self, n_samples: int, n_features: int, n_classes: int, epsilon: float,
                delta: float) -> tuple[float, float]:
        """(K-means epsilon, learner epsilon) of a stage at ``(epsilon, delta)``."""
        params = self.get_params(deep=False)
        for unused in ("classes", "random_state"):  # the split depends on neither
            params.pop(unused)
        try:
            kind = cast("Hashable", type(self))  # classes hash by identity
            return _calibrated(kind, tuple(sorted(params.items())), n_samples, n_features,
                               n_classes, epsilon, delta)
        except TypeError:  # an unhashable parameter: calibrate without the cache
            return self._split(n_samples, n_features, n_classes, epsilon, delta)

    def _split(self, n_samples: int, n_features: int, n_classes: int, epsilon: float,
               delta: float) -> tuple[float, float]:
        """The ``kmeans_share`` split scaled so the tightest accountant spends exactly
        ``(epsilon, delta)`` (see ``epsilon``)."""
        from ..federated.pca import calibrated_shares

        kappa = self._kappa(n_features)
        return calibrated_shares(epsilon=epsilon, delta=delta, share=float(self.kmeans_share),
                                 plan_for=lambda e1, e2: self._stage_plan(
                                     n_samples, n_features, n_classes, kappa, delta, e1, e2))

    def _stage_plan(self, n_samples: int, n_features: int, n_classes: int, kappa: float,
                    delta: float, kmeans_epsilon: float, learner_epsilon: float) -> Block:
        km = self._kmeans(None, kmeans_epsilon, delta)._plan(n_features)
        learn = self._learner(kappa, None, learner_epsilon, n_classes).plan(
            n_samples=n_samples, n_features=self.n_components, n_classes=n_classes)
        return Sequential(PostProcess(km, "Nyström map of the private centroids"), learn)

    def _stage(self, n_samples: int, n_features: int, n_classes: int, labels: LabelSet
               ) -> tuple[Block, float, float, float]:
        """The stage's plan, delta and (K-means, learner) epsilons for ``n_classes``."""
        epsilon, delta = self._stage_budget(labels)
        eps_km, eps_learn = self._budget(n_samples, n_features, n_classes, epsilon, delta)
        plan = self._stage_plan(n_samples, n_features, n_classes, self._kappa(n_features),
                                delta, eps_km, eps_learn)
        return plan, delta, eps_km, eps_learn

    def _kmeans(self, seed: Any, epsilon: float, delta: float) -> DPKMeans:
        return DPKMeans(self.n_components, epsilon=epsilon, delta=delta,
                        n_iter=self.n_iter, data_radius=self.data_radius,
                        count_share=self.count_share, relation="replace_one",
                        noise="laplace" if delta == 0 else "gaussian",
                        chunk_size=self.chunk_size, random_state=seed)

    def _learner(self, kappa: float, seed: Any, epsilon: float, n_classes: int) -> Any:
        """The learner on the features; its labels are the indices of ``classes_``."""
        from ..linear.erm import ObjectivePerturbationClassifier, OutputPerturbationClassifier

        learner = (ObjectivePerturbationClassifier if self.learner == "objective"
                   else OutputPerturbationClassifier)
        return learner(epsilon=epsilon, classes=np.arange(n_classes), loss=self.loss,
                       huber_h=self.huber_h, regularization=self.regularization,
                       row_norm_bound=kappa, tol=self.tol, random_state=seed)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int | None = None
             ) -> Block:
        """The whole pipeline's plan, one tree (see Notes): the stage for the declared
        classes; without them, the label release, then the stage for ``n_classes``
        released labels (default 2; none below 2)."""
        declared = self._validated()
        n = check.positive_int("n_samples", n_samples, "plan")
        d = check.positive_int("n_features", n_features, "plan")
        labels = self._labels_planned(declared)
        k = declared.size if declared is not None else (
            2 if n_classes is None else check.positive_int("n_classes", n_classes, "plan"))
        plan = labels.plan(self._stage(n, d, k, labels)[0] if k >= 2 else None)
        assert plan is not None
        return plan

    # -- fitting ------------------------------------------------------------------------------

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> KMeansNystromClassifier:
        """Fit privately on numpy or dask X (n x d) and labels y (numpy, n).

        ``budget_filter``: a :class:`~privkit.BudgetFilter`, charged before anything is
        drawn: the plan with ``classes`` declared, the whole ``(epsilon, delta)`` without
        (the stage is known only after the label release)."""
        owner = type(self).__name__
        declared = self._validated()
        X = private_rows(X, owner=owner, dask=True)
        n, d = (int(v) for v in X.shape)
        y = private_labels(y, n, owner=owner)
        if n == 0:  # n is public (replace-one)
            raise check.fail("X", "no rows", "at least one row (n is public under "
                             "replace-one)", owner)
        planned = self._labels_planned(declared)
        if declared is not None:
            spend, spend_delta = self._stage(n, d, declared.size, planned)[:2]
            charge(self, spend, budget_filter, delta=spend_delta or None)
        else:
            charge(self, total_claim(float(self.epsilon), float(self.delta), R,
                                     f"{owner}: private label set, then the stage"),
                   budget_filter, delta=float(self.delta))
        seeds = np.random.SeedSequence(self.random_state).spawn(3)
        for stale in ("kmeans_", "feature_map_", "linear_"):
            self.__dict__.pop(stale, None)
        stage: Block | None = None
        stage_guarantee: Guarantee | None = None
        with Ledger() as ledger:
            labels = release_label_set(
                y, classes=declared, epsilon=float(self.epsilon), delta=float(self.delta),
                relation=R, rng=np.random.default_rng(seeds[2]),
                stage_uses_delta=self._stage_uses_delta(), owner=owner)
            k = int(labels.classes.size)
            if k >= 2:
                stage, delta, eps_km, eps_learn = self._stage(n, d, k, labels)
                self._fit_stage(X, labels.codes(y), k, seeds, delta, eps_km, eps_learn)
                stage_guarantee = certified(stage, delta=delta)
        self.classes_ = labels.classes
        self.n_features_in_ = d
        plan = labels.plan(stage)  # never None: a declared set always has a stage
        guarantee = labels.guarantee(stage_guarantee, self._stage_budget(labels)[1])
        assert plan is not None
        assert guarantee is not None
        self.plan_ = plan
        self.ledger_ = ledger
        self.guarantee_: Guarantee = guarantee
        self.paper_claim_: Guarantee = PureDP(epsilon=self.epsilon)
        return self

    def _fit_stage(self, X: Any, codes: NDArray[np.int64], k: int,
                   seeds: list[np.random.SeedSequence], delta: float, eps_km: float,
                   eps_learn: float) -> None:
        """DP K-means, the map and the learner; ``codes`` index ``classes_`` (-1 for a
        label outside it), and a row with a non-finite entry is neutral for the learner."""
        km = self._kmeans(np.random.default_rng(seeds[0]), eps_km, delta).fit(X)
        fmap = NystromMap(km.cluster_centers_, self._kernel(), data_radius=self.data_radius,
                          chunk_size=self.chunk_size)
        F = fmap.transform(X)
        finite = np.isfinite(X).all(axis=1)
        if is_dask_array(F):
            from dask.base import compute

            F, finite = compute(F, finite)  # type: ignore[no-untyped-call]
        codes = np.where(finite, codes, -1)
        self.kmeans_ = km
        self.feature_map_ = fmap
        self.linear_ = self._learner(fmap.norm_bound, np.random.default_rng(seeds[1]),
                                     eps_learn, k).fit(F, codes)

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        """The learner's scores on the features of the query rows (finite, with
        ``n_features_in_`` columns)."""
        if not hasattr(self, "linear_"):
            check_is_fitted(self)
            raise check.fail("classes_", f"{self.classes_.size} released label(s)",
                             "at least 2 labels for decision scores",
                             f"{type(self).__name__}.decision_function")
        F = self.feature_map_.transform(query_rows(self, X, "decision_function", dask=True))
        if is_dask_array(F):
            F = F.compute()
        out: NDArray[np.float64] = self.linear_.decision_function(F)
        return out

    def predict(self, X: Any) -> NDArray[Any]:
        """The label of each query row: the learner's, or the one released label."""
        from ..linear.erm import labels_from_scores

        check_is_fitted(self)
        if self.classes_.size < 2:
            if self.classes_.size == 0:
                raise check.fail("classes_", "no label", "at least one released label",
                                 f"{type(self).__name__}.predict", "the label release kept "
                                 "none: declare classes, or fit on more rows per label")
            rows = query_rows(self, X, "predict", dask=True)
            return np.full(rows.shape[0], self.classes_[0])
        return labels_from_scores(self.decision_function(X), self.classes_)

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """Two clusters of 20 rows (labels 0 and 1) in the unit disc, K = 2 centroids,
        one DPLloyd iteration, RBF kernel, the multinomial logistic learner (one solve
        for every class), Lambda 0.1. Declared: ``classes=[0, 1, 2]`` at
        epsilon 1 (delta 1e-5), so the new label 2 is declared. Released: epsilon 20, so
        that the label release (at epsilon 2) keeps labels held by 20 rows."""
        return cls._case(declare_classes, dict(kernel="rbf", gamma=1.0, loss="logistic"),
                         delta=1e-5)

    @classmethod
    def _case(cls, declare_classes: bool, params: dict[str, Any], *, delta: float
              ) -> TranscriptCase:
        rng = np.random.default_rng(2021)
        X = clip_to_ball(np.concatenate([rng.normal(-0.4, 0.15, (20, 2)),
                                         rng.normal(0.4, 0.15, (20, 2))]), 0.95)
        params = dict(params, n_components=2, n_iter=1, data_radius=1.0, regularization=0.1,
                      tol=1e-6)
        if declare_classes:
            estimator = cls(epsilon=1.0, delta=delta, classes=[0, 1, 2], **params)
        else:
            estimator = cls(epsilon=20.0, delta=max(delta, 1e-5), **params)
        return TranscriptCase(
            estimator=estimator, X=X, y=np.repeat([0, 1], 20), relation=R,
            epsilon=float(estimator.epsilon), delta=float(estimator.delta),
            record=np.array([0.3, 0.2]), label=1, new_label=2, at_bound=np.array([1.0, 0.0]),
            beyond_bound=np.array([40.0, 0.0]),
            probes=np.array([[0.5, 0.5], [-0.5, -0.5], [0.0, 0.0], [0.9, -0.1]]))
