"""Public-bound preprocessing and DPPCA's 0.2.0 conventions."""

import numpy as np
import pytest

from privkit.algorithms import (
    DPPCA,
    ClippedValuesWarning,
    PublicOneHotEncoder,
    PublicRangeScaler,
    PublicStandardScaler,
    RowNormClipper,
)


def test_range_scaler_uses_declared_bounds_not_the_data():
    """[lower, upper] maps onto [0, 1] whatever the rows are; values outside are clipped
    with a warning naming how many, or refused."""
    X = np.array([[5.0, 0.0], [10.0, 50.0]])
    scaler = PublicRangeScaler([0.0, 0.0], [10.0, 100.0])
    np.testing.assert_allclose(scaler.fit_transform(X), [[0.5, 0.0], [1.0, 0.5]])
    np.testing.assert_allclose(scaler.inverse_transform(scaler.transform(X)), X)
    with pytest.warns(ClippedValuesWarning, match="1 values in 1 of 2 rows"):
        out = scaler.transform(np.array([[20.0, 0.0], [1.0, 1.0]]))
    assert out[0, 0] == 1.0
    with pytest.raises(ValueError, match="values within the declared bounds"):
        PublicRangeScaler(0.0, 10.0, clip=False).fit_transform(np.array([[11.0]]))


def test_standard_scaler_and_one_hot_and_row_clipper():
    """(x - c) / s with public constants; one-hot over declared levels (codes outside are
    refused); rows divided by the bound and clipped onto the unit ball."""
    X = np.array([[1.0, 4.0], [3.0, 8.0]])
    np.testing.assert_allclose(PublicStandardScaler([1.0, 4.0], [2.0, 4.0]).fit_transform(X),
                               [[0.0, 0.0], [1.0, 1.0]])
    codes = np.array([[0, 2], [1, 0]])
    np.testing.assert_array_equal(PublicOneHotEncoder([2, 3]).fit_transform(codes),
                                  [[1, 0, 0, 0, 1], [0, 1, 1, 0, 0]])
    with pytest.raises(ValueError, match=r"an integer code in 0\.\.1"):
        PublicOneHotEncoder([2, 3]).fit_transform(np.array([[2, 0]]))
    Z = RowNormClipper(5.0).fit_transform(np.array([[3.0, 4.0], [0.3, 0.4]]))
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), [1.0, 0.1])
    assert RowNormClipper.privkit_public_bounds


def test_dppca_defaults_and_inverse_transform():
    """n_components=None keeps every component (no failure on few features); with the
    full basis inverse_transform(transform(X)) is X (orthonormal components)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)) / 4
    pca = DPPCA(epsilon=1.0, random_state=0).fit(X)
    assert pca.components_.shape == (3, 3)
    np.testing.assert_allclose(pca.inverse_transform(pca.transform(X)), X, atol=1e-10)
    two = DPPCA(2, epsilon=1.0, random_state=0).fit(X)
    assert two.inverse_transform(two.transform(X)).shape == (200, 3)
    with pytest.raises(ValueError, match="`X` must be"):
        two.inverse_transform(X)
