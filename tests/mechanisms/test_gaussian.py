"""The Gaussian mechanism."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from _stats import N_DRAWS, assert_law
from privkit import GDP, ApproxDP, Neighbouring, Norm, Sensitivity
from privkit.mechanisms import Gaussian, classic_gaussian_sigma

R = Neighbouring.REPLACE_ONE


def test_analytic_sigma_for_epsilon_one_delta_1e5():
    """Balle-Wang analytic calibration: sigma = 3.7306 for (1, 1e-5), sensitivity 1."""
    m = Gaussian.for_approx_dp(epsilon=1.0, delta=1e-5, sensitivity=1.0, relation=R)
    assert round(m.noise_scale, 4) == 3.7306


@given(st.floats(min_value=0.01, max_value=20.0), st.floats(min_value=1e-12, max_value=0.1),
       st.floats(min_value=0.01, max_value=100.0))
def test_analytic_calibration_round_trips_and_is_sharp(epsilon, delta, sensitivity):
    """Property: the calibrated mechanism meets (epsilon, delta) to 1e-9 relative, and
    0.1% less noise no longer does (the boundary from both sides)."""
    m = Gaussian.for_approx_dp(epsilon=epsilon, delta=delta, sensitivity=sensitivity, relation=R)
    assert m.delta_at(epsilon) <= delta  # the exact closed-form profile meets the target
    assert m.epsilon_at(delta) == pytest.approx(epsilon, rel=1e-9)
    assert m.guarantee().within(ApproxDP(epsilon=epsilon, delta=delta))
    less = Gaussian(noise_scale=m.noise_scale * 0.999, sensitivity=m.sensitivity)
    assert not less.guarantee().within(ApproxDP(epsilon=epsilon, delta=delta))


def test_classic_refuses_epsilon_at_least_one():
    """The Dwork-Roth formula is only valid for epsilon < 1; privkit refuses the rest."""
    with pytest.raises(ValueError, match="< 1 for the classic Gaussian calibration"):
        Gaussian.for_approx_dp(epsilon=1.0, delta=1e-5, sensitivity=1.0, relation=R,
                               method="classic")
    with pytest.raises(ValueError, match="use method='analytic'"):
        classic_gaussian_sigma(epsilon=2.0, delta=1e-5, sensitivity=1.0)


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 0.99])
def test_classic_is_valid_and_looser_than_analytic(epsilon):
    """Where it applies, the classic sigma is larger than the analytic one and meets
    the target (its exact epsilon is below the claim)."""
    classic = Gaussian.for_approx_dp(epsilon=epsilon, delta=1e-6, sensitivity=1.0, relation=R,
                                     method="classic")
    analytic = Gaussian.for_approx_dp(epsilon=epsilon, delta=1e-6, sensitivity=1.0, relation=R)
    assert classic.noise_scale == pytest.approx(
        math.sqrt(2 * math.log(1.25 / 1e-6)) / epsilon)
    assert classic.noise_scale > analytic.noise_scale
    assert classic.epsilon_at(1e-6) < epsilon


def test_zcdp_and_gdp_calibrations_are_exact():
    """for_zcdp gives rho exactly; for_gdp gives mu exactly."""
    s = Sensitivity(value=2.0, norm=Norm.L2, relation=R)
    assert Gaussian.for_zcdp(0.125, sensitivity=s).zcdp_rho() == pytest.approx(0.125, rel=1e-15)
    assert Gaussian.for_gdp(0.4, sensitivity=s).guarantee() == GDP(mu=0.4)
    assert Gaussian.for_gdp(0.4, sensitivity=s).zcdp_rho() == pytest.approx(0.08, rel=1e-15)


def test_noise_multiplier_is_sigma_over_sensitivity():
    """noise_multiplier = sigma / Delta (opacus's parameter)."""
    s = Sensitivity(value=2.0, norm=Norm.L2, relation=R)
    assert Gaussian(noise_scale=3.0, sensitivity=s).noise_multiplier == 1.5


@pytest.mark.statistical
def test_release_noise_follows_the_normal_law():
    """Released noise fits N(0, sigma^2) and rejects a 5% scale error (see _stats).
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    m = Gaussian(noise_scale=2.5, sensitivity=Sensitivity(value=1.0, norm=Norm.L2, relation=R))
    assert_law(m.release(0.0, rng=777, size=N_DRAWS), stats.norm, scale=2.5)


def test_vector_release_is_unbiased_and_shaped():
    """A vector release has the value's shape after the batch shape; mean is the value."""
    m = Gaussian(noise_scale=1.0, sensitivity=Sensitivity(value=1.0, norm=Norm.L2, relation=R))
    out = m.release(np.arange(4.0), rng=9, size=50_000)
    assert out.shape == (50_000, 4)
    np.testing.assert_allclose(out.mean(axis=0), np.arange(4.0), atol=5 / math.sqrt(50_000))
