"""Private regularised ERM: output and objective perturbation (Chaudhuri et al. 2011).

van der Reijden 2019, Algorithms 1-2, and Wang et al. 2024,
Algorithm 3, train Huber-loss SVMs this way; logistic regression is the original case.
The objective is ``J(w) = Lambda/2 ||w||^2 + 1/n sum_i loss(y_i x_i . w)``.

Intercepts. Chaudhuri, Monteleoni, Sarwate, "Differentially private empirical risk
minimization" (JMLR 2011) analyse ``w . x`` with ``||x|| <= 1`` and the regulariser
``Lambda/2 ||w||^2``. An intercept is learnt by the augmentation the paper's analysis
already covers: each row becomes ``x~ = (x / B, a) / sqrt(1 + a^2)`` (B the public row
bound, a = ``intercept_scaling``), which has norm at most 1, and the regulariser acts on
the whole augmented vector ``(w, w_0)``; the objective is then exactly of the paper's form
in dimension d + 1, so Theorems 6 and 9 (and Corollary 8's sensitivity) hold unchanged.
The intercept is regularised, as in scikit-learn's liblinear solvers: an unregularised
intercept would break the strong convexity both proofs use.

.. versionadded:: 0.1.0
.. versionchanged:: 0.2.0
   Intercepts (``fit_intercept``), a multinomial output-perturbation model for several
   classes, ``predict_proba``, sparse input, ``BudgetFilter`` spending in ``fit``, a
   solver tolerance ``tol`` that the output-perturbation sensitivity accounts for, and a
   warning naming how many rows were clipped. Objective perturbation solves to ``tol``
   and perturbs the approximate minimiser's residue (Iyengar et al. 2019) instead of
   solving to 1e-10 as if exact; both solvers polish with Newton steps. The default
   ``regularization`` is 1e-3 (was 0.01; :data:`DEFAULT_REGULARIZATION`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger, record
from privkit.mechanisms import L2Laplace, ObjectivePerturbation
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Repeat, Sequential

from ._bounds import ClippedRowsWarning, clipped_rows, warn_if_preprocessed
from ._losses import MarginLoss

__all__ = [
    "ClippedRowsWarning",
    "ObjectivePerturbationClassifier",
    "OutputPerturbationClassifier",
    "clipped_rows",
    "solve_erm",
    "solve_multinomial",
]

R = Neighbouring.REPLACE_ONE

#: Lipschitz constant, in the Frobenius norm of W, of the multinomial logistic loss
#: ``log sum_j exp(w_j . x) - w_y . x`` for ``||x|| <= 1``: its gradient is
#: ``(p - e_y) x^T`` and ``||p - e_y||^2 = (1 - p_y)^2 + sum_{j != y} p_j^2 <= 2``.
MULTINOMIAL_LIPSCHITZ = math.sqrt(2.0)

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

#: Share of an objective-perturbation problem's epsilon spent on the L2-Laplace noise that
#: covers the solver's approximate minimiser (Iyengar et al. 2019; see
#: :class:`ObjectivePerturbationClassifier`).
RESIDUAL_SHARE = 0.01


#: Largest number of unknowns for which the solvers polish with Newton steps (a dense
#: Hessian costs n d^2 to build and d^3 to factor); above it, L-BFGS alone.
NEWTON_MAX_UNKNOWNS = 400
#: The L2 gradient norm at which L-BFGS hands over to Newton steps.
NEWTON_FROM = 1e-4


def _lbfgs(objective: Any, start: NDArray[np.float64], tol: float,
           hessian: Any = None) -> NDArray[np.float64]:
    """A point whose gradient has L2 norm at most ``tol`` (checked, not assumed: scipy's
    ``gtol`` bounds the largest component only).

    With a ``hessian``: L-BFGS to ``max(tol, NEWTON_FROM)``, then Newton steps, each kept only if
    it lowers the gradient norm (halved up to three times if not: the Huber loss's
    curvature jumps). Near the minimiser of a smooth strongly convex objective Newton's
    method converges quadratically (Boyd, Vandenberghe, *Convex Optimization*,
    sec. 9.5.3), so a tight ``tol`` costs one or two Hessian solves instead of hundreds of
    L-BFGS iterations. Without one (or if Newton stalls): L-BFGS with ``gtol`` lowered
    tenfold until the L2 gradient norm is at most ``tol``.
    """
    from scipy import optimize

    def gradient_norm(w: NDArray[np.float64]) -> float:
        return float(np.linalg.norm(objective(w)[1]))

    def run_lbfgs(w: NDArray[np.float64], target: float) -> NDArray[np.float64]:
        gtol = target / math.sqrt(max(w.size, 1))
        for _ in range(4):
            result = optimize.minimize(objective, w, jac=True, method="L-BFGS-B",
                                       options={"gtol": gtol, "ftol": 0.0,
                                                "maxiter": 20_000, "maxcor": 20})
            w = np.asarray(result.x, dtype=np.float64)
            if gradient_norm(w) <= target:
                return w
            gtol /= 10.0
        return w

    w = run_lbfgs(start, tol if hessian is None else max(tol, NEWTON_FROM))
    if hessian is not None:
        norm = gradient_norm(w)
        for _ in range(30):
            if norm <= tol:
                return w
            step = np.linalg.solve(hessian(w), objective(w)[1])
            for fraction in (1.0, 0.5, 0.25, 0.125):   # the Huber loss's curvature jumps
                candidate = w - fraction * step
                candidate_norm = gradient_norm(candidate)
                if candidate_norm < norm:
                    break
            if not candidate_norm < norm:
                break
            w, norm = candidate, candidate_norm
        w = run_lbfgs(w, tol)
    if gradient_norm(w) <= tol:
        return w
    raise RuntimeError(f"the ERM solver did not reach the gradient tolerance tol={tol}")


def solve_erm(X: Any, y: NDArray[np.float64], loss: MarginLoss, regularization: float,
              linear: NDArray[np.float64] | None = None, tol: float = 1e-10
              ) -> NDArray[np.float64]:
    """argmin_w ``regularization/2 ||w||^2 + mean(loss(y X w)) + linear . w`` by L-BFGS,
    to an L2 gradient norm of at most ``tol`` (so, by strong convexity, within
    ``tol / regularization`` of the minimiser; Boyd, Vandenberghe, *Convex Optimization*,
    eq. 9.11). ``X`` may be a dense array or a scipy sparse matrix.

    The tests check the minimiser against cvxpy to solver tolerance.
    """
    n, d = X.shape
    b = np.zeros(d) if linear is None else linear

    def objective(w: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        z = y * (X @ w)
        value = float(0.5 * regularization * w @ w + np.mean(loss.value(z)) + b @ w)
        grad = regularization * w + X.T @ (loss.derivative(z) * y) / n + b
        return value, np.asarray(grad, dtype=np.float64)

    def hessian(w: NDArray[np.float64]) -> NDArray[np.float64]:
        curvature = loss.second_derivative(y * (X @ w)) / n
        weighted = X.multiply(curvature[:, None]) if hasattr(X, "multiply") else (
            X * curvature[:, None])
        gram = X.T @ weighted
        gram = gram.toarray() if hasattr(gram, "toarray") else np.asarray(gram)
        H: NDArray[np.float64] = gram + regularization * np.eye(d)
        return H

    return _lbfgs(objective, np.zeros(d), tol,
                  hessian if d <= NEWTON_MAX_UNKNOWNS else None)


def solve_multinomial(X: Any, labels: NDArray[np.int64], n_classes: int,
                      regularization: float, tol: float = 1e-10) -> NDArray[np.float64]:
    """argmin_W ``regularization/2 ||W||_F^2 + mean_i(logsumexp(W x_i) - w_{y_i} . x_i)``
    (multinomial logistic regression, one row of W per class), to an L2 gradient norm of
    at most ``tol``; ``labels`` are class indices in ``range(n_classes)``."""
    from scipy.special import logsumexp, softmax

    n, d = X.shape
    k = n_classes
    onehot = np.zeros((n, k))
    onehot[np.arange(n), labels] = 1.0

    def objective(flat: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        W = flat.reshape(k, d)
        scores = np.asarray(X @ W.T)
        value = float(0.5 * regularization * flat @ flat
                      + np.mean(logsumexp(scores, axis=1) - np.sum(scores * onehot, axis=1)))
        residual = softmax(scores, axis=1) - onehot
        grad = regularization * W + np.asarray((X.T @ residual).T) / n
        return value, grad.ravel()

    def hessian(flat: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Lambda I + 1/n sum_i (diag(p_i) - p_i p_i^T) (x) x_i x_i^T`` (dense rows)."""
        dense = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        p = softmax(dense @ flat.reshape(k, d).T, axis=1)
        outer = np.einsum("ia,ij,il->ajl", p, dense, dense)
        H = np.einsum("ab,ajl->ajbl", np.eye(k), outer)
        H -= np.einsum("ia,ib,ij,il->ajbl", p, p, dense, dense)
        full: NDArray[np.float64] = H.reshape(k * d, k * d) / n + regularization * np.eye(k * d)
        return full

    return _lbfgs(objective, np.zeros(k * d), tol,
                  hessian if k * d <= NEWTON_MAX_UNKNOWNS else None).reshape(k, d)


def labels_from_scores(scores: NDArray[np.float64], classes: NDArray[Any]) -> NDArray[Any]:
    """Class labels from decision scores: the sign for two classes (one score per row),
    the largest score for one-vs-rest (one column per class)."""
    if scores.ndim == 1:
        labels: NDArray[Any] = np.where(scores > 0, classes[1], classes[0])
        return labels
    result: NDArray[Any] = classes[np.argmax(scores, axis=1)]
    return result


class LinearModel:
    """``decision_function`` and ``predict`` of a fitted linear classifier with
    ``coef_`` (one row per binary problem or class), ``intercept_`` and ``classes_``."""

    coef_: NDArray[np.float64]
    intercept_: NDArray[np.float64]
    classes_: NDArray[Any]

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False, accept_sparse="csr")
        scores: NDArray[np.float64] = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores[:, 0] if self.coef_.shape[0] == 1 else scores

    def predict(self, X: Any) -> NDArray[Any]:
        return labels_from_scores(self.decision_function(X), self.classes_)


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


class _PrivateLinearClassifier(LinearModel, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Shared machinery: validation, bounds, intercept, multi-class, plan, ledger,
    guarantee, budget filter."""

    _method: ClassVar[str]

    def __init__(self, *, epsilon: float = 1.0, loss: str = "huber", huber_h: float = 0.5,
                 regularization: float = DEFAULT_REGULARIZATION, row_norm_bound: float = 1.0,
                 clip: bool = True, fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, multi_class: str = "auto",
                 tol: float = 1e-8, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.loss = loss
        self.huber_h = huber_h
        self.regularization = regularization
        self.row_norm_bound = row_norm_bound
        self.clip = clip
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.multi_class = multi_class
        self.tol = tol
        self.random_state = random_state

    # -- the plan ---------------------------------------------------------------------------

    def _validated(self) -> MarginLoss:
        owner = type(self).__name__
        check.positive_finite("epsilon", self.epsilon, owner)
        check.positive_finite("regularization", self.regularization, owner)
        check.positive_finite("row_norm_bound", self.row_norm_bound, owner)
        check.instance("clip", self.clip, bool, owner)
        check.instance("fit_intercept", self.fit_intercept, bool, owner)
        check.positive_finite("intercept_scaling", self.intercept_scaling, owner)
        check.positive_finite("tol", self.tol, owner)
        if self.loss not in ("huber", "logistic"):
            raise check.fail("loss", self.loss, "'huber' or 'logistic'", owner)
        if self.multi_class not in ("auto", "ovr", "multinomial"):
            raise check.fail("multi_class", self.multi_class,
                             "'auto', 'ovr' or 'multinomial'", owner)
        if self.multi_class == "multinomial" and not self._multinomial_allowed():
            raise check.fail("multi_class", self.multi_class, "'auto' or 'ovr' for this "
                             "estimator and loss", owner, self._multinomial_note())
        h = check.positive_finite("huber_h", self.huber_h, owner)
        return MarginLoss(self.loss, h)

    def _multinomial_allowed(self) -> bool:
        return False

    def _multinomial_note(self) -> str:
        return ""

    def _multinomial(self, n_classes: int) -> bool:
        """Whether several classes are learnt as one multinomial model."""
        return n_classes > 2 and self._multinomial_allowed() and self.multi_class != "ovr"

    def _block(self, n_samples: int, epsilon: float, loss: MarginLoss) -> Block:
        raise NotImplementedError

    def _multinomial_block(self, n_samples: int) -> Block:
        raise NotImplementedError

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """The blocks ``fit`` will run on data of this shape, before any data is seen.

        Two classes: one block. Several classes: one block for the multinomial model
        (output perturbation with the logistic loss), or one block per class
        (one-vs-rest) with ``epsilon / n_classes`` each (sequential composition: every
        problem uses every row).
        """
        loss = self._validated()
        n = check.positive_int("n_samples", n_samples, "plan")
        check.positive_int("n_features", n_features, "plan")
        k = check.positive_int("n_classes", n_classes, "plan")
        if self._multinomial(k):
            return self._multinomial_block(n)
        problems = 1 if k <= 2 else k
        block = self._block(n, self.epsilon / problems, loss)
        return block if problems == 1 else Repeat(block, problems)

    # -- fitting ----------------------------------------------------------------------------

    def _augmented(self, X: Any) -> Any:
        """Rows scaled by the public bound (clipped or refused), then the intercept column:
        ``(x / B, a) / sqrt(1 + a^2)``, of norm at most 1 (see the module docstring)."""
        import scipy.sparse as sp

        Z = clipped_rows(X, self.row_norm_bound, clip=self.clip, owner=type(self).__name__)
        if not self.fit_intercept:
            return Z
        a = float(self.intercept_scaling)
        if sp.issparse(Z):
            column = np.full((Z.shape[0], 1), a)
            return sp.csr_matrix(sp.hstack([Z, sp.csr_matrix(column)]) / math.hypot(1.0, a))
        joined: NDArray[np.float64] = np.empty((Z.shape[0], Z.shape[1] + 1))
        np.multiply(Z, 1.0 / math.hypot(1.0, a), out=joined[:, :-1])
        joined[:, -1] = a / math.hypot(1.0, a)
        return joined

    def _unaugment(self, W: NDArray[np.float64], d: int) -> None:
        """``coef_`` and ``intercept_`` in the units of the original features."""
        if not self.fit_intercept:
            self.coef_ = W / self.row_norm_bound
            self.intercept_ = np.zeros(W.shape[0])
            return
        a = float(self.intercept_scaling)
        s = math.hypot(1.0, a)
        self.coef_ = W[:, :d] / (self.row_norm_bound * s)
        self.intercept_ = W[:, d] * a / s

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> _PrivateLinearClassifier:
        """Fit privately; afterwards ``guarantee_``, ``ledger_``, ``plan_``, ``paper_claim_``.

        ``budget_filter``: a :class:`~privkit.BudgetFilter`; the plan is spent on it
        before any noise is drawn, and a plan that does not fit is refused
        (:class:`~privkit.errors.BudgetExceededError`) with nothing run.
        """
        loss = self._validated()
        X, y = validate_data(self, X, y, dtype=np.float64, accept_sparse="csr")
        check_classification_targets(y)
        warn_if_preprocessed(self)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise check.fail("y", f"{self.classes_.size} class", "at least 2 classes",
                             type(self).__name__)
        n, d = X.shape
        k = self.classes_.size
        Z = self._augmented(X)
        plan = self.plan(n_samples=n, n_features=d, n_classes=k)
        if budget_filter is not None:
            budget_filter.spend(plan)
        rng = np.random.default_rng(self.random_state)
        with Ledger() as ledger:
            if self._multinomial(k):
                W = self._fit_multinomial(Z, np.searchsorted(self.classes_, y), k, rng)
            else:
                targets = [self.classes_[1]] if k == 2 else list(self.classes_)
                eps_each = self.epsilon / len(targets)
                W = np.array([self._fit_binary(Z, np.where(y == positive, 1.0, -1.0),
                                               eps_each, loss, rng) for positive in targets])
        self._unaugment(W, d)
        self.plan_ = plan
        self.ledger_ = ledger
        self.guarantee_: Guarantee = _pure_guarantee(plan)
        self.paper_claim_: Guarantee = PureDP(epsilon=self.epsilon)
        return self

    def _fit_binary(self, Z: Any, y: NDArray[np.float64], epsilon: float,
                    loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        raise NotImplementedError

    def _fit_multinomial(self, Z: Any, labels: NDArray[np.int64], k: int,
                         rng: np.random.Generator) -> NDArray[np.float64]:
        raise NotImplementedError

    @available_if(_has_probabilities)  # type: ignore[untyped-decorator]
    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """Class probabilities of the logistic model (``loss="logistic"``): the sigmoid
        for two classes, the softmax for the multinomial model, normalised sigmoids for
        one-vs-rest (as scikit-learn's OvR logistic regression)."""
        from scipy.special import expit, softmax

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

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.sparse = True
        return tags


class OutputPerturbationClassifier(_PrivateLinearClassifier):
    """Regularised ERM, then L2-Laplace noise on the weights (Chaudhuri et al. 2011, Alg. 1).

    Parameters
    ----------
    epsilon : float
        The total budget (pure DP, REPLACE_ONE).
    loss : {"huber", "logistic"}
        Huber-loss SVM (``huber_h``; van der Reijden 2019 eq. 3, whose first case should read
        ``z > 1 + h``) or logistic regression.
    regularization : float, default 1e-3
        Lambda (it also regularises the intercept; see the module docstring). The
        default is a public constant (:data:`DEFAULT_REGULARIZATION` gives the reasoning).
    row_norm_bound : float
        A public bound B on every row's L2 norm; rows are divided by B (so the analysis'
        ``||x|| <= 1`` holds) and rows beyond it are clipped with a
        :class:`ClippedRowsWarning` naming how many (``clip=True``) or refused.
    fit_intercept : bool, default True
    intercept_scaling : float, default 1
        a in the augmented row ``(x / B, a) / sqrt(1 + a^2)``.
    multi_class : {"auto", "ovr", "multinomial"}
        Several classes with ``loss="logistic"``: one multinomial model with one noise
        draw ("auto", "multinomial"); "ovr" (and the Huber loss) trains one model per
        class with ``epsilon / n_classes`` each.
    tol : float, default 1e-8
        The solver stops at an L2 gradient norm of at most ``tol``; the sensitivity
        accounts for it (see Notes).
    random_state : int, Generator or None

    Notes
    -----
    The minimiser of a Lambda-strongly convex objective with an L-Lipschitz loss moves by
    at most ``2 L / (n Lambda)`` in L2 when one row is replaced (Chaudhuri et al. 2011,
    Corollary 8, whose proof, Lemma 7, scales with the gradient bound L), so L2-Laplace
    noise with ``beta = n Lambda eps / (2 L)`` gives eps-DP (van der Reijden 2019, Algorithm 1,
    L = 1).
    The solver returns a point whose gradient has norm at most ``tol``, which is within
    ``tol / Lambda`` of the exact minimiser (strong convexity), so privkit declares the
    sensitivity ``2 L / (n Lambda) + 2 tol / Lambda`` of what it actually computes.
    For several classes with the logistic loss the model is the multinomial (softmax)
    regression, whose loss is ``sqrt(2)``-Lipschitz in the Frobenius norm of W for
    ``||x|| <= 1`` (:data:`MULTINOMIAL_LIPSCHITZ`): one L2-Laplace draw of dimension
    ``k (d + 1)`` with sensitivity ``2 sqrt(2) / (n Lambda)`` replaces ``k`` draws at
    ``epsilon / k`` each. privkit's ledger records the block it runs, and ``guarantee_``
    is the tightest accountant's guarantee for it.

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.algorithms import OutputPerturbationClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)) / 3
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = OutputPerturbationClassifier(epsilon=2.0, random_state=0).fit(X, y)
    >>> clf.guarantee_, clf.ledger_.compare(clf.plan_).matches
    (PureDP(epsilon=2.0), True)

    .. versionadded:: 0.1.0
    """

    _method = "output"

    def _multinomial_allowed(self) -> bool:
        return self.loss == "logistic"

    def _multinomial_note(self) -> str:
        return "the multinomial model is the softmax (logistic) loss: set loss='logistic'"

    def _sensitivity(self, n_samples: int, lipschitz: float) -> float:
        lam = float(self.regularization)
        return 2.0 * lipschitz / (n_samples * lam) + 2.0 * float(self.tol) / lam

    def _block(self, n_samples: int, epsilon: float, loss: MarginLoss) -> Block:
        return L2Laplace.for_epsilon(epsilon, sensitivity=self._sensitivity(n_samples, 1.0),
                                     relation=R)

    def _multinomial_block(self, n_samples: int) -> Block:
        return L2Laplace.for_epsilon(
            self.epsilon, sensitivity=self._sensitivity(n_samples, MULTINOMIAL_LIPSCHITZ),
            relation=R)

    def _fit_binary(self, Z: Any, y: NDArray[np.float64], epsilon: float,
                    loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        block = self._block(Z.shape[0], epsilon, loss)
        w = solve_erm(Z, y, loss, self.regularization, tol=self.tol)
        assert isinstance(block, L2Laplace)
        released: NDArray[np.float64] = block.release(w, rng=rng)
        return released

    def _fit_multinomial(self, Z: Any, labels: NDArray[np.int64], k: int,
                         rng: np.random.Generator) -> NDArray[np.float64]:
        block = self._multinomial_block(Z.shape[0])
        assert isinstance(block, L2Laplace)
        W = solve_multinomial(Z, labels, k, self.regularization, tol=self.tol)
        released: NDArray[np.float64] = block.release(W.ravel(), rng=rng)
        return released.reshape(W.shape)


class ObjectivePerturbationClassifier(_PrivateLinearClassifier):
    """Minimise a randomly perturbed objective (Chaudhuri et al. 2011, Algorithm 2), to a
    gradient tolerance whose residue is itself perturbed (Iyengar et al. 2019).

    Parameters are those of :class:`OutputPerturbationClassifier`, except that several
    classes are learnt one-vs-rest (``epsilon / n_classes`` each): Theorem 9's proof
    bounds a Jacobian determinant using that each row's Hessian has rank one, which the
    multinomial loss does not have, so privkit offers no multinomial objective
    perturbation.

    Notes
    -----
    Van der Reijden 2019 Algorithm 2 / Wang et al. 2024 Algorithm 3 lines 3-10: with c the
    loss's curvature bound, ``eps' = eps1 - log(1 + 2c/(n Lambda) + c^2/(n Lambda)^2)``; if
    that is not positive, add ``Delta = c/(n (e^(eps1/4) - 1)) - Lambda`` and use
    ``eps' = eps1/2``; draw ``b`` with density ∝ exp(-eps'/2 ||b||) and minimise
    ``J(w) + b.w / n + Delta/2 ||w||^2``. The exact minimiser is eps1-DP under REPLACE_ONE
    by Chaudhuri et al. 2011, Theorem 9 (the loss must be twice differentiable with
    ``|l''| <= c``: Huber with ``c = 1 / (2h)``, logistic with ``c = 1/4``), with the
    intercept handled by the augmented rows of the module docstring.

    Approximate minimiser. Theorem 9 is about the exact minimiser, which no solver
    returns. privkit follows Iyengar, Near, Song, Thakkar, Thakurta, Wang, "Towards
    practical differentially private convex optimization" (IEEE S&P 2019), Algorithm 1
    (approximate minima perturbation), with L2-Laplace noise in place of their Gaussian
    so the result stays pure: the solver stops at a point ``w~`` whose gradient has L2
    norm at most ``tol``, so ``||w~ - w*|| <= tol / (Lambda + Delta)`` by strong convexity
    (Boyd, Vandenberghe, eq. 9.11), and privkit releases ``w~ + Z`` with ``Z``
    L2-Laplace of sensitivity ``2 tol / (Lambda + Delta)`` at ``eps2``. Proof sketch:
    write ``w~ = w* + r_D(w*)`` with ``||r_D|| <= tol / (Lambda + Delta)`` for every
    dataset D; the density of ``w*`` changes by at most ``e^eps1`` between neighbours
    (Theorem 9), and for each value of ``w*`` the two shifted L2-Laplace laws differ by at
    most ``e^eps2`` (their centres are within ``2 tol / (Lambda + Delta)``); integrating,
    the output is ``(eps1 + eps2)``-DP. privkit spends ``eps2 = RESIDUAL_SHARE * eps``
    (1%) on the residue and ``eps1 = eps - eps2`` on the objective: the plan is
    ``Sequential(ObjectivePerturbation(eps1), L2Laplace(eps2))`` per problem, and the
    tightest accountant certifies exactly ``eps``. With ``tol = 1e-8`` the residue's noise
    has norm about ``(d + 1) 2e-8 / ((Lambda + Delta) eps2)``, small beside the objective's
    own noise; the guarantee holds up to floating-point rounding of the gradient check.
    The residue's noise is drawn by the plain sampler (and recorded in the ledger): the
    weights are simulation-grade against floating-point attacks in any case (see
    :class:`~privkit.mechanisms.ObjectivePerturbation`), and at tight tolerances that
    noise is finer than the floating-point-safe grid of ``release`` can carry.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       Solved to ``tol`` with the approximate-minimiser residue perturbed (was: solved to
       1e-10 and treated as exact).
    """

    _method = "objective"

    def _multinomial_note(self) -> str:
        return ("objective perturbation's analysis (Chaudhuri et al. 2011, Theorem 9) needs "
                "per-row Hessians of rank one; use OutputPerturbationClassifier")

    def _parts(self, n_samples: int, epsilon: float, loss: MarginLoss
               ) -> tuple[ObjectivePerturbation, L2Laplace]:
        """The objective's block at ``(1 - RESIDUAL_SHARE) epsilon`` and the residue's
        L2-Laplace block at ``RESIDUAL_SHARE epsilon`` (see Notes)."""
        objective = ObjectivePerturbation.for_epsilon(
            (1.0 - RESIDUAL_SHARE) * epsilon, curvature=loss.curvature, n_samples=n_samples,
            regularization=self.regularization)
        strong_convexity = self.regularization + objective.extra_regularization
        residue = L2Laplace.for_epsilon(RESIDUAL_SHARE * epsilon,
                                        sensitivity=2.0 * float(self.tol) / strong_convexity,
                                        relation=R)
        return objective, residue

    def _block(self, n_samples: int, epsilon: float, loss: MarginLoss) -> Block:
        return Sequential(*self._parts(n_samples, epsilon, loss))

    def _fit_binary(self, Z: Any, y: NDArray[np.float64], epsilon: float,
                    loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        objective, residue = self._parts(Z.shape[0], epsilon, loss)
        b = objective.release(Z.shape[1], rng=rng)
        lam = self.regularization + objective.extra_regularization
        w = solve_erm(Z, y, loss, lam, linear=b / Z.shape[0], tol=self.tol)
        # The plain sampler, recorded by hand: the weights are computed in floating point
        # from b by an optimiser, so they are simulation-grade against floating-point
        # attacks whatever the residue's noise (see ObjectivePerturbation._sample), and
        # the residue's noise can be far finer than the grid of release() can carry.
        released: NDArray[np.float64] = np.asarray(residue.simulate(w, rng=rng))
        record(residue)
        return released
