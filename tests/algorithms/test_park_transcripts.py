"""The transcripts of Park 2022's kernel-support estimators (issue 22): on each channel's
neighbouring datasets, everything a caller receives is the same or differs only by
accounted noise, and nothing names a private value.

Channels: a record with a label no other record has; a record added or removed under
ADD_REMOVE (nothing derived from n); a non-finite record (fit succeeds, the same way);
a record where the feature map is undefined (no warning); messages without values; and
strict validation of the queries (rule R7).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privkit.algorithms._audit_case import TranscriptCase
from privkit.algorithms.equilibrium import EquilibriumPointClassifier
from privkit.algorithms.svdd import PrivateSVDD
from privkit.algorithms.svm_baselines import (
    SVMOutputClassifier,
    SVMSemiClassifier,
    SVMWeightClassifier,
)
from privkit.errors import InvalidParameterError

SENTINEL = 987654.321


def public_attributes(model):
    """The fitted attributes a caller sees (trailing underscore), by name."""
    return {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_")}


def shapes(model):
    """Every fitted attribute's type and, for arrays, shape: the part of the transcript
    that must not depend on private data beyond accounted noise."""
    out = {}
    for name, value in public_attributes(model).items():
        out[name] = (type(value).__name__, getattr(value, "shape", None))
    return out


def fit_quietly(model, *args, **kwargs):
    """Fit with every warning an error: no data-dependent warning may fire."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return model.fit(*args, **kwargs)


# -- PrivateSVDD ----------------------------------------------------------------------------


def overflowing_row(model):
    """A finite row whose product with the model's first frequency overflows float64
    (where the feature map is undefined): ``1e308 sign(w_1)`` when ``||w_1||_1 > 1.8``."""
    w = model.features_.frequencies_[0]
    assert np.abs(w).sum() > 1.8  # so that <w_1, x> = 1e308 ||w_1||_1 overflows
    return 1e308 * np.sign(w)


def _svdd(**params):
    return PrivateSVDD(**{"epsilon": 1.0, "nu": 0.125, "gamma": 0.5, "n_components": 4,
                          "relation": "add_remove", "random_state": 0, **params})


@pytest.mark.parametrize("n", [0, 1, 3, 7, 8, 9, 40])
def test_svdd_fits_every_n_under_add_remove_with_the_same_attributes(n):
    """n nu < 1 (n < 8 here), n nu = 1 and n nu > 1, and no rows at all, all fit: success
    and every attribute's type and shape are the same, and the plan, sensitivity and
    guarantee are equal objects; only the noisy centre differs."""
    X = np.random.default_rng(0).normal(size=(40, 2))[:n]
    reference = fit_quietly(_svdd(), np.random.default_rng(0).normal(size=(20, 2)))
    model = fit_quietly(_svdd(), X)
    assert shapes(model) == shapes(reference)
    assert model.plan_ == reference.plan_
    assert model.guarantee_ == reference.guarantee_
    assert model.sensitivity_ == reference.sensitivity_
    assert model.ledger_.compare(model.plan_).matches


def test_svdd_removes_rows_where_the_map_is_undefined_silently():
    """A row with NaN, one with an infinity and one whose products overflow are removed
    by the stated rule: the model is bit for bit the one fitted without them (same seed),
    with no warning, under both relations."""
    X = np.random.default_rng(1).normal(size=(30, 2))
    for relation in ("add_remove", "replace_one"):
        clean = fit_quietly(_svdd(relation=relation, gamma=4.0), X)
        bad = np.array([[np.nan, 1.0], [0.0, -np.inf], overflowing_row(clean)])
        dirty = fit_quietly(_svdd(relation=relation, gamma=4.0),
                            np.vstack([X[:10], bad, X[10:]]))
        assert np.array_equal(dirty.centre_, clean.centre_)
        assert shapes(dirty) == shapes(clean)


def test_svdd_refuses_only_by_schema_and_never_names_a_value():
    """Wrong schema (1-D, strings, no columns, an empty X under replace_one where n is
    public) is refused; the message carries no value of the data."""
    X = np.full((5, 2), SENTINEL)
    for bad in (X[:, 0], X.astype(str), np.empty((5, 0))):
        with pytest.raises(InvalidParameterError) as info:
            _svdd().fit(bad)
        assert "987654" not in str(info.value)
    with pytest.raises(InvalidParameterError, match="at least one row"):
        _svdd(relation="replace_one").fit(np.empty((0, 2)))
    fit_quietly(_svdd(relation="add_remove"), np.empty((0, 2)))


def test_svdd_object_entries_that_are_not_numbers_are_non_finite():
    """An object array with a string in a private row: the row is removed, not refused
    (a refusal would reveal the value's kind; its message would echo it)."""
    X = np.random.default_rng(2).normal(size=(12, 2))
    mixed = np.vstack([X, [["secret", 1.0]]]).astype(object)
    mixed[:12] = X
    assert np.array_equal(fit_quietly(_svdd(), mixed).centre_, fit_quietly(_svdd(), X).centre_)


def test_svdd_score_samples_refuses_a_non_finite_query():
    """R7: queries are public, validated strictly; NaN is an error, not a NaN score."""
    model = _svdd(gamma=4.0).fit(np.random.default_rng(3).normal(size=(20, 2)))
    for bad in ([[np.nan, 0.0]], [[np.inf, 0.0]], [overflowing_row(model)]):
        with pytest.raises(ValueError):
            model.score_samples(np.array(bad))
    assert np.all(np.isfinite(model.score_samples(np.zeros((3, 2)))))


def test_svdd_spends_its_plan_on_a_budget_filter_before_any_noise():
    from privkit import BudgetFilter
    from privkit.errors import BudgetExceededError

    X = np.random.default_rng(4).normal(size=(20, 2))
    budget = BudgetFilter(epsilon=1.5)
    _svdd().fit(X, budget_filter=budget)
    with pytest.raises(BudgetExceededError):
        _svdd().fit(X, budget_filter=budget)
    refused = _svdd()
    with pytest.raises(BudgetExceededError):
        refused.fit(X, budget_filter=budget)
    assert not hasattr(refused, "centre_")


def test_svdd_transcript_case_claims_the_estimators_guarantee():
    """The case's claim is the guarantee_ of its estimator fitted on its dataset, and its
    records go through the stated rules (the one beyond the bound is removed)."""
    case = PrivateSVDD.transcript_case()
    assert isinstance(case, TranscriptCase)
    assert case.claim == "privkit"
    model = fit_quietly(case.estimator, case.X)
    assert model.guarantee_.epsilon_at(case.delta) == pytest.approx(case.epsilon)
    assert model.score_samples(case.probes).shape == (case.probes.shape[0],)
    beyond = fit_quietly(case.estimator, np.vstack([case.X, case.beyond_bound]))
    assert shapes(beyond) == shapes(model)


# -- the SVM baselines ------------------------------------------------------------------------

BASELINES = (SVMWeightClassifier, SVMOutputClassifier, SVMSemiClassifier)


def _blobs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    return np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])[y] + rng.normal(0, 0.5, (n, 2)), y


def _baseline(cls, **params):
    defaults = {"epsilon": 2.0, "nu": 0.05, "n_components": 20, "classes": [0, 1, 2],
                "random_state": 0}
    if cls is SVMOutputClassifier:
        defaults["query_epsilon"] = 0.5
    if cls is SVMSemiClassifier:
        defaults["delta"] = 1e-3  # not 1/n, which moves with the rows passed
    return cls(**{**defaults, **params})


def _fit(model, X, y):
    fit_params = {"Z": _blobs(12, seed=9)[0]} if isinstance(model, SVMSemiClassifier) else {}
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
    X, y = _blobs()
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
    X, y = _blobs()
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
    X, _ = _blobs()
    model = _fit(_baseline(cls), X, np.zeros(len(X), dtype=int))
    if not isinstance(model, SVMOutputClassifier):
        assert model.coef_.shape == (3, 20)
    assert set(model.predict(X[:5]).tolist()) <= {0, 1, 2}


def test_hinge_with_every_label_of_one_sign_matches_cvxpy():
    """All records +1: liblinear alone would refuse; the zero rows privkit appends keep
    the minimiser of 1/2 ||w||^2 + nu sum hinge(w . phi_i), checked against cvxpy."""
    cp = pytest.importorskip("cvxpy")
    from privkit.algorithms.random_features import RandomFourierFeatures
    from privkit.algorithms.svm_baselines import hinge_svm

    X, _ = _blobs(40)
    P = RandomFourierFeatures(20, 1.0, random_state=0).fit_transform(X)
    w = cp.Variable(20)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 0.05 * cp.sum(cp.pos(1 - P @ w)))).solve()
    assert np.abs(hinge_svm(P, np.ones(40), 0.05) - w.value).max() < 1e-3
    assert np.array_equal(hinge_svm(P[:0], np.ones(0), 0.05), np.zeros(20))


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_fewer_than_two_released_labels(cls):
    """A private label set of one label: no learning stage, predict gives that label; of
    none: predict raises an error that depends on the release only (no value)."""
    X, _ = _blobs(90)
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
    X, y = _blobs()
    model = _fit(_baseline(cls), X, y)
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="infinity"):
        model.predict(np.array([[np.inf, 0.0]]))


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_refuse_by_schema_only_without_values(cls):
    X, y = _blobs()
    X = X + SENTINEL
    for bad_X, bad_y in ((X[:, 0], y), (X.astype(str), y), (X, y[:-1]), (X, y[:, None] * [1, 1])):
        with pytest.raises(InvalidParameterError) as info:
            _fit(_baseline(cls), bad_X, bad_y)
        assert "987654" not in str(info.value)
        assert str(len(X)) not in str(info.value)


@pytest.mark.parametrize("cls", BASELINES)
def test_baselines_private_label_set_with_delta_zero_is_refused_before_the_data(cls):
    """classes=None needs delta > 0: refused on the parameters, so even data that
    cannot be read is not looked at, and a budget filter is not charged."""
    from privkit import BudgetFilter

    if cls is SVMSemiClassifier:
        pytest.skip("SVM SEMI's delta defaults to 1/n and cannot be 0")
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

    X, y = _blobs()
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

    X, y = _blobs()
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
    X, y = _blobs(90)
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


# -- the equilibrium-point classifier -------------------------------------------------------

#: Attributes whose first dimension is the number of cells the stability histogram
#: released: a noisy output, accounted.
RELEASED_CELLS = ("cells_", "cell_keys_", "cell_labels_")


def _equilibrium(**params):
    return EquilibriumPointClassifier(**{
        "epsilon": 4.0, "delta": 1e-3, "nu": 0.125, "gamma": 0.5, "n_components": 8,
        "learning_rate": 0.01, "n_iter": 5, "r_max": 0.5, "relation": "add_remove",
        "classes": [0, 1, 2], "random_state": 0, **params})


def _without_released_cells(model):
    return {k: v if k not in RELEASED_CELLS else (v[0], v[1][1:])
            for k, v in shapes(model).items()}


@pytest.mark.parametrize("n", [0, 1, 3, 7, 60])
def test_equilibrium_fits_every_n_under_add_remove_with_the_same_attributes(n):
    """No rows, n nu < 1 and beyond: fit succeeds with the same attributes, types and
    shapes (but for the number of released cells, the histogram's noisy output), the
    same plan and guarantee (issue 22: it refused n nu < 1, so success revealed n)."""
    X, y = _blobs(60)
    reference = fit_quietly(_equilibrium(), X, y)
    model = fit_quietly(_equilibrium(), X[:n], y[:n])
    assert _without_released_cells(model) == _without_released_cells(reference)
    assert model.plan_ is reference.plan_
    assert model.guarantee_ == reference.guarantee_
    assert model.ledger_.compare(model.plan_).matches


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_equilibrium_neutral_records_are_removed_silently(relation):
    """A row with a non-finite entry, a NaN label or a label outside classes: removed,
    without a warning; the model is the one fitted without them (same seed)."""
    X, y = _blobs(60)
    yf = y.astype(float)
    clean = fit_quietly(_equilibrium(relation=relation), X, yf)
    dirty_X = np.vstack([X[:4], [[np.nan, 1.0], [0.0, -np.inf], [1.0, 1.0], [2.0, 2.0]],
                         X[4:]])
    dirty_y = np.concatenate([yf[:4], [0.0, 1.0, np.nan, 9.0], yf[4:]])
    dirty = fit_quietly(_equilibrium(relation=relation), dirty_X, dirty_y)
    for name in ("centre_", "cells_", "cell_labels_", "classes_"):
        assert np.array_equal(getattr(dirty, name), getattr(clean, name))


def test_equilibrium_far_rows_are_clipped_without_a_warning():
    """Finite coordinates beyond float32's range are clipped onto COORDINATE_BOUND (the
    descent runs in float32): no overflow warning, the same model as the clipped row."""
    from privkit.algorithms._equilibrium_dynamics import COORDINATE_BOUND

    X, y = _blobs(60)
    far = fit_quietly(_equilibrium(), np.vstack([X, [[1e300, -1e40]]]), np.append(y, 1))
    edge = fit_quietly(_equilibrium(), np.vstack([X, [[COORDINATE_BOUND, -COORDINATE_BOUND]]]),
                       np.append(y, 1))
    assert np.array_equal(far.cells_, edge.cells_)
    assert np.array_equal(far.centre_, edge.centre_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        far.predict(np.array([[1e300, 1e300], [0.0, 0.0]]))


def test_equilibrium_private_label_set_hides_a_single_records_label():
    """classes=None: over 30 seeds, a label held by one record never appears in
    classes_ (each would with probability below delta); the ledger matches the plan."""
    X, y = _blobs(90)
    X1, y1 = np.vstack([X, [[5.0, 5.0]]]), np.append(y, 7)
    for seed in range(30):
        model = fit_quietly(_equilibrium(classes=None, epsilon=20.0, random_state=seed),
                            X1, y1)
        assert 7 not in model.classes_.tolist()
        assert model.ledger_.compare(model.plan_).matches


def test_equilibrium_fewer_than_two_released_labels_and_no_stale_attributes():
    """One released label: predict gives it; none: a clear error naming no value. A refit
    that releases fewer than two labels drops the cells of the previous fit."""
    X, _ = _blobs(90)
    model = fit_quietly(_equilibrium(classes=None, epsilon=20.0), X, np.zeros(90, dtype=int))
    assert model.classes_.tolist() == [0]
    assert model.predict(X[:3]).tolist() == [0, 0, 0]
    model.fit(X, np.arange(90) % 3)
    assert hasattr(model, "cells_")
    model.fit(X[:4], np.arange(4) + SENTINEL)
    assert model.classes_.size == 0
    assert not hasattr(model, "cells_")
    assert not hasattr(model, "centre_")
    with pytest.raises(InvalidParameterError, match="released no label") as info:
        model.predict(X[:2])
    assert "987654" not in str(info.value)


def test_equilibrium_refuses_non_finite_queries_and_bad_schema_without_values():
    X, y = _blobs(60)
    model = fit_quietly(_equilibrium(), X, y)
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.array([[np.nan, 0.0]]))
    secret = X + SENTINEL
    for bad_X, bad_y in ((secret[:, 0], y), (secret.astype(str), y), (secret, y[:-1])):
        with pytest.raises(InvalidParameterError) as info:
            _equilibrium().fit(bad_X, bad_y)
        assert "987654" not in str(info.value)
    with pytest.raises(InvalidParameterError, match="at least one row"):
        _equilibrium(relation="replace_one").fit(np.empty((0, 2)), np.empty(0))


def test_equilibrium_charges_the_filter_first_and_paper_mode_has_nothing_to_spend():
    from privkit import BudgetFilter
    from privkit.errors import BudgetExceededError

    X, y = _blobs(60)
    for params in ({}, {"classes": None}):
        budget = BudgetFilter(epsilon=6.0, delta=1.5e-3)
        _equilibrium(**params).fit(X, y, budget_filter=budget)
        assert budget.spent.epsilon == pytest.approx(4.0)
        refused = _equilibrium(**params)
        with pytest.raises(BudgetExceededError):
            refused.fit(X, y, budget_filter=budget)
        assert not hasattr(refused, "classes_")
    with pytest.raises(InvalidParameterError, match="budget_filter"):
        _equilibrium(mode="paper").fit(X, y, budget_filter=BudgetFilter(epsilon=9.0))


def test_equilibrium_private_label_set_with_delta_zero_is_refused_before_the_data():
    with pytest.raises(InvalidParameterError, match="delta"):
        _equilibrium(classes=None, mode="paper", delta=0.0).fit(object(), object())


@pytest.mark.parametrize("declare", [True, False])
def test_equilibrium_transcript_cases(declare):
    """The private mode's case claims its estimator's guarantee; the paper mode's case
    claims the thesis' PureDP(epsilon), with claim="paper"."""
    from privkit.algorithms.equilibrium import transcript_case_paper

    case = EquilibriumPointClassifier.transcript_case(declare_classes=declare)
    model = fit_quietly(case.estimator, case.X, case.y)
    model.predict(case.probes)
    assert case.claim == "privkit"
    assert model.guarantee_.epsilon_at(case.delta) == pytest.approx(case.epsilon)
    assert case.new_label not in case.y.tolist()
    paper = transcript_case_paper(declare_classes=declare)
    model = fit_quietly(paper.estimator, paper.X, paper.y)
    assert paper.claim == "paper"
    assert model.guarantee_ is None
    assert model.paper_claim_.epsilon == paper.epsilon


# -- any private values ------------------------------------------------------------------------

_VALUES = st.sampled_from([0.0, 1.0, -2.5, SENTINEL, -SENTINEL, 1e-300, 1e300, 1e308,
                           -1e308, np.nan, np.inf, -np.inf])


def _all_estimators(declared):
    classes = [0, 1, 2] if declared else None
    delta = 1e-3
    return [
        PrivateSVDD(epsilon=1.0, nu=0.25, n_components=4, relation="add_remove",
                    random_state=0),
        EquilibriumPointClassifier(epsilon=2.0, delta=delta, n_components=4, n_iter=3,
                                   r_max=0.5, relation="add_remove", classes=classes,
                                   random_state=0),
        SVMWeightClassifier(epsilon=2.0, delta=delta, n_components=4, classes=classes,
                            random_state=0),
        SVMOutputClassifier(epsilon=2.0, delta=delta, n_components=4, classes=classes,
                            random_state=0),
        SVMSemiClassifier(epsilon=2.0, delta=delta, n_components=4, classes=classes,
                          random_state=0),
    ]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 8), entries=st.lists(_VALUES, min_size=16, max_size=16),
       labels=st.lists(st.sampled_from([0.0, 1.0, 2.0, 9.0, SENTINEL, np.nan]),
                       min_size=8, max_size=8),
       declared=st.booleans())
def test_no_private_value_refuses_warns_or_is_echoed(n, entries, labels, declared):
    """Any values in the private rows and labels (NaN, infinities, 1e308, a sentinel,
    labels outside the set): every estimator fits and predicts on public probes with no
    exception and no warning of any kind, so no text can carry a private value."""
    X = np.array(entries[:2 * n]).reshape(n, 2)
    y = np.array(labels[:n])
    probes = np.array([[0.0, 0.0], [1.0, -1.0]])
    for model in _all_estimators(declared):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if isinstance(model, PrivateSVDD):
                model.fit(X).score_samples(probes)
                continue
            fit_params = {"Z": probes} if isinstance(model, SVMSemiClassifier) else {}
            model.fit(X, y, **fit_params)
            if model.classes_.size:
                model.predict(probes)
            assert SENTINEL not in model.classes_.tolist() or not declared
