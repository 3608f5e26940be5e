"""The machinery shared by privkit's private linear classifiers (output and objective
perturbation, :mod:`privkit.algorithms.linear.erm`): public parameters, the label set, public
row bounds and neutral records, the intercept, one-vs-rest and multinomial problems, the
plan, the ledger, the guarantee, the budget filter and the transcript case.

.. versionadded:: 0.3.0
   Split from :mod:`privkit.algorithms.linear.erm`.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Repeat

from .._audit_case import TranscriptCase
from .._bounds import clipped_rows, warn_if_preprocessed
from .._labels import declared_classes, label_release, release_label_set, total_claim
from .._private_rows import private_labels, private_rows
from .._queries import query_rows
from .._spend import charge
from ._linear import LinearModel, transcript_fixture
from ._losses import MarginLoss
from ._solvers import MIN_TOL

__all__ = ["DEFAULT_REGULARIZATION", "PrivateLinearClassifier"]

R = Neighbouring.REPLACE_ONE

#: The default Lambda: a public constant, chosen without looking at any user's data.
#: Reasoning. (1) The regulariser caps the weights: by strong convexity
#: ``||w*|| <= ||grad J(0)|| / Lambda <= L / Lambda`` (Boyd, Vandenberghe, eq. 9.11), and
#: the intercept is regularised with the weights (module docstring), so a large Lambda
#: shrinks the model onto the class-prior-free "mean" direction; with unbalanced classes
#: that predicts the majority class (Adult at Lambda = 0.01: 0.754 = the majority share,
#: even for scikit-learn's non-private LogisticRegression at C = 1 / (n Lambda)). (2)
#: Objective perturbation never pays for a small Lambda in privacy: when
#: ``2 log(1 + c / (n Lambda))`` would exceed the budget, Chaudhuri et al. 2011,
#: Algorithm 2, adds ``Delta`` so that ``Lambda + Delta = c / (n (e^(eps/4) - 1))``, so a
#: small default only matters at large n, where the data can support large weights.
#: (3) 1e-3 is scikit-learn's default ``C = 1`` (``Lambda = 1 / (n C)``) at n = 1000. On
#: public benchmark data (benchmarks/results/erm_defaults.md) it gives 0.82 on Adult with
#: objective perturbation at epsilon 1, where 0.01 gave the majority class.
DEFAULT_REGULARIZATION = 1e-3

def _pure_guarantee(plan: Block) -> Guarantee:
    """The tightest accountant's guarantee for a pure-DP plan, as the basic accountant's
    ``PureDP`` when that is as tight (to rounding): the advanced accountant can win a tie
    by one unit in the last place with a guarantee that prints less plainly."""
    from privkit.accountants import BasicAccountant

    result = tightest(plan, delta=0.0)
    basic = result.by_accountant.get("basic", math.inf)
    if basic <= result.epsilon * (1.0 + 1e-12):
        return tightest(plan, delta=0.0, accountants=[BasicAccountant()]).guarantee
    return result.guarantee


def _has_probabilities(model: Any) -> bool:
    return getattr(model, "loss", None) == "logistic"


class PrivateLinearClassifier(LinearModel, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Shared machinery: validation, labels, bounds, intercept, multi-class, plan, ledger,
    guarantee, budget filter, transcript case."""

    _method: ClassVar[str]

    def __init__(self, *, epsilon: float = 1.0, delta: float = 0.0, classes: Any = None,
                 loss: str = "huber", huber_h: float = 0.5,
                 regularization: float = DEFAULT_REGULARIZATION, row_norm_bound: float = 1.0,
                 fit_intercept: bool = True, intercept_scaling: float = 1.0,
                 multi_class: str = "auto", tol: float = 1e-8, random_state: Any = None
                 ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.loss = loss
        self.huber_h = huber_h
        self.regularization = regularization
        self.row_norm_bound = row_norm_bound
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.multi_class = multi_class
        self.tol = tol
        self.random_state = random_state

    # -- the plan ---------------------------------------------------------------------------

    def _validated(self) -> tuple[MarginLoss, NDArray[Any] | None]:
        """The loss and the declared label set, after every public parameter is checked
        (``classes=None`` with ``delta == 0`` is refused here, before any data)."""
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        delta = check.delta("delta", self.delta, owner)
        check.positive_finite("regularization", self.regularization, owner)
        check.positive_finite("row_norm_bound", self.row_norm_bound, owner)
        check.instance("fit_intercept", self.fit_intercept, bool, owner)
        check.positive_finite("intercept_scaling", self.intercept_scaling, owner)
        if check.positive_finite("tol", self.tol, owner) < MIN_TOL:
            raise check.fail("tol", self.tol, f"at least {MIN_TOL:g}", owner,
                             "the solver's floating-point floor (privkit.algorithms."
                             "linear._solvers.MIN_TOL)")
        if self.loss not in ("huber", "logistic"):
            raise check.fail("loss", self.loss, "'huber' or 'logistic'", owner)
        if self.multi_class not in ("auto", "ovr", "multinomial"):
            raise check.fail("multi_class", self.multi_class,
                             "'auto', 'ovr' or 'multinomial'", owner)
        if self.multi_class == "multinomial" and not self._multinomial_allowed():
            raise check.fail("multi_class", self.multi_class, "'auto' or 'ovr' for this "
                             "estimator and loss", owner, self._multinomial_note())
        h = check.positive_finite("huber_h", self.huber_h, owner)
        declared = declared_classes(self.classes, owner)
        if declared is None:
            label_release(eps, delta, relation=R, stage_uses_delta=False, owner=owner)
        return MarginLoss(self.loss, h), declared

    def _multinomial_allowed(self) -> bool:
        return False

    def _multinomial_note(self) -> str:
        return ""

    def _multinomial(self, n_classes: int) -> bool:
        """Whether several classes are learnt as one multinomial model."""
        return n_classes > 2 and self._multinomial_allowed() and self.multi_class != "ovr"

    def _block(self, n_samples: int, epsilon: float, loss: MarginLoss) -> Block:
        raise NotImplementedError

    def _multinomial_block(self, n_samples: int, epsilon: float) -> Block:
        raise NotImplementedError

    def _stage_plan(self, n_samples: int, n_features: int, n_classes: int, epsilon: float,
                    loss: MarginLoss) -> Block:
        """The learning stage for ``n_classes >= 2`` labels at ``epsilon``: one block for
        two classes or the multinomial model, else one block per class (one-vs-rest) at
        ``epsilon / n_classes`` each (sequential composition: every problem uses every
        row). Checked against :meth:`_check_stage` (public values only)."""
        if self._multinomial(n_classes):
            stage = self._multinomial_block(n_samples, epsilon)
        else:
            problems = 1 if n_classes <= 2 else n_classes
            block = self._block(n_samples, epsilon / problems, loss)
            stage = block if problems == 1 else Repeat(block, problems)
        self._check_stage(stage, n_features + int(self.fit_intercept), n_classes)
        return stage

    def _check_stage(self, stage: Block, n_unknowns: int, n_classes: int) -> None:
        """Refuse, from public values, a stage that could not run on some dataset."""

    def plan(self, *, n_samples: int, n_features: int, n_classes: int | None = None) -> Block:
        """The blocks ``fit`` will run on data of this shape, before any data is seen.

        With ``classes`` declared, the learning stage for its labels (``n_classes``, if
        given, must be their number). Without, the label release (a stability histogram)
        and then the learning stage for ``n_classes`` released labels (default 2) at what
        is left of epsilon; none when fewer than 2.
        """
        loss, declared = self._validated()
        n = check.positive_int("n_samples", n_samples, "plan")
        d = check.positive_int("n_features", n_features, "plan")
        eps = float(self.epsilon)
        if declared is not None:
            if n_classes is not None and check.positive_int(
                    "n_classes", n_classes, "plan") != declared.size:
                raise check.fail("n_classes", n_classes, f"{declared.size}, the number of "
                                 "declared classes, or None", "plan")
            return self._stage_plan(n, d, declared.size, eps, loss)
        k = 2 if n_classes is None else check.positive_int("n_classes", n_classes, "plan")
        labels = label_release(eps, float(self.delta), relation=R, stage_uses_delta=False,
                               owner=type(self).__name__)
        stage = (self._stage_plan(n, d, k, labels.rest(eps, 0.0)[0], loss) if k >= 2
                 else None)
        plan = labels.plan(stage)
        assert plan is not None
        return plan

    # -- fitting ----------------------------------------------------------------------------

    def _augmented(self, X: Any, neutral: NDArray[np.bool_]) -> Any:
        """Rows scaled by the public bound (clipped; a non-finite row becomes the zero
        row), then the intercept column ``a``, and the row ``(x / B, a)`` clipped onto the
        unit ball (see the module docstring); the rows marked ``neutral`` are then the
        zero augmented row."""
        import scipy.sparse as sp

        Z = clipped_rows(X, self.row_norm_bound, owner=type(self).__name__)
        if self.fit_intercept:
            a = float(self.intercept_scaling)
            if sp.issparse(Z):
                joined_sparse = sp.csr_matrix(sp.hstack([Z, sp.csr_matrix(
                    np.full((Z.shape[0], 1), a))]))
                norms = np.sqrt(np.asarray(
                    joined_sparse.multiply(joined_sparse).sum(axis=1)).ravel())
                Z = sp.csr_matrix(sp.diags(1.0 / np.maximum(norms, 1.0)) @ joined_sparse)
            else:
                joined: NDArray[np.float64] = np.empty((Z.shape[0], Z.shape[1] + 1))
                joined[:, :-1] = Z
                joined[:, -1] = a
                joined /= np.maximum(np.linalg.norm(joined, axis=1), 1.0)[:, None]
                Z = joined
        if neutral.any():
            if sp.issparse(Z):
                Z = sp.csr_matrix(sp.diags((~neutral).astype(np.float64)) @ Z)
                Z.eliminate_zeros()
            else:
                Z[neutral] = 0.0
        return Z

    def _unaugment(self, W: NDArray[np.float64], d: int) -> None:
        """``coef_`` and ``intercept_`` in the units of the original features: the
        score of ``x`` is ``W . (x / B, a)``."""
        if not self.fit_intercept:
            self.coef_ = W / self.row_norm_bound
            self.intercept_ = np.zeros(W.shape[0])
            return
        self.coef_ = W[:, :d] / self.row_norm_bound
        self.intercept_ = W[:, d] * float(self.intercept_scaling)

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> PrivateLinearClassifier:
        """Fit privately; afterwards ``classes_``, ``guarantee_``, ``ledger_``, ``plan_``,
        ``paper_claim_`` and (when at least 2 labels are known) ``coef_``, ``intercept_``.

        ``budget_filter``: a :class:`~privkit.BudgetFilter`, charged before anything is
        drawn: the plan when ``classes`` is declared, the whole ``(epsilon, delta)``
        otherwise (the learning stage is known only after the label release). A charge
        that does not fit is refused (:class:`~privkit.errors.BudgetExceededError`) with
        nothing run.
        """
        loss, declared = self._validated()
        owner = type(self).__name__
        X = private_rows(X, owner=owner, estimator=self, min_rows=1, sparse=True)
        y = private_labels(y, X.shape[0], owner=owner)
        warn_if_preprocessed(self)
        n, d = X.shape
        eps, delta = float(self.epsilon), float(self.delta)
        if declared is not None:
            charge(self, self._stage_plan(n, d, declared.size, eps, loss), budget_filter)
        else:
            self.plan(n_samples=n, n_features=d)  # the stage for 2 labels: public checks
            charge(self, total_claim(eps, delta, R, f"{owner}: private label set, then "
                                     "the learning stage"), budget_filter, delta=delta)
        rng = np.random.default_rng(self.random_state)
        W = None
        with Ledger() as ledger:
            labels = release_label_set(y, classes=declared, epsilon=eps, delta=delta,
                                       relation=R, rng=rng, stage_uses_delta=False,
                                       owner=owner)
            k = labels.classes.size
            stage = None
            if k >= 2:
                stage_eps = labels.rest(eps, 0.0)[0]
                stage = self._stage_plan(n, d, k, stage_eps, loss)
                codes = labels.codes(y)
                W = self._fit_stage(self._augmented(X, codes < 0), codes, k, stage_eps,
                                    loss, rng)
        for stale in ("coef_", "intercept_"):
            self.__dict__.pop(stale, None)
        if W is not None:
            self._unaugment(W, d)
        self.classes_ = labels.classes
        plan = labels.plan(stage)
        assert plan is not None
        self.plan_ = plan
        self.ledger_ = ledger
        guarantee = labels.guarantee(None if stage is None else _pure_guarantee(stage), 0.0)
        assert guarantee is not None
        self.guarantee_: Guarantee = guarantee
        self.paper_claim_: Guarantee = PureDP(epsilon=eps)
        return self

    def _fit_stage(self, Z: Any, codes: NDArray[np.int64], k: int, epsilon: float,
                   loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        """The learning stage's weights, one row per problem; ``codes`` are the rows'
        label indices (``-1`` for the neutral rows, which are zero rows in ``Z``)."""
        if self._multinomial(k):
            return self._fit_multinomial(Z, np.maximum(codes, 0), k, epsilon, rng)
        targets = [1] if k == 2 else list(range(k))
        eps_each = epsilon / len(targets)
        return np.array([self._fit_binary(Z, np.where(codes == j, 1.0, -1.0), eps_each,
                                          loss, rng) for j in targets])

    def _fit_binary(self, Z: Any, y: NDArray[np.float64], epsilon: float,
                    loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        raise NotImplementedError

    def _fit_multinomial(self, Z: Any, labels: NDArray[np.int64], k: int, epsilon: float,
                         rng: np.random.Generator) -> NDArray[np.float64]:
        raise NotImplementedError

    @available_if(_has_probabilities)  # type: ignore[untyped-decorator]
    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """Class probabilities of the logistic model (``loss="logistic"``): the sigmoid
        for two classes, the softmax for the multinomial model, normalised sigmoids for
        one-vs-rest (as scikit-learn's OvR logistic regression); probability 1 for the
        one label of a label release that kept one."""
        from scipy.special import expit, softmax

        if not hasattr(self, "coef_") and getattr(self, "classes_", np.empty(0)).size == 1:
            return np.ones((query_rows(self, X, "predict_proba", sparse=True).shape[0], 1))
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        if self._multinomial(self.classes_.size):
            out: NDArray[np.float64] = softmax(scores, axis=1)
            return out
        p = expit(scores)
        normalised: NDArray[np.float64] = p / p.sum(axis=1, keepdims=True)
        return normalised

    @available_if(_has_probabilities)  # type: ignore[untyped-decorator]
    def predict_log_proba(self, X: Any) -> NDArray[np.float64]:
        out: NDArray[np.float64] = np.log(self.predict_proba(X))
        return out

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """The end-to-end transcript audit's fixture (:func:`~privkit.algorithms.linear._linear.
        transcript_fixture`), at Lambda 0.1 and tolerance 1e-6 (the logistic loss for
        output perturbation: one multinomial solve for three classes). Declared:
        ``classes=[0, 1, 2]`` at epsilon 1 (pure), so ``new_label`` 2 is declared and
        absent from D. Private: epsilon 8, delta 1e-3."""
        params: dict[str, Any] = {"regularization": 0.1, "tol": 1e-6,
                                  "loss": "logistic" if cls._method == "output" else "huber"}
        if declare_classes:
            return transcript_fixture(cls(epsilon=1.0, classes=[0, 1, 2], **params),
                                      epsilon=1.0, delta=0.0)
        return transcript_fixture(cls(epsilon=8.0, delta=1e-3, **params), epsilon=8.0,
                                  delta=1e-3)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.sparse = True
        return tags
