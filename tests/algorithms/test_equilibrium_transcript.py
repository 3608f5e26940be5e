"""The equilibrium-point classifier's transcript (issue 22): every n fits alike under
add-remove, neutral records removed silently, far rows clipped without a warning, the
label set declared or released, strict queries, budget filters, its transcript cases."""

import warnings

import numpy as np
import pytest
from _transcripts import SENTINEL, blobs, fit_quietly, shapes

from privkit.algorithms.svdd.equilibrium import EquilibriumPointClassifier
from privkit.errors import InvalidParameterError

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
    X, y = blobs(60)
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
    X, y = blobs(60)
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
    from privkit.algorithms.svdd._equilibrium_dynamics import COORDINATE_BOUND

    X, y = blobs(60)
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
    X, y = blobs(90)
    X1, y1 = np.vstack([X, [[5.0, 5.0]]]), np.append(y, 7)
    for seed in range(30):
        model = fit_quietly(_equilibrium(classes=None, epsilon=20.0, random_state=seed),
                            X1, y1)
        assert 7 not in model.classes_.tolist()
        assert model.ledger_.compare(model.plan_).matches


def test_equilibrium_fewer_than_two_released_labels_and_no_stale_attributes():
    """One released label: predict gives it; none: a clear error naming no value. A refit
    that releases fewer than two labels drops the cells of the previous fit."""
    X, _ = blobs(90)
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
    X, y = blobs(60)
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

    X, y = blobs(60)
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
    from privkit.algorithms.svdd.equilibrium import transcript_case_paper

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
