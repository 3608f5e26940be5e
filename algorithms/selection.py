"""Private hyperparameter selection with one honest total (Liu, Talwar 2019).

Tuning a private estimator with scikit-learn's ``GridSearchCV`` trains it once per
setting and fold and publishes the best: every one of those fits spends budget, and the
reported epsilon is that of one fit. (Each privkit estimator accepts ``budget_filter=``
in ``fit``, so ``GridSearchCV(...).fit(X, y, budget_filter=f)`` spends every fit on the
filter and is refused once the filter's limit would be exceeded.)

:class:`PrivateGridSearch` is the random-stopping selection of Liu and Talwar,
"Private selection from private candidates" (STOC 2019), Theorem 3.1: repeat
{draw a setting uniformly from the grid; run an epsilon_c-DP candidate that returns a
model and its noisy validation score}; after each run stop with probability gamma;
publish the best candidate seen. If every candidate is epsilon_c-DP, the whole procedure
is ``3 epsilon_c``-DP, whatever gamma and however many runs happen. privkit accounts for
it as a :class:`~privkit.Claimed` ``PureDP(3 epsilon_c)`` block with that citation, so it
composes with anything else the user runs.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_is_fitted

from privkit import _validation as check
from privkit.accountants import tightest
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import Ledger
from privkit.mechanisms import Laplace
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Claimed

__all__ = ["PrivateGridSearch"]

R = Neighbouring.REPLACE_ONE


class PrivateGridSearch(MetaEstimatorMixin, BaseEstimator):  # type: ignore[misc]
    """Liu-Talwar random-stopping selection over a grid of settings of a pure-DP privkit
    estimator (REPLACE_ONE), with one total guarantee ``epsilon``.

    Parameters
    ----------
    estimator : a privkit estimator with an ``epsilon`` parameter and a pure-DP plan
        (:class:`~privkit.algorithms.OutputPerturbationClassifier`,
        :class:`~privkit.algorithms.ObjectivePerturbationClassifier`).
    param_grid : dict or list of dicts
        As for ``GridSearchCV``; ``epsilon`` may not be in it (the search sets it).
    epsilon : float
        The total budget: each candidate runs at ``epsilon_c = epsilon / 3``.
    stop_probability : float, optional
        gamma; by default ``1 / (2 * number of settings)`` (2 runs per setting expected).
    validation_fraction : float, default 0.25
        The share of rows (a split by a public random permutation of the indices) on
        which candidates are scored; the rest train them.
    random_state : int, Generator or None

    Notes
    -----
    Each candidate trains on the training rows at epsilon_c and releases its validation
    accuracy plus Laplace noise of scale ``1 / (n_val epsilon_c)`` (one replaced row moves
    the accuracy by at most ``1 / n_val``). The two parts touch disjoint rows, so a
    replaced row affects only one of them: the candidate is epsilon_c-DP (parallel
    composition). Liu, Talwar 2019, Theorem 3.1, then gives ``3 epsilon_c`` for the
    selection with an unbounded geometric number of runs; privkit never truncates it.

    Attributes
    ----------
    best_params_, best_estimator_, best_score_ (noisy), n_runs_, plan_, guarantee_,
    ledger_ (every block that ran, for the record: the guarantee is the theorem's),
    paper_claim_.
    """

    def __init__(self, estimator: Any, param_grid: Any, *, epsilon: float = 1.0,
                 stop_probability: float | None = None, validation_fraction: float = 0.25,
                 random_state: Any = None) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.stop_probability = stop_probability
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def plan(self, *, n_samples: int, n_features: int, n_classes: int = 2) -> Block:
        """``Claimed(PureDP(epsilon), REPLACE_ONE)``: Liu-Talwar's theorem for candidates
        at epsilon / 3 (the shape does not change it)."""
        eps = check.positive_finite("epsilon", self.epsilon, type(self).__name__)
        return Claimed(PureDP(epsilon=eps), relation=R,
                       label="Liu-Talwar 2019 Thm 3.1: random stopping over "
                             f"{eps / 3:.6g}-DP candidates")

    def fit(self, X: Any, y: Any, budget_filter: Any = None) -> PrivateGridSearch:
        owner = type(self).__name__
        eps = check.positive_finite("epsilon", self.epsilon, owner)
        frac = check.open_unit("validation_fraction", self.validation_fraction, owner)
        settings = list(ParameterGrid(self.param_grid))
        if any("epsilon" in s for s in settings):
            raise check.fail("param_grid", self.param_grid, "a grid without 'epsilon'",
                             owner, "the search sets each candidate's epsilon")
        gamma = (1.0 / (2 * len(settings)) if self.stop_probability is None
                 else check.open_unit("stop_probability", self.stop_probability, owner))
        X = np.asarray(X) if not hasattr(X, "tocsr") else X.tocsr()
        y = np.asarray(y)
        n = len(y)
        plan = self.plan(n_samples=n, n_features=X.shape[1])
        if budget_filter is not None:
            budget_filter.spend(plan)
        rng = np.random.default_rng(self.random_state)
        order = rng.permutation(n)
        n_val = max(1, round(frac * n))
        val, train = order[:n_val], order[n_val:]
        eps_c = eps / 3.0
        score_noise = Laplace.for_epsilon(eps_c, sensitivity=1.0 / n_val, relation=R)
        best: tuple[float, Any, dict[str, Any]] | None = None
        runs = 0
        with Ledger() as ledger:
            while True:
                setting = settings[int(rng.integers(len(settings)))]
                model = clone(self.estimator).set_params(**setting, epsilon=eps_c,
                                                         random_state=rng.spawn(1)[0])
                model.fit(X[train], y[train])
                if model.guarantee_.epsilon_at(0.0) > eps_c * (1 + 1e-9):
                    raise check.fail("estimator", type(model).__name__,
                                     "an estimator whose fit is epsilon-DP (pure)", owner)
                accuracy = float(np.mean(model.predict(X[val]) == y[val]))
                score = float(score_noise.release(accuracy, rng=rng))
                runs += 1
                if best is None or score > best[0]:
                    best = (score, model, setting)
                if rng.random() < gamma:
                    break
        assert best is not None
        self.best_score_, self.best_estimator_, self.best_params_ = best
        self.classes_ = self.best_estimator_.classes_
        self.n_runs_ = runs
        self.plan_ = plan
        self.ledger_ = ledger
        self.guarantee_: Guarantee = tightest(plan, delta=0.0).guarantee
        self.paper_claim_: Guarantee = PureDP(epsilon=eps)
        return self

    def predict(self, X: Any) -> Any:
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def score(self, X: Any, y: Any) -> float:
        check_is_fitted(self)
        return float(self.best_estimator_.score(X, y))
