"""DPKSVMEL: the faithful algorithm, privkit's verdict on Theorem 1, and the variant."""

import math

import numpy as np
import pytest

from privkit.algorithms.dpksvmel import DPKSVMEL, DPKSVMELCorrected, _audit_data, audit_case
from privkit.errors import InvalidParameterError


def test_faithful_has_no_certified_guarantee_and_keeps_the_claim():
    X, y, _ = _audit_data(2)
    m = DPKSVMEL(epsilon=1.0, k=2, lls=0.5, random_state=0).fit(X, y)
    assert m.guarantee_ is None
    assert m.paper_claim_.epsilon == 1.0
    assert set(m.branch_) <= {"exponential", "laplace"}


def test_groups_follow_eq7():
    """Each non-SV's group is the SV of largest y_i y_j K(x_i, x_j), or -1 below LLs:
    checked by a direct loop."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    m = DPKSVMEL(lls=0.6, random_state=0).fit(X, y)
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
    m = DPKSVMEL(epsilon=1.0, k=2, lls=0.5, random_state=0).fit(X, y)
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

    case = audit_case(1.0)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=3000, rng=0)
    assert result.lower_bound > 3.0


def test_corrected_is_pure_dp_and_accounted():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(400, 4))
    y = (np.sum(X ** 2, axis=1) > 1.3).astype(int)
    m = DPKSVMELCorrected(8, epsilon=1.0, data_radius=2.0, random_state=0).fit(X, y)
    assert m.guarantee_.epsilon_at(0.0) == pytest.approx(1.0)
    assert m.paper_claim_.epsilon == 1.0
    assert m.ledger_.compare(m.plan_).matches


@pytest.mark.parametrize(("params", "fragment"), [
    ({"epsilon": 0.0}, "epsilon"), ({"k": 0}, "k"), ({"lls": 1.0}, "lls"),
])
def test_invalid_parameters(params, fragment):
    X, y, _ = _audit_data(2)
    with pytest.raises(InvalidParameterError, match=fragment):
        DPKSVMEL(**params).fit(X, y)
