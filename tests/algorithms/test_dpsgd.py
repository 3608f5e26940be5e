"""The DP-SGD linear SVM: calibration, ledger, accounting, transcript, audit."""

import math
import warnings

import numpy as np
import pytest

from privkit import ApproxDP, PoissonSubsample, Repeat, tightest
from privkit.algorithms import DPSGDLinearSVM


def data(n=2000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def test_fit_accounts_every_step_and_meets_the_budget():
    """The noise multiplier is calibrated so the tightest bound meets (1, 1e-5); the ledger
    holds exactly the steps that ran (ceil(3 / 0.05) = 60); opacus's hook and privkit
    agree on epsilon."""
    X, y = data()
    svm = DPSGDLinearSVM(epsilon=1.0, delta=1e-5, classes=[0, 1], sampling_rate=0.05,
                         epochs=3, random_state=0)
    svm.fit(X, y)
    assert isinstance(svm.plan_, Repeat)
    assert isinstance(svm.plan_.block, PoissonSubsample)
    assert svm.plan_.count == svm.n_steps_ == 60
    assert svm.plan_.block.sampling_rate == svm.sampling_rate_ == 0.05
    assert svm.ledger_.compare(svm.plan_).matches
    assert svm.guarantee_.within(ApproxDP(epsilon=1.0, delta=1e-5))
    assert svm.guarantee_.epsilon_at(1e-5) == pytest.approx(1.0, rel=1e-4)
    assert svm.accountant_epsilon_ == pytest.approx(svm.guarantee_.epsilon_at(1e-5), rel=1e-3)
    assert svm.score(X, y) > 0.8


def test_multiclass_and_hinge():
    """Several classes train one output per class; the hinge loss is accepted."""
    X, _ = data()
    y = np.argmax(X[:, :3], axis=1)
    svm = DPSGDLinearSVM(epsilon=5.0, loss="hinge", sampling_rate=0.1, epochs=2,
                         random_state=0).fit(X, y)
    assert svm.coef_.shape == (3, X.shape[1])
    assert set(svm.predict(X)) <= {0, 1, 2}


def test_bad_loss_is_refused():
    """An unknown loss is refused, naming it."""
    X, y = data(n=50)
    with pytest.raises(ValueError, match="`loss` must be 'huber' or 'hinge'"):
        DPSGDLinearSVM(loss="squared").fit(X, y)


def test_schedule_and_noise_are_functions_of_public_parameters_only():
    """Under add-remove n is private: 100 and 2000 rows give the same rate, step count
    (ceil(epochs / q)), noise multiplier and plan, and plan() needs no n at all."""
    params = dict(epsilon=1.0, delta=1e-5, classes=[0, 1], sampling_rate=0.026, epochs=1,
                  random_state=0)
    small, large = (DPSGDLinearSVM(**params).fit(*data(n=n)) for n in (100, 2000))
    for name in ("sampling_rate_", "n_steps_", "noise_multiplier_", "accountant_epsilon_"):
        assert getattr(small, name) == getattr(large, name)
    assert small.n_steps_ == 39 == math.ceil(1 / 0.026)
    assert small.plan_ == large.plan_ == DPSGDLinearSVM(**params).plan(n_features=5)
    assert small.ledger_.compare(small.plan_).matches


def test_private_label_set_is_accounted_and_composed():
    """classes=None: the stability histogram takes LABEL_SHARE of epsilon and delta, the
    steps are calibrated to the rest, and guarantee_ composes both to (1, 1e-5); the
    ledger matches a plan that starts with the label release."""
    from privkit import Sequential
    from privkit.algorithms._labels import LABEL_SHARE
    from privkit.mechanisms import StabilityHistogram

    X, y = data(n=400)
    svm = DPSGDLinearSVM(epsilon=1.0, delta=1e-5, sampling_rate=0.1, epochs=1,
                         random_state=0).fit(X, y)
    np.testing.assert_array_equal(svm.classes_, [0, 1])
    assert isinstance(svm.plan_, Sequential)
    assert isinstance(svm.plan_.steps[0], StabilityHistogram)
    assert svm.ledger_.compare(svm.plan_).matches
    assert isinstance(svm.guarantee_, ApproxDP)
    assert svm.guarantee_.epsilon == pytest.approx(1.0, rel=1e-4)
    assert svm.guarantee_.epsilon <= 1.0 + 1e-9
    assert svm.guarantee_.delta == pytest.approx(1e-5, rel=1e-12)
    steps = svm.plan_.steps[1]
    spent = tightest(steps, delta=(1 - LABEL_SHARE) * 1e-5).epsilon
    assert spent == pytest.approx((1 - LABEL_SHARE) * 1.0, rel=1e-4)


def test_one_released_label_trains_nothing_and_predicts_it():
    """With one label in the data, the release keeps at most that label: no step runs,
    the plan is the label release alone, predict returns the label for every query; with
    no label released, predict raises an error naming the empty label set."""
    X, _ = data(n=300)
    y = np.full(300, 4)
    svm = DPSGDLinearSVM(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(svm.classes_, [4])
    assert svm.n_steps_ == 0
    assert not hasattr(svm, "coef_")
    assert svm.ledger_.compare(svm.plan_).matches
    np.testing.assert_array_equal(svm.predict(X[:3]), [4, 4, 4])
    empty = DPSGDLinearSVM(epsilon=1.0, delta=1e-5, random_state=0).fit(X[:2], y[:2])
    assert empty.classes_.size == 0
    with pytest.raises(ValueError, match="has no model"):
        empty.predict(X[:3])


def test_empty_and_non_finite_data_fit_like_any_other():
    """n = 0 fits (an empty dataset neighbours a one-row one); a row with a non-finite
    entry is removed, so it changes nothing, bit for bit; a finite row of norm 1e300 is
    clipped in its gradient like any other: no warning, finite weights."""
    params = dict(epsilon=1.0, delta=1e-5, classes=[0, 1], sampling_rate=0.2, epochs=1,
                  random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        empty = DPSGDLinearSVM(**params).fit(np.empty((0, 5)), np.empty(0))
        assert empty.coef_.shape == (1, 5)
        X, y = data(n=60)
        base = DPSGDLinearSVM(**params).fit(X, y)
        nan = DPSGDLinearSVM(**params).fit(np.vstack([X, [[np.nan] + [0.0] * 4]]),
                                           np.r_[y, 1])
        huge = DPSGDLinearSVM(**params).fit(np.vstack([X, [[1e300, -1e300, 0, 0, 0]]]),
                                            np.r_[y, 1])
    np.testing.assert_array_equal(nan.coef_, base.coef_)
    np.testing.assert_array_equal(nan.intercept_, base.intercept_)
    assert np.all(np.isfinite(huge.coef_))


def test_messages_do_not_quote_the_data():
    """Inputs of the wrong schema are refused naming X or y, without the sentinel value
    they hold (scikit-learn's own messages print the array); an object entry that is not
    a number is no refusal (R3): it is NaN, and its row is removed like a NaN row."""
    svm = DPSGDLinearSVM(classes=[0, 1])
    for X, y in [(np.array([123456.789, 2.0]), np.array([0, 1])),
                 (np.zeros((3, 2)), np.array([[123456.789, 1.0]] * 3))]:
        with pytest.raises(ValueError) as info:
            svm.fit(X, y)
        assert "123456" not in str(info.value)
        assert "`X`" in str(info.value) or "`y`" in str(info.value)
    X, y = data(n=100)
    text, nan = X.astype(object), X.copy()
    text[3, 1], nan[3, 1] = "abc-123456", np.nan
    params = dict(classes=[0, 1], sampling_rate=0.5, epochs=1, random_state=0)
    a = DPSGDLinearSVM(**params).fit(text, y)
    b = DPSGDLinearSVM(**params).fit(nan, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_queries_are_validated_strictly():
    """A non-finite query row is refused with a clear error, never given a class."""
    X, y = data(n=100)
    svm = DPSGDLinearSVM(classes=[0, 1], sampling_rate=0.5, epochs=1, random_state=0)
    svm.fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        svm.predict(np.array([[np.nan, 0, 0, 0, 0]]))


def test_budget_filter_is_charged_the_whole_claim_before_training():
    """A basic filter is charged the fit's (epsilon, delta) as one claimed block (no
    filter composes Poisson subsampling); a fit that does not fit is refused with
    nothing run; delta = 0 (which no Gaussian step or label release meets) is refused
    before the data are read."""
    from privkit import BudgetFilter
    from privkit.errors import BudgetExceededError

    X, y = data(n=100)
    budget = BudgetFilter(epsilon=1.5, delta=1e-4)
    svm = DPSGDLinearSVM(epsilon=1.0, delta=1e-5, sampling_rate=0.5, epochs=1,
                         random_state=0)
    svm.fit(X, y, budget_filter=budget)
    assert budget.spent.epsilon == pytest.approx(1.0, rel=1e-5)
    assert budget.spent.delta == pytest.approx(1e-5)
    with pytest.raises(BudgetExceededError):
        DPSGDLinearSVM(epsilon=1.0, delta=1e-5, classes=[0, 1], sampling_rate=0.5,
                       epochs=1).fit(X, y, budget_filter=budget)
    assert len(budget.history) == 1
    with pytest.raises(ValueError, match=r"`delta` must be in \(0, 1\)"):
        DPSGDLinearSVM(delta=0.0).fit(None, None)


@pytest.mark.statistical
def test_audit_does_not_exceed_the_guarantee():
    """The registered DP-SGD case (each draw trains a model, so 100 draws per side)
    stays below the claim (seeded; false-alarm rate at most 5%)."""
    from privkit.audits import audit
    from privkit.audits.registry import CASES

    case = CASES["dp_sgd_svm"](epsilon=1.0)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=min(case.max_trials or 200_000, 200_000), rng=3)
    assert result.verdict != "violation"
    assert result.lower_bound <= 1.0


def torch_task(n=64, batch_size=8, seed=0):
    """A tiny linear model and DataLoader (opacus's sampling rate is 1 / len(loader))."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(seed)
    x = torch.randn(n, 3)
    y = (x[:, 0] > 0).long()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                         batch_size=batch_size)
    model = torch.nn.Linear(3, 2)
    return model, torch.optim.SGD(model.parameters(), lr=0.1), loader


def train(model, optimizer, loader, epochs):
    import torch

    steps = 0
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
            steps += 1
    return steps


def test_make_private_with_epsilon_spends_the_target_by_the_tightest_accountant():
    """privkit's engine: after 2 epochs the spent epsilon (privkit's tightest accountant)
    is within 1% of the target 2 and not above it, the multiplier is noise_multiplier_for's
    for opacus's rate and steps, and 1% less noise would exceed the target."""
    pytest.importorskip("opacus")
    from privkit.opacus_accountant import PrivacyEngine, dp_sgd_plan, noise_multiplier_for

    model, optimizer, loader = torch_task()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = PrivacyEngine()
        model, optimizer, dp_loader = engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader, target_epsilon=2.0,
            target_delta=1e-5, epochs=2, max_grad_norm=1.0)
        steps = train(model, optimizer, dp_loader, epochs=2)
    assert steps == len(engine.accountant) == 16
    spent = engine.get_epsilon(1e-5)
    assert 0.99 * 2.0 <= spent <= 2.0
    assert spent == tightest(engine.accountant.plan(), delta=1e-5).epsilon
    sigma = optimizer.noise_multiplier
    assert sigma == noise_multiplier_for(epsilon=2.0, delta=1e-5, sampling_rate=1 / 8, steps=16)
    assert tightest(dp_sgd_plan(0.99 * sigma, 1 / 8, 16), delta=1e-5).epsilon > 2.0


def test_opacus_own_engine_accepts_privkit_accountant_in_make_private_with_epsilon():
    """The reported failure ("Unexpected accounting mechanism: privkit"): opacus's own
    engine with a PrivkitAccountant, and PrivacyEngine(accountant="privkit"), calibrate
    through opacus's registry; opacus bisects to its absolute tolerance 0.01, so the spend
    is within 1% of 2 and not above it."""
    opacus = pytest.importorskip("opacus")
    from privkit.opacus_accountant import PrivkitAccountant

    for make in (lambda: opacus.PrivacyEngine(accountant="privkit"), opacus.PrivacyEngine):
        model, optimizer, loader = torch_task()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            engine = make()
            engine.accountant = PrivkitAccountant()
            model, optimizer, dp_loader = engine.make_private_with_epsilon(
                module=model, optimizer=optimizer, data_loader=loader, target_epsilon=2.0,
                target_delta=1e-5, epochs=2, max_grad_norm=1.0)
            train(model, optimizer, dp_loader, epochs=2)
        assert 0.99 * 2.0 <= engine.get_epsilon(1e-5) <= 2.0


@pytest.mark.slow
def test_tightest_calibration_is_the_smallest_per_accountant_multiplier():
    """With the tightest accountant the multiplier is the smaller of the PLD- and
    RDP-calibrated ones; the RDP one agrees with opacus's get_noise_multiplier (RDP,
    tolerance 1e-4), an independent implementation of the same bound."""
    pytest.importorskip("opacus")
    from opacus.accountants.utils import get_noise_multiplier

    from privkit import PLDAccountant, RDPAccountant
    from privkit.opacus_accountant import noise_multiplier_for

    kw = dict(sampling_rate=0.05, steps=40)
    best = noise_multiplier_for(epsilon=2.0, delta=1e-5, **kw)
    pld = noise_multiplier_for(epsilon=2.0, delta=1e-5, accountant=PLDAccountant(), **kw)
    rdp = noise_multiplier_for(epsilon=2.0, delta=1e-5, accountant=RDPAccountant(), **kw)
    assert best == pytest.approx(min(pld, rdp), rel=2e-6)
    assert pld < rdp  # PLD is the tighter analysis here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # opacus: "optimal order is the largest alpha"
        theirs = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5,
                                      sample_rate=0.05, steps=40, accountant="rdp",
                                      epsilon_tolerance=1e-4)
    assert rdp == pytest.approx(theirs, rel=2e-3)


def test_privacy_engine_refuses_bad_arguments():
    """Non-privkit accountants and non-integer epochs are refused by name."""
    pytest.importorskip("opacus")
    from opacus.accountants import RDPAccountant as OpacusRDP

    from privkit.opacus_accountant import PrivacyEngine, noise_multiplier_for

    model, optimizer, loader = torch_task()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # opacus: secure RNG off
        engine = PrivacyEngine()
    with pytest.raises(ValueError, match="`epochs` must be"):
        engine.make_private_with_epsilon(module=model, optimizer=optimizer,
                                         data_loader=loader, target_epsilon=1.0,
                                         target_delta=1e-5, epochs=1.5, max_grad_norm=1.0)
    engine.accountant = OpacusRDP()
    with pytest.raises(ValueError, match="`accountant` must be a PrivkitAccountant"):
        engine.make_private_with_epsilon(module=model, optimizer=optimizer,
                                         data_loader=loader, target_epsilon=1.0,
                                         target_delta=1e-5, epochs=1, max_grad_norm=1.0)
    with pytest.raises(ValueError, match="`accountant` must be a privkit Accountant"):
        noise_multiplier_for(epsilon=1.0, delta=1e-5, sampling_rate=0.1, steps=10, accountant="rdp")
