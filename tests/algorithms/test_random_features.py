"""Random Fourier features (Rahimi, Recht 2007; Park 2022 eq. 4.5)."""

import numpy as np
import pytest

from privkit.algorithms.kernels.random_features import RandomFourierFeatures
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


def test_transform_is_eq_4_5_to_float32_accuracy():
    """The float32 trigonometry after float64 range reduction stays within 1e-6 of eq. 4.5
    evaluated in float64 (relative to the feature scale sqrt(2/F)), also for arguments
    of several hundred radians; a wrong scale, order or reduction would be off by O(1)."""
    X = np.random.default_rng(6).normal(size=(30, 3)) * 40
    rff = RandomFourierFeatures(64, 2.0, random_state=7).fit(X)
    P = X @ rff.frequencies_.T
    assert np.abs(P).max() > 300
    exact = np.sqrt(2.0 / 64) * np.hstack([np.cos(P), np.sin(P)])
    assert np.abs(rff.transform(X) - exact).max() < 1e-6 * np.sqrt(2.0 / 64)


def test_inner_gradient_matches_finite_differences():
    """Central differences of step 1e-3 on eq. 4.5 in float64: truncation error below
    1e-5 for these frequencies; the gradient must agree to 1e-4."""
    rng = np.random.default_rng(4)
    rff = RandomFourierFeatures(40, 1.0, random_state=0).fit(np.zeros((1, 3)))
    w = rng.normal(size=40)
    x = rng.normal(size=(2, 3))
    g = rff.inner_gradient(x, w)

    def exact(z: np.ndarray) -> np.ndarray:
        P = z @ rff.frequencies_.T
        return np.asarray(np.sqrt(2.0 / 40) * np.hstack([np.cos(P), np.sin(P)]) @ w)

    h = 1e-3
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        fd = (exact(x + e) - exact(x - e)) / (2 * h)
        assert np.allclose(g[:, j], fd, atol=1e-4)


def test_odd_components_refused():
    with pytest.raises(InvalidParameterError, match="n_components"):
        RandomFourierFeatures(5, 1.0).fit(np.zeros((2, 2)))


@pytest.mark.parametrize(("n_components", "n_features", "fragment"), [
    (10**9, 2, "at most 1048576"),
    (2**20 + 2, 1, "at most 1048576"),
    (2**20, 300, "at most 894784 for 300 features"),
    (4, 2**27, "at most 2 for 134217728 features"),
])
def test_a_map_too_large_for_memory_is_refused_by_its_parameters(n_components, n_features,
                                                                  fragment):
    """n_components = 10**9 (8 GB of frequencies for 2 features) is refused before any
    allocation, by a limit stated in the message: F <= 2^20, and F/2 x d <= 2^27
    float64 (1 GiB); the largest F accepted for d = 300 is 2 floor(2^27 / 300) = 894784."""
    with pytest.raises(InvalidParameterError, match="n_components") as info:
        RandomFourierFeatures.check_parameters(n_components, 1.0, n_features, "owner")
    assert fragment in str(info.value)
    RandomFourierFeatures.check_parameters(894784, 1.0, 300, "owner")  # the boundary
    with pytest.raises(InvalidParameterError, match="n_components"):
        RandomFourierFeatures(10**9, 1.0, random_state=0).fit(np.zeros((3, 2)))


def test_rows_where_the_map_is_undefined_are_refused_marked_or_nan():
    """A query row with NaN or an infinity, or entries so large that <w, x> overflows,
    gets a clear error naming no value from transform_queries (rule R7); transform_defined
    marks such rows of private training data and maps the others; transform gives them
    NaN features; none of the three warns."""
    import warnings

    rff = RandomFourierFeatures(8, 1.0, random_state=0).fit(np.zeros((1, 2)))
    for bad in ([[0.5, np.nan]], [[np.inf, 0.0]], [[1e308, 1e308]]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert np.isnan(rff.transform(np.array(bad))).all()
        with pytest.raises(InvalidParameterError, match="not defined") as info:
            rff.transform_queries(np.array(bad))
        assert "308" not in str(info.value)
        assert "nan" not in str(info.value).lower()
    X = np.array([[0.5, 0.25], [np.nan, 0.0], [1e308, -1e308], [2.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Phi, defined = rff.transform_defined(X)
    assert defined.tolist() == [True, False, False, True]
    assert np.array_equal(Phi, rff.transform_queries(X[[0, 3]]))
