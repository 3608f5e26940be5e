"""DP-PCA, DPDR-DPML and FedDPDR-DPML (Wang et al. 2024): accounting, ledgers, correctness."""

import math

import numpy as np
import pytest

from privkit import ApproxDP, Neighbouring, Parallel, Sequential
from privkit.algorithms import (
    DPPCA,
    DPDRDPMLClassifier,
    FedDPDRDPMLClassifier,
    Server,
)
from privkit.mechanisms import AnalyzeGauss


def data(n=600, d=8, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(3.0, 0.2, d)  # a clear top subspace
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    y = np.argmax(X[:, :classes], axis=1) if classes > 2 else (X[:, 0] > 0).astype(int)
    return X, y


def test_dppca_uses_the_true_replace_one_sensitivity():
    """The block is calibrated with sqrt(2) (not the paper's 1), meets (eps, delta)
    exactly, and the ledger equals the plan."""
    X, _ = data()
    pca = DPPCA(3, epsilon=0.5, delta=1e-5, random_state=0).fit(X)
    block = pca.plan_
    assert isinstance(block, AnalyzeGauss)
    assert block.relation is Neighbouring.REPLACE_ONE
    assert block.sensitivity.value == pytest.approx(math.sqrt(2))
    assert pca.guarantee_.epsilon_at(1e-5) == pytest.approx(0.5, rel=1e-9)
    assert pca.paper_claim_ == ApproxDP(epsilon=0.5, delta=1e-5)
    assert pca.ledger_.compare(block).matches


def test_dppca_recovers_the_subspace_with_a_large_budget():
    """With epsilon 1000 the private top-3 subspace is the true one (principal angles
    below 0.05 rad), and components are orthonormal."""
    X, _ = data(n=2000)
    pca = DPPCA(3, epsilon=1000.0, delta=1e-5, random_state=1).fit(X)
    U = pca.components_.T
    np.testing.assert_allclose(U.T @ U, np.eye(3), atol=1e-10)
    true = np.linalg.eigh(X.T @ X)[1][:, ::-1][:, :3]
    cosines = np.linalg.svd(true.T @ U, compute_uv=False)
    assert np.all(np.arccos(np.clip(cosines, -1, 1)) < 0.05)


@pytest.mark.parametrize("classes", [2, 3])
def test_dpdr_dpml_ledger_plan_and_guarantee(classes):
    """Ledger equals plan (PCA then one objective-perturbation block per problem); the
    tightest guarantee does not exceed the paper's (eps1 + eps2, delta)."""
    X, y = data(classes=classes)
    clf = DPDRDPMLClassifier(epsilon=1.0, delta=1e-4, n_components=3, random_state=0)
    clf.fit(X, y)
    assert isinstance(clf.plan_, Sequential)
    assert clf.ledger_.compare(clf.plan_).matches
    assert clf.guarantee_.within(ApproxDP(epsilon=1.0, delta=1e-4))
    assert clf.predict(X).shape == (len(y),)


def test_dpdr_dpml_learns_with_a_large_budget():
    """With epsilon 50 the private pipeline classifies the separable data well."""
    X, y = data(n=3000)
    clf = DPDRDPMLClassifier(epsilon=50.0, delta=1e-4, n_components=3, regularization=1e-3,
                             random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.9


def test_federated_plan_is_parallel_over_participants():
    """Five participants: the plan is Parallel of five Sequential(PCA, classifier); the
    ledger matches; each participant's guarantee is within the claim."""
    X, y = data(n=1000)
    ids = np.arange(len(y)) % 5
    clf = FedDPDRDPMLClassifier(epsilon=1.0, delta=1e-4, n_components=3, random_state=0)
    clf.fit(X, y, participant=ids)
    assert isinstance(clf.plan_, Parallel)
    assert len(clf.plan_.parts) == 5
    assert clf.ledger_.compare(clf.plan_).matches
    assert all(g.within(clf.paper_claim_) for g in clf.participant_guarantees_)
    assert clf.guarantee_.within(clf.paper_claim_)


def test_server_weights_by_data_size():
    """Weighted averaging: weights n_i / sum n (Wang et al. 2024 Section 4.1)."""
    avg = Server.average([np.array([1.0, 0.0]), np.array([0.0, 1.0])], [3, 1])
    np.testing.assert_allclose(avg, [0.75, 0.25])
    u = np.linalg.qr(np.random.default_rng(0).normal(size=(5, 2)))[0]
    merged = Server.average_subspaces([u, -u], [1, 1])  # opposite signs must not cancel
    np.testing.assert_allclose(np.abs(merged.T @ u), np.eye(2), atol=1e-12)


def test_participant_without_a_class_is_refused():
    """A participant missing a class cannot train the shared one-vs-rest model."""
    X, y = data(n=200, classes=3)
    ids = np.where(y == 0, 0, 1)  # participant 0 holds only class 0
    with pytest.raises(ValueError, match="each participant needs examples of every class"):
        FedDPDRDPMLClassifier(n_components=3, random_state=0).fit(X, y, participant=ids)


@pytest.mark.statistical
def test_dp_pca_audit_does_not_exceed_the_guarantee():
    """The registered DP-PCA audit case stays below its claim (seeded, <= 5% false alarm)."""
    from privkit.audits import audit
    from privkit.audits.registry import CASES

    case = CASES["dp_pca"](1.0)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=100_000, rng=9)
    assert result.verdict != "violation"
    assert result.lower_bound <= 1.0


@pytest.mark.statistical
@pytest.mark.parametrize("name", ["dpdr_dpml", "fed_dpdr_dpml"])
def test_pipeline_audits_do_not_exceed_the_guarantee(name):
    """The registered pipeline cases (each draw fits the whole pipeline, hence a few
    hundred draws) stay below their claims (seeded; false-alarm rate at most 5%)."""
    from privkit.audits import audit
    from privkit.audits.registry import CASES

    case = CASES[name](1.0)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=case.max_trials or 200_000, rng=4)
    assert result.verdict != "violation"
    assert result.lower_bound <= 1.0


def test_sensitivity_check_refutes_seed_004_lemma_4_1():
    """The audits' sensitivity search shows Wang et al.'s Lemma 4.1 (sensitivity 1 for
    X^T X between datasets differing in one row) fails under REPLACE_ONE: it finds a
    change near sqrt(2) in the upper triangle; sqrt(2) (privkit's figure) passes, and
    under ADD_REMOVE the paper's 1 passes."""
    from privkit import Norm, Sensitivity
    from privkit.audits import check_sensitivity

    def upper(rows):  # rows clipped to the unit ball, as DPPCA does
        rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1.0)
        return (rows.T @ rows)[np.triu_indices(rows.shape[1])]

    box = dict(record_low=[-1.0, -1.0], record_high=[1.0, 1.0], n_records=4, rng=0)
    paper = check_sensitivity(upper, Sensitivity(value=1.0, norm=Norm.L2,
                                                 relation=Neighbouring.REPLACE_ONE), **box)
    assert paper.violation
    assert paper.largest > 1.3
    ours = check_sensitivity(upper, Sensitivity(value=math.sqrt(2), norm=Norm.L2,
                                                relation=Neighbouring.REPLACE_ONE), **box)
    assert not ours.violation
    add_remove = check_sensitivity(upper, Sensitivity(value=1.0, norm=Norm.L2,
                                                      relation=Neighbouring.ADD_REMOVE), **box)
    assert not add_remove.violation


def test_budget_calibration_is_memoised_on_the_parameters_that_matter():
    """The memoised budget equals a fresh calibration, changes with epsilon and with the
    share, and ignores only the seed."""
    from privkit.algorithms.pca import calibrated_shares

    model = DPDRDPMLClassifier(epsilon=1.0, delta=1e-5, n_components=2, random_state=0)
    fresh = calibrated_shares(1.0, 1e-5, model.pca_share,
                              lambda e1, e2: model._part_plan(200, 3, e1, e2))
    assert model._budget(200, 3) == fresh
    assert model.set_params(random_state=7)._budget(200, 3) == fresh
    assert model.set_params(epsilon=2.0)._budget(200, 3) != fresh
    assert model.set_params(epsilon=1.0, pca_share=0.3)._budget(200, 3) != fresh
