"""Discrete Laplace and discrete Gaussian: exact samplers, privacy, calibration."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA, N_DRAWS, assert_pmf
from privkit import ZCDP, InvalidParameterError, Neighbouring, PureDP
from privkit.mechanisms import DiscreteGaussian, DiscreteLaplace
from privkit.mechanisms.discrete import (
    at_least,
    bernoulli_exp,
    bernoulli_exp_minus_one,
    discrete_gaussian,
    discrete_laplace,
)

A = Neighbouring.ADD_REMOVE


def laplace_pmf(scale):
    a = math.exp(-1 / scale)
    return lambda k: (1 - a) / (1 + a) * a ** abs(k)


def gaussian_pmf(sigma):
    ks = np.arange(-int(40 * sigma) - 10, int(40 * sigma) + 11)
    norm = np.sum(np.exp(-ks.astype(float) ** 2 / (2 * sigma**2)))
    return lambda k: math.exp(-k * k / (2 * sigma**2)) / norm


@pytest.mark.statistical
@pytest.mark.parametrize("gamma", [Fraction(1, 3), Fraction(5, 2), Fraction(0)])
def test_bernoulli_exp_has_probability_exp_minus_gamma(gamma):
    """Bernoulli(exp(-gamma)) frequencies match (binomial test, alpha 1e-3).
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    rng = np.random.default_rng(123)
    n = N_DRAWS
    draws = bernoulli_exp(rng, np.full(n, gamma.numerator), np.full(n, gamma.denominator))
    p = math.exp(-gamma)
    if p == 1.0:
        assert draws.all()
        return
    assert stats.binomtest(int(draws.sum()), n, p).pvalue > ALPHA


@pytest.mark.statistical
def test_one_step_bernoulli_exp_minus_one():
    """The factorial-threshold shortcut draws Bernoulli(exp(-1)) (binomial test) and
    agrees in law with the general loop (two-sample chi-square).
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    rng = np.random.default_rng(21)
    fast = bernoulli_exp_minus_one(rng, N_DRAWS)
    loop = bernoulli_exp(rng, np.ones(N_DRAWS, dtype=np.int64), np.full(N_DRAWS, 3) // 3)
    assert stats.binomtest(int(fast.sum()), N_DRAWS, math.exp(-1)).pvalue > ALPHA
    table = [[fast.sum(), N_DRAWS - fast.sum()], [loop.sum(), N_DRAWS - loop.sum()]]
    assert stats.chi2_contingency(table).pvalue > ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize("scale", [Fraction(3), Fraction(7, 4)])
def test_discrete_laplace_sampler_follows_its_law(scale):
    """Exact discrete Laplace draws fit the two-sided geometric pmf; a 5% larger scale
    is rejected (chi-square, n = 200,000).
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    x = discrete_laplace(np.random.default_rng(7), scale, N_DRAWS)
    t = float(scale)
    assert_pmf(x, laplace_pmf(t), laplace_pmf(1.05 * t), range(-40, 41))


@pytest.mark.statistical
@pytest.mark.parametrize("sigma_squared", [Fraction(25, 4), Fraction(1, 2)])
def test_discrete_gaussian_sampler_follows_its_law(sigma_squared):
    """Exact discrete Gaussian draws fit exp(-x^2 / 2 sigma^2) / Z; 5% off is rejected.
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    x = discrete_gaussian(np.random.default_rng(8), sigma_squared, N_DRAWS)
    sigma = math.sqrt(sigma_squared)
    assert_pmf(x, gaussian_pmf(sigma), gaussian_pmf(1.05 * sigma), range(-30, 31))


def test_large_parameters_stay_exact():
    """sigma^2 = 10^6 uses Python integers where int64 would overflow; the variance of
    20,000 draws is within 5 standard errors of sigma^2 (discrete Gaussian variance is
    sigma^2 up to e^-(2 pi^2 sigma^2))."""
    x = discrete_gaussian(np.random.default_rng(9), Fraction(10**6), 20_000)
    assert abs(x.var() - 1e6) < 5 * 1e6 * math.sqrt(2 / 20_000)


def test_scales_are_rounded_up():
    """at_least gives a dyadic rational >= the float, within 2^-28 relative."""
    for value in (0.1, 1 / 3, 2.5, 1234.5678, 1e-4):
        r = at_least(value)
        assert r >= Fraction(value)
        assert (r - Fraction(value)) / Fraction(value) <= Fraction(1, 2**28)
        assert r.denominator & (r.denominator - 1) == 0  # a power of two


class TestDiscreteLaplaceMechanism:
    def test_calibration_round_trips(self):
        """for_epsilon gives epsilon back (1e-12)."""
        m = DiscreteLaplace.for_epsilon(0.37, sensitivity=2.0, relation=A)
        assert m.epsilon_at(0.0) == pytest.approx(0.37, rel=1e-12)
        assert m.guarantee() == PureDP(epsilon=m.epsilon_at(0.0))

    def test_pure_epsilon_is_the_exact_worst_log_ratio(self):
        """The largest log pmf ratio between outputs for inputs 0 and Δ=2 is Δ/t: the
        guarantee is tight (direct computation on the pmf)."""
        m = DiscreteLaplace.for_epsilon(0.8, sensitivity=2.0, relation=A)
        pmf = laplace_pmf(m.noise_scale)
        ratios = [math.log(pmf(k) / pmf(k - 2)) for k in range(-30, 31)]
        assert max(ratios) == pytest.approx(m.epsilon_at(0.0), rel=1e-12)

    def test_release_is_integer_and_recorded_shape(self):
        """Release keeps integers, shape (*size, *value.shape)."""
        m = DiscreteLaplace.for_histogram(epsilon=1.0, relation=Neighbouring.REPLACE_ONE)
        assert m.sensitivity.value == 2.0
        out = m.release([3, 4, 5], rng=1, size=(2, 4))
        assert out.shape == (2, 4, 3)
        assert out.dtype == np.int64

    def test_non_integer_values_are_refused(self):
        """A fractional query answer is refused with advice."""
        m = DiscreteLaplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
        with pytest.raises(InvalidParameterError, match="integer-valued"):
            m.release([1.5])

    @pytest.mark.statistical
    def test_simulate_has_the_same_law(self):
        """The fast float path draws the same law (chi-square).
        Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
        m = DiscreteLaplace(noise_scale=2.0, sensitivity=DiscreteLaplace.for_epsilon(
            1.0, sensitivity=1.0, relation=A).sensitivity)
        x = m.simulate(0, rng=10, size=N_DRAWS)
        assert_pmf(x, laplace_pmf(2.0), laplace_pmf(2.1), range(-30, 31))


class TestDiscreteGaussianMechanism:
    def test_zcdp_calibration_round_trips(self):
        """for_zcdp gives rho back; the guarantee is zCDP (CKS 2020 Thm 14)."""
        m = DiscreteGaussian.for_zcdp(0.2, sensitivity=3.0, relation=A)
        assert m.zcdp_rho() == pytest.approx(0.2, rel=1e-12)
        assert isinstance(m.guarantee(), ZCDP)

    def test_approx_dp_calibration_is_the_largest_fitting_rho(self):
        """for_approx_dp meets (eps, delta) through zCDP, and 1e-6 less noise does not."""
        m = DiscreteGaussian.for_approx_dp(epsilon=1.0, delta=1e-5, sensitivity=1.0, relation=A)
        assert m.epsilon_at(1e-5) <= 1.0
        assert m.epsilon_at(1e-5) == pytest.approx(1.0, rel=1e-9)
        tighter = DiscreteGaussian(noise_scale=m.noise_scale * (1 - 1e-6),
                                   sensitivity=m.sensitivity)
        assert tighter.epsilon_at(1e-5) > 1.0

    def test_renyi_divergence_of_integer_shift_is_at_most_the_claim(self):
        """For an integer shift Δ the Renyi divergence of two discrete Gaussians, summed
        directly over the pmf, is at most a Δ^2 / (2 sigma^2) (CKS 2020 Prop. 5)."""
        sigma, shift = 1.3, 1
        m = DiscreteGaussian(noise_scale=sigma, sensitivity=DiscreteGaussian.for_zcdp(
            1.0, sensitivity=1.0, relation=A).sensitivity)
        ks = np.arange(-60, 61)
        log_norm = math.log(np.sum(np.exp(-(ks.astype(float) ** 2) / (2 * sigma**2))))

        def log_pmf(k):
            return -(k.astype(float) ** 2) / (2 * sigma**2) - log_norm

        for a in (1.5, 2.0, 5.0):
            terms = a * log_pmf(ks) + (1 - a) * log_pmf(ks - shift)
            direct = float(np.logaddexp.reduce(terms)) / (a - 1)
            assert direct <= m.rdp([a])[0] * (1 + 1e-12)
            assert direct == pytest.approx(m.rdp([a])[0], rel=1e-6)

    @pytest.mark.statistical
    def test_release_follows_the_discrete_gaussian_law(self):
        """Released noise fits the discrete Gaussian pmf (chi-square).
        Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
        m = DiscreteGaussian.for_zcdp(0.02, sensitivity=1.0, relation=A)  # sigma = 5
        x = m.release(0, rng=11, size=N_DRAWS)
        assert_pmf(x, gaussian_pmf(5.0), gaussian_pmf(5.25), range(-40, 41))
