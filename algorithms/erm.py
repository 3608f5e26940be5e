"""Private regularised ERM: output and objective perturbation (Chaudhuri et al. 2011).

Seed 003 (van der Reijden 2019), Algorithms 1-2, and seed 004 (Wang et al. 2024),
Algorithm 3, train Huber-loss SVMs this way; logistic regression is the original case.
The objective is ``J(w) = Lambda/2 ||w||^2 + 1/n sum_i loss(y_i x_i . w)``.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check
from privkit.accountants import BasicAccountant
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.mechanisms import L2Laplace, ObjectivePerturbation
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Repeat

from ._losses import MarginLoss

__all__ = [
    "ObjectivePerturbationClassifier",
    "OutputPerturbationClassifier",
    "clipped_rows",
    "solve_erm",
]

R = Neighbouring.REPLACE_ONE


def clipped_rows(X: NDArray[np.float64], row_norm_bound: float, *, clip: bool = True,
                 owner: str = "clipped_rows") -> NDArray[np.float64]:
    """Rows divided by the public bound, so that every row has norm at most 1; rows
    beyond the bound are scaled back onto it (``clip=True``) or refused.

    The bound is a public parameter: nothing here is derived from the data, which would
    need a privacy budget of its own.
    """
    Z = X / row_norm_bound
    norms = np.linalg.norm(Z, axis=1)
    if np.any(norms > 1.0 + 1e-12):
        if not clip:
            worst = float(norms.max() * row_norm_bound)
            raise check.fail("X", f"a row of L2 norm {worst:.6g}",
                             f"rows of norm at most row_norm_bound={row_norm_bound}", owner,
                             "clip them (clip=True) or raise the bound")
        Z = Z / np.maximum(norms, 1.0)[:, None]
    return Z


def solve_erm(X: NDArray[np.float64], y: NDArray[np.float64], loss: MarginLoss,
              regularization: float, linear: NDArray[np.float64] | None = None,
              tol: float = 1e-10) -> NDArray[np.float64]:
    """argmin_w ``regularization/2 ||w||^2 + mean(loss(y X w)) + linear . w`` by L-BFGS.

    The objective is smooth and strongly convex, so L-BFGS converges to the unique
    minimiser; the tests check it against cvxpy to solver tolerance.
    """
    from scipy import optimize

    n, d = X.shape
    b = np.zeros(d) if linear is None else linear

    def objective(w: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        z = y * (X @ w)
        value = float(0.5 * regularization * w @ w + np.mean(loss.value(z)) + b @ w)
        grad = regularization * w + X.T @ (loss.derivative(z) * y) / n + b
        return value, grad

    result = optimize.minimize(objective, np.zeros(d), jac=True, method="L-BFGS-B",
                               options={"gtol": tol, "ftol": 1e-15, "maxiter": 10_000})
    solution: NDArray[np.float64] = result.x
    return solution


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
    ``coef_`` (one row per binary problem), ``intercept_`` and ``classes_``."""

    coef_: NDArray[np.float64]
    intercept_: NDArray[np.float64]
    classes_: NDArray[Any]

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores: NDArray[np.float64] = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if self.coef_.shape[0] == 1 else scores

    def predict(self, X: Any) -> NDArray[Any]:
        return labels_from_scores(self.decision_function(X), self.classes_)


class _PrivateLinearClassifier(LinearModel, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Shared machinery: validation, bounds, one-vs-rest, plan, ledger, guarantee."""

    _method: ClassVar[str]

    def __init__(self, *, epsilon: float = 1.0, loss: str = "huber", huber_h: float = 0.5,
                 regularization: float = 0.01, row_norm_bound: float = 1.0,
                 clip: bool = True, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.loss = loss
        self.huber_h = huber_h
        self.regularization = regularization
        self.row_norm_bound = row_norm_bound
        self.clip = clip
        self.random_state = random_state

    # -- the plan ---------------------------------------------------------------------------

    def _validated(self) -> MarginLoss:
        owner = type(self).__name__
        check.positive_finite("epsilon", self.epsilon, owner)
        check.positive_finite("regularization", self.regularization, owner)
        check.positive_finite("row_norm_bound", self.row_norm_bound, owner)
        check.instance("clip", self.clip, bool, owner)
        if self.loss not in ("huber", "logistic"):
            raise check.fail("loss", self.loss, "'huber' or 'logistic'", owner)
        h = check.positive_finite("huber_h", self.huber_h, owner)
        return MarginLoss(self.loss, h)

    def _block(self, n_samples: int, epsilon: float, loss: MarginLoss) -> Block:
        raise NotImplementedError

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """The blocks ``fit`` will run on data of this shape, before any data is seen.

        One block per binary problem: one for two classes, one per class (one-vs-rest)
        otherwise, each with ``epsilon / n_problems`` (sequential composition: every
        problem uses every row).
        """
        loss = self._validated()
        n = check.positive_int("n_samples", n_samples, "plan")
        check.positive_int("n_features", n_features, "plan")
        k = check.positive_int("n_classes", n_classes, "plan")
        problems = 1 if k <= 2 else k
        block = self._block(n, self.epsilon / problems, loss)
        return block if problems == 1 else Repeat(block, problems)

    # -- fitting ----------------------------------------------------------------------------

    def fit(self, X: Any, y: Any) -> _PrivateLinearClassifier:
        """Fit privately; afterwards ``guarantee_``, ``ledger_``, ``plan_``, ``paper_claim_``."""
        loss = self._validated()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise check.fail("y", f"{self.classes_.size} class", "at least 2 classes",
                             type(self).__name__)
        n, d = X.shape
        Z = clipped_rows(X, self.row_norm_bound, clip=self.clip, owner=type(self).__name__)
        plan = self.plan(n_samples=n, n_features=d, n_classes=self.classes_.size)
        rng = np.random.default_rng(self.random_state)
        targets = ([self.classes_[1]] if self.classes_.size == 2 else list(self.classes_))
        eps_each = self.epsilon / len(targets)
        coefs = []
        with Ledger() as ledger:
            for positive in targets:
                signs = np.where(y == positive, 1.0, -1.0)
                coefs.append(self._fit_binary(Z, signs, eps_each, loss, rng))
        self.coef_ = np.array(coefs) / self.row_norm_bound
        self.intercept_ = np.zeros(len(coefs))
        self.plan_ = plan
        self.ledger_ = ledger
        self.guarantee_: Guarantee = BasicAccountant().guarantee(plan)
        self.paper_claim_: Guarantee = PureDP(epsilon=self.epsilon)
        return self

    def _fit_binary(self, Z: NDArray[np.float64], y: NDArray[np.float64], epsilon: float,
                    loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        raise NotImplementedError

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags


class OutputPerturbationClassifier(_PrivateLinearClassifier):
    """Regularised ERM, then L2-Laplace noise on the weights (Chaudhuri et al. 2011, Alg. 1).

    Parameters
    ----------
    epsilon : float
        The total budget (pure DP, REPLACE_ONE), split evenly over one-vs-rest problems.
    loss : {"huber", "logistic"}
        Huber-loss SVM (``huber_h``; seed 003 eq. 3, whose first case should read
        ``z > 1 + h``) or logistic regression.
    regularization : float
        Lambda.
    row_norm_bound : float
        A public bound B on every row's L2 norm; rows are divided by B (so the analysis'
        ``||x|| <= 1`` holds) and rows beyond it are clipped (``clip=True``) or refused.
    random_state : int, Generator or None

    Notes
    -----
    The minimiser of a Lambda-strongly convex objective with a 1-Lipschitz loss moves by at
    most ``2 / (n Lambda)`` in L2 when one row is replaced (Chaudhuri et al. 2011,
    Corollary 8), so L2-Laplace noise with ``beta = n Lambda eps / 2`` (seed 003 Algorithm 1)
    gives eps-DP. privkit's ledger records the :class:`~privkit.mechanisms.L2Laplace`
    block it runs, and ``guarantee_`` is computed from it.

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

    def _block(self, n_samples: int, epsilon: float, loss: MarginLoss) -> Block:
        sensitivity = 2.0 / (n_samples * self.regularization)
        return L2Laplace.for_epsilon(epsilon, sensitivity=sensitivity, relation=R)

    def _fit_binary(self, Z: NDArray[np.float64], y: NDArray[np.float64], epsilon: float,
                    loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        block = self._block(Z.shape[0], epsilon, loss)
        w = solve_erm(Z, y, loss, self.regularization)
        assert isinstance(block, L2Laplace)
        released: NDArray[np.float64] = block.release(w, rng=rng)
        return released


class ObjectivePerturbationClassifier(_PrivateLinearClassifier):
    """Minimise a randomly perturbed objective (Chaudhuri et al. 2011, Algorithm 2).

    Parameters are those of :class:`OutputPerturbationClassifier`.

    Notes
    -----
    Seed 003 Algorithm 2 / seed 004 Algorithm 3 lines 3-10: with c the loss's curvature
    bound, ``eps' = eps - log(1 + 2c/(n Lambda) + c^2/(n Lambda)^2)``; if that is not
    positive, add ``Delta = c/(n (e^(eps/4) - 1)) - Lambda`` and use ``eps' = eps/2``;
    draw ``b`` with density ∝ exp(-eps'/2 ||b||) and minimise
    ``J(w) + b.w / n + Delta/2 ||w||^2``. eps-DP under REPLACE_ONE by Chaudhuri et al. 2011,
    Theorem 9 (the loss must be twice differentiable with ``|l''| <= c``: Huber with
    ``c = 1 / (2h)``, logistic with ``c = 1/4``). The privacy holds for the exact minimiser;
    privkit solves to a gradient tolerance of 1e-10.

    .. versionadded:: 0.1.0
    """

    _method = "objective"

    def _block(self, n_samples: int, epsilon: float, loss: MarginLoss) -> Block:
        return ObjectivePerturbation.for_epsilon(epsilon, curvature=loss.curvature,
                                                 n_samples=n_samples,
                                                 regularization=self.regularization)

    def _fit_binary(self, Z: NDArray[np.float64], y: NDArray[np.float64], epsilon: float,
                    loss: MarginLoss, rng: np.random.Generator) -> NDArray[np.float64]:
        block = self._block(Z.shape[0], epsilon, loss)
        assert isinstance(block, ObjectivePerturbation)
        b = block.release(Z.shape[1], rng=rng)
        lam = self.regularization + block.extra_regularization
        return solve_erm(Z, y, loss, lam, linear=b / Z.shape[0])

