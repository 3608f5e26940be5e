"""Park 2022's baselines as the thesis ran them (``privkit reproduce park2022``): the
exact-kernel SVM without intercept (dual coordinate descent) against an independent
solve, SVM OUTPUT's and SEMI's noise, and the noise-free "non-private" models."""

import numpy as np
import pytest

pytest.importorskip("sklearn")

from privkit.algorithms.reproduce._exact_kernel import (
    ExactKernelOutput,
    ExactKernelSemi,
    kernel_svm_ovr,
    rbf,
)
from privkit.algorithms.svdd import park2022 as p


def _blobs(n=120, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    centres = np.array([[0.0, 0.0], [2.5, 0.0], [0.0, 2.5]])
    return centres[y] + rng.normal(0, 0.7, (n, 2)), y


def test_rbf_against_its_definition():
    A = np.array([[0.0, 1.0], [2.0, -1.0]])
    B = np.array([[1.0, 1.0]])
    assert rbf(A, B, 0.5)[:, 0] == pytest.approx(np.exp(-0.5 * np.array([1.0, 5.0])))


def test_dual_descent_matches_liblinear_on_the_empirical_kernel_map():
    """The bias-free kernel SVM solved on K equals liblinear's solve of the same problem
    on the exact feature map Phi (K = Phi Phi^T, from K's eigen-decomposition): the
    decision values agree to the solvers' tolerances."""
    from sklearn.svm import LinearSVC

    X, y = _blobs()
    K = rbf(X, X, 1.0)
    signs = np.where(y[:, None] == np.arange(3)[None, :], 1.0, -1.0)
    coef = kernel_svm_ovr(K, signs, 0.05, tol=1e-6)
    vals, vecs = np.linalg.eigh(K)
    keep = vals > 1e-10 * vals[-1]
    Phi = vecs[:, keep] * np.sqrt(vals[keep])
    for k in range(3):
        w = LinearSVC(loss="hinge", C=0.05, fit_intercept=False, tol=1e-10,
                      max_iter=200_000).fit(Phi, signs[:, k]).coef_.ravel()
        assert np.max(np.abs(Phi @ w - K @ coef[:, k])) < 1e-3
    assert np.all(np.abs(coef) <= 0.05 + 1e-12)  # the box 0 <= beta <= nu


def test_noise_free_output_is_accurate_and_noise_changes_answers():
    X, y = _blobs()
    model = ExactKernelOutput(nu=0.05, gamma=1.0, classes=np.arange(3)).fit(X[:90], y[:90])
    rng = np.random.default_rng(0)
    exact = model.predict(X[90:], None, rng)
    assert np.mean(exact == y[90:]) > 0.8
    noisy = model.predict(X[90:], 0.01, rng)  # Laplace scale 2 nu 3 / 0.01 = 30
    assert np.mean(noisy != exact) > 0.3
    assert ExactKernelOutput.guarantee_epsilon(0.01, 30) == pytest.approx(0.3)


def test_semi_without_noise_reproduces_the_decisions_on_z():
    """With no noise the released alpha's decisions on Z are the SVM's own (the least-
    squares fit interpolates when K_ZZ has full rank)."""
    X, y = _blobs()
    semi = ExactKernelSemi(nu=0.05, gamma=1.0, classes=np.arange(3)).fit(X[:90], y[:90])
    semi.prepare(X[90:])
    alpha = semi.release(None, 1e-3, np.random.default_rng(0))
    out = ExactKernelOutput(nu=0.05, gamma=1.0, classes=np.arange(3)).fit(X[:90], y[:90])
    same = semi.predict(X[90:], alpha) == out.predict(X[90:], None, np.random.default_rng(0))
    assert same.mean() >= 0.95
    noisy = semi.release(0.01, 1e-3, np.random.default_rng(1))
    assert not np.allclose(noisy, alpha)


def test_noise_free_proposed_and_weight_beat_their_noisy_runs_at_tiny_epsilon():
    """The "non-private" column has no noise: the proposed method and SVM WEIGHT are
    accurate on three moons, where epsilon 0.01 is not."""
    from privkit.algorithms.reproduce.park2022 import _noise_free

    X, y = p.load_dataset("three_moons", "", seed=0)
    for row in ("proposed_paper", "svm_weight"):
        clean = _noise_free(row, "three_moons", X, y, seed=0)
        noisy = p.run_once(row, "three_moons", epsilon=0.01, X=X, y=y, seed=0)["accuracy"]
        assert clean > 0.85
        assert clean > noisy
