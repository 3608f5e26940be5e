"""The LP-SVM by private dense multiplicative weights (van der Reijden 2019, Algorithm 3):
the LP against HiGHS and cvxpy, the thesis's parameters by hand, the accounting of both
modes against privkit's accountants, the plan and ledger, and the audit case."""

import math

import numpy as np
import pytest

from privkit import ApproxDP, BasicAccountant, Repeat, Sequential, tightest
from privkit.algorithms.lp.audit_cases import audit_case
from privkit.algorithms.lp.lp_svm import (
    LPSVMClassifier,
    hard_margin_lp,
    paper_step_epsilon,
    soft_margin_lp,
    solve_lp_svm,
)
from privkit.composition import reijden_composition_epsilon
from privkit.errors import InvalidParameterError
from privkit.mechanisms import Exponential, L2Laplace, ObjectivePerturbation


def data(n=1500, d=3, seed=0, noise=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.3 * X[:, 1] + noise * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_highs_lp_matches_cvxpy_hinge_form():
    """HiGHS on eq. 4-5 reaches the optimum of the equivalent unconstrained problem
    ||w||_1 + C sum max(0, 1 - y x.w), solved independently by cvxpy."""
    import cvxpy as cp

    X, y01 = data(n=80, noise=0.5)
    y = 2.0 * y01 - 1.0
    w, opt = solve_lp_svm(X, y, C=0.7)
    v = cp.Variable(3)
    problem = cp.Problem(cp.Minimize(cp.norm1(v) + 0.7 * cp.sum(cp.pos(1 - cp.multiply(y, X @ v)))))
    problem.solve()
    assert opt == pytest.approx(problem.value, rel=1e-6)
    hinge = np.maximum(0, 1 - y * (X @ w)).sum()
    assert np.abs(w).sum() + 0.7 * hinge == pytest.approx(opt, rel=1e-9)


def test_lp_matrices():
    """Eq. 5: A = -[diag(y) X, -diag(y) X, I], b = -1, c = [1, C]; the hard-margin LP
    (section 2.5) drops xi, so A x <= b iff y_i x_i.w >= 1 for x = [w+, w-]."""
    X, y01 = data(n=6)
    y = 2.0 * y01 - 1.0
    A, b, c = soft_margin_lp(X, y, C=2.0)
    assert A.shape == (6, 12)
    assert np.all(b == -1)
    assert np.all(c[6:] == 2.0)
    np.testing.assert_allclose(A[:, 6:], -np.eye(6))
    H, hb, hc = hard_margin_lp(X, y)
    w = np.array([1.5, -2.0, 0.5])
    x = np.concatenate([np.maximum(w, 0), np.maximum(-w, 0)])
    np.testing.assert_array_equal(H @ x <= hb, y * (X @ w) >= 1)
    assert np.all(hc == 1)


def test_paper_step_epsilon_value():
    """eps' = eps / sqrt(8 T log(1/delta)): 1 / sqrt(800 ln 1e5) = 0.0104198, the inverse
    of the thesis's Theorem 1 (reijden_composition_epsilon)."""
    step = paper_step_epsilon(epsilon=1.0, n_iterations=100, delta=1e-5)
    assert step == pytest.approx(1.0 / math.sqrt(800 * 11.512925465), rel=1e-9)
    assert step == pytest.approx(0.0104198, rel=1e-5)
    assert reijden_composition_epsilon(epsilon=step, count=100, delta=1e-5) == pytest.approx(1.0)


@pytest.fixture(scope="module")
def fitted():
    X, y = data()
    return X, y, {
        "privkit": LPSVMClassifier(classes=[0, 1], epsilon=1.0, random_state=0).fit(X, y),
        "paper": LPSVMClassifier(classes=[0, 1], epsilon=1.0, accounting="paper",
                                 random_state=0).fit(X, y),
        "count": LPSVMClassifier(classes=[0, 1], epsilon=1.0, quality="count",
                                 random_state=0).fit(X, y),
    }


def test_thesis_parameters_by_hand(fitted):
    """T = ceil(36 (OPT+1)^2 ln n / 200^2), eta = sqrt(ln n / T), s = 3n/4, Delta = 2 OPT/s
    or 1/s (the tight bounds; the thesis's eq. 12 and 14, 3 OPT/s and 2/s, in the paper's
    run), delta = 1/n;
    OPT = ||w_obj||_1."""
    X, _, models = fitted
    n = len(X)
    for name, m in models.items():
        T = max(1, math.ceil(36 * (m.opt_ + 1) ** 2 * math.log(n) / 200 ** 2))
        assert m.n_iterations_ == T
        assert m.learning_rate_ == pytest.approx(math.sqrt(math.log(n) / T))
        assert m.density_ == pytest.approx(0.75 * n)
        assert m.delta_ == pytest.approx(1.0 / n)
        # the paper's run calibrates to the thesis's eq. 12 (3 OPT / s)
        expected = (1 / (0.75 * n) if name == "count" else
                    (3 if name == "paper" else 2) * m.opt_ / (0.75 * n))
        assert m.score_sensitivity_ == pytest.approx(expected)
        w = m.plan_.children[0]  # Algorithm 2: objective perturbation, then the
        assert isinstance(w, Sequential)  # noise covering the solver's residue
        assert isinstance(w.steps[0], ObjectivePerturbation)
        assert isinstance(w.steps[1], L2Laplace)


def test_privkit_accounting_spends_exactly_the_total(fitted):
    """Algorithm 2 gets half; the T steps are certified by the tightest accountant at the
    rest (to 1e-6); guarantee_ is (epsilon, delta); the ledger matches the plan."""
    _, _, models = fitted
    m = models["privkit"]
    first, steps = m.plan_.children
    assert isinstance(steps, Repeat)
    assert isinstance(steps.block, Exponential)
    assert steps.count == m.n_iterations_
    assert steps.block.pure_epsilon == pytest.approx(m.step_epsilon_)
    assert tightest(first, delta=0.0).epsilon == pytest.approx(0.5)
    stage = tightest(steps, delta=m.delta_).epsilon
    assert 0.5 * (1 - 1e-6) <= stage <= 0.5
    assert m.guarantee_.epsilon == pytest.approx(1.0, rel=1e-6)
    assert m.guarantee_.epsilon <= 1.0
    assert m.guarantee_.delta == pytest.approx(m.delta_)
    assert m.ledger_.compare(m.plan_).matches
    assert m.paper_claim_ == ApproxDP(epsilon=1.0, delta=m.delta_)


def test_paper_accounting_and_its_real_cost(fitted):
    """The paper's eps' is used; Algorithm 2 runs at the full epsilon; privkit's guarantee
    is epsilon + what the steps really cost, so the paper's claim does not hold."""
    _, _, models = fitted
    m = models["paper"]
    paper = paper_step_epsilon(epsilon=1.0, n_iterations=m.n_iterations_, delta=m.delta_)
    assert m.step_epsilon_ == pytest.approx(paper)
    first, steps = m.plan_.children
    assert tightest(first, delta=0.0).epsilon == pytest.approx(1.0)
    stage = tightest(steps, delta=m.delta_).epsilon
    assert m.guarantee_.epsilon == pytest.approx(1.0 + stage)
    assert stage < 1.0
    assert not m.guarantee_.within(m.paper_claim_)
    assert m.ledger_.compare(m.plan_).matches


def test_privkit_step_is_larger_than_papers(fitted):
    """At the same T and the same budget for the steps, privkit's per-step epsilon is
    larger than the thesis's (bounded-range composition)."""
    _, _, models = fitted
    m = models["privkit"]
    from privkit.algorithms.lp.private_lp import calibrate_step_epsilon

    ours = calibrate_step_epsilon(epsilon=1.0, delta=m.delta_, n_iterations=m.n_iterations_)
    assert ours > paper_step_epsilon(epsilon=1.0, n_iterations=m.n_iterations_,
                                                    delta=m.delta_)


def test_pre_data_plan_guarantee_equals_fit(fitted):
    """plan() before data composes (basic) to the same total as guarantee_."""
    X, _, models = fitted
    for name in ("privkit", "paper"):
        m = models[name]
        pre = m.plan(n_samples=len(X), n_features=X.shape[1])
        assert BasicAccountant().epsilon(pre, delta=m.delta_) >= m.guarantee_.epsilon - 1e-9
    pre = models["privkit"].plan(n_samples=len(X), n_features=X.shape[1])
    assert BasicAccountant().epsilon(pre, delta=1 / len(X)) == pytest.approx(1.0)


def test_public_iterations_use_the_whole_plan():
    """With a public T, the tightest accountant on the whole plan (Algorithm 2 included)
    spends exactly the budget, and the pre-data plan has the same guarantee."""
    X, y = data(n=800)
    m = LPSVMClassifier(classes=[0, 1], epsilon=1.0, delta=1e-5, n_iterations=20,
                        random_state=1).fit(X, y)
    assert m.n_iterations_ == 20
    assert 1.0 * (1 - 1e-6) <= tightest(m.plan_, delta=1e-5).epsilon <= 1.0
    assert m.guarantee_.epsilon == pytest.approx(1.0, rel=1e-6)
    pre = m.plan(n_samples=800, n_features=3)
    assert tightest(pre, delta=1e-5).epsilon == pytest.approx(1.0, rel=1e-6)


def test_max_iterations_caps_T():
    X, y = data(n=800)
    m = LPSVMClassifier(classes=[0, 1], epsilon=0.05, delta=1e-5, accuracy=1.0,
                        max_iterations=7, random_state=0).fit(X, y)
    assert m.n_iterations_ == 7
    assert m.ledger_.compare(m.plan_).matches


def test_non_private_reference_classifies():
    """epsilon=None: argmax instead of the exponential mechanism, no guarantee; on
    separable data the averaged vertex model beats the majority class clearly."""
    X, y = data(n=1500)
    m = LPSVMClassifier(classes=[0, 1], epsilon=None).fit(X, y)
    assert m.guarantee_ is None
    assert m.plan_ is None
    assert not m.ledger_.entries
    assert m.score(X, y) > 0.8
    assert np.abs(m.coef_).sum() == pytest.approx(m.opt_)


@pytest.mark.parametrize(("params", "fragment"), [
    ({"epsilon": -1.0}, "epsilon"),
    ({"density": 1.5}, r"\(0, 1\]"),
    ({"quality": "hinge"}, "'slack' or 'count'"),
    ({"accounting": "basic"}, "'privkit' or 'paper'"),
    ({"opt_share": 1.0}, "opt_share"),
    ({"delta": 1.0}, "delta"),
    ({"n_iterations": 0}, "n_iterations"),
    ({"classes": [1]}, "at least 2 distinct labels"),
])
def test_invalid_parameters(params, fragment):
    X, y = data(n=50)
    with pytest.raises(InvalidParameterError, match=fragment):
        LPSVMClassifier(**params).fit(X, y)


def test_rejects_more_than_two_classes():
    """The LP-SVM is binary: a declared label set of 3 is refused before any data is
    read; the non-private reference, which reads its labels off the data, refuses 3."""
    X, _ = data(n=30)
    with pytest.raises(InvalidParameterError, match="exactly 2 labels"):
        LPSVMClassifier(classes=[0, 1, 2]).fit(X, np.arange(30) % 3)
    with pytest.raises(InvalidParameterError, match=r"the label set is \[0, 1, 2\]"):
        LPSVMClassifier(epsilon=None).fit(X, np.arange(30) % 3)


@pytest.mark.statistical
def test_audit_case_certifies_a_nonzero_bound_within_the_claim():
    """The registered audit case finds a positive lower bound at most the claim
    (200,000 draws a side, seed 0; the bound is a 95% Clopper-Pearson bound, so a false
    'violation' has probability below 5%)."""
    from privkit.audits import audit

    case = audit_case(epsilon=2.0, delta=1e-5)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=200_000, rng=0)
    assert 0.0 < result.lower_bound <= case.epsilon


def test_paper_accounting_runs_the_theses_sensitivities(fitted):
    """Like for like: ``accounting="paper"`` calibrates each step to eq. 12 (slack,
    3 OPT / s) or eq. 14 (count, 2 / s), not privkit's tight 2 OPT / s and 1 / s."""
    from privkit.algorithms.lp.lp_svm import paper_score_sensitivity

    _, _, models = fitted
    m = models["paper"]
    assert m.score_sensitivity_ == pytest.approx(3.0 * m.opt_ / m.density_, rel=1e-12)
    assert paper_score_sensitivity("count", density=4.0, optimum=9.0) == 0.5
    assert paper_score_sensitivity("slack", density=4.0, optimum=2.0) == 1.5
    ours = models["privkit"]
    assert ours.score_sensitivity_ == pytest.approx(2.0 * ours.opt_ / ours.density_, rel=1e-12)
