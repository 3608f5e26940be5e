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
  what privkit reports. ``accounting="batch"`` (default) calibrates the whole batch to
  epsilon (L1 sensitivity ``2 nu c m``).
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

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin

from privkit import _validation as check
from privkit.guarantees import ApproxDP, Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Block, Repeat

from ._inputs import fit_inputs
from .random_features import RandomFourierFeatures
from .svdd import accounted

__all__ = ["SVMOutputClassifier", "SVMSemiClassifier", "SVMWeightClassifier", "hinge_svm",
           "hinge_svm_ovr"]

R = Neighbouring.REPLACE_ONE


def _liblinear_hinge(Phi: NDArray[np.float64], labels: NDArray[Any], nu: float
                     ) -> NDArray[np.float64]:
    """liblinear's dual coordinate descent (Hsieh et al. 2008) as scikit-learn's
    ``LinearSVC(loss="hinge", C=nu, fit_intercept=False, dual=True, tol=1e-6)`` runs it,
    through the solver function its ``fit`` calls (``sklearn.svm._base._fit_liblinear``):
    the inputs are already validated features, and ``LinearSVC.fit``'s re-validation and
    target-type inference took a third of a fit on a small set. The coordinate order's
    seed is fixed (0), so a fit is reproducible; it is public randomness, drawn
    independently of the data."""
    import warnings

    import sklearn
    from sklearn.svm._base import _fit_liblinear

    with warnings.catch_warnings(), sklearn.config_context(
            assume_finite=True, skip_parameter_validation=True):
        warnings.simplefilter("ignore")
        coef, _, _ = _fit_liblinear(
            Phi, labels, C=nu, fit_intercept=False, intercept_scaling=1.0,
            class_weight=None, penalty="l2", dual=True, verbose=0, max_iter=20_000,
            tol=1e-6, random_state=0, multi_class="ovr", loss="hinge")
    W: NDArray[np.float64] = np.asarray(coef, dtype=np.float64)
    return W


def hinge_svm(Phi: NDArray[np.float64], signs: NDArray[np.float64], nu: float
              ) -> NDArray[np.float64]:
    """``argmin_w 1/2 ||w||^2 + nu sum_i hinge(y_i w . phi_i)`` (no bias), by liblinear's
    dual coordinate descent (Hsieh et al. 2008) as scikit-learn's ``LinearSVC`` runs it
    (:func:`_liblinear_hinge`)."""
    w: NDArray[np.float64] = _liblinear_hinge(Phi, signs, nu).ravel()
    return w


def hinge_svm_ovr(Phi: NDArray[np.float64], codes: NDArray[np.int64], nu: float
                  ) -> NDArray[np.float64]:
    """The one-vs-rest weights, row k solving :func:`hinge_svm` with labels ``+1`` for
    class k and ``-1`` otherwise, in one liblinear call (its one-vs-rest loop solves the
    same problems; one call saves scikit-learn's per-fit validation, most of the time on
    small data)."""
    return _liblinear_hinge(Phi, codes, nu)


class _OvR(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    def __init__(self, *, epsilon: float = 1.0, nu: float = 0.05, gamma: float = 1.0,
                 n_components: int = 400, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.nu = nu
        self.gamma = gamma
        self.n_components = n_components
        self.random_state = random_state

    def _check(self) -> None:
        owner = type(self).__name__
        check.positive_finite("epsilon", self.epsilon, owner)
        check.positive_finite("nu", self.nu, owner)
        check.positive_int("n_components", self.n_components, owner)

    def _fit_weights(self, X: Any, y: Any) -> NDArray[np.float64]:
        self._check()
        X, y = fit_inputs(self, X, y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise check.fail("y", f"{self.classes_.size} class", "at least 2 classes",
                             type(self).__name__)
        self._rng = np.random.default_rng(self.random_state)
        self.features_ = RandomFourierFeatures(self.n_components, self.gamma,
                                               int(self._rng.integers(2**63))).fit(X)
        Phi = self.features_.transform(X)
        if self.classes_.size == 2:
            return hinge_svm(Phi, np.where(codes == 1, 1.0, -1.0), self.nu)[None, :]
        return hinge_svm_ovr(Phi, codes, self.nu)

    def _labels(self, scores: NDArray[np.float64]) -> NDArray[Any]:
        if scores.shape[1] == 1:
            return self.classes_[(scores[:, 0] > 0).astype(int)]  # type: ignore[no-any-return]
        return self.classes_[np.argmax(scores, axis=1)]  # type: ignore[no-any-return]

    def _problems(self, n_classes: int) -> int:
        return 1 if n_classes <= 2 else n_classes


class SVMWeightClassifier(_OvR):
    """Rubinstein et al. 2012: Laplace noise on the primal weights (``4 nu sqrt(F)``)."""

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        from privkit.mechanisms import Laplace

        self._check()
        k = self._problems(check.positive_int("n_classes", n_classes, "plan"))
        sens = Sensitivity(value=4.0 * self.nu * math.sqrt(self.n_components), norm=Norm.L1,
                           relation=R)
        return Repeat(Laplace.for_epsilon(self.epsilon / k, sensitivity=sens), k)

    def fit(self, X: Any, y: Any) -> SVMWeightClassifier:
        W = self._fit_weights(X, y)
        plan = self.plan(n_samples=len(X), n_features=self.n_features_in_,
                         n_classes=self.classes_.size)
        block = plan.block  # type: ignore[union-attr]
        with Ledger() as ledger:
            self.coef_ = np.array([block.release(w, rng=self._rng) for w in W])
        self.plan_, self.ledger_ = plan, ledger
        self.guarantee_: Guarantee = accounted(plan, 0.0)
        self.paper_claim_: Guarantee = PureDP(epsilon=self.epsilon)
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        out: NDArray[np.float64] = self.features_.transform(np.asarray(X, float)) @ self.coef_.T
        return out

    def predict(self, X: Any) -> NDArray[Any]:
        return self._labels(self.decision_function(X))


class SVMOutputClassifier(_OvR):
    """Jain, Thakurta 2013 (interactive): Laplace noise on decision values of queries.

    ``predict`` is the private release; it needs the non-private weights, i.e. the
    training data, at inference. ``guarantee_`` is set by each ``predict`` call for the
    queries of that call; ``n_queries`` sizes :meth:`plan` before any call.
    """

    def __init__(self, *, epsilon: float = 1.0, nu: float = 0.05, gamma: float = 1.0,
                 n_components: int = 400, accounting: str = "batch", n_queries: int = 1,
                 random_state: Any = None) -> None:
        super().__init__(epsilon=epsilon, nu=nu, gamma=gamma, n_components=n_components,
                         random_state=random_state)
        self.accounting = accounting
        self.n_queries = n_queries

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """The release of one ``predict`` call of ``n_queries`` points (the estimator
        parameter; ``predict`` itself accounts for the points it is given)."""
        m = check.positive_int("n_queries", self.n_queries, type(self).__name__)
        return self._plan(check.positive_int("n_classes", n_classes, "plan"), m)

    def _plan(self, n_classes: int, m: int) -> Block:
        from privkit.mechanisms import Laplace

        self._check()
        if self.accounting not in ("batch", "per_query"):
            raise check.fail("accounting", self.accounting, "'batch' or 'per_query'",
                             type(self).__name__)
        k = self._problems(n_classes)
        per_query = Sensitivity(value=2.0 * self.nu * k, norm=Norm.L1, relation=R)
        if self.accounting == "per_query":  # the thesis: epsilon for every query
            return Repeat(Laplace.for_epsilon(self.epsilon, sensitivity=per_query), m)
        whole = Sensitivity(value=2.0 * self.nu * k * m, norm=Norm.L1, relation=R)
        return Laplace.for_epsilon(self.epsilon, sensitivity=whole)

    def fit(self, X: Any, y: Any) -> SVMOutputClassifier:
        self._weights = self._fit_weights(X, y)
        self.paper_claim_: Guarantee = PureDP(epsilon=self.epsilon)
        return self

    def predict(self, X: Any) -> NDArray[Any]:
        Q = np.asarray(X, dtype=np.float64)
        scores = self.features_.transform(Q) @ self._weights.T
        plan = self._plan(self.classes_.size, Q.shape[0])
        with Ledger() as ledger:
            if self.accounting == "per_query":
                block = plan.block  # type: ignore[union-attr]
                noisy = np.array([block.release(s, rng=self._rng) for s in scores])
            else:
                noisy = plan.release(scores, rng=self._rng)  # type: ignore[union-attr]
        self.plan_, self.ledger_ = plan, ledger
        self.guarantee_: Guarantee = accounted(plan, 0.0)
        return self._labels(noisy)


class SVMSemiClassifier(_OvR):
    """Jain, Thakurta 2013 (semi-interactive): Gaussian noise on decision values of the
    user's unlabelled points ``Z`` (``fit(X, y, Z=...)``), then a released least-squares
    weight vector. ``delta`` defaults to ``1/n`` (the thesis).

    The L2 sensitivity of the decision values on Z is ``||Phi_Z||_op 2 nu`` per class.
    ``z_operator_norm`` is that public operator norm: ``None`` (default) computes it at
    ``fit`` from the public Z (``z_operator_norm_``); a number declares it in advance
    (e.g. ``sqrt(m)`` for m points, since every feature row has norm 1), so that
    :meth:`plan` can be called before ``fit``; ``fit`` refuses a declared value below
    the norm of the Z it is given.
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float | None = None, nu: float = 0.05,
                 gamma: float = 1.0, n_components: int = 400,
                 z_operator_norm: float | None = None, random_state: Any = None) -> None:
        super().__init__(epsilon=epsilon, nu=nu, gamma=gamma, n_components=n_components,
                         random_state=random_state)
        self.delta = delta
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

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``Repeat(Gaussian, k)``: one Gaussian release per one-vs-rest problem, with L2
        sensitivity ``2 nu ||Phi_Z||_op`` each, calibrated so that the k releases
        together are exactly ``(epsilon, delta)``-DP.

        Jain and Thakurta give each problem ``(epsilon / k, delta / k)`` (basic
        composition), which spent only 0.55 of epsilon 1 for three classes by privkit's
        accountant. A changed record moves each of the k decision-value vectors by at most
        the sensitivity, so the stacked vector moves by at most ``sqrt(k)`` times it, and
        k Gaussians of scale ``sqrt(k) sigma`` are one Gaussian mechanism on the stack
        with scale ``sigma`` for that sensitivity (Dong, Roth, Su 2019, "Gaussian
        differential privacy", Corollary 3.3): ``sigma`` is the analytic Gaussian scale
        for ``(epsilon, delta)`` (Balle, Wang 2018), the least noise that meets it."""
        from privkit.mechanisms import Gaussian

        self._check()
        k = self._problems(check.positive_int("n_classes", n_classes, "plan"))
        n = check.positive_int("n_samples", n_samples, "plan")
        delta = self.delta if self.delta is not None else 1.0 / n
        sens = Sensitivity(value=2.0 * self.nu * self._z_norm(), norm=Norm.L2, relation=R)
        whole = Gaussian.for_approx_dp(epsilon=self.epsilon, delta=delta, sensitivity=sens)
        return Repeat(Gaussian(noise_scale=math.sqrt(k) * whole.noise_scale,
                               sensitivity=sens), k)

    def fit(self, X: Any, y: Any, Z: Any = None) -> SVMSemiClassifier:
        if Z is None:
            raise check.fail("Z", None, "the user's unlabelled points (semi-interactive)",
                             type(self).__name__)
        W = self._fit_weights(X, y)
        PZ = self.features_.transform(np.asarray(Z, dtype=np.float64))
        # one SVD of the public phi(Z) gives its operator norm and the least-squares refit
        U, sv, Vt = np.linalg.svd(PZ, full_matrices=False)
        op = float(sv[0])
        if self.z_operator_norm is not None and self.z_operator_norm < op * (1 - 1e-12):
            raise check.fail("z_operator_norm", self.z_operator_norm,
                             f"at least the operator norm of phi(Z), {op:.6g}",
                             type(self).__name__, "a smaller value understates the "
                             "sensitivity")
        self.z_operator_norm_ = op if self.z_operator_norm is None else float(
            self.z_operator_norm)
        plan = self.plan(n_samples=len(X), n_features=self.n_features_in_,
                         n_classes=self.classes_.size)
        block = plan.block  # type: ignore[union-attr]
        with Ledger() as ledger:
            noisy = np.array([block.release(PZ @ w, rng=self._rng) for w in W])
        # numpy's lstsq with rcond=None: singular values below eps max(shape) s_max dropped
        keep = sv > np.finfo(np.float64).eps * max(PZ.shape) * sv[0]
        self.coef_ = ((Vt[keep].T / sv[keep]) @ (U[:, keep].T @ noisy.T)).T
        delta = self.delta if self.delta is not None else 1.0 / len(X)
        self.plan_, self.ledger_ = plan, ledger
        self.guarantee_: Guarantee = accounted(plan, delta)
        self.paper_claim_: Guarantee = ApproxDP(epsilon=self.epsilon, delta=delta)
        return self

    def decision_function(self, X: Any) -> NDArray[np.float64]:
        out: NDArray[np.float64] = self.features_.transform(np.asarray(X, float)) @ self.coef_.T
        return out

    def predict(self, X: Any) -> NDArray[Any]:
        return self._labels(self.decision_function(X))
