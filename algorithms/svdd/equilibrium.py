"""The equilibrium-point classifier on a private SVDD support function, accounted honestly.

Source: J. Park, "Differentially private multi-class classification using kernel supports
and equilibrium points" (SNU master's thesis, 2022), chapters 5-6:

* phase I: the private support function ``f(x) = ||phi(x) - a_hat||^2`` (eq. 4.6) from
  :mod:`privkit.algorithms.svdd.svdd` (Algorithm 1);
* phase II: gradient dynamics ``dx/dt = -grad f(x)`` (eq. 5.2) by gradient descent with
  Table 7.1's learning rate, decayed by 1/5 after 80% of the iterations, vectorised over
  all points; end points are equilibrium points (EPs) and their basins (5.3-5.4); EPs are
  grouped into hypercubes of half-width ``r_max`` in the max norm (eq. 5.6);
* phase III: noisy majority votes per basin or hypercube (eq. 5.5);
* release (chapter 6): the support function with EPs / hypercubes and labels (inference by
  running the dynamics from the test point and taking the nearest labelled EP), or EPs and
  labels only (inference by k-nearest neighbours).

Privacy analysis (privkit's; each claim of the thesis is checked):

* Phase I is sound: Laplace noise with L1 sensitivity ``2 nu sqrt(F)`` under REPLACE_ONE
  (Corollary 4.2; privkit re-proves the L2 bound ``2 nu`` in :mod:`privkit.algorithms.svdd.svdd`).
* Phase II is **not** covered by the thesis' argument. The EPs it releases are the end
  points of the dynamics started *from the training points*; with Table 7.1's schedule
  (e.g. 20 steps of 0.001) a point moves by at most ``lr * iters * sup ||grad f||``, so the
  released EPs are the training points shifted by a small, bounded amount. The set of
  released EPs (or non-empty hypercubes) is a deterministic function of individual rows:
  adding a row in an empty region adds an EP with probability 1, so no finite epsilon holds.
  "Parallel composition" (the thesis, section 5.2) applies to mechanisms on disjoint
  parts, not to publishing the parts.
* Phase III: the counts have L1 sensitivity 1 under ADD_REMOVE but 2 under REPLACE_ONE (a
  replaced row leaves one vote and joins another), the relation of the thesis' Corollary
  4.2; with ``Lap(1/eps)`` the votes alone are ``2 eps``-DP under REPLACE_ONE.
* The thesis spends epsilon on the centre and epsilon again on the votes and claims
  epsilon in total; sequential composition gives at least ``2 eps`` even where each part
  is private.

What privkit builds (``mode="private"``, the default): the hypercubes are cells of a public
grid (cube ``floor((e + r) / 2r)``, centre ``2 r index``: every member within ``r`` of its
centre in the max norm, eq. 5.6) so they depend on no row; each training row is mapped to
the cube of its end point (a per-row function of public objects); the released cubes and
labels come from a *stability-based histogram*
(:class:`privkit.mechanisms.StabilityHistogram`; Korolova, Kenthapadi, Mishra, Ntoulas
2009; Bun, Nissim, Stemmer 2016): Laplace noise of scale b on every class count of every
non-empty cube, a cube is released iff its largest noisy count exceeds a threshold tau,
with the argmax as its label (eq. 5.5 is that argmax). Under ADD_REMOVE this is
``(1/b, delta_cell)``-DP: a cube present on one side only holds one row, and is released
with probability at most ``delta_cell``; under REPLACE_ONE, by group privacy,
``(2/b, delta_cell (1 + e^(1/b)))``; tau is set so that this is the votes' delta. The
budget is split: the centre
gets ``centre_share`` of epsilon (default 1/2), the votes the rest, and all of delta (half
each with Gaussian noise on the centre). ``guarantee_`` is privkit's accountant on that
plan. ``mode="paper"`` runs the thesis' procedure as written (EPs from training rows,
``Lap(1/eps)`` votes on every non-empty cell, epsilon for each phase); its
``paper_claim_`` is ``PureDP(epsilon)`` and its ``guarantee_`` is ``None``: privkit can
prove no finite guarantee for it.

The rest of the transcript (issue 22; see the class's "Public and private"): the label
set is declared (``classes``) or released privately first, the phases calibrated to what
is left (basic composition, valid for the adaptive choice); no refusal and no attribute
depends on n (the SVDD solve takes every n, :mod:`privkit.algorithms.svdd.svdd`); rows and
labels are never refused by value, a record that cannot be used is removed by a public
rule.

Audits (``privkit audit``, :mod:`privkit.algorithms.svdd.audit_cases`): ``audit_case``
(``equilibrium_points``) observes the
noisy centre of the private mode with ``centre_share=0.9`` on SVDD's worst-case pair and
certifies about 0.89 of privkit's guarantee at epsilon 1 and 4 (its ceiling is 0.9, the
centre's share); ``audit_case_paper`` (``equilibrium_points_paper``) tests the thesis'
``PureDP(epsilon)`` claim for the paper-faithful mode and finds it violated (a released EP
follows a single row: the bound is limited only by the number of draws).

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin

from privkit import _validation as check
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.mechanisms import StabilityHistogram
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Block, Claimed, PostProcess, Sequential

from .._audit_case import TranscriptCase
from .._bounds import finite_rows
from .._certified import certified
from .._labels import _histogram as label_histogram
from .._labels import declared_classes, label_budget, record_codes, single_label, total_claim
from .._private_rows import private_labels, private_rows
from .._queries import query_rows
from .._spend import charge
from ..kernels.random_features import RandomFourierFeatures
from ._equilibrium_cases import private_case, transcript_case_paper
from ._equilibrium_dynamics import (
    COORDINATE_BOUND,
    Descent,
    cubes,
    descend,
    grid_keys,
    knn_labels,
    row_values,
    unique_rows,
)
from .svdd import centre_mechanism, centre_sensitivity, clip_to_ball, svdd_centre

__all__ = [
    "EquilibriumPointClassifier",
    "descend",
    "transcript_case_paper",
]

_MODES = ("private", "paper")
_RELEASES = ("support", "equilibria")
#: What the learning stage sets (absent when fewer than two labels were released).
_LEARNT = ("centre_", "cells_", "cell_keys_", "cell_labels_", "equilibria_",
           "equilibrium_labels_", "_descent")
#: EquilibriumPointClassifier._plan_parts' memo: parameters -> (centre, votes, plan)
_PLANS: dict[tuple[Any, ...], tuple[Block, Block, Block]] = {}


class EquilibriumPointClassifier(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Multi-class classification by equilibrium points of a private SVDD support function.

    Parameters
    ----------
    epsilon, delta : float
        The total budget. ``mode="private"`` needs ``delta > 0`` (the stability-based
        histogram of released cubes).
    nu : float
        Cap on each SVDD dual weight (Table 7.1's ``C/n``), public.
    gamma : float
        RBF parameter of the support function.
    n_components : int
        F, random features (400 in the thesis).
    learning_rate, n_iter : float, int
        Table 7.1's ``lr`` and ``iters``; the rate is divided by 5 after 80% of the steps.
    r_max : float or None
        Half-width of the hypercubes (eq. 5.6). Table 7.1 gives none for the 2-D sets: in
        ``mode="paper"`` each EP is then its own cell (end points equal to ``ep_tol``);
        ``mode="private"`` needs a public grid and uses ``default_r`` (0.1).
    mode : {"private", "paper"}
    release : {"support", "equilibria"}
        Chapter 6.1 (support function; predict by dynamics + nearest labelled cell) or
        6.2 (labelled points only; predict by ``n_neighbors``-nearest neighbours).
    n_neighbors : int
    centre_noise : {"laplace", "l2_laplace", "gaussian"}
    centre_share : float in (0, 1)
        Share of epsilon for the centre (private mode).
    relation : {"replace_one", "add_remove"}
    classes : array-like or None
        The public label set. None releases it privately (:mod:`privkit.algorithms._labels`:
        ``LABEL_SHARE`` of epsilon and of delta; the phases get the rest, except in paper
        mode, whose phases keep the thesis' epsilon each).
    random_state : int, Generator or None

    Attributes
    ----------
    classes_, features_, plan_, ledger_, guarantee_ (None in paper mode), paper_claim_;
    and, when at least two labels were released, centre_, cells_ (cell
    representatives), cell_keys_, cell_labels_ (and in paper mode equilibria_,
    equilibrium_labels_).

    Public and private
    ------------------
    Public: every constructor parameter (the grid of cells above all), the number of
    features, ``classes`` when given, and n under ``relation="replace_one"`` (an empty X is
    refused there; under ``"add_remove"`` it fits). Private: the rows, the labels, and n
    under ADD_REMOVE; in private mode nothing published depends on them beyond the noisy
    centre, the label release and the stability histogram (the cells released are its
    output; no refusal depends on n: the SVDD solve takes every n). The neutral record,
    by a public per-record rule applied silently: a row with a non-finite entry, a NaN
    label, or a label outside ``classes_`` is removed. Under REPLACE_ONE that turns a
    replacement into a removal, which every stage's replace-one guarantee covers (the
    centre's bound holds for additions and removals, and the histograms are calibrated by
    group privacy from their add-remove guarantee). Finite coordinates beyond
    :data:`COORDINATE_BOUND` are clipped onto it (the descent runs in float32); queries,
    which are not private, are validated strictly, then clipped the same way. In paper
    mode the released equilibrium points follow single rows: no guarantee (module
    docstring).
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, nu: float = 0.05,
                 gamma: float = 1.0, n_components: int = 400, learning_rate: float = 0.001,
                 n_iter: int = 20, r_max: float | None = None, default_r: float = 0.1,
                 ep_tol: float = 1e-3, mode: str = "private", release: str = "support",
                 n_neighbors: int = 1, centre_noise: str = "laplace",
                 centre_share: float = 0.5, relation: str = "replace_one",
                 clip_centre: bool = True, tol: float = 1e-8, classes: Any = None,
                 random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.nu = nu
        self.gamma = gamma
        self.n_components = n_components
        self.learning_rate = learning_rate
        self.n_iter = n_iter
        self.r_max = r_max
        self.default_r = default_r
        self.ep_tol = ep_tol
        self.mode = mode
        self.release = release
        self.n_neighbors = n_neighbors
        self.centre_noise = centre_noise
        self.centre_share = centre_share
        self.relation = relation
        self.clip_centre = clip_centre
        self.tol = tol
        self.classes = classes
        self.random_state = random_state

    # -- the plan ---------------------------------------------------------------------------

    def _validate(self) -> Neighbouring:
        """Every public parameter, before any data is touched (the label set's too)."""
        owner = type(self).__name__
        check.positive_finite("epsilon", self.epsilon, owner)
        if self.mode not in _MODES:
            raise check.fail("mode", self.mode, f"one of {_MODES}", owner)
        if self.release not in _RELEASES:
            raise check.fail("release", self.release, f"one of {_RELEASES}", owner)
        if self.mode == "private" and not 0.0 < self.delta < 1.0:
            raise check.fail("delta", self.delta, "a number in (0, 1)", owner,
                             "the released set of cubes needs delta > 0 (stability histogram)")
        if not 0.0 < self.centre_share < 1.0:
            raise check.fail("centre_share", self.centre_share, "a number in (0, 1)", owner)
        check.positive_finite("learning_rate", self.learning_rate, owner)
        check.positive_int("n_iter", self.n_iter, owner)
        check.positive_int("n_neighbors", self.n_neighbors, owner)
        check.positive_finite("default_r", self.default_r, owner)
        check.positive_finite("ep_tol", self.ep_tol, owner)
        if self.r_max is not None:
            check.positive_finite("r_max", self.r_max, owner)
        RandomFourierFeatures.check_parameters(self.n_components, self.gamma, None, owner)
        if declared_classes(self.classes, owner) is None:
            label_budget(self.epsilon, self.delta, stage_uses_delta=True, owner=owner)
        return Neighbouring.parse(self.relation, owner=owner)

    def _stage_budget(self) -> tuple[float, float]:
        """(epsilon, delta) of the learning stage: all of it with declared classes, what
        the label release leaves otherwise."""
        if self.classes is not None:
            return self.epsilon, self.delta
        eps_l, delta_l = label_budget(self.epsilon, self.delta, stage_uses_delta=True,
                                      owner=type(self).__name__)
        return self.epsilon - eps_l, self.delta - delta_l

    def _budget(self, epsilon: float, delta: float) -> tuple[float, float, float, float]:
        """(eps_centre, delta_centre, eps_votes, delta_votes) of a stage of (epsilon,
        delta); the thesis' (epsilon for each phase) in paper mode."""
        if self.mode == "paper":
            return self.epsilon, 0.0, self.epsilon, 0.0
        e_c = epsilon * self.centre_share
        d_c = delta / 2.0 if self.centre_noise == "gaussian" else 0.0
        return e_c, d_c, epsilon - e_c, delta - d_c

    def _centre_block(self, relation: Neighbouring, e_c: float, d_c: float) -> Block:
        sens = centre_sensitivity(self.nu, norm=Norm.L2, relation=relation,
                                  n_components=self.n_components, tol=self.tol,
                                  paper=self.mode == "paper")
        return centre_mechanism(self.centre_noise, epsilon=e_c, delta=d_c,
                                sensitivity_l2=sens, n_components=self.n_components)

    def _vote_scale(self, relation: Neighbouring) -> float:
        """Laplace scale b on the counts: the votes' epsilon is 1/b (ADD_REMOVE) or 2/b
        (REPLACE_ONE); the thesis' eq. 5.5 uses b = 1/eps whatever the relation."""
        _, _, e_v, _ = self._budget(*self._stage_budget())
        if self.mode == "paper":
            return 1.0 / e_v
        return (2.0 if relation is Neighbouring.REPLACE_ONE else 1.0) / e_v

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """The label release (when ``classes`` is None), then the centre's additive block
        and the vote histogram (private mode), calibrated for ``n_classes`` labels (the
        declared ones' number when declared). ``n_samples`` is not used: no part of the
        plan depends on n.

        In paper mode the second block is the thesis' claim, labelled as such: privkit
        does not account it (see the module docstring).
        """
        relation = self._validate()
        RandomFourierFeatures.check_parameters(
            self.n_components, self.gamma, check.positive_int("n_features", n_features,
                                                              "plan"), type(self).__name__)
        classes = declared_classes(self.classes, type(self).__name__)
        c = classes.size if classes is not None else check.positive_int(
            "n_classes", n_classes, "plan")
        stage = self._plan_parts(relation, max(c, 2), *self._stage_budget())[2]
        if classes is not None:
            return stage
        eps_l, delta_l = label_budget(self.epsilon, self.delta, stage_uses_delta=True,
                                      owner=type(self).__name__)
        return Sequential(label_histogram(eps_l, delta_l, relation), stage)

    def _plan_parts(self, relation: Neighbouring, n_classes: int, epsilon: float,
                    delta: float) -> tuple[Block, Block, Block]:
        """(centre block, votes block, plan) of a stage of (epsilon, delta) for
        ``n_classes`` labels: ``fit`` releases through the very blocks its plan declares.
        Memoised (blocks and plans are frozen) on every constructor parameter but
        ``random_state`` and ``classes``, which no plan depends on beyond their number, as
        building them costs more than the dynamics on a small dataset."""
        key = (*(getattr(self, name) for name in _PLAN_PARAMETERS), relation, n_classes,
               epsilon, delta)
        try:
            parts = _PLANS.get(key)
            hashable = True
        except TypeError:  # an unhashable parameter: built (and rejected) below, unmemoised
            parts, hashable = None, False
        if parts is None:
            parts = self._build_plan_parts(relation, n_classes, epsilon, delta)
            if hashable:
                if len(_PLANS) >= 256:
                    _PLANS.clear()
                _PLANS[key] = parts
        return parts

    def _build_plan_parts(self, relation: Neighbouring, n_classes: int, epsilon: float,
                          delta: float) -> tuple[Block, Block, Block]:
        e_c, d_c, e_v, d_v = self._budget(epsilon, delta)
        centre = self._centre_block(relation, e_c, d_c)
        if self.mode == "paper":
            votes: Block = Claimed(PureDP(epsilon=e_v), relation=relation,
                                   label="thesis eq. 5.5: Lap(1/eps) votes (its claim)")
        else:
            votes = StabilityHistogram.for_approx_dp(epsilon=e_v, delta=d_v,
                                                     n_classes=n_classes, relation=relation)
        plan = PostProcess(Sequential(centre, votes),
                           "clip centre; dynamics; cubes; argmax labels; inference")
        return centre, votes, plan

    # -- fitting ----------------------------------------------------------------------------

    def _cell_keys(self, ends: NDArray[np.float64]) -> NDArray[np.int64]:
        if self.mode == "private":
            return cubes(ends, self.r_max if self.r_max is not None else self.default_r)
        if self.r_max is not None:
            return cubes(ends, self.r_max)
        return grid_keys(ends, self.ep_tol, self.ep_tol / 2.0)  # the nearest multiple

    def _charge(self, relation: Neighbouring, n_features: int, budget_filter: Any) -> None:
        """Charge the plan (declared classes) or the whole (epsilon, delta) (a private
        label set) before any noise; paper mode has no guarantee to spend."""
        if budget_filter is None:
            return
        if self.mode == "paper":
            raise check.fail("budget_filter", budget_filter, "None in mode='paper'",
                             type(self).__name__, "privkit certifies no guarantee for the "
                             "thesis' procedure, so there is nothing it could spend")
        block = (self.plan(n_samples=1, n_features=n_features) if self.classes is not None
                 else total_claim(self.epsilon, self.delta, relation,
                                  "EquilibriumPointClassifier: the label set released "
                                  "privately, then the centre and the votes"))
        charge(self, block, budget_filter, delta=self.delta)

    def fit(self, X: Any, y: Any, *, budget_filter: Any = None) -> EquilibriumPointClassifier:
        """Fit on the private rows (see "Public and private"); ``budget_filter`` is
        charged before any noise."""
        owner = type(self).__name__
        relation = self._validate()
        A = private_rows(X, owner=owner, estimator=self,
                         min_rows=0 if relation is Neighbouring.ADD_REMOVE else 1)
        finite = finite_rows(A)
        RandomFourierFeatures.check_parameters(self.n_components, self.gamma, A.shape[1],
                                               owner)
        labels = private_labels(y, A.shape[0], owner=owner)
        self._charge(relation, A.shape[1], budget_filter)
        for name in _LEARNT:  # a refit with fewer than two labels must not show the last
            self.__dict__.pop(name, None)
        rng = np.random.default_rng(self.random_state)
        self.features_ = RandomFourierFeatures(self.n_components, self.gamma,
                                               int(rng.integers(2**63))).fit(A)
        # the rule for records: a non-finite entry makes the row neutral (removed); finite
        # entries beyond the float32 range of the descent are clipped onto COORDINATE_BOUND
        rows = np.clip(A[finite], -COORDINATE_BOUND, COORDINATE_BOUND)
        Phi, defined = self.features_.transform_defined(rows)
        where = np.flatnonzero(finite)[defined]
        records = np.zeros(A.shape[0], dtype=bool)
        records[where] = True
        with Ledger() as ledger:
            label_set, codes = record_codes(
                labels, records, classes=declared_classes(self.classes, owner),
                epsilon=self.epsilon, delta=self.delta, relation=relation, rng=rng,
                stage_uses_delta=True, owner=owner)
            self.classes_ = label_set.classes
            inside = codes[where] >= 0
            stage = None
            if self.classes_.size >= 2:
                stage = self._learn(relation, rows[defined][inside], Phi[inside],
                                    codes[where][inside], rng)
        self.plan_ = label_set.plan(stage)
        self.ledger_ = ledger
        stage_delta = self._stage_budget()[1]
        if self.mode == "private":
            self.guarantee_: Guarantee | None = label_set.guarantee(
                None if stage is None else certified(stage, delta=stage_delta), stage_delta)
        else:
            self.guarantee_ = None
        self.paper_claim_: Guarantee = PureDP(epsilon=self.epsilon)
        return self

    def _learn(self, relation: Neighbouring, X: NDArray[np.float64],
               Phi: NDArray[np.float64], codes: NDArray[np.int64],
               rng: np.random.Generator) -> Block:
        """Phases I-III on the records (rows X, features Phi, label codes): the noisy
        centre, the dynamics, the voted cells; returns the stage's plan."""
        c = self.classes_.size
        block, votes_block, plan = self._plan_parts(relation, c, *self._stage_budget())
        solution = svdd_centre(Phi, self.nu, tol=self.tol)
        noisy = block.release(solution.centre, rng=rng)  # type: ignore[union-attr]
        centre = clip_to_ball(noisy, 1.0) if self.clip_centre else noisy
        self._descent = Descent(self.features_, centre, self.learning_rate, self.n_iter)
        ends = self._descent(X)
        uniq, cell_of = unique_rows(self._cell_keys(ends))
        votes = np.bincount(cell_of * c + codes, minlength=uniq.shape[0] * c).reshape(-1, c)
        if self.mode == "private":
            labels = votes_block.release(votes, rng=rng)  # type: ignore[union-attr]
            keep = labels >= 0
            r = self.r_max if self.r_max is not None else self.default_r
            self.cells_ = 2.0 * r * uniq[keep].astype(np.float64)
            self.cell_labels_ = labels[keep]
            self.cell_keys_ = uniq[keep]
        else:
            from privkit.mechanisms import Laplace

            noise_block = Laplace.for_epsilon(1.0 / self._vote_scale(relation),
                                              sensitivity=Sensitivity(
                value=1.0, norm=Norm.L1, relation=Neighbouring.ADD_REMOVE))
            labels = np.argmax(noise_block.release(votes.astype(float), rng=rng), axis=1)
            self.cell_keys_ = uniq
            if self.r_max is None:
                self.cells_ = uniq.astype(np.float64) * self.ep_tol
            else:
                self.cells_ = 2.0 * self.r_max * uniq.astype(np.float64)
            self.cell_labels_ = labels
            # the thesis releases the training EPs themselves, each with its cell's label
            self.equilibria_ = ends
            self.equilibrium_labels_ = labels[cell_of]
        self.centre_ = centre
        return plan

    # -- inference --------------------------------------------------------------------------

    def _reference(self) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        if self.mode == "paper" and self.release == "equilibria":
            return self.equilibria_, self.equilibrium_labels_
        return self.cells_, self.cell_labels_

    def predict(self, X: Any) -> NDArray[Any]:
        from sklearn.utils.validation import check_is_fitted

        if not hasattr(self, "ledger_"):  # set last by fit
            check_is_fitted(self)
        X = np.clip(query_rows(self, X, "predict"), -COORDINATE_BOUND, COORDINATE_BOUND)
        if self.classes_.size < 2:
            return single_label(self.classes_, X.shape[0], type(self).__name__)
        points, labels = self._reference()
        if points.shape[0] == 0:  # nothing released: a constant (data-independent) answer
            return np.full(X.shape[0], self.classes_[0])
        if self.release == "support":
            ends = self._descent(X)
            # cell_keys_ are sorted (the order of _unique_rows, kept by fit's masks), so the
            # cell of each end point is found by binary search on the rows' byte values
            table = row_values(self.cell_keys_)
            query = row_values(self._cell_keys(ends))
            pos = np.minimum(np.searchsorted(table, query), table.size - 1)
            hit = np.where(table[pos] == query, pos, -1)
            out = np.empty(X.shape[0], dtype=np.int64)
            found = hit >= 0
            out[found] = self.cell_labels_[hit[found]]
            if (~found).any():
                out[~found] = knn_labels(ends[~found], self.cells_, self.cell_labels_, 1,
                                              self.classes_.size)
            return self.classes_[out]
        return self.classes_[knn_labels(X, points, labels, self.n_neighbors,
                                        self.classes_.size)]

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """The private mode in a few milliseconds under ADD_REMOVE
        (:func:`~privkit.algorithms.svdd._equilibrium_cases.private_case`); the paper mode's
        case is :func:`transcript_case_paper`."""
        return private_case(cls, declare_classes)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags


_PLAN_PARAMETERS = tuple(name for name in inspect.signature(
    EquilibriumPointClassifier.__init__).parameters
    if name not in ("self", "random_state", "classes"))
