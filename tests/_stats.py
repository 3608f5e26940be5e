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


def chi_square_pvalue(sample, pmf, support):
    """Chi-square goodness of fit of integer draws to ``pmf`` on ``support`` (values outside
    it pooled into one tail bin; bins with expected count < 5 merged into the tail)."""
    import numpy as np

    support = np.asarray(support)
    probs = np.array([pmf(v) for v in support])
    observed = np.array([np.sum(sample == v) for v in support])
    expected = probs * len(sample)
    keep = expected >= 5
    tail_obs = len(sample) - observed[keep].sum()
    tail_exp = len(sample) - expected[keep].sum()
    obs = np.append(observed[keep], tail_obs)
    exp = np.append(expected[keep], tail_exp)
    if tail_exp < 5:  # fold a tiny tail into the last bin
        obs = np.append(obs[:-2], obs[-2] + obs[-1])
        exp = np.append(exp[:-2], exp[-2] + exp[-1])
    return stats.chisquare(obs, exp).pvalue


def assert_pmf(sample, pmf, wrong_pmf, support):
    """The integer sample fits ``pmf`` and not ``wrong_pmf`` (a 5%-off law)."""
    fits = chi_square_pvalue(sample, pmf, support)
    wrong = chi_square_pvalue(sample, wrong_pmf, support)
    assert fits > ALPHA, f"true law rejected, p = {fits:.3g}"
    assert wrong < ALPHA, f"5% scale error not detected, p = {wrong:.3g}"
