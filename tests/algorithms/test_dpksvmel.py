"""DPKSVMEL: the faithful algorithm, privkit's verdict on Theorem 1, and the variant."""

import math

import numpy as np
import pytest

from privkit.algorithms.kernels.dpksvmel import DPKSVMEL, DPKSVMELCorrected, _audit_data
from privkit.audits.registry import CASES
from privkit.errors import InvalidParameterError


def test_faithful_has_no_certified_guarantee_and_keeps_the_claim():
    X, y, _ = _audit_data(2)
    m = DPKSVMEL(epsilon=1.0, k=2, lls=0.5, classes=[0, 1], random_state=0).fit(X, y)
    assert m.guarantee_ is None
    assert m.paper_claim_.epsilon == 1.0
    assert set(m.branch_) <= {"exponential", "laplace"}


def test_groups_follow_eq7():
    """Each non-SV's group is the SV of largest y_i y_j K(x_i, x_j), or -1 below LLs:
    checked by a direct loop."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    m = DPKSVMEL(lls=0.6, classes=[0, 1], random_state=0).fit(X, y)
    group, _ = m.groups(X, y, m.gamma_, 0.6)
    sv = m.svc_.support_
    non = np.setdiff1d(np.arange(60), sv)
    s = np.where(y == 1, 1.0, -1.0)
    for g, i in zip(group, non, strict=False):
        q = [s[i] * s[j] * math.exp(-m.gamma_ * np.sum((X[i] - X[j]) ** 2)) for j in sv]
        expect = int(np.argmax(q)) if max(q) >= 0.6 else -1
        assert g == expect


def test_exponential_branch_releases_exact_means_of_records():
    """The point of the analysis: a released support vector equals the mean of k records."""
    X, y, _ = _audit_data(2)
    m = DPKSVMEL(epsilon=1.0, k=2, lls=0.5, classes=[0, 1], random_state=0).fit(X, y)
    j = list(m.branch_).index("exponential")
    released = m.support_vectors_[j]
    pairs = [(X[a] + X[b]) / 2 for a in range(len(X)) for b in range(a + 1, len(X))]
    assert min(np.max(np.abs(released - p)) for p in pairs) < 1e-12


@pytest.mark.slow
def test_audit_certifies_a_violation_of_theorem_1():
    """The audit's 95% lower bound exceeds the claimed epsilon = 1 (seeded; a false
    failure needs the exponential branch to miss x in nearly all draws, which the
    selection probability (> 1/2) rules out)."""
    from privkit.audits import audit

    case = CASES["dpksvmel_paper"](epsilon=1.0)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=3000, rng=0)
    assert result.lower_bound > 3.0


def test_corrected_is_pure_dp_and_accounted():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(400, 4))
    y = (np.sum(X ** 2, axis=1) > 1.3).astype(int)
    m = DPKSVMELCorrected(8, epsilon=1.0, classes=[0, 1], data_radius=2.0,
                          random_state=0).fit(X, y)
    assert m.guarantee_.epsilon_at(0.0) == pytest.approx(1.0)
    assert m.paper_claim_.epsilon == 1.0
    assert m.ledger_.compare(m.plan_).matches


@pytest.mark.parametrize(("params", "fragment"), [
    ({"epsilon": 0.0}, "epsilon"), ({"k": 0}, "k"), ({"lls": 1.0}, "lls"),
])
def test_invalid_parameters(params, fragment):
    X, y, _ = _audit_data(2)
    with pytest.raises(InvalidParameterError, match=fragment):
        DPKSVMEL(**{"classes": [0, 1], **params}).fit(X, y)


# -- the transcript (issue 22) ------------------------------------------------------------------


def _fit(X, y, **kw):
    return DPKSVMEL(**{"epsilon": 1.0, "classes": [0, 1], "random_state": 3, **kw}).fit(X, y)


def _same_model(a, b):
    np.testing.assert_array_equal(a.support_vectors_, b.support_vectors_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    np.testing.assert_array_equal(a.classes_, b.classes_)


@pytest.mark.parametrize(("row", "label"), [([0.9, 1.0], 7), ([np.nan, 1.0], 1),
                                            ([np.inf, -np.inf], 0)])
def test_a_record_outside_the_domain_is_removed(row, label):
    """A record whose label is not declared, or with a non-finite entry, is removed
    before the SVM is trained: the same seed gives the same released model as the data
    without it, and no error (SVC refused NaN)."""
    X, y, _ = _audit_data(2)
    _same_model(_fit(X, y), _fit(np.concatenate([X, [row]]), np.append(y, label)))


def test_a_private_label_set_needs_delta_and_is_refused_before_the_data():
    """classes=None with delta 0 is refused by its parameters alone (X is not read)."""
    with pytest.raises(InvalidParameterError, match="classes"):
        DPKSVMEL().fit(object(), object())
    with pytest.raises(InvalidParameterError, match="binary"):
        DPKSVMEL(classes=[0, 1, 2]).fit(object(), object())


def test_a_released_label_set_composes_with_the_papers_claim():
    """Without classes, the labels are released (at LABEL_SHARE of epsilon) and the
    claim recorded is the paper's epsilon-DP for the rest composed with the release."""
    from privkit.algorithms._labels import LABEL_SHARE

    X, y, _ = _audit_data(40)
    m = DPKSVMEL(epsilon=20.0, delta=1e-5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(m.classes_, [0, 1])
    assert m.paper_claim_.epsilon_at(1e-5) == pytest.approx(20.0)
    assert m.guarantee_ is None
    assert LABEL_SHARE * 20.0 < 20.0


def test_with_no_released_label_predict_says_so_without_values():
    """On a handful of rows the release keeps no label: fit succeeds, and predict
    refuses with a message that depends on the released (empty) set only."""
    X, y, _ = _audit_data(2)
    m = DPKSVMEL(epsilon=1.0, delta=1e-5, random_state=0).fit(X[:6], y[:6])
    assert m.classes_.size == 0
    with pytest.raises(InvalidParameterError, match="kept none"):
        m.predict(X[:2])


def test_more_than_two_released_labels_is_a_clear_error():
    X, y, _ = _audit_data(40)
    y3 = np.arange(len(y)) % 3
    with pytest.raises(InvalidParameterError, match="Only binary") as info:
        DPKSVMEL(epsilon=30.0, delta=1e-5, random_state=0).fit(X, y3)
    assert "0." not in str(info.value)


def test_budget_filter_is_refused_there_is_no_guarantee_to_spend():
    from privkit import BudgetFilter

    X, y, _ = _audit_data(2)
    with pytest.raises(InvalidParameterError, match="nothing to spend"):
        DPKSVMEL(classes=[0, 1]).fit(X, y, budget_filter=BudgetFilter(epsilon=5.0))


@pytest.mark.parametrize("query", [[[np.nan, 0.0]], [[0.0, np.inf]], [[0.0, 0.0, 0.0]]])
def test_predict_refuses_bad_query_rows(query):
    """It predicted a class for a non-finite row."""
    X, y, _ = _audit_data(2)
    with pytest.raises(ValueError, match=r"NaN|infinity|features"):
        _fit(X, y).predict(np.array(query))


def test_transcript_case_claims_the_papers_guarantee():
    for declare in (True, False):
        case = DPKSVMEL.transcript_case(declare_classes=declare)
        assert case.claim == "paper"
        fitted = case.estimator.set_params(random_state=0).fit(case.X, case.y)
        assert fitted.paper_claim_.epsilon_at(case.delta) == pytest.approx(case.epsilon)
        assert fitted.predict(case.probes).shape == (len(case.probes),)


def test_corrected_with_a_private_label_set_is_private_end_to_end():
    """Without classes, the label set is released at LABEL_SHARE of epsilon and at
    delta; the stage stays pure (Laplace DPLloyd, output perturbation) at the rest, so
    the whole model, classes_ included, is (epsilon, delta)-DP; with delta 0 it is
    refused before the data are read."""
    from privkit.mechanisms import Laplace

    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(400, 4))
    y = (np.sum(X ** 2, axis=1) > 1.3).astype(int)
    m = DPKSVMELCorrected(8, epsilon=5.0, delta=1e-6, data_radius=2.0,
                          random_state=0).fit(X, y)
    np.testing.assert_array_equal(m.classes_, [0, 1])
    assert m.guarantee_.epsilon_at(1e-6) == pytest.approx(5.0, rel=1e-3)
    assert m.ledger_.compare(m.plan_).matches
    assert isinstance(m.kmeans_.iteration_blocks(4)[0], Laplace)
    with pytest.raises(InvalidParameterError, match="classes"):
        DPKSVMELCorrected().fit(object(), object())
