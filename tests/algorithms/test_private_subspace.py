"""`private_subspace` computes only the top k eigenvectors (LAPACK syevr): the same
subspace, column by column up to sign, as the top k of a full ``numpy.linalg.eigh``."""

import numpy as np
import pytest

from privkit.algorithms.federated.pca import R, private_subspace
from privkit.mechanisms.analyze_gauss import AnalyzeGauss


@pytest.mark.parametrize(("d", "k"), [(6, 1), (30, 5), (40, 40)])
def test_top_k_equals_the_full_decomposition(d, k):
    """Against an independent computation: the full eigendecomposition of the same noisy
    matrix (same seed, so the same noise), sorted by decreasing eigenvalue. Eigenvalues of
    a Gaussian-noise matrix are distinct with probability 1, so each column is defined up
    to its sign; the tolerance is float64 round-off on a well-separated spectrum."""
    rng = np.random.default_rng(d)
    Z = rng.standard_normal((200, d)) * np.linspace(3, 0.1, d)
    Z /= np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1.0)
    block = AnalyzeGauss(noise_scale=0.5, row_norm_bound=1.0, relation=R)
    top = private_subspace(Z, block, k, np.random.default_rng(7))
    noisy = block.release(Z.T @ Z, rng=np.random.default_rng(7))
    values, vectors = np.linalg.eigh(noisy)
    expected = vectors[:, np.argsort(values)[::-1][:k]]
    assert top.shape == (d, k)
    assert top.flags.c_contiguous
    signs = np.sign(np.sum(top * expected, axis=0))
    np.testing.assert_allclose(top * signs, expected, atol=1e-8)
