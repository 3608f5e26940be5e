"""The DP-SGD linear SVM: calibration, ledger, accounting, audit."""

import numpy as np
import pytest

from privkit import ApproxDP, PoissonSubsample, Repeat
from privkit.algorithms import DPSGDLinearSVM


def data(n=2000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def test_fit_accounts_every_step_and_meets_the_budget():
    """The noise multiplier is calibrated so the PLD bound meets (1, 1e-5); the ledger
    holds exactly the steps that ran; opacus's hook and privkit agree on epsilon."""
    X, y = data()
    svm = DPSGDLinearSVM(epsilon=1.0, delta=1e-5, sampling_rate=0.05, epochs=3, random_state=0)
    svm.fit(X, y)
    assert isinstance(svm.plan_, Repeat)
    assert isinstance(svm.plan_.block, PoissonSubsample)
    assert svm.plan_.count == svm.n_steps_ == 60
    assert svm.ledger_.compare(svm.plan_).matches
    assert svm.guarantee_.within(ApproxDP(epsilon=1.0, delta=1e-5))
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


@pytest.mark.statistical
def test_audit_does_not_exceed_the_guarantee():
    """The registered DP-SGD case (each draw trains a model, so 100 draws per side)
    stays below the claim (seeded; false-alarm rate at most 5%)."""
    from privkit.audits import audit
    from privkit.audits.registry import CASES

    case = CASES["dp_sgd_svm"](1.0)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=min(case.max_trials or 200_000, 200_000), rng=3)
    assert result.verdict != "violation"
    assert result.lower_bound <= 1.0
