"""The shared statistical harness for mechanism samplers (in the manner of emcee's
``_test_normal``): a seeded Kolmogorov-Smirnov test that must accept the true law and
reject the same law with its scale off by 5%.

With n = 200,000 draws the KS critical value at alpha = 1e-3 is 1.95 / sqrt(n) = 0.0044,
while a 5% scale error moves the CDF by about 0.009 (Laplace) to 0.0115 (Gaussian): the
wrong law is rejected with overwhelming power, and the true law is wrongly rejected with
probability 1e-3 for a random seed (and never for the fixed seed used here).
"""

from scipy import stats

N_DRAWS = 200_000
ALPHA = 1e-3


def assert_law(sample, distribution, *, scale):
    """The sample fits ``distribution(scale)`` and not ``distribution(1.05 * scale)``."""
    fits = stats.kstest(sample, distribution(scale=scale).cdf).pvalue
    wrong = stats.kstest(sample, distribution(scale=1.05 * scale).cdf).pvalue
    assert fits > ALPHA, f"true law rejected, p = {fits:.3g}"
    assert wrong < ALPHA, f"5% scale error not detected, p = {wrong:.3g}"
