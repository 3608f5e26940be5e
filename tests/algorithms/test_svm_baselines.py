"""SVM WEIGHT / OUTPUT / SEMI baselines (Park 2022, section 6.3)."""

import numpy as np
import pytest

from privkit import ApproxDP
from privkit.algorithms.kernels.random_features import RandomFourierFeatures
from privkit.algorithms.svdd.svm_baselines import (
    SVMOutputClassifier,
    SVMSemiClassifier,
    SVMWeightClassifier,
    hinge_svm,
    hinge_svm_ovr,
)


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    return np.array([[0, 0], [3, 0], [0, 3]])[y] + rng.normal(0, 0.5, (n, 2)), y


def test_hinge_svm_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    X, y = _data(60)
    P = RandomFourierFeatures(20, 1.0, random_state=0).fit_transform(X)
    s = np.where(y == 0, 1.0, -1.0)
    w = cp.Variable(20)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 0.05 * cp.sum(cp.pos(1 - cp.multiply(
        s, P @ w))))).solve()
    assert np.abs(hinge_svm(P, s, 0.05) - w.value).max() < 1e-3


def test_weight_sensitivity_is_rubinstein_and_budget_split():
    clf = SVMWeightClassifier(epsilon=3.0, nu=0.05, n_components=400, classes=[0, 1, 2])
    plan = clf.plan(n_samples=100, n_features=2, n_classes=3)
    assert plan.count == 3
    assert plan.block.sensitivity.value == pytest.approx(4 * 0.05 * 20)
    X, y = _data()
    fitted = SVMWeightClassifier(epsilon=3.0, nu=0.05, n_components=50, classes=[0, 1, 2],
                                 random_state=0).fit(X, y)
    assert fitted.guarantee_.epsilon_at(0.0) == pytest.approx(3.0)
    assert fitted.ledger_.compare(fitted.plan_).matches


def test_output_per_query_composes():
    X, y = _data()
    clf = SVMOutputClassifier(epsilon=10.0, query_epsilon=1.0, nu=0.05, n_components=50,
                              accounting="per_query", classes=[0, 1, 2],
                              random_state=0).fit(X, y)
    clf.predict(X[:10])
    assert clf.guarantee_.epsilon_at(0.0) == pytest.approx(10.0)  # 10 queries, epsilon each
    batch = SVMOutputClassifier(epsilon=1.0, nu=0.05, n_components=50, classes=[0, 1, 2],
                                random_state=0).fit(X, y)
    batch.predict(X[:10])
    assert batch.guarantee_.epsilon_at(0.0) == pytest.approx(1.0)


def test_semi_uses_delta_one_over_n_and_is_accurate_at_large_epsilon():
    X, y = _data()
    clf = SVMSemiClassifier(epsilon=100.0, nu=0.05, n_components=50, classes=[0, 1, 2],
                            random_state=0)
    clf.fit(X[:150], y[:150], Z=X[150:])
    assert clf.guarantee_.epsilon_at(1 / 150) <= 100.0 * (1 + 1e-9)
    assert clf.paper_claim_ == ApproxDP(epsilon=100.0, delta=1 / 150)
    assert np.mean(clf.predict(X[150:]) == y[150:]) > 0.8


def test_semi_has_the_one_plan_signature_and_a_public_z_norm():
    """plan(*, n_samples, n_features, n_classes) only; the operator norm of phi(Z) is an
    estimator parameter or computed at fit from the public Z (checked against the largest
    singular value from an SVD)."""
    import inspect

    from privkit.errors import InvalidParameterError

    params = list(inspect.signature(SVMSemiClassifier.plan).parameters)
    assert params == ["self", "n_samples", "n_features", "n_classes"]
    with pytest.raises(InvalidParameterError, match="z_operator_norm"):
        SVMSemiClassifier(epsilon=1.0, classes=[0, 1]).plan(n_samples=10, n_features=2)
    declared = SVMSemiClassifier(epsilon=1.0, nu=0.05, z_operator_norm=np.sqrt(50),
                                 classes=[0, 1, 2])
    plan = declared.plan(n_samples=150, n_features=2, n_classes=3)
    assert plan.block.sensitivity.value == pytest.approx(2 * 0.05 * np.sqrt(50))
    X, y = _data()
    clf = SVMSemiClassifier(epsilon=1.0, nu=0.05, n_components=50, classes=[0, 1, 2],
                            random_state=0)
    clf.fit(X[:150], y[:150], Z=X[150:])
    PZ = clf.features_.transform(X[150:])
    top = np.linalg.svd(PZ, compute_uv=False)[0]
    assert clf.z_operator_norm_ == pytest.approx(top)
    assert clf.plan_.block.sensitivity.value == pytest.approx(2 * 0.05 * top)
    with pytest.raises(InvalidParameterError, match="z_operator_norm"):
        SVMSemiClassifier(epsilon=1.0, nu=0.05, n_components=50, z_operator_norm=0.5,
                          classes=[0, 1, 2], random_state=0).fit(X[:150], y[:150], Z=X[150:])


def test_output_plan_has_the_one_signature():
    import inspect

    params = list(inspect.signature(SVMOutputClassifier.plan).parameters)
    assert params == ["self", "n_samples", "n_features", "n_classes"]
    plan = SVMOutputClassifier(epsilon=1.0, nu=0.05, accounting="per_query", classes=[0, 1, 2],
                               n_queries=7).plan(n_samples=10, n_features=2, n_classes=3)
    assert plan.count == 7
    assert plan.block.epsilon_at(0.0) == pytest.approx(1.0 / 7)  # the budget over 7 points
    batch = SVMOutputClassifier(epsilon=1.0, nu=0.05, n_queries=7, classes=[0, 1, 2]).plan(
        n_samples=10, n_features=2, n_classes=3)
    assert batch.sensitivity.value == pytest.approx(2 * 0.05 * 3 * 7)


def test_one_vs_rest_in_one_call_solves_each_binary_problem():
    """Row k of hinge_svm_ovr equals hinge_svm on labels (class k) vs (the rest), to the
    solver's tolerance."""
    X, y = _data(90)
    P = RandomFourierFeatures(30, 1.0, random_state=0).fit_transform(X)
    W = hinge_svm_ovr(P, y, 0.05)
    for k in range(3):
        assert np.abs(W[k] - hinge_svm(P, np.where(y == k, 1.0, -1.0), 0.05)).max() < 1e-4


def test_semi_refit_is_the_minimum_norm_least_squares_fit_of_the_released_values():
    """20 public points, 50 features: the refit interpolates the (here almost noiseless)
    released decision values and lies in the row space of phi(Z), as numpy's lstsq does."""
    X, y = _data()
    Z = X[180:]
    clf = SVMSemiClassifier(epsilon=1e6, nu=0.05, n_components=50, classes=[0, 1, 2],
                            random_state=0)
    clf.fit(X[:180], y[:180], Z=Z)
    PZ = clf.features_.transform(Z)
    W = hinge_svm_ovr(clf.features_.transform(X[:180]), y[:180], 0.05)
    assert np.allclose(PZ @ clf.coef_.T, PZ @ W.T, atol=1e-3)
    reference = np.linalg.lstsq(PZ, PZ @ clf.coef_.T, rcond=None)[0].T
    assert np.allclose(clf.coef_, reference, atol=1e-9)


def test_liblinear_solve_is_linear_svc_and_reproducible():
    """The direct call to liblinear's solver gives scikit-learn's LinearSVC answer (same
    problem, same tolerance) and, with its coordinate order's seed fixed, the same
    weights on every call; the fitted classifier is reproducible from random_state."""
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=150) > 0).astype(int) + (X[:, 1] > 1)
    P = RandomFourierFeatures(60, 0.5, random_state=0).fit_transform(X)
    W = hinge_svm_ovr(P, y, 0.05)
    ref = LinearSVC(loss="hinge", C=0.05, fit_intercept=False, tol=1e-10,
                    max_iter=200_000).fit(P, y).coef_
    assert W.shape == ref.shape == (3, 60)
    assert np.abs(W - ref).max() < 1e-4
    assert np.array_equal(W, hinge_svm_ovr(P, y, 0.05))
    a = SVMWeightClassifier(epsilon=1.0, n_components=60, classes=[0, 1, 2],
                            random_state=3).fit(X, y)
    b = SVMWeightClassifier(epsilon=1.0, n_components=60, classes=[0, 1, 2],
                            random_state=3).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)


def test_semi_guarantee_is_the_tightest_accountants_on_its_plan():
    """SEMI's guarantee_ is the closed form GDP(sqrt(k) mu) of its k Gaussians (Dong, Roth,
    Su 2019, Cor. 3.3); privkit's tightest accountant on the same plan agrees at several
    deltas, and at the calibration delta both give the budget."""
    from privkit import tightest

    X, y = _data()
    clf = SVMSemiClassifier(epsilon=1.0, delta=1e-4, nu=0.05, n_components=50,
                            classes=[0, 1, 2], random_state=0).fit(X, y, Z=X[:30])
    for delta in (1e-6, 1e-4, 1e-2):
        assert clf.guarantee_.epsilon_at(delta) == pytest.approx(
            tightest(clf.plan_, delta=delta).epsilon, rel=1e-4)
    assert clf.guarantee_.epsilon_at(1e-4) == pytest.approx(1.0, rel=1e-6)
