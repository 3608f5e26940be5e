"""Dense multiplicative weights for constraint-private LPs (Hsu, Roth, Roughgarden, Ullman
2014, "Privately solving linear programs"): projection, parameters, sensitivity,
calibration against privkit's accountants, ledger, and the solver against HiGHS."""

import math

import numpy as np
import pytest

from privkit import Repeat, tightest
from privkit.algorithms.lp.private_lp import (
    calibrate_step_epsilon,
    dense_projection,
    dmw_iterations,
    score_sensitivity,
    solve_private_lp,
    step_mechanism,
)
from privkit.errors import InvalidParameterError
from privkit.mechanisms import Exponential


def zeta_by_root(z, s):
    """Independent value: solve sum_i min(1, zeta z_i) = s for zeta with scipy's brentq."""
    from scipy.optimize import brentq

    zeta = brentq(lambda t: np.minimum(1.0, t * z).sum() - s, 0.0, s / z.min() + 1.0,
                  xtol=1e-15, rtol=1e-15)
    return np.minimum(1.0, zeta * z) / s


class TestDenseProjection:
    @pytest.mark.parametrize("seed", range(5))
    def test_matches_root_finding(self, seed):
        """The sorting solution equals the root of sum min(1, zeta z) = s (thesis Def. 2.4)."""
        rng = np.random.default_rng(seed)
        z = rng.exponential(size=50) ** 3
        s = rng.uniform(1.0, 50.0)
        p = dense_projection(z, s)
        np.testing.assert_allclose(p, zeta_by_root(z, s), rtol=1e-9, atol=1e-15)
        assert abs(p.sum() - 1.0) < 1e-12
        assert p.max() <= 1.0 / s * (1 + 1e-12)

    def test_scale_invariant_and_uniform_at_full_density(self):
        """Rescaling the weights changes nothing; with s = n every entry is 1/n."""
        z = np.array([0.1, 3.0, 2.0, 0.5])
        np.testing.assert_allclose(dense_projection(z, 2.0), dense_projection(7.0 * z, 2.0))
        np.testing.assert_allclose(dense_projection(z, 4.0), np.full(4, 0.25))

    @pytest.mark.parametrize("seed", range(20))
    def test_one_changed_weight_moves_projection_by_at_most_2_over_s(self, seed):
        """Hsu et al. Lemma 3.5: ||Pz - Pz'||_1 <= 2/s for z, z' differing in one entry;
        and the other entries all move the same way (the fact behind the 2 OPT / s bound
        of the slack score's change noted in LPSVMClassifier)."""
        rng = np.random.default_rng(seed)
        z = rng.exponential(size=30) ** 2
        other = z.copy()
        other[3] = rng.exponential() * 10 ** rng.uniform(-3, 3)
        s = rng.uniform(1.0, 30.0)
        p, q = dense_projection(z, s), dense_projection(other, s)
        assert np.abs(p - q).sum() <= 2.0 / s + 1e-12
        rest = np.delete(q - p, 3)
        assert np.all(rest >= -1e-15) or np.all(rest <= 1e-15)

    @pytest.mark.parametrize(("weights", "density", "fragment"), [
        ([1.0, -1.0], 1.0, "positive finite weights"),
        ([], 1.0, "non-empty"),
        ([1.0, 2.0], 3.0, "at most the number of weights (2)"),
        ([1.0, 2.0], 0.0, "density"),
    ])
    def test_invalid(self, weights, density, fragment):
        with pytest.raises(InvalidParameterError, match=fragment.replace("(", r"\(")
                           .replace(")", r"\)")):
            dense_projection(weights, density)


def test_iterations_hand_computed():
    """T = ceil(36 rho^2 ln(n) / alpha^2), eta = sqrt(ln(n) / T) (thesis Algorithm 3):
    n = 40,000, rho = 43, alpha = 200: 36 * 1849 * 10.596635 / 40000 = 17.634 -> 18,
    eta = sqrt(10.596635 / 18) = 0.767269."""
    steps, eta = dmw_iterations(40_000, width=43.0, accuracy=200.0)
    assert steps == 18
    assert eta == pytest.approx(0.767269, abs=1e-6)
    assert dmw_iterations(10, width=0.1, accuracy=100.0)[0] == 1


def test_score_sensitivities():
    """The tight bounds 2 OPT a / (s c_min) and 1 / s (thesis eq. 12 and 14 are 3/2 and 2
    times them; tests/algorithms/test_score_sensitivity.py enumerates)."""
    assert score_sensitivity("slack", density=300.0, optimum=42.0) == pytest.approx(0.28)
    assert score_sensitivity("slack", density=300.0, optimum=42.0, entry_bound=2.0,
                             min_cost=4.0) == pytest.approx(0.14)
    assert score_sensitivity("count", density=300.0) == pytest.approx(1.0 / 300.0)
    with pytest.raises(InvalidParameterError, match="'slack' or 'count'"):
        score_sensitivity("hinge", density=3.0)


@pytest.mark.parametrize("score", ["slack", "count"])
def test_declared_sensitivity_bounds_the_score_change(score):
    """Replacing one constraint (same history, so the raw weights differ in that row only)
    moves no candidate's score by more than the declared sensitivity; random pairs."""
    rng = np.random.default_rng(1)
    n, d, s, opt = 12, 3, 5.0, 2.0
    declared = score_sensitivity(score, density=s, optimum=opt)
    worst = 0.0
    for _ in range(300):
        A = rng.uniform(-1, 1, size=(n, d))
        b = -np.ones(n)
        A2 = A.copy()
        A2[0] = rng.uniform(-1, 1, size=d)
        z = rng.exponential(size=n)
        z2 = z.copy()
        z2[0] = rng.exponential() * 10 ** rng.uniform(-2, 2)
        p, q = dense_projection(z, s), dense_projection(z2, s)
        if score == "slack":
            u, v = -(p @ A) * opt, -(q @ A2) * opt
        else:
            u, v = p @ (A * opt <= b[:, None]), q @ (A2 * opt <= b[:, None])
        worst = max(worst, float(np.abs(u - v).max()))
    assert 0.0 < worst <= declared * (1 + 1e-12)  # the bound is attained (to rounding)


class TestCalibration:
    @pytest.mark.parametrize(("steps", "eps"), [(1, 1.0), (25, 0.5), (400, 2.0)])
    def test_spends_exactly_the_budget(self, steps, eps):
        """privkit's tightest accountant (all of them) certifies the calibrated T steps at
        the budget to 1e-6, and a step 1e-4 larger exceeds it (both sides)."""
        delta = 1e-5
        step = calibrate_step_epsilon(epsilon=eps, delta=delta, n_iterations=steps,
                                          sensitivity=0.3)
        spent = tightest(Repeat(step_mechanism(step, 0.3), steps), delta=delta).epsilon
        assert eps * (1 - 1e-6) <= spent <= eps
        over = tightest(Repeat(step_mechanism(step * 1.0001, 0.3), steps), delta=delta).epsilon
        assert over > eps

    def test_far_above_the_papers_step(self):
        """At 400 steps, delta 1e-5, bounded-range accounting allows a per-step epsilon
        several times the thesis's eps / sqrt(8 T log(1/delta))."""
        ours = calibrate_step_epsilon(epsilon=1.0, delta=1e-5, n_iterations=400)
        paper = 1.0 / math.sqrt(8 * 400 * math.log(1e5))
        assert ours > 3.0 * paper

    def test_with_prefix(self):
        """With a prefix block the whole plan spends the budget."""
        from privkit import Neighbouring, Sequential
        from privkit.mechanisms import Laplace

        prefix = Laplace.for_epsilon(0.5, sensitivity=1.0, relation=Neighbouring.REPLACE_ONE)
        step = calibrate_step_epsilon(epsilon=1.0, delta=1e-5, n_iterations=10, prefix=prefix)
        spent = tightest(Sequential(prefix, Repeat(step_mechanism(step, 1.0), 10)),
                         delta=1e-5).epsilon
        assert 1.0 * (1 - 1e-6) <= spent <= 1.0
        with pytest.raises(InvalidParameterError, match="prefix"):
            calibrate_step_epsilon(epsilon=0.4, delta=1e-5, n_iterations=10, prefix=prefix)


def covering_lp(n=400, d=4, seed=0):
    """Constraints -A_i x <= -1 with A_i >= 0 (fractional covering), costs 1."""
    rng = np.random.default_rng(seed)
    A = -rng.uniform(0.0, 1.0, size=(n, d))
    return A, -np.ones(n), np.ones(d)


@pytest.mark.slow
def test_non_private_solver_meets_hsu_guarantee_at_highs_optimum():
    """With OPT from HiGHS, the non-private DMW output has c.x = OPT and violates at
    most s constraints by more than alpha (Hsu et al. 2014, Section 3.1)."""
    from scipy.optimize import linprog

    A, b, c = covering_lp()
    reference = linprog(c, A_ub=A, b_ub=b, bounds=(0, None), method="highs")
    assert reference.status == 0
    opt, alpha, s = reference.fun, 0.5, 40.0
    result, plan, ledger = solve_private_lp(A, b, c, optimum=opt, entry_bound=1.0,
                                            b_bound=1.0, density=s, accuracy=alpha,
                                            epsilon=None)
    assert plan is None
    assert not ledger.entries
    assert c @ result.x == pytest.approx(opt)
    assert np.sum(A @ result.x > b + alpha) <= s


def test_private_solver_ledger_and_plan():
    """Each of the T steps is an Exponential release recorded in the ledger; the plan is
    Repeat(Exponential, T); the T steps spend exactly the budget."""
    A, b, c = covering_lp(n=200)
    result, plan, ledger = solve_private_lp(A, b, c, optimum=3.0, entry_bound=1.0,
                                            b_bound=1.0, density=100.0, accuracy=1.0,
                                            epsilon=1.0, delta=1e-5, rng=3)
    assert isinstance(plan, Repeat)
    assert isinstance(plan.block, Exponential)
    assert plan.count == result.n_iterations == dmw_iterations(200, width=4.0,
                                                               accuracy=1.0)[0]
    assert ledger.compare(plan).matches
    assert tightest(plan, delta=1e-5).epsilon == pytest.approx(1.0, rel=1e-6)
    assert c @ result.x == pytest.approx(3.0)


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"c": np.array([1.0, 0.0])}, "positive finite array"),
    ({"b": np.ones(2)}, "shape \\(3,\\)"),
    ({"A": np.ones(3)}, "2-D array with at least 2 rows"),
    ({"density": 5.0}, "at most the number of constraints"),
    ({"score": "hinge"}, "'slack' or 'count'"),
    ({"optimum": -1.0}, "optimum"),
])
def test_solver_invalid_arguments(kwargs, fragment):
    args = {"A": -np.ones((3, 2)) / 2, "b": -np.ones(3), "c": np.ones(2), "optimum": 1.0,
            "entry_bound": 1.0, "b_bound": 1.0, "density": 2.0, "accuracy": 1.0,
            "epsilon": 1.0, "delta": 1e-5}
    args.update(kwargs)
    A, b, c = args.pop("A"), args.pop("b"), args.pop("c")
    with pytest.raises(InvalidParameterError, match=fragment):
        solve_private_lp(A, b, c, **args)


def test_constraints_beyond_the_bounds_are_clipped_and_non_finite_ones_neutral():
    """Private constraints are never refused by value: entries beyond entry_bound and
    b_bound are clipped onto them, and a constraint with a NaN or an infinity becomes
    0 . x <= b_bound; the run (same seed) is then that of the mapped LP, with no warning."""
    import warnings

    rng = np.random.default_rng(3)
    A = -np.abs(rng.uniform(size=(40, 3)))
    b = np.full(40, -0.5)
    wild_A, wild_b = A.copy(), b.copy()
    wild_A[0] = [-7.0, 0.5, 1e300]
    wild_b[1] = -9.0
    wild_A[2, 1] = np.nan
    wild_b[3] = np.inf
    mapped_A, mapped_b = A.copy(), b.copy()
    mapped_A[0] = [-1.0, 0.5, 1.0]
    mapped_b[1] = -1.0
    mapped_A[2], mapped_b[2] = 0.0, 1.0
    mapped_A[3], mapped_b[3] = 0.0, 1.0
    args = {"optimum": 3.0, "entry_bound": 1.0, "b_bound": 1.0, "density": 20.0,
            "accuracy": 2.0, "epsilon": 1.0, "delta": 1e-5, "n_iterations": 5}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wild, _, _ = solve_private_lp(wild_A, wild_b, np.ones(3), rng=0, **args)
    mapped, _, _ = solve_private_lp(mapped_A, mapped_b, np.ones(3), rng=0, **args)
    np.testing.assert_array_equal(wild.choices, mapped.choices)
    assert np.isnan(wild_A[2, 1])  # the caller's arrays are not modified
