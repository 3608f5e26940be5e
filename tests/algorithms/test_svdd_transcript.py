"""PrivateSVDD's transcript (issue 22): every n fits alike under add-remove, rows where
the feature map is undefined are removed silently, queries are validated strictly."""

import numpy as np
import pytest
from _transcripts import SENTINEL, fit_quietly, shapes

from privkit.algorithms._audit_case import TranscriptCase
from privkit.algorithms.svdd.svdd import PrivateSVDD
from privkit.errors import InvalidParameterError


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
