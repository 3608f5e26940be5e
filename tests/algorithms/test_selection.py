"""Private hyperparameter selection: one accounted total; GridSearchCV with a filter; the
label set (declared, or released once for the whole search); shapes checked."""

import warnings

import numpy as np
import pytest

from privkit import ApproxDP, BudgetFilter, PureDP, tightest
from privkit.algorithms import ObjectivePerturbationClassifier, OutputPerturbationClassifier
from privkit.algorithms.tuning.selection import PrivateGridSearch
from privkit.errors import BudgetExceededError, InvalidParameterError
from privkit.mechanisms import StabilityHistogram

GRID = {"regularization": [0.001, 0.01, 0.1, 1.0], "loss": ["huber", "logistic"]}  # 8
SMALL = {"regularization": [0.1, 1.0]}


def data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) / 4
    return X, (X[:, 0] + 0.3 > 0).astype(int)


def fast_candidate():
    return OutputPerturbationClassifier(loss="logistic", tol=1e-6)


@pytest.mark.slow
def test_grid_of_eight_settings_reports_one_total():
    """Selection over 8 settings at epsilon 3: privkit's accountant certifies exactly 3
    (Papernot-Steinke 2022 Thm 2 for 1.5-DP candidates, eta = 0), whatever the number
    of runs; it
    composes with another spend in a filter; the winner is one of the grid's settings."""
    X, y = data()
    search = PrivateGridSearch(ObjectivePerturbationClassifier(), GRID, epsilon=3.0,
                               classes=[0, 1], random_state=0).fit(X, y)
    assert search.guarantee_ == PureDP(epsilon=3.0)
    assert tightest(search.plan_, delta=0.0).epsilon == pytest.approx(3.0)
    assert search.best_params_ in list(__import__("sklearn").model_selection.ParameterGrid(GRID))
    assert search.best_estimator_.epsilon == pytest.approx(0.9 * 1.5)  # (3 / 2), 10% scores
    assert search.score(X, y) > 0.6
    budget = BudgetFilter(epsilon=5.0)
    PrivateGridSearch(ObjectivePerturbationClassifier(), GRID, epsilon=3.0, classes=[0, 1],
                      random_state=1).fit(X, y, budget_filter=budget)
    with pytest.raises(BudgetExceededError):
        PrivateGridSearch(ObjectivePerturbationClassifier(), GRID, epsilon=3.0,
                          classes=[0, 1], random_state=2).fit(X, y, budget_filter=budget)


def test_grid_search_cv_with_a_filter_is_refused_past_its_limit():
    """GridSearchCV over the same 8 settings, 3 folds, each fit at epsilon 1, spends every
    fit on the filter: with a limit of 10 the 11th fit is refused (BudgetExceededError)."""
    from sklearn.model_selection import GridSearchCV

    X, y = data()
    budget = BudgetFilter(epsilon=10.0)
    search = GridSearchCV(ObjectivePerturbationClassifier(epsilon=1.0, classes=[0, 1],
                                                          random_state=0), GRID,
                          cv=3, error_score="raise")
    with pytest.raises(BudgetExceededError):
        search.fit(X, y, budget_filter=budget)
    assert budget.spent.epsilon == pytest.approx(10.0)


@pytest.mark.parametrize("name", ["epsilon", "classes", "delta", "random_state"])
def test_grid_over_a_parameter_the_search_sets_is_refused(name):
    """The search sets each candidate's epsilon, delta, classes and random_state; a grid
    over one of them is refused, naming param_grid and the parameter."""
    X, y = data()
    with pytest.raises(InvalidParameterError, match=f"a grid without '{name}'"):
        PrivateGridSearch(ObjectivePerturbationClassifier(), {name: [1, 2]},
                          classes=[0, 1]).fit(X, y)


def test_rows_and_labels_of_different_lengths_are_refused():
    """Issue 22's "trains on 59 labels for 60 rows": the search paired row i with label i
    and silently dropped the last row. Now the lengths are checked (n is public under
    replace-one) before anything is spent; the message names no count (under add-remove
    both are private)."""
    X, y = data(n=60)
    budget = BudgetFilter(epsilon=5.0)
    search = PrivateGridSearch(fast_candidate(), SMALL, classes=[0, 1], random_state=0)
    with pytest.raises(ValueError, match="one label per row of X") as info:
        search.fit(X, y[:59], budget_filter=budget)
    assert "60" not in str(info.value)
    assert "59" not in str(info.value)
    assert budget.spent.epsilon == 0.0
    assert not hasattr(search, "best_estimator_")


def test_declared_classes_reach_every_candidate_and_a_foreign_label_is_neutral():
    """With classes declared, the chosen candidate's classes_ is that set (not the data's),
    and a record with a label outside it fits without error; the transcript (noisy score,
    model) does not depend on which outside label it holds (same seed)."""
    X, y = data(n=200)
    fits = []
    for foreign in (5, 9):
        labels = y.copy()
        labels[0] = foreign
        fits.append(PrivateGridSearch(fast_candidate(), SMALL, epsilon=3.0,
                                      classes=[0, 1, 2], random_state=0).fit(X, labels))
    first, second = fits
    np.testing.assert_array_equal(first.classes_, [0, 1, 2])
    np.testing.assert_array_equal(first.best_estimator_.classes_, [0, 1, 2])
    assert first.best_score_ == second.best_score_
    np.testing.assert_array_equal(first.best_estimator_.coef_, second.best_estimator_.coef_)


def test_private_label_set_is_released_once_for_the_whole_search():
    """Without classes: one stability histogram in the plan and in the ledger, however
    many candidates ran (each gets the released set as declared classes); guarantee_ is
    the release and Liu-Talwar's theorem by basic composition, (epsilon, delta); the
    filter is charged the whole (epsilon, delta) before anything is drawn."""
    X, _ = data(n=600)
    y = (X[:, 0] > 0).astype(int)  # about 300 each, far above the threshold (about 59)
    budget = BudgetFilter(epsilon=5.0, delta=1e-4)
    search = PrivateGridSearch(fast_candidate(), SMALL, epsilon=4.0, delta=1e-5,
                               expected_runs=5.0, random_state=1)
    search.fit(X, y, budget_filter=budget)
    histograms = [e for e in search.ledger_.entries if isinstance(e.block,
                                                                  StabilityHistogram)]
    assert len(histograms) == 1
    np.testing.assert_array_equal(search.classes_, [0, 1])
    np.testing.assert_array_equal(search.best_estimator_.classes_, [0, 1])
    assert isinstance(search.plan_.steps[0], StabilityHistogram)
    assert search.guarantee_.epsilon == pytest.approx(4.0)
    assert search.guarantee_ == ApproxDP(epsilon=search.guarantee_.epsilon, delta=1e-5)
    assert budget.spent.epsilon == pytest.approx(4.0)
    assert budget.spent.delta == pytest.approx(1e-5)


def test_private_label_set_without_delta_is_refused_before_the_data():
    """classes=None with delta 0 cannot release a label set; the search refuses, naming
    classes, before reading X (which is not even an array here)."""
    with pytest.raises(InvalidParameterError, match="`classes` must be the public label"):
        PrivateGridSearch(fast_candidate(), SMALL).fit(object(), None)


def test_no_label_released_gives_a_model_free_fit_with_a_clear_predict_error():
    """Every label held by one record: nothing clears the stability threshold, no
    candidate runs, fit succeeds; predict raises a NotFittedError saying why, and a
    query of the wrong width is still refused as a query."""
    from sklearn.exceptions import NotFittedError

    X, _ = data(n=50)
    search = PrivateGridSearch(fast_candidate(), SMALL, epsilon=1.0, delta=1e-5,
                               random_state=0).fit(X, np.arange(50))
    assert search.classes_.size == 0
    assert search.best_estimator_ is None
    assert search.guarantee_.epsilon == pytest.approx(0.1)
    with pytest.raises(NotFittedError, match="kept 0 label"):
        search.predict(X[:2])


def test_a_non_finite_row_counts_as_misclassified_in_the_score_without_error():
    """A row with a NaN would make the candidate's strict query check raise on private
    data when it is scored; it counts as a wrong prediction instead, silently."""
    X, y = data(n=200)
    X[:40, 1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        search = PrivateGridSearch(fast_candidate(), SMALL, epsilon=3.0, classes=[0, 1],
                                   random_state=0).fit(X, y)
    assert search.best_score_ is not None
    with pytest.raises(ValueError, match="NaN"):
        search.predict(X[:1])


def test_a_candidate_that_is_not_pure_is_refused_before_the_data():
    """A candidate without a `classes` parameter is refused by name before fit reads X."""
    from sklearn.linear_model import LogisticRegression

    with pytest.raises(InvalidParameterError, match="`estimator` must be a privkit"):
        PrivateGridSearch(LogisticRegression(), {"C": [1.0]}, classes=[0, 1]).fit(
            object(), None)


# -- issue 27: Papernot-Steinke runs, pipelines, probabilities, nothing of K published ------


def pipeline_candidate(first=None):
    from sklearn.pipeline import make_pipeline

    from privkit.algorithms.preprocessing import PublicRangeScaler

    return make_pipeline(first if first is not None else PublicRangeScaler(-1.0, 1.0),
                         fast_candidate())


def test_a_pipeline_is_a_candidate_with_step_parameters():
    """A Pipeline ending in a privkit classifier: the grid names step__param, the search
    sets the classifier's epsilon (the rest over 2 + eta, 10% of it for the score) and
    classes; predict_proba and decision_function delegate to the chosen pipeline."""
    X, y = data(n=300)
    search = PrivateGridSearch(pipeline_candidate(),
                               {"outputperturbationclassifier__regularization": [0.1, 1.0]},
                               epsilon=2.0, classes=[0, 1], shape=0.5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        search.fit(X, y)
    final = search.best_estimator_[-1]
    assert final.epsilon == pytest.approx(0.9 * 2.0 / 2.5)
    np.testing.assert_array_equal(final.classes_, [0, 1])
    assert search.guarantee_ == PureDP(epsilon=2.0)
    proba = search.predict_proba(X[:5])
    np.testing.assert_allclose(proba, search.best_estimator_.predict_proba(X[:5]))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(search.decision_function(X[:5]),
                               search.best_estimator_.decision_function(X[:5]))


def test_grid_over_the_final_steps_budget_is_refused():
    """clf__epsilon is set by the search like epsilon: a grid over it is refused."""
    X, y = data()
    with pytest.raises(InvalidParameterError, match="a grid without"):
        PrivateGridSearch(pipeline_candidate(),
                          {"outputperturbationclassifier__epsilon": [1.0]},
                          classes=[0, 1]).fit(X, y)


def test_a_data_fitted_step_in_a_candidate_warns_once_before_any_draw():
    """A StandardScaler in the candidate pipeline: one PrivacyLeakWarning from the
    pipeline's structure, however many runs; the candidates' own warnings are withheld
    (their count would tell the number of runs)."""
    from sklearn.preprocessing import StandardScaler

    from privkit.errors import PrivacyLeakWarning

    X, y = data(n=200)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        PrivateGridSearch(pipeline_candidate(StandardScaler()),
                          {"outputperturbationclassifier__regularization": [0.1, 1.0]},
                          epsilon=2.0, classes=[0, 1], expected_runs=6.0,
                          random_state=0).fit(X, y)
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 1
    assert "'standardscaler' (StandardScaler)" in str(leaks[0].message)
    assert len(caught) == 1


def test_the_number_of_runs_is_not_published():
    """Whatever K is drawn, the transcript holds the best run only: no n_runs_, the
    search's ledger and a ledger the caller holds record the selection as one block
    (matching plan_), never a candidate's release."""
    from privkit.ledger import Ledger

    X, y = data(n=200)
    for seed in range(3):
        with Ledger() as outer:
            search = PrivateGridSearch(fast_candidate(), SMALL, epsilon=2.0,
                                       classes=[0, 1], expected_runs=8.0,
                                       random_state=seed).fit(X, y)
        assert not hasattr(search, "n_runs_")
        assert search.ledger_.compare(search.plan_).matches
        assert len(search.ledger_.entries) == 1
        assert [e.block for e in outer.entries] == [search.plan_]


def test_expected_runs_and_shape_are_checked_before_the_data():
    """expected_runs must be > 1 and shape > -1, refused by name before X is read."""
    with pytest.raises(InvalidParameterError, match="`expected_runs` must be a number > 1"):
        PrivateGridSearch(fast_candidate(), SMALL, classes=[0, 1],
                          expected_runs=1.0).fit(object(), None)
    with pytest.raises(InvalidParameterError, match="`shape` must be a finite number > -1"):
        PrivateGridSearch(fast_candidate(), SMALL, classes=[0, 1], shape=-1.0).fit(
            object(), None)


def test_budget_split_is_public_and_is_what_each_candidate_gets():
    """budget_split (no data): with classes declared, eta = -0.75 and a score share of
    0.05, each run gets 2 / (2 - 0.75) = 1.6, 95% of it to train and 5% to score (closed
    form); the winner was trained at exactly that ``train`` epsilon, and the total is 2.
    Without classes, the label release's share comes off first."""
    X, y = data()
    search = PrivateGridSearch(fast_candidate(), SMALL, epsilon=2.0, classes=[0, 1],
                               shape=-0.75, expected_runs=1.5, score_share=0.05,
                               random_state=0)
    split = search.budget_split()
    assert split["candidate"] == pytest.approx(2.0 / 1.25, rel=1e-12)
    assert split["train"] == pytest.approx(0.95 * 1.6, rel=1e-12)
    assert split["score"] == pytest.approx(0.05 * 1.6, rel=1e-12)
    assert (2.0 - 0.75) * split["candidate"] <= 2.0
    search.fit(X, y)
    assert search.best_estimator_.epsilon == split["train"]
    assert search.guarantee_.epsilon_at(0.0) == pytest.approx(2.0)
    from privkit.algorithms._labels import LABEL_SHARE

    released = PrivateGridSearch(fast_candidate(), SMALL, epsilon=2.0, delta=1e-5,
                                 shape=-0.75).budget_split()
    assert released["candidate"] == pytest.approx(2.0 * (1 - LABEL_SHARE) / 1.25, rel=1e-9)


def test_the_best_noisy_score_wins():
    """With the noise negligible (epsilon 200 over 600 rows) and K drawn with eta = 3 and
    100 runs expected, both settings of a two-setting grid run except with probability
    3e-4 (sum over k of P[K = k] 2^(1 - k), computed from Definition 1 of Papernot and
    Steinke); the search keeps the well-regularised one (training accuracy 0.96), not the
    one whose Lambda = 100 shrinks the model to the majority class (0.88), and its noisy
    score is that model's accuracy on the rows to within the noise. Seeded: the
    false-failure rate over seeds is that 3e-4."""
    X, y = data()
    search = PrivateGridSearch(fast_candidate(), {"regularization": [100.0, 0.001]},
                               epsilon=200.0, classes=[0, 1], shape=3.0,
                               expected_runs=100.0, random_state=3).fit(X, y)
    assert search.best_params_ == {"regularization": 0.001}
    accuracy = float(np.mean(search.best_estimator_.predict(X) == y))
    assert accuracy > 0.9
    assert search.best_score_ == pytest.approx(accuracy, abs=0.01)


def test_each_score_has_laplace_noise_of_sensitivity_one_over_n(monkeypatch):
    """The noisy score is the accuracy on the n rows (a replaced row moves it by at most
    1 / n) plus Laplace noise at the score's share of a candidate's epsilon: the search
    asks for exactly that block (independently computed from ``budget_split()``)."""
    from privkit.algorithms.tuning import selection
    from privkit.mechanisms import Laplace

    asked = []
    original = Laplace.for_epsilon

    def spy(epsilon, *, sensitivity, relation):
        asked.append((epsilon, sensitivity))
        return original(epsilon, sensitivity=sensitivity, relation=relation)

    monkeypatch.setattr(selection.Laplace, "for_epsilon", staticmethod(spy))
    X, y = data(n=500)
    search = PrivateGridSearch(fast_candidate(), SMALL, epsilon=2.0, classes=[0, 1],
                               score_share=0.2, random_state=0)
    search.fit(X, y)
    assert asked == [(pytest.approx(search.budget_split()["score"]), pytest.approx(1 / 500))]
    assert search.budget_split()["score"] == pytest.approx(0.2 * 2.0 / 2.0)
