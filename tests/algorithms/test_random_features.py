"""Random Fourier features (Rahimi, Recht 2007; Park 2022 eq. 4.5)."""

import numpy as np
import pytest

from privkit.algorithms.random_features import RandomFourierFeatures
from privkit.errors import InvalidParameterError


def test_rows_have_unit_norm_exactly():
    X = np.random.default_rng(0).normal(size=(50, 3)) * 10
    Z = RandomFourierFeatures(64, 0.7, random_state=1).fit_transform(X)
    assert np.allclose(np.linalg.norm(Z, axis=1), RandomFourierFeatures.norm_bound, atol=1e-12)


@pytest.mark.statistical
def test_inner_products_approximate_the_rbf_kernel():
    """F = 20000 features: the error has sd about sqrt(1/F) ~ 0.007 per entry; the 0.05
    tolerance is 7 sd (false-failure rate < 1e-9 per entry, seeded)."""
    X = np.random.default_rng(2).normal(size=(6, 2))
    rff = RandomFourierFeatures(20000, 0.5, random_state=3).fit(X)
    Z = rff.transform(X)
    exact = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    assert np.abs(Z @ Z.T - exact).max() < 0.05
    assert np.allclose(rff.kernel(X, X), exact)


def test_randomness_is_public_and_reproducible():
    a = RandomFourierFeatures(10, 1.0, random_state=5).fit(np.zeros((1, 2)))
    b = RandomFourierFeatures(10, 1.0, random_state=5).fit(np.ones((7, 2)) * 3)
    assert np.array_equal(a.frequencies_, b.frequencies_)  # the data's values never matter


def test_inner_gradient_matches_finite_differences():
    rng = np.random.default_rng(4)
    rff = RandomFourierFeatures(40, 1.0, random_state=0).fit(np.zeros((1, 3)))
    w = rng.normal(size=40)
    x = rng.normal(size=(2, 3))
    g = rff.inner_gradient(x, w)
    h = 1e-6
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        fd = (rff.transform(x + e) @ w - rff.transform(x - e) @ w) / (2 * h)
        assert np.allclose(g[:, j], fd, atol=1e-6)


def test_odd_components_refused():
    with pytest.raises(InvalidParameterError, match="n_components"):
        RandomFourierFeatures(5, 1.0).fit(np.zeros((2, 2)))
