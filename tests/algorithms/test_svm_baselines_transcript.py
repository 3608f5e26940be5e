"""The transcripts of SVM WEIGHT, OUTPUT and SEMI (issue 22): neutral records, the label
set declared or released, strict queries, SVM OUTPUT's query budget, budget filters."""

import numpy as np
import pytest
from _transcripts import SENTINEL, blobs, fit_quietly, shapes

from privkit.algorithms._audit_case import TranscriptCase
from privkit.algorithms.svdd.svm_baselines import (
    SVMOutputClassifier,
    SVMSemiClassifier,
    SVMWeightClassifier,
)
from privkit.errors import InvalidParameterError

BASELINES = (SVMWeightClassifier, SVMOutputClassifier, SVMSemiClassifier)


def _baseline(cls, **params):
    defaults = {"epsilon": 2.0, "nu": 0.05, "n_components": 20, "classes": [0, 1, 2],
                "random_state": 0}
    if cls is SVMOutputClassifier:
        defaults["query_epsilon"] = 0.5
    if cls is SVMSemiClassifier:
        defaults["delta"] = 1e-3  # not 1/n, which moves with the rows passed
    return cls(**{**defaults, **params})


def _fit(model, X, y):
    fit_params = {"Z": blobs(12, seed=9)[0]} if isinstance(model, SVMSemiClassifier) else {}
    return fit_quietly(model, X, y, **fit_params)


def _release(model, Q):
    """What the model publishes about the queries: the weights, or (SVM OUTPUT) its
    noisy predictions."""
    if isinstance(model, SVMOutputClassifier):
        return model.predict(Q)
    return model.coef_


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_neutral_records_change_nothing(cls):
    """A record whose label is outside the declared set, whose label is NaN, or whose
    row has a non-finite entry is the neutral record (a zero feature row, which moves no
    weight): the model is the one fitted without it, bit for bit for the same seed, with
    no warning and the same classes_."""
    X, y = blobs()
    yf = y.astype(float)
    clean = _fit(_baseline(cls), X, yf)
    extra_X = np.vstack([X[:5], [[1.0, 1.0], [1.0, 1.0], [np.nan, 0.0], [0.0, np.inf]],
                         X[5:]])
    extra_y = np.concatenate([yf[:5], [9.0, np.nan, 1.0, 2.0], yf[5:]])
    dirty = _fit(_baseline(cls), extra_X, extra_y)
    assert np.array_equal(dirty.classes_, clean.classes_)
    assert np.array_equal(_release(dirty, X[:7]), _release(clean, X[:7]))
    assert shapes(dirty) == shapes(clean)


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_private_label_set_never_shows_a_single_records_label(cls):
    """classes=None: a record with a label no other record has is released only by
    the stability histogram's delta; over 40 seeds classes_ never holds it (each seed
    would show it with probability far below delta = 1e-3 at tau ~ 40), and the label
    set of the 20-record labels is released."""
    X, y = blobs()
    X1 = np.vstack([X, [[5.0, 5.0]]])
    y1 = np.concatenate([y, [7]])
    for seed in range(40):
        model = _fit(_baseline(cls, classes=None, delta=1e-3, epsilon=20.0,
                               random_state=seed), X1, y1)
        assert 7 not in model.classes_.tolist()
        assert set(model.classes_.tolist()) <= {0, 1, 2}
        assert model.ledger_.compare(model.plan_).matches


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_one_label_in_the_data_still_fits_every_declared_problem(cls):
    """Declared classes [0, 1, 2], every record labelled 0: no refusal (liblinear alone
    refuses one label), the weights of all three problems, predictions in the set."""
    X, _ = blobs()
    model = _fit(_baseline(cls), X, np.zeros(len(X), dtype=int))
    if not isinstance(model, SVMOutputClassifier):
        assert model.coef_.shape == (3, 20)
    assert set(model.predict(X[:5]).tolist()) <= {0, 1, 2}


def test_hinge_with_every_label_of_one_sign_matches_cvxpy():
    """All records +1: liblinear alone would refuse; the zero rows privkit appends keep
    the minimiser of 1/2 ||w||^2 + nu sum hinge(w . phi_i), checked against cvxpy."""
    cp = pytest.importorskip("cvxpy")
    from privkit.algorithms.kernels.random_features import RandomFourierFeatures
    from privkit.algorithms.svdd.svm_baselines import hinge_svm

    X, _ = blobs(40)
    P = RandomFourierFeatures(20, 1.0, random_state=0).fit_transform(X)
    w = cp.Variable(20)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 0.05 * cp.sum(cp.pos(1 - P @ w)))).solve()
    assert np.abs(hinge_svm(P, np.ones(40), 0.05) - w.value).max() < 1e-3
    assert np.array_equal(hinge_svm(P[:0], np.ones(0), 0.05), np.zeros(20))


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_fewer_than_two_released_labels(cls):
    """A private label set of one label: no learning stage, predict gives that label; of
    none: predict raises an error that depends on the release only (no value)."""
    X, _ = blobs(90)
    one = _fit(_baseline(cls, classes=None, delta=1e-3, epsilon=20.0),
               X, np.zeros(90, dtype=int))
    assert one.classes_.tolist() == [0]
    assert one.predict(X[:4]).tolist() == [0, 0, 0, 0]
    assert one.ledger_.compare(one.plan_).matches
    none = _fit(_baseline(cls, classes=None, delta=1e-3, epsilon=20.0), X[:6],
                np.arange(6) + SENTINEL)
    assert none.classes_.size == 0
    with pytest.raises(InvalidParameterError, match="released no label") as info:
        none.predict(X[:2])
    assert "987654" not in str(info.value)


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_refuse_a_non_finite_query(cls):
    """R7 (issue 22: SVM WEIGHT predicted a class for a NaN row): a clear error."""
    X, y = blobs()
    model = _fit(_baseline(cls), X, y)
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="infinity"):
        model.predict(np.array([[np.inf, 0.0]]))


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_refuse_by_schema_only_without_values(cls):
    X, y = blobs()
    X = X + SENTINEL
    for bad_X, bad_y in ((X[:, 0], y), (X.astype(str), y), (X, y[:-1]), (X, y[:, None] * [1, 1])):
        with pytest.raises(InvalidParameterError) as info:
            _fit(_baseline(cls), bad_X, bad_y)
        assert "987654" not in str(info.value)
        assert str(len(X)) not in str(info.value)


@pytest.mark.parametrize("cls", [SVMWeightClassifier, SVMOutputClassifier])
def test_baselines_private_label_set_with_delta_zero_is_refused_before_the_data(cls):
    """classes=None needs delta > 0: refused on the parameters, so even data that
    cannot be read is not looked at, and a budget filter is not charged. (SVM SEMI's
    delta is 1/n by default and never 0.)"""
    from privkit import BudgetFilter

    budget = BudgetFilter(epsilon=10.0, delta=1e-3)
    with pytest.raises(InvalidParameterError, match="classes"):
        cls(classes=None, delta=0.0).fit(object(), object(), budget_filter=budget)
    assert budget.spent.epsilon == 0.0


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_charge_the_budget_filter_first(cls):
    """Declared classes: the plan (SVM OUTPUT: its whole query budget) is charged before
    any noise; a private label set: the whole (epsilon, delta). A second fit that does not
    fit the filter is refused with nothing released."""
    from privkit import BudgetFilter
    from privkit.errors import BudgetExceededError

    X, y = blobs()
    semi = cls is SVMSemiClassifier
    for params, budget in (({}, BudgetFilter(epsilon=5.0 if semi else 3.0,
                                             delta=1.5e-3 if semi else 0.0)),
                           ({"classes": None, "delta": 1e-3},
                            BudgetFilter(epsilon=3.0, delta=1.5e-3))):
        model = _baseline(cls, **params)
        fit_params = {"Z": X[:5]} if semi else {}
        model.fit(X, y, budget_filter=budget, **fit_params)
        if not semi or params:  # SEMI's declared plan: the basic filter's Gaussian cost
            assert budget.spent.epsilon == pytest.approx(2.0)
        again = _baseline(cls, **params)
        with pytest.raises(BudgetExceededError):
            again.fit(X, y, budget_filter=budget, **fit_params)
        assert not hasattr(again, "classes_")


def test_svm_output_accumulates_its_spend_and_refuses_past_its_budget():
    """Issue 22: 100 batches of queries reported epsilon 1. Now each call adds its cost
    to guarantee_ (and its release to plan_ and ledger_), and the call that would pass
    epsilon raises BudgetExceededError before drawing anything."""
    from privkit.errors import BudgetExceededError

    X, y = blobs()
    model = _fit(_baseline(SVMOutputClassifier, epsilon=2.0, query_epsilon=0.5), X, y)
    assert model.guarantee_ is None  # nothing released yet (declared classes)
    for call in range(1, 5):
        model.predict(X[:3])
        assert model.guarantee_.epsilon_at(0.0) == pytest.approx(0.5 * call)
        assert model.ledger_.compare(model.plan_).matches
        assert len(model.ledger_) == call
    state = np.random.default_rng(0).bit_generator.state
    with pytest.raises(BudgetExceededError, match="epsilon=2"):
        model.predict(X[:3])
    assert model.guarantee_.epsilon_at(0.0) == pytest.approx(2.0)
    assert len(model.ledger_) == 4
    assert np.random.default_rng(0).bit_generator.state == state
    per_query = _fit(_baseline(SVMOutputClassifier, epsilon=2.0, query_epsilon=0.5,
                               accounting="per_query"), X, y)
    with pytest.raises(BudgetExceededError):
        per_query.predict(X[:5])  # 5 x 0.5 > 2
    per_query.predict(X[:4])
    assert per_query.guarantee_.epsilon_at(0.0) == pytest.approx(2.0)


def test_svm_output_private_label_set_is_part_of_the_spend():
    X, y = blobs(90)
    model = _fit(_baseline(SVMOutputClassifier, classes=None, delta=1e-3, epsilon=10.0,
                           query_epsilon=None), X, y)
    assert model.spent_epsilon_ == pytest.approx(1.0)  # LABEL_SHARE of epsilon
    model.predict(X[:3])  # the default query_epsilon: all that is left, in one call
    assert model.guarantee_.epsilon_at(1e-3) == pytest.approx(10.0)
    assert model.ledger_.compare(model.plan_).matches


@pytest.mark.parametrize("cls", BASELINES)
@pytest.mark.parametrize("declare", [True, False])
def test_baseline_transcript_cases(cls, declare):
    """Each case fits on its data, claims its estimator's guarantee, and its new label
    is in the declared set (declared) or held by no record."""
    case = cls.transcript_case(declare_classes=declare)
    assert isinstance(case, TranscriptCase)
    model = fit_quietly(case.estimator, case.X, case.y, **case.fit_params)
    model.predict(case.probes)
    assert model.guarantee_.epsilon_at(case.delta) <= case.epsilon * (1 + 1e-9)
    assert case.new_label not in case.y.tolist()
    if declare:
        assert case.new_label in model.classes_.tolist()
