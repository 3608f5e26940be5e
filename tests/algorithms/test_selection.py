"""Private hyperparameter selection: one accounted total; GridSearchCV with a filter."""

import numpy as np
import pytest

from privkit import BudgetFilter, PureDP, tightest
from privkit.algorithms import ObjectivePerturbationClassifier
from privkit.algorithms.selection import PrivateGridSearch
from privkit.errors import BudgetExceededError

GRID = {"regularization": [0.001, 0.01, 0.1, 1.0], "loss": ["huber", "logistic"]}  # 8


def data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) / 4
    return X, (X[:, 0] + 0.3 > 0).astype(int)


@pytest.mark.slow
def test_grid_of_eight_settings_reports_one_total():
    """Selection over 8 settings at epsilon 3: privkit's accountant certifies exactly 3
    (Liu-Talwar 2019 Thm 3.1 for 1-DP candidates), whatever the number of runs; it
    composes with another spend in a filter; the winner is one of the grid's settings."""
    X, y = data()
    search = PrivateGridSearch(ObjectivePerturbationClassifier(), GRID, epsilon=3.0,
                               random_state=0).fit(X, y)
    assert search.guarantee_ == PureDP(epsilon=3.0)
    assert tightest(search.plan_, delta=0.0).epsilon == pytest.approx(3.0)
    assert search.n_runs_ >= 1
    assert search.best_params_ in list(__import__("sklearn").model_selection.ParameterGrid(GRID))
    assert search.best_estimator_.epsilon == pytest.approx(1.0)
    assert search.score(X, y) > 0.6
    budget = BudgetFilter(epsilon=5.0)
    PrivateGridSearch(ObjectivePerturbationClassifier(), GRID, epsilon=3.0,
                      random_state=1).fit(X, y, budget_filter=budget)
    with pytest.raises(BudgetExceededError):
        PrivateGridSearch(ObjectivePerturbationClassifier(), GRID, epsilon=3.0,
                          random_state=2).fit(X, y, budget_filter=budget)


def test_grid_search_cv_with_a_filter_is_refused_past_its_limit():
    """GridSearchCV over the same 8 settings, 3 folds, each fit at epsilon 1, spends every
    fit on the filter: with a limit of 10 the 11th fit is refused (BudgetExceededError)."""
    from sklearn.model_selection import GridSearchCV

    X, y = data()
    budget = BudgetFilter(epsilon=10.0)
    search = GridSearchCV(ObjectivePerturbationClassifier(epsilon=1.0, random_state=0), GRID,
                          cv=3, error_score="raise")
    with pytest.raises(BudgetExceededError):
        search.fit(X, y, budget_filter=budget)
    assert budget.spent.epsilon == pytest.approx(10.0)


def test_grid_with_epsilon_is_refused():
    """The search sets epsilon; a grid over it is refused, naming param_grid."""
    X, y = data()
    with pytest.raises(ValueError, match="`param_grid` must be a grid without 'epsilon'"):
        PrivateGridSearch(ObjectivePerturbationClassifier(), {"epsilon": [1, 2]}).fit(X, y)
