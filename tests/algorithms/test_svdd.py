"""SVDD on random features and private SVDD (Park 2022, section 4)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privkit.algorithms.svdd._svdd_dual as svdd_module
from privkit.algorithms.kernels.random_features import RandomFourierFeatures
from privkit.algorithms.svdd._svdd_dual import (
    _capped_min_norm,
    _kkt_solve,
    _project_capped_simplex,
    _Warm,
)
from privkit.algorithms.svdd.svdd import (
    PrivateSVDD,
    centre_sensitivity,
    laplace_loss,
    svdd_centre,
    worst_case_rows,
)
from privkit.errors import InvalidParameterError
from privkit.neighbouring import Neighbouring, Norm


@pytest.mark.parametrize(("n", "nu", "seed"), [(30, 0.1, 0), (80, 0.05, 1), (40, 0.025, 2),
                                               (12, 0.5, 3)])
def test_centre_agrees_with_cvxpy(n, nu, seed):
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X[: n // 3] += 3
    P = RandomFourierFeatures(40, 1.0, random_state=seed).fit_transform(X)
    ours = svdd_centre(P, nu)
    b = cp.Variable(n)
    # the dual (4.2) as written, with its linear term sum_j beta_j K(x_j, x_j)
    K = P @ P.T
    obj = cp.Maximize(np.diag(K) @ b - cp.sum_squares(P.T @ b))
    cp.Problem(obj, [b >= 0, b <= nu, cp.sum(b) == 1]).solve(solver=cp.CLARABEL)
    assert np.abs(P.T @ b.value - ours.centre).max() < 1e-5
    assert ours.gap <= 1e-8


def _exact(P, nu):
    """The exact working-set solve on all rows of P, from a cold start."""
    f = P.shape[1]
    solved = _capped_min_norm(P @ P.T, nu, _Warm.cold(P.shape[0], np.empty((f + 2, f + 2))))
    assert solved is not None
    return solved


def test_hull_min_norm_is_the_closed_form_on_a_segment():
    """Two points (nu = 1: no cap): the minimum-norm point of the segment [p, q] has
    weight ``clip(q . (q - p) / ||q - p||^2, 0, 1)`` on p; both the interior and the
    clipped cases, and a duplicated point (affinely dependent rows)."""
    p, q = np.array([1.0, 2.0, 0.5]), np.array([-1.0, 1.5, 0.0])
    for a, b in ((p, q), (p, p + 3.0), (p + 3.0, p)):
        lam = _exact(np.stack([a, b, b]), 1.0)
        t = float(np.clip(b @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0))
        assert lam[0] == pytest.approx(t, abs=1e-12)
        assert lam.sum() == pytest.approx(1.0, abs=1e-14)


def test_capped_min_norm_matches_cvxpy_with_the_cap_binding():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(5)
    P = rng.normal(size=(25, 6)) + np.array([2.0, 0, 0, 0, 0, 0])
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    nu = 0.07
    ours = _exact(P, nu)
    b = cp.Variable(25)
    cp.Problem(cp.Minimize(cp.sum_squares(P.T @ b)),
               [b >= 0, b <= nu, cp.sum(b) == 1]).solve(solver=cp.CLARABEL)
    assert np.count_nonzero(ours >= nu * (1 - 1e-9)) >= 3  # the cap binds
    assert np.abs(P.T @ ours - P.T @ b.value).max() < 1e-6


def _nnls_problem(seed, m, f, duplicates):
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(m, f)) + rng.normal(size=f) * rng.uniform(0.0, 3.0)
    if duplicates:
        Q[rng.integers(m, size=m // 3)] = Q[rng.integers(m, size=m // 3)]
    E = np.vstack([Q.T, np.ones(m)])
    target = np.zeros(f + 1)
    target[f] = 1.0
    return E, target


def _run_nnls(E, start=(), start_values=None, excluded=None, max_iter=10_000):
    from privkit.algorithms._accelerators import hull

    nnls_gram = hull.nnls_gram

    f1, m = E.shape
    u = np.zeros(m) if start_values is None else start_values.copy()
    order = np.zeros(m, dtype=np.intc)
    order[:len(start)] = start
    out = np.zeros(m, dtype=np.uint8) if excluded is None else excluded.astype(np.uint8)
    k, _, converged = nnls_gram(np.ascontiguousarray(E.T @ E), u, order,
                                np.empty((f1 + 1, f1 + 1)), out, len(start), 0, max_iter,
                                1e-14, 1e-12)
    return u, order[:k], converged


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 40), f=st.integers(1, 25),
       duplicates=st.booleans(), warm=st.booleans())
def test_compiled_nnls_matches_scipy_from_any_start(seed, m, f, duplicates, warm):
    """privkit's Gram-form Lawson-Hanson reaches scipy's NNLS optimum (an independent,
    Householder-based implementation) within rounding, cold or from a random passive
    set, with duplicated columns; the answer is non-negative and positive exactly on
    the returned passive set."""
    from scipy.optimize import nnls

    E, target = _nnls_problem(seed, m, f, duplicates)
    start, values = (), None
    if warm:
        rng = np.random.default_rng(seed + 1)
        start = rng.permutation(m)[:rng.integers(0, m + 1)].astype(np.intc)
        values = np.zeros(m)
        values[start] = rng.uniform(0.1, 1.0, start.size)
    u, passive, converged = _run_nnls(E, start, values)
    reference = nnls(E, target)[0]

    def objective(v):
        return float(np.sum((E @ v - target) ** 2))

    assert converged
    assert u.min() >= 0.0
    assert set(np.flatnonzero(u > 0)) == set(passive.tolist())
    assert objective(u) <= objective(reference) + 1e-12


def test_compiled_nnls_keeps_excluded_variables_at_zero():
    """An excluded column that the unconstrained optimum uses stays at zero, and the
    answer is the optimum over the remaining columns (scipy's NNLS without it)."""
    from scipy.optimize import nnls

    E, target = _nnls_problem(3, 12, 5, False)
    full, _, _ = _run_nnls(E)
    j = int(np.argmax(full))
    excluded = np.zeros(12, dtype=bool)
    excluded[j] = True
    u, _, converged = _run_nnls(E, excluded=excluded)
    assert converged
    assert u[j] == 0.0
    reference = nnls(np.delete(E, j, axis=1), target)[0]
    assert np.allclose(np.delete(u, j), reference, atol=1e-10)


def test_compiled_nnls_reports_an_iteration_limit():
    E, _ = _nnls_problem(4, 30, 20, False)
    _, _, converged = _run_nnls(E, max_iter=3)
    assert not converged


def test_compiled_nnls_rejects_bad_shapes():
    from privkit.algorithms._accelerators import hull

    nnls_gram = hull.nnls_gram

    with pytest.raises(ValueError, match="H must be"):
        nnls_gram(np.eye(3), np.zeros(2), np.zeros(3, dtype=np.intc), np.empty((4, 4)),
                  np.zeros(3, dtype=np.uint8), 0, 0, 10, 1e-14, 1e-12)


@pytest.mark.parametrize(("nu", "seed"), [(0.02, 0), (0.2, 1)])
def test_working_set_rounds_match_cvxpy_on_a_large_set(nu, seed):
    """More rows than one working set (n > 448): the rounds, their warm starts and the
    carried-over factor reach cvxpy's optimum, with the cap binding (nu = 0.02, outliers)
    and not binding (nu = 0.2)."""
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(560, 3)), rng.normal(size=(40, 3)) * 4.0])
    P = RandomFourierFeatures(30, 0.5, random_state=seed).fit_transform(X)
    ours = svdd_centre(P, nu)
    assert ours.iterations > 1
    b = cp.Variable(P.shape[0])
    cp.Problem(cp.Minimize(cp.sum_squares(P.T @ b)),
               [b >= 0, b <= nu, cp.sum(b) == 1]).solve(solver=cp.CLARABEL)
    assert ours.gap <= 1e-8
    assert np.abs(ours.centre - P.T @ b.value).max() < 1e-5
    if nu == 0.02:
        assert np.count_nonzero(ours.beta >= nu * (1 - 1e-9)) >= 3


def test_fallback_solver_gives_the_same_centre(monkeypatch):
    """When the exact working-set solve does not settle, the first-order fallback must
    reach the same certified centre (within sqrt(2 tol) of each other's optimum)."""
    rng = np.random.default_rng(8)
    P = RandomFourierFeatures(60, 1.0, random_state=1).fit_transform(rng.normal(size=(90, 2)))
    exact = svdd_centre(P, 0.05)
    monkeypatch.setattr(svdd_module, "_capped_min_norm", lambda *args, **kwargs: None)
    fallback = svdd_centre(P, 0.05)
    assert fallback.gap <= 1e-8
    assert np.linalg.norm(exact.centre - fallback.centre) <= 2 * np.sqrt(2e-8)


def test_projection_onto_capped_simplex_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    v = np.random.default_rng(0).normal(size=15)
    b = cp.Variable(15)
    cp.Problem(cp.Minimize(cp.sum_squares(b - v)), [b >= 0, b <= 0.2, cp.sum(b) == 1]).solve()
    assert np.allclose(_project_capped_simplex(v, 0.2), b.value, atol=1e-6)


def test_sensitivity_bound_is_attained():
    """n = 1/nu: every weight is nu; replacing a row by its negative moves the centre by
    exactly 2 nu (the declared L2 bound without the solver term)."""
    rng = np.random.default_rng(0)
    P = rng.normal(size=(4, 6))
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    Q = P.copy()
    Q[0] = -P[0]
    move = np.linalg.norm(svdd_centre(P, 0.25).centre - svdd_centre(Q, 0.25).centre)
    assert move == pytest.approx(0.5, abs=1e-9)
    assert move <= centre_sensitivity(0.25, norm=Norm.L2).value


@pytest.mark.slow
@pytest.mark.parametrize("relation", ["replace_one", "add_remove"])
def test_sensitivity_search_does_not_exceed_declared(relation):
    from privkit.audits.sensitivity import check_sensitivity

    rff = RandomFourierFeatures(16, 2.0, random_state=0).fit(np.zeros((1, 2)))
    nu = 0.1

    def centre(data):
        return svdd_centre(rff.transform(data), nu).centre

    declared = centre_sensitivity(nu, norm=Norm.L2, relation=relation, n_components=16)
    result = check_sensitivity(centre, declared, record_low=[-2.0, -2.0],
                               record_high=[2.0, 2.0], n_records=12, trials=150,
                               search_examples=20, rng=0)
    assert not result.violation
    assert result.largest > 0.2 * declared.value  # the search does move the centre


def test_l1_bound_is_sqrt_f_times_l2_and_paper_figure():
    s2 = centre_sensitivity(0.05, norm=Norm.L2, n_components=400)
    s1 = centre_sensitivity(0.05, norm=Norm.L1, n_components=400)
    assert s1.value == pytest.approx(20 * s2.value)
    paper = centre_sensitivity(0.05, norm=Norm.L1, n_components=400, paper=True)
    assert paper.value == pytest.approx(2 * 0.05 * 20)  # Corollary 4.2: 2 C kappa sqrt(F)/n
    assert s1.relation is Neighbouring.REPLACE_ONE


def test_private_svdd_accounting_and_clipping():
    X = np.random.default_rng(0).normal(size=(60, 2))
    m = PrivateSVDD(epsilon=0.5, nu=0.1, n_components=20, random_state=0).fit(X)
    assert np.linalg.norm(m.centre_) <= 1.0 + 1e-12
    assert m.guarantee_.epsilon_at(0.0) == pytest.approx(0.5)
    assert m.ledger_.compare(m.plan_).matches
    g = PrivateSVDD(epsilon=0.5, delta=1e-5, noise="gaussian", nu=0.1, n_components=20,
                    random_state=0).fit(X)
    assert g.guarantee_.epsilon_at(1e-5) == pytest.approx(0.5, rel=1e-6)
    assert g.guarantee_.epsilon_at(1e-6) > 0.5  # the Gaussian is calibrated at 1e-5


def test_gaussian_needs_far_less_noise_than_coordinate_laplace():
    lap = PrivateSVDD(epsilon=1.0, nu=0.01).plan(n_samples=1000, n_features=2)
    gau = PrivateSVDD(epsilon=1.0, delta=1e-5, noise="gaussian", nu=0.01).plan(
        n_samples=1000, n_features=2)
    from privkit.algorithms.svdd.svdd import noise_scale

    lap_norm = np.sqrt(2 * 400) * noise_scale(lap)   # E||z||^2 = 2 F b^2
    gau_norm = np.sqrt(400) * noise_scale(gau)
    assert gau_norm < lap_norm / 4


@pytest.mark.parametrize("n", [0, 1, 3, 9])
def test_n_nu_below_one_gives_the_capped_sum_exactly(n):
    """n nu <= 1 (nu = 0.1): the only feasible weights are beta = nu, the centre is
    nu sum_i phi_i (0 for no rows), certified with gap 0, never refused."""
    P = np.random.default_rng(n).normal(size=(n, 6))
    P /= np.maximum(np.linalg.norm(P, axis=1, keepdims=True), 1e-300)
    sol = svdd_centre(P, 0.1)
    assert np.array_equal(sol.beta, np.full(n, 0.1))
    assert np.allclose(sol.centre, 0.1 * P.sum(axis=0), atol=1e-15)
    assert sol.gap == 0.0


def test_centre_is_continuous_where_n_nu_crosses_one():
    """At n nu = 1 the capped problem and the general one agree (every weight at the cap);
    one more row (n nu = 1.1) moves the centre by at most 2 nu, as it does for any n."""
    rng = np.random.default_rng(3)
    P = rng.normal(size=(11, 5))
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    at_one = svdd_centre(P[:10], 0.1)
    assert np.allclose(at_one.centre, 0.1 * P[:10].sum(axis=0), atol=1e-12)
    above = svdd_centre(P, 0.1)
    assert above.gap <= 1e-8
    assert np.linalg.norm(above.centre - at_one.centre) <= 2 * 0.1 + 2 * np.sqrt(2e-8)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 14),
       nu=st.sampled_from([0.05, 0.1, 0.2, 0.34, 0.5, 1.0]),
       change=st.sampled_from(["add", "remove", "replace"]))
def test_centre_moves_by_at_most_two_nu_for_every_n(seed, n, nu, change):
    """The sensitivity proof (module docstring) for every n, n nu < 1 included, and for
    each kind of neighbour: the exact centres of D and D' are within 2 nu (+ the certified
    solver terms 2 sqrt(2 tol)) in L2."""
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(n + 1, 4))
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    first = P[:n]
    if change == "add":
        second = P
    elif change == "remove":
        first, second = P, P[:n]
    else:
        if n == 0:
            return
        second = P[:n].copy()
        second[rng.integers(n)] = P[n]
    a, b = svdd_centre(first, nu), svdd_centre(second, nu)
    assert np.linalg.norm(a.centre - b.centre) <= 2 * nu + 2 * np.sqrt(2e-8) + 1e-12


def test_solver_refuses_only_by_its_parameters():
    with pytest.raises(InvalidParameterError, match="nu"):
        svdd_centre(np.eye(4), 1.5)
    with pytest.raises(InvalidParameterError, match="Phi") as info:
        svdd_centre(np.ones(4), 0.5)
    assert "1-D" in str(info.value)


def test_worst_case_rows_attain_the_l2_and_l1_sensitivity():
    """The audit pair moves the centre by 2 nu in L2 and sqrt(F) 2 nu in L1 (Corollary 4.2's
    bounds, attained), and by no more than privkit's declared sensitivity."""
    rff = RandomFourierFeatures(2, 1.0, 0).fit(np.zeros((1, 1)))
    first, second = worst_case_rows(rff)
    a, b = (svdd_centre(rff.transform(r), 0.5).centre for r in (first, second))
    assert np.linalg.norm(a - b) == pytest.approx(1.0, abs=1e-4)
    assert np.abs(a - b).sum() == pytest.approx(np.sqrt(2.0), abs=1e-4)
    declared = centre_sensitivity(0.5, norm=Norm.L1, n_components=2)
    assert np.abs(a - b).sum() <= declared.value
    assert declared.value - np.abs(a - b).sum() < 1e-3  # tight: the pair is the worst case


def test_laplace_loss_is_the_log_density_ratio():
    """Against scipy's Laplace log-density, coordinate by coordinate."""
    from scipy.stats import laplace

    rng = np.random.default_rng(0)
    c1, c2, scale = rng.normal(size=3), rng.normal(size=3), 0.7
    y = rng.normal(size=(50, 3))
    expected = (laplace.logpdf(y, c1, scale).sum(1) - laplace.logpdf(y, c2, scale).sum(1))
    assert np.allclose(laplace_loss(y, c1, c2, scale), expected, atol=1e-8)


def test_certified_memoises_the_accountant():
    from privkit.accountants import tightest
    from privkit.algorithms._certified import certified

    plan = PrivateSVDD(epsilon=0.7, nu=0.1).plan(n_samples=20, n_features=2)
    assert certified(plan, delta=0.0) is certified(plan, delta=0.0)
    assert certified(plan, delta=0.0).epsilon_at(0.0) == pytest.approx(
        tightest(plan, delta=0.0).guarantee.epsilon_at(0.0))


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_audit_case_certifies_half_the_claim_and_never_more_than_guarantee(epsilon):
    """The registered case certifies >= 0.5 of the claim (issue 11) and stays below the
    guarantee_ of the estimator fitted on the pair with the same parameters. Seeded; an
    exact audit's bound exceeds the truth with probability <= 5% (its confidence)."""
    from privkit.audits import audit
    from privkit.audits.registry import CASES

    case = CASES["private_svdd"](epsilon=epsilon)
    result = audit(case.system, case.pair, epsilon=case.epsilon, delta=case.delta,
                   trials=200_000, rng=0)
    model = PrivateSVDD(epsilon=epsilon, nu=0.5, gamma=1.0, n_components=2,
                        clip_centre=False, random_state=0).fit(case.pair.first)
    assert result.lower_bound >= 0.5 * case.epsilon
    assert result.lower_bound <= model.guarantee_.epsilon_at(0.0)
    assert "black box" in case.threat_model


def test_kkt_solve_agrees_with_least_squares_when_regular_and_when_singular():
    """LU where K is regular; the least-squares answer where duplicate feature rows make
    the Gram block singular (compared with numpy's lstsq, an independent SVD solve)."""
    rng = np.random.default_rng(0)
    P = rng.normal(size=(6, 10))
    for rows in (P, np.vstack([P, P[:2]])):
        G = rows @ rows.T
        k = G.shape[0]
        K = np.zeros((k + 1, k + 1))
        K[:k, :k] = 2 * G
        K[:k, k] = K[k, :k] = 1.0
        rhs = rng.normal(size=k + 1)
        expected = np.linalg.lstsq(K, rhs, rcond=None)[0]
        got = _kkt_solve(K, rhs)
        assert np.allclose(K @ got, K @ expected, atol=1e-8)
        if k == 6:
            assert np.allclose(got, expected, atol=1e-8)


@pytest.mark.parametrize("nu", [1 / 500, 0.003])
def test_a_small_nu_on_more_than_448_rows_is_solved_whole(nu):
    """nu so small that one round's rows (2 ceil(1/nu) + 32) outnumber the data: the
    first working set is every row (it asked numpy for more rows than there were). At
    nu = 1/n every weight sits at the cap."""
    X = np.random.default_rng(4).normal(size=(500, 3))
    Phi = RandomFourierFeatures(40, 1.0, random_state=0).fit_transform(X)
    sol = svdd_centre(Phi, nu)
    assert sol.gap <= 1e-8
    assert sol.beta.sum() == pytest.approx(1.0)
    assert sol.beta.max() <= nu * (1 + 1e-9)
    if nu == 1 / 500:
        assert np.allclose(sol.beta, nu)
