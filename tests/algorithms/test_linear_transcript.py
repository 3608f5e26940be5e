"""The transcript of the linear family (issue 22): output and objective perturbation and
the LP-SVM, channel by channel. Each test fits on neighbouring datasets of one channel and
checks that everything the caller receives (every public fitted attribute, predictions on
probes, warnings, exceptions) is the same, or differs only through accounted noise; and
that queries are checked strictly. The estimators are REPLACE_ONE, so n is public and the
add-remove channel does not apply to them."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from privkit import ApproxDP, BudgetFilter, PureDP
from privkit.algorithms import (
    LPSVMClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PrivateGridSearch,
    solve_erm,
)
from privkit.algorithms._labels import LABEL_SHARE
from privkit.algorithms.linear._losses import MarginLoss
from privkit.errors import InvalidParameterError
from privkit.mechanisms import StabilityHistogram

ERM = [OutputPerturbationClassifier, ObjectivePerturbationClassifier]
ALL = [*ERM, LPSVMClassifier]
SENTINEL = 123456.789


def data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.6, 0.6, size=(n, 2))
    return X, (X[:, 0] + 0.2 * X[:, 1] > 0).astype(int)


def make(cls, **params):
    """A small, fast configuration of ``cls`` with the label set {0, 1} declared."""
    if cls is LPSVMClassifier:
        params = {"quality": "count", "n_iterations": 3, "delta": 1e-3, **params}
    else:
        params = {"regularization": 0.1, "tol": 1e-7, **params}
    return cls(**{"epsilon": 1.0, "classes": [0, 1], "random_state": 7, **params})


PROBES = np.array([[0.5, 0.1], [-0.3, 0.4], [0.0, 0.0]])


def transcript(estimator, probes=PROBES):
    """Everything a caller receives from a fitted estimator: its public fitted attributes
    (as text, which covers classes, shapes and values) and its predictions on probes."""
    state = {name: repr(value) for name, value in vars(estimator).items()
             if name.endswith("_") and not name.startswith("_") and name != "ledger_"}
    state["ledger_"] = repr(estimator.ledger_.entries)
    state["predict"] = repr(estimator.predict(probes))
    return state


def fit_silently(estimator, X, y, **kwargs):
    """Fit with every warning turned into an error: a data-dependent warning fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return estimator.fit(X, y, **kwargs)


# -- labels ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL)
def test_a_record_with_a_foreign_label_leaves_the_transcript_unchanged(cls):
    """Declared classes {0, 1}: two neighbours that differ in one record holding a label
    outside the set (7 with one row, "x" with another, None with a NaN row) give the same
    transcript for the same seed, classes_ included: the record is the neutral zero row."""
    X, y = data()
    outcomes = []
    for row, label in (([0.5, 0.5], 7), ([-0.9, 0.1], "x"), ([np.nan, 1.0], None)):
        X1, y1 = X.copy(), y.astype(object)
        X1[0], y1[0] = row, label
        outcomes.append(transcript(fit_silently(make(cls), X1, y1)))
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert outcomes[0]["classes_"] == repr(np.array([0, 1]))


@pytest.mark.parametrize("loss", ["huber", "logistic"])
def test_a_foreign_label_is_the_zero_augmented_row_which_moves_no_gradient(loss):
    """Independent value: with the record's label outside classes_, the minimiser is that
    of the other n - 1 rows with the regulariser scaled by n / (n - 1) (the zero row's
    loss is the constant loss(0), and n stays the divisor), computed by solve_erm on the
    augmented rows. Output perturbation at epsilon 1e7 adds noise of norm about 3e-7
    (scale 2 / (n Lambda epsilon) = 5e-8 in 3 dimensions), so scores agree to 1e-5, while
    keeping the record with its own label moves them by more than 1e-3."""
    X, y = data(n=40)
    labels = y.astype(object)
    labels[3] = "foreign"
    lam, n = 0.1, 40

    def model():
        return OutputPerturbationClassifier(epsilon=1e7, classes=[0, 1], loss=loss,
                                            regularization=lam, tol=1e-12, random_state=0)

    neutral, kept = model().fit(X, labels), model().fit(X, y)
    keep = np.arange(n) != 3
    rows = np.hstack([X[keep], np.ones((n - 1, 1))])  # (x / B, a), clipped onto the ball
    Z = rows / np.maximum(np.linalg.norm(rows, axis=1), 1.0)[:, None]
    w = solve_erm(Z, np.where(y[keep] == 1, 1.0, -1.0), MarginLoss(loss), lam * n / (n - 1),
                  tol=1e-12)
    probes = np.array([[0.5, 0.1], [-0.3, 0.4], [0.2, -0.7]])
    expected = np.hstack([probes, np.ones((3, 1))]) @ w
    np.testing.assert_allclose(neutral.decision_function(probes), expected, atol=1e-5)
    assert np.abs(kept.decision_function(probes) - expected).max() > 1e-3


@pytest.mark.parametrize("multi_class", ["auto", "ovr"])
def test_an_epsilon_too_large_for_the_safe_release_is_refused_before_the_data(multi_class):
    """Output perturbation's weights lie in a public ball of radius (L + tol) / Lambda; an
    epsilon so large that the floating-point-safe release could not carry them is refused
    from public values (plan() and fit, before the data), not for some datasets only."""
    X, y = data(n=40)
    model = OutputPerturbationClassifier(epsilon=1e12, classes=[0, 1, 2], loss="logistic",
                                         multi_class=multi_class, regularization=0.1)
    with pytest.raises(InvalidParameterError, match="fit the floating-point-safe release"):
        model.plan(n_samples=40, n_features=2)
    with pytest.raises(InvalidParameterError, match="fit the floating-point-safe release"):
        model.fit(X, y)


@pytest.mark.parametrize("cls", ERM)
def test_without_classes_and_delta_the_fit_is_refused_before_the_data(cls):
    """A private label set needs delta > 0 (pure DP cannot release a label held by one
    record with probability 0 and without it with positive probability): the fit refuses
    naming classes, before it reads X (here not even an array), and spends nothing. (The
    LP-SVM always has a delta, 1/n by default, so its label set can always be released.)"""
    budget = BudgetFilter(epsilon=10.0)
    with pytest.raises(InvalidParameterError, match="`classes` must be the public label set"):
        cls(delta=0.0).fit(object(), None, budget_filter=budget)
    with pytest.raises(InvalidParameterError, match="`classes` must be the public label set"):
        cls(delta=0.0).plan(n_samples=10, n_features=2)
    assert budget.spent.epsilon == 0.0


@pytest.mark.parametrize("cls", ALL)
def test_private_label_set_is_planned_charged_released_and_composed(cls):
    """Without classes: plan() before fitting starts with the stability histogram at
    LABEL_SHARE of epsilon; the filter is charged the whole (epsilon, delta); the ledger
    matches plan_; guarantee_ is (epsilon, delta) by basic composition."""
    X, y = data(n=400)
    eps, delta = 4.0, 1e-4
    model = make(cls, epsilon=eps, delta=delta, classes=None)
    planned = model.plan(n_samples=400, n_features=2)
    assert isinstance(planned.steps[0], StabilityHistogram)
    assert planned.steps[0].guarantees()[0].epsilon == pytest.approx(LABEL_SHARE * eps)
    budget = BudgetFilter(epsilon=10.0, delta=1e-3)
    fit_silently(model, X, y, budget_filter=budget)
    np.testing.assert_array_equal(model.classes_, [0, 1])
    assert budget.spent.epsilon == pytest.approx(eps)
    assert budget.spent.delta == pytest.approx(delta)
    assert model.ledger_.compare(model.plan_).matches
    assert model.guarantee_.epsilon <= eps * (1 + 1e-12)
    assert model.guarantee_.epsilon == pytest.approx(eps, rel=1e-6)
    assert model.guarantee_.delta <= delta
    assert isinstance(model.guarantee_, ApproxDP)


@pytest.mark.parametrize("cls", ALL)
def test_fewer_than_two_released_labels_fit_no_model(cls):
    """One label clears the threshold (400 records) and one does not (1 record): the fit
    succeeds with classes_ = [0], no model, and predict returns 0; with every label held by
    one record none is released and predict raises a NotFittedError that says why. A refit
    clears the previous model."""
    X, _ = data(n=401)
    y = np.zeros(401, dtype=int)
    y[0] = 1
    model = make(cls, epsilon=4.0, delta=1e-4, classes=None)
    fit_silently(model, X, np.where(np.arange(401) % 2 == 0, 0, 1))
    assert hasattr(model, "coef_")
    fit_silently(model, X, y)
    np.testing.assert_array_equal(model.classes_, [0])
    assert not hasattr(model, "coef_")
    np.testing.assert_array_equal(model.predict(X[:3]), [0, 0, 0])
    assert model.ledger_.compare(model.plan_).matches
    fit_silently(model, X, np.arange(401))
    assert model.classes_.size == 0
    with pytest.raises(NotFittedError, match="kept 0 label"):
        model.predict(X[:3])


def test_lp_svm_refuses_more_than_two_released_labels_naming_only_them():
    """The LP-SVM is binary: when the private release keeps three labels, fit raises
    after the release, with a message built from the released labels alone (no row, no
    count), asking for classes; scikit-learn's wording for binary-only classifiers."""
    X, _ = data(n=600)
    y = np.arange(600) % 3
    X[5] = SENTINEL
    with pytest.raises(InvalidParameterError) as info:
        make(LPSVMClassifier, epsilon=8.0, delta=1e-3, classes=None).fit(X, y)
    message = str(info.value)
    assert "Only binary classification is supported" in message
    assert "[0, 1, 2]" in message
    assert "123456" not in message
    assert "200" not in message  # each label's count


# -- rows ------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("bad", [[np.nan, 0.3], [np.inf, 0.0], [-np.inf, np.nan]])
def test_a_non_finite_row_is_the_zero_row_silently(cls, bad):
    """A row with a NaN or an infinity fits without a warning or an error, exactly as the
    zero row with the same label would (same seed: the same transcript)."""
    X, y = data()
    X_bad, X_zero = X.copy(), X.copy()
    X_bad[4], X_zero[4] = bad, [0.0, 0.0]
    assert transcript(fit_silently(make(cls), X_bad, y)) == transcript(
        fit_silently(make(cls), X_zero, y))


@pytest.mark.parametrize("cls", ALL)
def test_an_entry_that_is_not_a_number_makes_its_row_neutral_without_echo(cls):
    """An object array (its dtype is the public schema) with a text entry: numpy's
    conversion would refuse it, naming the entry; the entry is NaN instead, so its row is
    the zero row (the same transcript as a NaN there), silently."""
    X, y = data()
    text, nan = X.astype(object), X.copy()
    text[6, 1], nan[6, 1] = "secret-123456", np.nan
    assert transcript(fit_silently(make(cls), text, y)) == transcript(
        fit_silently(make(cls), nan, y))


@pytest.mark.parametrize("cls", ALL)
def test_a_row_beyond_the_bound_is_clipped_onto_it_silently(cls):
    """A row of norm 50 (and one of norm 1e300, whose squares overflow) fits without a
    warning, as the same row scaled onto the bound would (coefficients equal to rounding;
    the LP-SVM's vertex choices exactly)."""
    X, y = data()
    on_bound = X.copy()
    on_bound[2] = X[2] / np.linalg.norm(X[2])
    reference = fit_silently(make(cls), on_bound, y)
    for scale in (50.0, 1e300):
        beyond = X.copy()
        beyond[2] = on_bound[2] * scale
        model = fit_silently(make(cls), beyond, y)
        np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-9, atol=1e-12)
        if cls is LPSVMClassifier:
            np.testing.assert_array_equal(model.choices_, reference.choices_)


@pytest.mark.parametrize("cls", ALL)
def test_no_message_holds_a_private_value(cls):
    """A sentinel planted in the rows and the labels appears in no exception or warning
    of fit, whatever goes wrong: a refused parameter, a refused private label set."""
    X, y = data()
    X[1] = SENTINEL
    labels = y.astype(float)
    labels[2] = SENTINEL
    attempts = [(make(cls, epsilon=-1.0), X), (make(cls, classes=[0]), X),
                (make(cls, classes=None, delta=0.0 if cls is not LPSVMClassifier else 2.0), X),
                (make(cls), X[:, 0])]  # a shape error: scikit-learn's message prints X
    for model, rows in attempts:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(ValueError) as info:
                model.fit(rows, labels)
        assert "123456" not in str(info.value)
        assert not any("123456" in str(w.message) for w in caught)


# -- queries ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL)
def test_queries_are_checked_strictly(cls):
    """Query rows are not private: a NaN or an infinity is a clear error from predict and
    decision_function (and predict_proba), never a silent class; so is a wrong width."""
    X, y = data()
    model = fit_silently(make(cls, **({"loss": "logistic"} if cls in ERM else {})), X, y)
    methods = [model.predict, model.decision_function]
    if hasattr(model, "predict_proba"):
        methods.append(model.predict_proba)
    for method in methods:
        with pytest.raises(ValueError, match="NaN"):
            method(np.array([[np.nan, 0.0]]))
        with pytest.raises(ValueError, match="infinity"):
            method(np.array([[np.inf, 0.0]]))
        with pytest.raises(ValueError, match="2 features"):
            method(np.zeros((1, 3)))


# -- attributes and the audit case -------------------------------------------------------------


def test_fitted_attributes_are_public_or_released():
    """The ERM classifiers publish exactly these fitted attributes: nothing about the
    solver's run (no iteration count, no convergence flag)."""
    X, y = data()
    for cls in ERM:
        model = fit_silently(make(cls), X, y)
        public = {name for name in vars(model) if name.endswith("_")}
        assert public == {"classes_", "coef_", "intercept_", "guarantee_", "ledger_",
                          "plan_", "paper_claim_", "n_features_in_"}


@pytest.mark.parametrize("cls", [*ALL, PrivateGridSearch])
@pytest.mark.parametrize("declare", [True, False])
def test_transcript_case_is_a_small_consistent_fixture(cls, declare):
    """Each estimator's transcript case fits on its fixture without a warning; the ledger
    matches the plan; the guarantee is within the case's claim at the case's delta; the
    new label is absent from D (and, declared, among classes or outside for the binary
    LP-SVM); the bound records sit at and beyond the bound; probes predict."""
    case = cls.transcript_case(declare_classes=declare)
    model = fit_silently(case.estimator, case.X, case.y, **case.fit_params)
    assert model.ledger_.entries
    if not isinstance(model, PrivateGridSearch):
        assert model.ledger_.compare(model.plan_).matches
    assert model.guarantee_.epsilon_at(case.delta) <= case.epsilon * (1 + 1e-9)
    assert case.new_label not in set(case.y.tolist())
    norm = case.estimator.get_params().get("row_norm_bound", 1.0)
    assert np.linalg.norm(case.at_bound) == pytest.approx(norm)
    assert np.linalg.norm(case.beyond_bound) > norm
    assert model.predict(case.probes).shape == (len(case.probes),)
    assert case.relation.name == "REPLACE_ONE"
    if declare:
        assert isinstance(model.guarantee_, PureDP) or cls is LPSVMClassifier
