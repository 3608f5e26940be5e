"""_spend.charge: spending on a filter, and the warning for fits that scikit-learn repeats."""

import inspect
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from _tiny_estimator import TinyPrivateEstimator
from sklearn.model_selection import (
    GridSearchCV,
    RandomizedSearchCV,
    cross_val_predict,
    cross_val_score,
    cross_validate,
)

from privkit import (
    BudgetExceededError,
    BudgetFilter,
    InvalidParameterError,
    Neighbouring,
    UnaccountedSpendWarning,
)
from privkit.algorithms._spend import charge
from privkit.mechanisms import Gaussian, Laplace

X = np.zeros((30, 2))
Y = np.arange(30) % 2
A = Neighbouring.ADD_REMOVE


def spend_warnings(run):
    """The messages of every UnaccountedSpendWarning that ``run()`` raises here."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in caught if w.category is UnaccountedSpendWarning]


def test_charge_spends_on_a_filter_before_anything_and_refuses_what_does_not_fit():
    """With a filter the block is spent (with its delta, when given); a block that does not
    fit raises BudgetExceededError; a filter of the wrong type is named in the error."""
    budget = BudgetFilter(epsilon=2.0, delta=1e-5)
    estimator = TinyPrivateEstimator()
    charge(estimator, Laplace.for_epsilon(0.5, sensitivity=1.0, relation=A), budget)
    charge(estimator, Gaussian.for_gdp(0.2, sensitivity=1.0, relation=A), budget, delta=4e-6)
    assert budget.spent.delta == 4e-6
    with pytest.raises(BudgetExceededError):
        charge(estimator, Laplace.for_epsilon(0.8, sensitivity=1.0, relation=A), budget)
    assert len(budget.history) == 2
    with pytest.raises(InvalidParameterError, match="`budget_filter` must be a BudgetFilter "
                                                    "or SharedBudgetFilter"):
        charge(estimator, Laplace.for_epsilon(0.5, sensitivity=1.0, relation=A), 1.0)


def test_no_warning_outside_a_search():
    """A plain fit, and fits in a loop of one's own, never warn."""
    assert spend_warnings(lambda: [TinyPrivateEstimator().fit(X, Y) for _ in range(3)]) == []


def test_grid_search_without_a_filter_warns_the_true_total():
    """GridSearchCV (3 candidates x 5 splits + 1 refit) warns at each of its 16 fits with
    the cost of one fit, the count and the total 16 x 0.25 = 4, and how to pass a
    filter."""
    search = GridSearchCV(TinyPrivateEstimator(epsilon=0.25), {"c": [0, 1, 2]}, cv=5)
    messages = spend_warnings(lambda: search.fit(X, Y))
    assert len(messages) == 16
    message = messages[0]
    assert "GridSearchCV (3 candidates x 5 splits + 1 refit = 16 fits)" in message
    assert "Each fit spends epsilon=0.25, delta=0" in message
    assert "the 16 fits spend up to epsilon=4, delta=0" in message
    assert "budget_filter=budget" in message
    assert "budget.shared()" in message
    assert set(messages) == {message}


def test_a_search_with_a_filter_does_not_warn():
    """With fit(..., budget_filter=) every fit is counted: no warning."""
    budget = BudgetFilter(epsilon=100.0)
    search = GridSearchCV(TinyPrivateEstimator(), {"c": [0, 1]}, cv=2)
    assert spend_warnings(lambda: search.fit(X, Y, budget_filter=budget)) == []
    assert len(budget.history) == 5


@pytest.mark.parametrize(("run", "where", "fits"), [
    (lambda: RandomizedSearchCV(TinyPrivateEstimator(), {"c": [0, 1, 2, 3]}, n_iter=2, cv=3,
                                random_state=0).fit(X, Y),
     "RandomizedSearchCV (2 candidates x 3 splits + 1 refit = 7 fits)", 7),
    (lambda: GridSearchCV(TinyPrivateEstimator(), {"c": [0, 1]}, cv=2, refit=False).fit(X, Y),
     "GridSearchCV (2 candidates x 2 splits = 4 fits)", 4),
    (lambda: cross_val_score(TinyPrivateEstimator(), X, Y, cv=4),
     "cross_val_score (4 splits = 4 fits)", 4),
    (lambda: cross_validate(TinyPrivateEstimator(), X, Y, cv=3),
     "cross_validate (3 splits = 3 fits)", 3),
    (lambda: cross_val_predict(TinyPrivateEstimator(), X, Y, cv=3),
     "cross_val_predict (3 splits = 3 fits)", 3),
    (lambda: cross_val_score(GridSearchCV(TinyPrivateEstimator(), {"c": [0, 1]}, cv=2), X, Y,
                             cv=3),
     ("GridSearchCV (2 candidates x 2 splits + 1 refit = 5 fits) inside scikit-learn's "
      "cross_val_score (3 splits = 3 fits)"), 15),
], ids=["randomized", "no-refit", "cross_val_score", "cross_validate", "cross_val_predict",
        "nested"])
def test_each_search_and_cross_validation_is_counted(run, where, fits):
    """Every fit of the loop warns with the loop's true number of fits and total (epsilon
    1 each); nested loops multiply."""
    messages = spend_warnings(run)
    assert len(messages) == fits
    assert f"in scikit-learn's {where}." in messages[0]
    assert f"the {fits} fits spend up to epsilon={fits}, delta=0" in messages[0]


def test_candidates_that_set_epsilon_are_not_given_one_cost():
    """When the grid sets epsilon, the fits cost different amounts: the message gives this
    fit's cost and says the total is their sum, without a wrong product."""
    search = GridSearchCV(TinyPrivateEstimator(), {"epsilon": [0.1, 1.0]}, cv=2)
    messages = spend_warnings(lambda: search.fit(X, Y))
    assert len(messages) == 5
    assert all("the sum of their costs" in m for m in messages)
    assert "This fit spends epsilon=0.1," in messages[0]


def test_candidates_of_a_privkit_meta_estimator_do_not_warn():
    """A fit made by another privkit estimator's fit (a candidate that estimator accounts
    for) is not a scikit-learn repetition, even inside a search."""

    class Outer(TinyPrivateEstimator):
        def fit(self, X, y, budget_filter=None):
            TinyPrivateEstimator().fit(X, y)  # an inner candidate, accounted by Outer
            return super().fit(X, y, budget_filter)

    Outer.__module__ = "privkit.algorithms.outer"  # as a privkit estimator's class
    messages = spend_warnings(lambda: cross_val_score(Outer(), X, Y, cv=2))
    assert len(messages) == 2  # Outer's own fits only, not the inner ones
    assert all(m.startswith("Outer.fit") for m in messages)


def test_with_two_jobs_the_parent_hears_of_the_search_at_refit():
    """GridSearchCV(n_jobs=2): scikit-learn does not send the workers' warnings back, but
    the refit runs in the parent and knows the exact count: one warning there, with the
    true total 2 x 3 + 1 = 7."""
    search = GridSearchCV(TinyPrivateEstimator(), {"c": [0, 1]}, cv=3, n_jobs=2)
    messages = spend_warnings(lambda: search.fit(X, Y))
    assert len(messages) == 1
    assert "GridSearchCV (2 candidates x 3 splits + 1 refit = 7 fits)" in messages[0]
    assert "up to epsilon=7, delta=0" in messages[0]


@pytest.mark.slow
def test_with_two_jobs_each_worker_prints_its_warning_on_the_shared_stderr():
    """cross_val_score(n_jobs=2) runs no privkit code in the parent: the fits warn in the
    loky workers, whose standard error is the parent's, so a user running a script sees
    the warning (checked in a fresh interpreter, as a user runs it)."""
    tests = Path(__file__).resolve().parents[1]
    script = (
        f"import sys; sys.path.insert(0, {str(tests)!r})\n"
        "import numpy as np\n"
        "from sklearn.model_selection import cross_val_score\n"
        "from _tiny_estimator import TinyPrivateEstimator\n"
        "cross_val_score(TinyPrivateEstimator(), np.zeros((30, 2)), np.arange(30) % 2,"
        " cv=3, n_jobs=2)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=300)
    assert "UnaccountedSpendWarning: TinyPrivateEstimator.fit ran without a budget_filter" \
        in done.stderr
    assert "its number of fits is not known where this fit runs" in done.stderr


def test_a_privkit_estimator_warns_inside_a_search():
    """The same warning from a real privkit estimator, once its fit spends through
    _spend.charge (every estimator does, from the transcript work of issue 22)."""
    from privkit.algorithms import OutputPerturbationClassifier

    if "charge(" not in inspect.getsource(OutputPerturbationClassifier.fit):
        pytest.skip("OutputPerturbationClassifier.fit does not call _spend.charge yet")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    estimator = OutputPerturbationClassifier(epsilon=0.5, random_state=0)
    if "classes" in estimator.get_params():
        estimator.set_params(classes=[0, 1])
    search = GridSearchCV(estimator, {"regularization": [0.01, 0.1]}, cv=3)
    messages = spend_warnings(lambda: search.fit(X, y))
    assert len(messages) == 7
    assert "OutputPerturbationClassifier.fit ran without a budget_filter" in messages[0]
    assert "the 7 fits spend up to epsilon=3.5, delta=0" in messages[0]
