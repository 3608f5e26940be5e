"""The equilibrium-point classifier (Park 2022, chapters 5-6) and its accounting."""


import numpy as np
import pytest

from privkit.algorithms.equilibrium import (
    EquilibriumPointClassifier,
    audit_case,
    audit_case_paper,
    descend,
)
from privkit.algorithms.random_features import RandomFourierFeatures
from privkit.errors import InvalidParameterError


def _blobs(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    return centres[y] + rng.normal(0, 0.4, (n, 2)), y


def test_descend_follows_the_gradient_of_the_support_function():
    """One step of size lr moves x by -lr grad f; compare with a finite-difference gradient
    of f(x) = 1 - 2 phi(x).a + ||a||^2."""
    rff = RandomFourierFeatures(50, 1.0, random_state=0).fit(np.zeros((1, 2)))
    a = np.random.default_rng(1).normal(size=50) / 10
    x = np.array([[0.3, -0.2]])
    step = descend(rff, a, x, learning_rate=1e-3, n_iter=1, decay_at=1.0) - x

    def f(z):
        return 1 - 2 * rff.transform(z) @ a + a @ a

    h = 1e-6
    ex, ey = np.array([[h, 0.0]]), np.array([[0.0, h]])
    grad = np.array([(f(x + ex) - f(x - ex))[0] / (2 * h),
                     (f(x + ey) - f(x - ey))[0] / (2 * h)])
    assert np.allclose(step[0], -1e-3 * grad, rtol=1e-3, atol=1e-8)


def test_schedule_decays_after_80_percent():
    rff = RandomFourierFeatures(8, 1.0, random_state=0).fit(np.zeros((1, 1)))
    a = np.zeros(8)
    a[4] = 1.0  # f decreases linearly-ish; movements compared with and without decay
    x = np.zeros((1, 1))
    full = descend(rff, a, x, 1e-4, 10, decay=1.0) - x
    decayed = descend(rff, a, x, 1e-4, 10) - x
    assert np.allclose(decayed, full * (8 + 2 * 0.2) / 10, rtol=1e-3)


def test_private_mode_accounting_and_accuracy():
    X, y = _blobs()
    clf = EquilibriumPointClassifier(epsilon=8.0, delta=1e-5, nu=0.05, gamma=1.0,
                                     n_components=100, r_max=0.5, random_state=0).fit(X, y)
    assert clf.guarantee_.epsilon_at(1e-5) == pytest.approx(8.0, rel=1e-6)
    assert np.mean(clf.predict(X) == y) > 0.9
    # cubes are public grid cells: centres are multiples of 2 r_max
    assert np.allclose(clf.cells_ / 1.0, np.round(clf.cells_ / 1.0))


def test_paper_mode_has_no_guarantee_but_keeps_the_claim():
    X, y = _blobs(120)
    clf = EquilibriumPointClassifier(epsilon=1.0, mode="paper", n_components=50,
                                     random_state=0).fit(X, y)
    assert clf.guarantee_ is None
    assert clf.paper_claim_.epsilon == 1.0
    # its released EPs are within lr * iters * sup|grad f| of the training rows
    assert np.abs(clf.equilibria_ - X).max() < 0.05


def test_vote_noise_doubles_under_replace_one():
    r = EquilibriumPointClassifier(epsilon=2.0, relation="replace_one")
    a = EquilibriumPointClassifier(epsilon=2.0, relation="add_remove")
    from privkit.neighbouring import Neighbouring

    assert r._vote_scale(Neighbouring.REPLACE_ONE) == pytest.approx(
        2 * a._vote_scale(Neighbouring.ADD_REMOVE))


def test_ledger_matches_the_plan_in_private_mode():
    """What ran (the noisy centre, the stability histogram) is what the plan declares."""
    X, y = _blobs(120)
    model = EquilibriumPointClassifier(epsilon=2.0, delta=1e-5, random_state=0).fit(X, y)
    assert model.ledger_.compare(model.plan_).matches


def test_bad_parameters_are_named():
    X, y = _blobs(60)
    with pytest.raises(InvalidParameterError, match="delta"):
        EquilibriumPointClassifier(delta=0.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="mode"):
        EquilibriumPointClassifier(mode="fast").fit(X, y)


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_audit_case_certifies_half_the_claim_and_never_more_than_guarantee(epsilon):
    """The registered case (the noisy centre, a marginal of the transcript) certifies
    >= 0.5 of the claim, which is the guarantee_ of the estimator fitted on the pair with
    the case's parameters, and never exceeds it. Seeded; an exact audit's bound exceeds
    the truth with probability <= 5% (its confidence)."""
    from privkit.audits import audit

    case = audit_case(epsilon)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=200_000, rng=0)
    data = np.asarray(case.pair.first)
    model = EquilibriumPointClassifier(epsilon=epsilon, delta=1e-5, nu=0.5, gamma=1.0,
                                       n_components=2, centre_share=0.9, r_max=0.5,
                                       random_state=0).fit(data[:, :1], data[:, 1])
    bound = model.guarantee_.epsilon_at(case.delta)
    assert case.epsilon == pytest.approx(bound)
    assert 0.5 * bound <= result.lower_bound <= bound
    assert result.lower_bound <= case.ceiling * case.epsilon + 1e-9
    assert "marginal" in case.threat_model


@pytest.mark.slow
def test_paper_audit_case_breaks_the_claim():
    """The thesis' PureDP(eps) claim for the paper-faithful mode is violated (the
    released EPs follow a single row)."""
    from privkit.audits import audit

    paper = audit_case_paper(1.0)
    broken = audit(paper.system, paper.pair, epsilon=paper.epsilon, delta=paper.delta,
                   trials=50_000, rng=0)
    assert broken.lower_bound > paper.epsilon  # the thesis' claim is violated
