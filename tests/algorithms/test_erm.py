"""Output and objective perturbation: solver, plan, ledger, sensitivity, audit."""

import math

import numpy as np
import pytest

from privkit import PureDP, Repeat
from privkit.algorithms import (
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    solve_erm,
)
from privkit.algorithms._losses import MarginLoss
from privkit.audits import check_sensitivity
from privkit.mechanisms import L2Laplace, ObjectivePerturbation
from privkit.neighbouring import Neighbouring, Norm, Sensitivity


def data(n=300, d=4, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    y = np.argmax(X[:, :classes], axis=1) if classes > 2 else (X[:, 0] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("loss", ["huber", "logistic"])
def test_solver_agrees_with_cvxpy(loss):
    """L-BFGS reaches cvxpy's minimiser to solver tolerance (Huber as in seed 003 eq. 3,
    written for cvxpy as min_v v + pos(1 - z + h - v)^2 / 4h, v >= 0)."""
    import cvxpy as cp

    X, y01 = data(n=120, d=3)
    y = 2.0 * y01 - 1.0
    lam, h = 0.05, 0.5
    b = np.array([0.01, -0.02, 0.005])
    ours = solve_erm(X, y, MarginLoss(loss, h), lam, linear=b)
    w = cp.Variable(3)
    z = cp.multiply(y, X @ w)
    if loss == "logistic":
        total = cp.sum(cp.logistic(-z))
        constraints = []
    else:
        v = cp.Variable(len(y))
        total = cp.sum(v + cp.square(cp.pos(1 - z + h - v)) / (4 * h))
        constraints = [v >= 0]
    problem = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(w) + total / len(y) + b @ w),
                         constraints)
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    np.testing.assert_allclose(ours, w.value, atol=1e-5)


@pytest.mark.parametrize("cls", [OutputPerturbationClassifier, ObjectivePerturbationClassifier])
@pytest.mark.parametrize("classes", [2, 3])
def test_ledger_equals_plan_and_guarantee_is_accounted(cls, classes):
    """The ledger of what ran equals the declared plan, before and after fitting; the
    multi-class budget is split evenly and composes back to epsilon."""
    X, y = data(classes=classes)
    clf = cls(epsilon=1.5, random_state=0)
    declared = clf.plan(n_samples=X.shape[0], n_features=X.shape[1], n_classes=classes)
    clf.fit(X, y)
    assert clf.ledger_.compare(declared).matches
    assert clf.plan_ == declared
    assert clf.guarantee_.epsilon == pytest.approx(1.5, rel=1e-12)
    assert clf.paper_claim_ == PureDP(epsilon=1.5)
    if classes > 2:
        assert isinstance(declared, Repeat)
        assert declared.count == classes


def test_output_perturbation_block_is_the_papers_noise():
    """beta = n Lambda eps / 2 (seed 003 Algorithm 1), i.e. scale 2 / (n Lambda eps)."""
    block = OutputPerturbationClassifier(epsilon=0.5, regularization=0.01).plan(
        n_samples=1000, n_features=5)
    assert isinstance(block, L2Laplace)
    assert block.noise_scale == pytest.approx(2.0 / (1000 * 0.01 * 0.5))


@pytest.mark.parametrize(("eps", "branch"), [(2.0, "no Delta"), (0.05, "Delta")])
def test_objective_perturbation_calibration_branches(eps, branch):
    """Both branches of seed 003 Algorithm 2 give exactly epsilon (Chaudhuri Thm 9)."""
    block = ObjectivePerturbation.for_epsilon(eps, curvature=1.0, n_samples=100,
                                              regularization=0.01)
    assert (block.extra_regularization > 0) == (branch == "Delta")
    assert block.epsilon_at(0.0) == pytest.approx(eps, rel=1e-12)


def test_minimiser_sensitivity_is_as_declared():
    """The L2 sensitivity 2/(n Lambda) of the regularised minimiser under REPLACE_ONE
    (Chaudhuri et al. 2011, Corollary 8) survives a search over neighbouring datasets
    of rows (x, y) with ||x|| <= 1 and |y| <= 1, and the search gets within a factor
    3 of it (the declaration is not vacuous)."""
    n, lam, d = 8, 0.5, 2
    declared = Sensitivity(value=2.0 / (n * lam), norm=Norm.L2,
                           relation=Neighbouring.REPLACE_ONE)

    def minimiser(rows):
        return solve_erm(rows[:, :d], rows[:, d], MarginLoss("huber"), lam)

    bound = 1 / math.sqrt(d)
    result = check_sensitivity(minimiser, declared, record_low=[-bound, -bound, -1.0],
                               record_high=[bound, bound, 1.0], n_records=n, trials=300,
                               search_examples=100, rng=0)
    assert not result.violation
    assert result.largest > declared.value / 3


def test_rows_beyond_the_bound_are_clipped_or_refused():
    """clip=False refuses a row beyond row_norm_bound; clip=True fits."""
    X, y = data()
    X[0] *= 10
    with pytest.raises(ValueError, match=r"rows of norm at most row_norm_bound=1\.0"):
        OutputPerturbationClassifier(clip=False).fit(X, y)
    OutputPerturbationClassifier(clip=True, random_state=0).fit(X, y)


def test_invalid_parameters_are_refused_at_fit():
    """Parameters are checked in fit (scikit-learn convention), naming them."""
    X, y = data()
    with pytest.raises(ValueError, match="`loss` must be 'huber' or 'logistic'"):
        OutputPerturbationClassifier(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="`epsilon` must be a finite number > 0"):
        ObjectivePerturbationClassifier(epsilon=0).fit(X, y)


@pytest.mark.statistical
@pytest.mark.parametrize("name", ["output_perturbation", "objective_perturbation"])
def test_audited_bound_does_not_exceed_guarantee(name):
    """On a worst-case-style pair (one row flipped), the audited lower bound does not
    exceed the privkit guarantee (false-failure rate at most 5%, seeded)."""
    from privkit.audits import audit
    from privkit.audits.registry import CASES

    case = CASES[name](1.0)
    trials = 200_000 if name == "output_perturbation" else 3_000
    result = audit(case.system, case.pair, epsilon=case.epsilon, trials=trials, rng=5)
    assert result.verdict != "violation"
    assert result.lower_bound <= case.epsilon
