"""The private MMD two-sample test on private kernel mean embeddings."""

import math

import numpy as np
import pytest

from privkit.algorithms.kernels.kernel_mean import _RFFMap
from privkit.algorithms.kernels.mmd_test import mmd_null_threshold, private_mmd_test
from privkit.errors import InvalidParameterError


def _rff_map(D=16, d=2, gamma=1.0, seed=0):
    return _RFFMap(D, gamma, d, seed)



def test_threshold_closed_forms():
    """Without noise the threshold is McDiarmid's t_0 (Gretton et al. 2012, Corollary 9
    for m = n: sqrt(2K/m)(1 + sqrt(2 log 1/alpha))); with noise it is the noncentral
    chi-square quantile, checked against a Monte Carlo of ||a + E|| with ||a|| = t_0."""
    t0 = mmd_null_threshold(norm_bound=1.0, n_x=100, n_y=100, noise_std=0.0,
                            n_components=10, alpha=0.05)
    assert t0 == pytest.approx(math.sqrt(2 / 100) * (1 + math.sqrt(2 * math.log(20))))
    s, D = 0.05, 10
    c = mmd_null_threshold(norm_bound=1.0, n_x=100, n_y=100, noise_std=s, n_components=D,
                           alpha=0.05, noise_alpha_share=0.5)
    t1 = math.sqrt(2 / 100) * (1 + math.sqrt(2 * math.log(40)))
    rng = np.random.default_rng(0)
    a = np.zeros(D)
    a[0] = t1
    norms = np.linalg.norm(a + s * rng.standard_normal((200_000, D)), axis=1)
    # P(||a + E|| > c) = 0.025; its Monte Carlo estimate has sd 3.5e-4
    assert abs(np.mean(norms > c) - 0.025) < 0.002


def test_level_is_controlled_on_a_seeded_null_experiment():
    """300 null experiments (X, Y i.i.d. from the same law, n = 200 each, epsilon = 1):
    the rejection rate must not exceed alpha = 0.1 plus three binomial standard
    deviations (0.152). The test is valid for every seed; with a level-0.1 test the chance
    of > 0.152 rejections is < 0.2% (false-failure rate), and in fact far smaller since
    the threshold is conservative."""
    fmap = _rff_map(D=20, d=2, gamma=1.0, seed=0)
    rng = np.random.default_rng(123)
    rejections = 0
    for t in range(300):
        X = rng.normal(size=(200, 2))
        Y = rng.normal(size=(200, 2))
        res = private_mmd_test(X, Y, fmap, epsilon=1.0, delta=1e-5, alpha=0.1,
                               random_state=t)
        rejections += res.reject
    assert rejections / 300 <= 0.1 + 3 * math.sqrt(0.1 * 0.9 / 300)


def test_threshold_uses_both_terms_and_the_test_has_power():
    """A shifted alternative with large samples is rejected (seeded; the statistic is
    several times the threshold), and dropping the noise term would make the level wrong:
    with tiny samples the noise alone exceeds McDiarmid's t_0 most of the time."""
    fmap = _rff_map(D=20, d=2, gamma=1.0, seed=0)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(20_000, 2))
    Y = rng.normal(size=(20_000, 2)) + 1.0
    res = private_mmd_test(X, Y, fmap, epsilon=1.0, delta=1e-5, random_state=0)
    assert res.reject
    assert res.statistic > 2 * res.threshold
    assert res.guarantee.epsilon_at(1e-5) == pytest.approx(1.0, abs=1e-3)
    small = [private_mmd_test(rng.normal(size=(20, 2)), rng.normal(size=(20, 2)), fmap,
                              epsilon=0.5, delta=1e-5, random_state=i) for i in range(20)]
    t0 = mmd_null_threshold(norm_bound=1.0, n_x=20, n_y=20, noise_std=0.0, n_components=20)
    assert np.mean([r.statistic > t0 for r in small]) > 0.5
    assert not any(r.reject for r in small)


def test_mmd_test_refuses_a_bad_feature_map():
    with pytest.raises(InvalidParameterError, match="feature_map"):
        private_mmd_test(np.zeros((3, 2)), np.zeros((3, 2)), object(), epsilon=1.0,
                         delta=1e-5)


def test_a_non_finite_row_is_the_zero_feature_vector():
    """A row with a non-finite entry counts as a record whose feature vector is 0 (n is
    public here): same seed, same released means as with that feature row zeroed."""
    from privkit.algorithms.kernels.nystrom import Kernel, NystromMap

    fmap = NystromMap(np.eye(2), Kernel("linear"), data_radius=1.0)  # phi(x) = x
    rng = np.random.default_rng(0)
    X, Y = rng.uniform(-0.5, 0.5, (20, 2)), rng.uniform(-0.5, 0.5, (25, 2))
    nan, zero = X.copy(), X.copy()
    nan[2] = [np.nan, 0.1]
    zero[2] = 0.0
    a = private_mmd_test(nan, Y, fmap, epsilon=1.0, delta=1e-5, random_state=1)
    b = private_mmd_test(zero, Y, fmap, epsilon=1.0, delta=1e-5, random_state=1)
    np.testing.assert_array_equal(a.embedding_x, b.embedding_x)


def test_a_malformed_second_sample_is_refused_before_any_release():
    """Both samples are checked before either mean is released (nothing half-run)."""
    from privkit.ledger import Ledger

    with Ledger() as ledger, pytest.raises(InvalidParameterError, match="Y"):
        private_mmd_test(np.zeros((3, 2)), np.zeros(3), _rff_map(), epsilon=1.0,
                         delta=1e-5)
    assert len(ledger.entries) == 0
