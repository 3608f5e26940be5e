"""Private kernel SVM baselines of Park 2022 section 6.3, one-vs-rest on random features.

* ``SVMWeightClassifier``: Rubinstein, Bartlett, Huang, Taft, "Learning in a large function
  space: privacy-preserving mechanisms for SVM learning" (J. Privacy and Confidentiality
  2012), Algorithm 2 / Theorem 10: hinge-loss SVM without bias on F random features,
  ``min_w 1/2 ||w||^2 + (C/n) sum_i hinge(y_i w . phi(x_i))``, then Laplace noise with
  L1 sensitivity ``4 L C kappa sqrt(F) / n`` (L = kappa = 1: ``4 nu sqrt(F)``, nu = C/n),
  REPLACE_ONE.
* ``SVMOutputClassifier``: Jain, Thakurta, "Differentially private learning with kernels"
  (ICML 2013), interactive setting: noise on the decision values ``w* . phi(z)`` of the
  queries. Each decision value moves by at most ``||w_D - w_D'||_2 <= 2 nu`` (the
  objective is 1-strongly convex and one term of Lipschitz constant ``nu`` changes; the
  same argument as Rubinstein et al.'s, without their factor 2 slack), so one query's c
  values have L1 sensitivity ``2 nu c``. **It needs the training data (or w*) at
  inference**, so it publishes no model. The thesis charges epsilon per query
  (``accounting="per_query"``, its claim); m queries compose to ``m epsilon``, which is
  what privkit reports. ``accounting="batch"`` (default) calibrates each call's batch
  jointly (L1 sensitivity ``2 nu c m``). Every ``predict`` call is a release: privkit
  adds its cost to ``guarantee_`` (and its block to ``plan_`` and ``ledger_``), and
  ``epsilon`` is the model's whole budget, public: the call that would pass it raises
  :class:`~privkit.errors.BudgetExceededError` before drawing anything.
* ``SVMSemiClassifier``: Jain, Thakurta 2013, semi-interactive: the user hands over the
  unlabelled test points Z; the publisher adds Gaussian noise to the decision values on Z
  (L2 sensitivity ``||Phi_Z||_op 2 nu`` per class, ``||Phi_Z||_op`` computed from the
  public Z) with ``delta = 1/n`` as in the thesis, and releases the least-squares fit of w
  to the noisy values (post-processing).

The one-vs-rest problems use every row, so they compose sequentially: each gets
``epsilon / c`` (and ``delta / c``; SVM SEMI calibrates its c Gaussians jointly, see
:meth:`SVMSemiClassifier.plan`). The privacy of all three holds for the exact
minimiser; privkit solves the dual by liblinear (scikit-learn's ``LinearSVC``) to
tolerance 1e-6, which is the residual the module does not charge.

Public and private (all three; issue 22). REPLACE_ONE, as in the sources: n is public,
and so are the parameters, the number of features and, when given, the label set
``classes``. Without ``classes`` the label set is released privately
(:mod:`privkit.algorithms._labels`; it needs ``delta > 0``) and the rest of the budget
goes to the SVM. The *neutral record* is a zero feature row: it adds the constant
``nu hinge(0) = nu`` to the objective and moves no weight. A record whose label is not
in ``classes_``, whose label is NaN, or where the feature map is undefined (a non-finite
entry, or a product ``<w_j, x>`` that overflows) is that neutral record, by a public
per-record rule, silently; privkit drops it from the solve, which gives the same
minimiser. Nothing is refused by value: a label held by no record, or a label set of one
class, is solved as well (one zero row per label keeps every problem well posed for
liblinear, at no change to the minimiser).

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.errors import BudgetExceededError
from privkit.guarantees import GDP, ApproxDP, Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.neighbouring import Norm, Sensitivity
from privkit.plan import Block, Claimed, Repeat, Sequential

from .._audit_case import TranscriptCase
from .._certified import certified
from .._labels import single_label
from .._queries import query_rows
from ._hinge_ovr import CASE_PROBES, OneVsRestSVM, R, case, hinge_svm, hinge_svm_ovr

__all__ = ["SVMOutputClassifier", "SVMSemiClassifier", "SVMWeightClassifier", "hinge_svm",
           "hinge_svm_ovr"]

class SVMWeightClassifier(OneVsRestSVM):
    """Rubinstein et al. 2012: Laplace noise on the primal weights (``4 nu sqrt(F)``).

    Parameters
    ----------
    epsilon : float
        The total budget (the label set's release, when private, included).
    delta : float
        Used only to release the label set when ``classes`` is None (the SVM is pure).
    nu, gamma, n_components : float, float, int
        ``C/n``, the RBF parameter and F (Table 7.1).
    classes : array-like or None
        The public label set; None releases it privately (needs ``delta > 0``).
    random_state : int, Generator or None

    Attributes
    ----------
    classes_, coef_ (one row per one-vs-rest problem; absent with fewer than two
    labels), features_, plan_, ledger_, guarantee_, paper_claim_

    Public and private
    ------------------
    See the module docstring: REPLACE_ONE, n and the schema public, ``classes`` public
    when given; a neutral record is a zero feature row. Queries are validated strictly.
    """

    def _stage(self, n_classes: int, epsilon: float) -> Repeat:
        from privkit.mechanisms import Laplace

        k = self._problems(n_classes)
        sens = Sensitivity(value=4.0 * self.nu * math.sqrt(self.n_components), norm=Norm.L1,
                           relation=R)
        return Repeat(Laplace.for_epsilon(epsilon / k, sensitivity=sens), k)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``n_classes`` one-vs-rest Laplace releases (one for two classes), after the
        label release when ``classes`` is None."""
        classes = self._check(check.positive_int("n_features", n_features, "plan"))
        c = classes.size if classes is not None else check.positive_int(
            "n_classes", n_classes, "plan")
        delta = self._delta(n_samples)
        eps_l, _ = self._label_budget(delta)
        return self._label_plan(self._stage(max(c, 2), self.epsilon - eps_l), delta)

    def fit(self, X: Any, y: Any, *, budget_filter: Any = None) -> SVMWeightClassifier:
        """Fit and release the noisy weights; ``budget_filter`` is charged first."""
        classes = self._check()
        delta = self._delta(1)
        self._label_budget(delta)
        A, labels = self._prepare(X, y)
        self._charge(None if classes is None else self._stage(classes.size, self.epsilon),
                     delta, budget_filter)
        with Ledger() as ledger:
            label_set, Phi, codes = self._records(A, labels, delta)
            c = label_set.classes.size
            stage = self._stage(c, self.epsilon - label_set.epsilon) if c >= 2 else None
            if stage is not None:
                block = stage.block
                self.coef_ = np.array([block.release(w, rng=self._rng)  # type: ignore[union-attr]
                                       for w in self._weights(Phi, codes)])
        self.plan_ = label_set.plan(stage)
        self.ledger_ = ledger
        self.guarantee_: Guarantee = label_set.guarantee(
            None if stage is None else certified(stage, delta=0.0), 0.0)  # type: ignore[assignment]
        self.paper_claim_: Guarantee = PureDP(epsilon=self.epsilon)
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        """``phi(x) . w_k`` per problem; shape (n,) for two classes."""
        return self._decision(X)

    def predict(self, X: Any) -> NDArray[Any]:
        return self._predict(X)

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """See :func:`privkit.algorithms.svdd._hinge_ovr.case` (pure with declared classes)."""
        return case(cls, declare_classes, 0.0)


class SVMOutputClassifier(OneVsRestSVM):
    """Jain, Thakurta 2013 (interactive): Laplace noise on decision values of queries.

    ``predict`` is the private release; it needs the non-private weights, i.e. the
    training data, at inference.

    Parameters
    ----------
    epsilon : float
        The total budget of the fitted model, public: the label set's release (when
        private) and every ``predict`` call together. ``fit`` charges all of it to a
        ``budget_filter``.
    delta : float
        Used only to release the label set when ``classes`` is None.
    accounting : {"batch", "per_query"}
        ``"batch"``: each call's points are calibrated jointly to ``query_epsilon``;
        ``"per_query"`` (the thesis): each point costs ``query_epsilon``.
    query_epsilon : float or None
        What one call (batch) or one point (per query) spends. None: the budget left
        after the label release, for one call of ``n_queries`` points.
    n_queries : int
        The points of the call :meth:`plan` describes (and of the default above).
    nu, gamma, n_components, classes, random_state
        As for :class:`SVMWeightClassifier`.

    Attributes
    ----------
    classes_, features_, paper_claim_; and what has been released so far, accumulated
    over ``predict`` calls: ``plan_``, ``ledger_``, ``guarantee_`` (``None`` before
    anything is released), ``spent_epsilon_``.

    Public and private
    ------------------
    See the module docstring. The queries are public (validated strictly), and so is
    every call's cost: a call that would take the spend beyond ``epsilon`` raises
    :class:`~privkit.errors.BudgetExceededError` before drawing anything.
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 0.0, nu: float = 0.05,
                 gamma: float = 1.0, n_components: int = 400, classes: Any = None,
                 accounting: str = "batch", query_epsilon: float | None = None,
                 n_queries: int = 1, random_state: Any = None) -> None:
        super().__init__(epsilon=epsilon, delta=delta, nu=nu, gamma=gamma,
                         n_components=n_components, classes=classes,
                         random_state=random_state)
        self.accounting = accounting
        self.query_epsilon = query_epsilon
        self.n_queries = n_queries

    def _query_epsilon(self) -> float:
        """The validated cost of one call (batch) or one point (per query)."""
        owner = type(self).__name__
        if self.accounting not in ("batch", "per_query"):
            raise check.fail("accounting", self.accounting, "'batch' or 'per_query'", owner)
        m = check.positive_int("n_queries", self.n_queries, owner)
        left = self.epsilon - self._label_budget(self._delta(1))[0]
        if self.query_epsilon is None:
            return left if self.accounting == "batch" else left / m
        q = check.positive_finite("query_epsilon", self.query_epsilon, owner)
        if q > left * (1 + 1e-12):
            raise check.fail("query_epsilon", self.query_epsilon,
                             f"at most the budget left for queries, {left:g}", owner)
        return q

    def _call(self, n_classes: int, m: int) -> Block:
        """The release of one call of m points."""
        from privkit.mechanisms import Laplace

        q = self._query_epsilon()
        k = self._problems(n_classes)
        if self.accounting == "per_query":  # the thesis: query_epsilon for every point
            per_query = Sensitivity(value=2.0 * self.nu * k, norm=Norm.L1, relation=R)
            return Repeat(Laplace.for_epsilon(q, sensitivity=per_query), m)
        whole = Sensitivity(value=2.0 * self.nu * k * m, norm=Norm.L1, relation=R)
        return Laplace.for_epsilon(q, sensitivity=whole)

    def _cost(self, m: int) -> float:
        q = self._query_epsilon()
        return q * m if self.accounting == "per_query" else q

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """The label release (when private), then one ``predict`` call of ``n_queries``
        points (``predict`` itself accounts for the points it is given)."""
        classes = self._check(check.positive_int("n_features", n_features, "plan"))
        c = classes.size if classes is not None else check.positive_int(
            "n_classes", n_classes, "plan")
        return self._label_plan(self._call(max(c, 2), self.n_queries), self._delta(n_samples))

    def fit(self, X: Any, y: Any, *, budget_filter: Any = None) -> SVMOutputClassifier:
        """Solve the SVM (kept private) and release the label set when not declared;
        ``budget_filter`` is charged the whole ``epsilon`` (every future query)."""
        self._check()
        delta = self._delta(1)
        self._query_epsilon()
        A, labels = self._prepare(X, y)
        self._charge(Claimed(PureDP(epsilon=self.epsilon), relation=R,
                             label="SVM OUTPUT's query budget (every predict call)"),
                     delta, budget_filter)
        with Ledger() as ledger:
            label_set, Phi, codes = self._records(A, labels, delta)
            if label_set.classes.size >= 2:
                self._w = self._weights(Phi, codes)
        self._label_set = label_set
        self._steps: list[Block] = []
        self.ledger_ = ledger
        self.spent_epsilon_ = label_set.epsilon
        self.plan_: Block | None = label_set.plan(None)
        self.guarantee_: Guarantee | None = (label_set.guarantee(None, 0.0)
                                             if label_set.released else None)
        self.paper_claim_: Guarantee = PureDP(epsilon=self._query_epsilon())
        return self

    def predict(self, X: Any) -> NDArray[Any]:
        """Noisy decision values of the queries, then their labels: a private release
        of ``query_epsilon`` (batch) or ``query_epsilon`` per point, accumulated in
        ``guarantee_``, ``plan_`` and ``ledger_``; refused, before any noise, when it would
        take the spend beyond ``epsilon``."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "ledger_")
        Q = query_rows(self, X, "predict")
        if self.classes_.size < 2:
            return single_label(self.classes_, Q.shape[0], type(self).__name__)
        cost = self._cost(Q.shape[0])
        if self.spent_epsilon_ + cost > self.epsilon * (1 + 1e-12):
            raise BudgetExceededError(
                f"SVMOutputClassifier: this predict call of {Q.shape[0]} points costs "
                f"epsilon {cost:g}, and {self.spent_epsilon_:g} of the model's budget "
                f"epsilon={self.epsilon:g} is spent; refit, or set a larger epsilon or a "
                "smaller query_epsilon")
        scores = self.features_.transform_queries(Q) @ self._w.T
        scores = scores[:, 0] if scores.shape[1] == 1 else scores
        block = self._call(self.classes_.size, Q.shape[0])
        with self.ledger_:
            if self.accounting == "per_query":
                one = block.block  # type: ignore[union-attr]
                noisy = np.array([one.release(s, rng=self._rng) for s in scores])
            else:
                noisy = block.release(scores, rng=self._rng)  # type: ignore[union-attr]
        self._steps.append(block)
        self.spent_epsilon_ += cost
        spent = self.spent_epsilon_ - self._label_set.epsilon
        self.plan_ = self._label_set.plan(Sequential(*self._steps) if len(self._steps) > 1
                                          else self._steps[0])
        self.guarantee_ = self._label_set.guarantee(PureDP(epsilon=spent), 0.0)
        return self._labels(noisy)

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """See :func:`privkit.algorithms.svdd._hinge_ovr.case`; the auditor's one ``predict``
        call on the probes is the query-time release (batch, all the budget left)."""
        return case(cls, declare_classes, 0.0)


class SVMSemiClassifier(OneVsRestSVM):
    """Jain, Thakurta 2013 (semi-interactive): Gaussian noise on decision values of the
    user's unlabelled points ``Z`` (``fit(X, y, Z=...)``), then a released least-squares
    weight vector. ``delta`` defaults to ``1/n`` (the thesis; n is public under
    REPLACE_ONE).

    The L2 sensitivity of the decision values on Z is ``||Phi_Z||_op 2 nu`` per class.
    ``z_operator_norm`` is that public operator norm: ``None`` (default) computes it at
    ``fit`` from the public Z (``z_operator_norm_``); a number declares it in advance
    (e.g. ``sqrt(m)`` for m points, since every feature row has norm 1), so that
    :meth:`plan` can be called before ``fit``; ``fit`` refuses a declared value below
    the norm of the Z it is given.

    Public and private
    ------------------
    See the module docstring; Z is public (validated strictly), and so is its operator
    norm. Without ``classes`` the label set takes ``LABEL_SHARE`` of epsilon and of delta.
    """

    _stage_uses_delta = True

    def __init__(self, *, epsilon: float = 1.0, delta: float | None = None, nu: float = 0.05,
                 gamma: float = 1.0, n_components: int = 400, classes: Any = None,
                 z_operator_norm: float | None = None, random_state: Any = None) -> None:
        super().__init__(epsilon=epsilon, delta=delta, nu=nu, gamma=gamma,
                         n_components=n_components, classes=classes,
                         random_state=random_state)
        self.z_operator_norm = z_operator_norm

    def _z_norm(self) -> float:
        if self.z_operator_norm is not None:
            return check.positive_finite("z_operator_norm", self.z_operator_norm,
                                         type(self).__name__)
        if hasattr(self, "z_operator_norm_"):
            return float(self.z_operator_norm_)
        raise check.fail("z_operator_norm", None, "a positive number before fit",
                         type(self).__name__,
                         "the sensitivity depends on the public points Z: declare their "
                         "operator norm (at most sqrt(len(Z))) or call fit(X, y, Z=Z)")

    def _delta(self, n_samples: int) -> float:
        if self.delta is None:
            return 1.0 / n_samples
        return check.open_unit("delta", self.delta, type(self).__name__)

    def _stage(self, n_classes: int, epsilon: float, delta: float) -> Repeat:
        from privkit.mechanisms import Gaussian

        k = self._problems(n_classes)
        sens = Sensitivity(value=2.0 * self.nu * self._z_norm(), norm=Norm.L2, relation=R)
        whole = Gaussian.for_approx_dp(epsilon=epsilon, delta=delta, sensitivity=sens)
        return Repeat(Gaussian(noise_scale=math.sqrt(k) * whole.noise_scale,
                               sensitivity=sens), k)

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``Repeat(Gaussian, k)``: one Gaussian release per one-vs-rest problem, with L2
        sensitivity ``2 nu ||Phi_Z||_op`` each, calibrated so that the k releases
        together are exactly ``(epsilon, delta)``-DP (after the label release, which
        takes ``LABEL_SHARE`` of both, when ``classes`` is None).

        Jain and Thakurta give each problem ``(epsilon / k, delta / k)`` (basic
        composition), which spent only 0.55 of epsilon 1 for three classes by privkit's
        accountant. A changed record moves each of the k decision-value vectors by at most
        the sensitivity, so the stacked vector moves by at most ``sqrt(k)`` times it, and
        k Gaussians of scale ``sqrt(k) sigma`` are one Gaussian mechanism on the stack
        with scale ``sigma`` for that sensitivity (Dong, Roth, Su 2019, "Gaussian
        differential privacy", Corollary 3.3): ``sigma`` is the analytic Gaussian scale
        for ``(epsilon, delta)`` (Balle, Wang 2018), the least noise that meets it."""
        classes = self._check(check.positive_int("n_features", n_features, "plan"))
        delta = self._delta(check.positive_int("n_samples", n_samples, "plan"))
        c = classes.size if classes is not None else check.positive_int(
            "n_classes", n_classes, "plan")
        eps_l, delta_l = self._label_budget(delta)
        return self._label_plan(self._stage(max(c, 2), self.epsilon - eps_l, delta - delta_l),
                                delta)

    def fit(self, X: Any, y: Any, Z: Any = None, *,
            budget_filter: Any = None) -> SVMSemiClassifier:
        """Release the noisy decision values on the public Z and the weights refitted to
        them; ``budget_filter`` is charged first."""
        from sklearn.utils import check_array

        owner = type(self).__name__
        classes = self._check()
        if Z is None:
            raise check.fail("Z", None, "the user's unlabelled points (semi-interactive)",
                             owner)
        A, labels = self._prepare(X, y)
        delta = self._delta(A.shape[0])
        self._label_budget(delta)
        # Z is public: refused if not finite, or with the wrong number of features
        PZ = self.features_.transform_queries(check_array(Z, dtype=np.float64))
        # one SVD of the public phi(Z) gives its operator norm and the least-squares refit
        U, sv, Vt = np.linalg.svd(PZ, full_matrices=False)
        op = float(sv[0])
        if self.z_operator_norm is not None and self.z_operator_norm < op * (1 - 1e-12):
            raise check.fail("z_operator_norm", self.z_operator_norm,
                             f"at least the operator norm of phi(Z), {op:.6g}", owner,
                             "a smaller value understates the sensitivity")
        self.z_operator_norm_ = op if self.z_operator_norm is None else float(
            self.z_operator_norm)
        self._charge(None if classes is None else self._stage(classes.size, self.epsilon,
                                                              delta),
                     delta, budget_filter)
        with Ledger() as ledger:
            label_set, Phi, codes = self._records(A, labels, delta)
            c = label_set.classes.size
            stage = (self._stage(c, self.epsilon - label_set.epsilon, delta - label_set.delta)
                     if c >= 2 else None)
            if stage is not None:
                W = self._weights(Phi, codes)
                block = stage.block
                noisy = np.array([block.release(PZ @ w, rng=self._rng)  # type: ignore[union-attr]
                                  for w in W])
                # numpy's lstsq with rcond=None: singular values below eps max(shape) s_max
                # dropped
                keep = sv > np.finfo(np.float64).eps * max(PZ.shape) * sv[0]
                self.coef_ = ((Vt[keep].T / sv[keep]) @ (U[:, keep].T @ noisy.T)).T
        self.plan_, self.ledger_ = label_set.plan(stage), ledger
        stage_delta = delta - label_set.delta
        self.guarantee_: Guarantee | None = label_set.guarantee(
            None if stage is None else self._composed(stage), stage_delta)
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=delta)
        return self

    @staticmethod
    def _composed(stage: Repeat) -> Guarantee:
        """The k Gaussians' exact guarantee, ``GDP(sqrt(k) mu)`` for each one's
        ``GDP(mu)`` (Dong, Roth, Su 2019, Corollary 3.3): what the tightest accountant
        gives, without its numerical work (the plan changes with every fit's public
        feature map, through the operator norm of phi(Z), so no memo helps)."""
        mu = stage.block.guarantees()[0].mu  # type: ignore[union-attr]
        return GDP(mu=math.sqrt(stage.count) * mu)

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        """``phi(x) . w_k`` per problem with the released weights; shape (n,) for two
        classes."""
        return self._decision(X)

    def predict(self, X: Any) -> NDArray[Any]:
        return self._predict(X)

    @classmethod
    def transcript_case(cls, *, declare_classes: bool = True) -> TranscriptCase:
        """See :func:`privkit.algorithms.svdd._hinge_ovr.case`, with delta 1e-3 and the probes
        as the public Z (``fit_params``)."""
        return case(cls, declare_classes, 1e-3, Z=CASE_PROBES)
