"""The Laplace mechanism."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from _stats import N_DRAWS, assert_law
from privkit import Neighbouring, Norm, PureDP, Sensitivity
from privkit.mechanisms import Laplace, laplace_rdp
from privkit.mechanisms._grid import grid_step

A = Neighbouring.ADD_REMOVE


@given(st.floats(min_value=1e-3, max_value=50.0), st.floats(min_value=1e-3, max_value=1e3))
def test_calibration_round_trips(epsilon, sensitivity):
    """Property: for_epsilon then guarantee() gives epsilon back within 1e-12 relative."""
    m = Laplace.for_epsilon(epsilon, sensitivity=sensitivity, relation=A)
    assert m.epsilon_at(0.0) == pytest.approx(epsilon, rel=1e-12)


def test_guarantee_is_pure_and_boundary_is_sharp():
    """scale = 2 for epsilon 0.5 passes; a scale a hair smaller does not fit 0.5."""
    m = Laplace.for_epsilon(0.5, sensitivity=1.0, relation=A)
    assert m.guarantee().within(PureDP(epsilon=0.5))
    assert PureDP(epsilon=0.5) in m.guarantees()
    tighter = Laplace(noise_scale=2.0 * (1 - 1e-9), sensitivity=m.sensitivity)
    assert not tighter.guarantee().within(PureDP(epsilon=0.5))


@pytest.mark.statistical
def test_release_noise_follows_the_laplace_law():
    """Released noise fits Laplace(scale) and rejects a 5% scale error (see _stats).
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    m = Laplace(noise_scale=1.7, sensitivity=Sensitivity(value=1.0, norm=Norm.L1, relation=A))
    assert_law(m.release(0.0, rng=20261121, size=N_DRAWS), stats.laplace, scale=1.7)


@pytest.mark.statistical
def test_simulate_follows_the_laplace_law():
    """The float path draws the same law.
    Seeded: the false-failure rate over seeds is ALPHA = 1e-3 per check."""
    m = Laplace(noise_scale=0.3, sensitivity=Sensitivity(value=1.0, norm=Norm.L1, relation=A))
    assert_law(m.simulate(0.0, rng=11, size=N_DRAWS), stats.laplace, scale=0.3)


def test_release_is_unbiased_and_shaped():
    """Output shape is (*size, *value.shape); the mean is the value (5 standard errors)."""
    m = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
    out = m.release([10.0, -3.0, 0.5], rng=5, size=(40_000, 2))
    assert out.shape == (40_000, 2, 3)
    standard_error = math.sqrt(2) * m.noise_scale / math.sqrt(80_000)
    np.testing.assert_allclose(out.mean(axis=(0, 1)), [10.0, -3.0, 0.5],
                               atol=5 * standard_error)


def test_release_outputs_lie_on_a_grid_that_does_not_depend_on_the_data():
    """Mironov's attack reads the input from which floats are reachable. Every release
    is an integer multiple of the same power-of-two step, whatever the input."""
    m = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
    g = grid_step(m.noise_scale, 1.0, 1.0)
    assert math.log2(g) == int(math.log2(g))
    for x in (0.0, 0.1, 1 / 3, 12345.678):
        out = m.release(x, rng=1, size=1000)
        assert np.all(np.mod(out / g, 1.0) == 0.0)


def test_rdp_equals_numerical_renyi_divergence():
    """laplace_rdp equals the Renyi divergence of Lap(0, b) and Lap(1, b) by quadrature
    (Mironov 2017, Prop. 6, checked independently)."""
    b = 1.5
    for a in (1.5, 2.0, 7.0):
        def integrand(x, a=a):
            p = stats.laplace.pdf(x, scale=b)
            q = stats.laplace.pdf(x, loc=1.0, scale=b)
            return p**a * q ** (1 - a)

        value = sum(integrate.quad(integrand, lo, hi, epsabs=1e-13)[0]
                    for lo, hi in ((-60, 0), (0, 1), (1, 60)))
        assert laplace_rdp(epsilon=1 / b,
                           orders=[a])[0] == pytest.approx(math.log(value) / (a - 1), rel=1e-8)


@pytest.mark.parametrize("eps", [0.0, 0.3, 0.79])
def test_laplace_profile_equals_numerical_hockey_stick(eps):
    """LaplaceDP's profile 1 - e^((t - eps0)/2) equals the hockey-stick integral of
    Lap(1, 1/eps0) against Lap(0, 1/eps0), by quadrature."""
    from privkit import LaplaceDP

    eps0 = 0.8

    def integrand(x):
        return max(stats.laplace.pdf(x, loc=1, scale=1 / eps0)
                   - math.exp(eps) * stats.laplace.pdf(x, scale=1 / eps0), 0.0)

    direct = sum(integrate.quad(integrand, a, b, epsabs=1e-13)[0]
                 for a, b in ((-50, 0), (0, 1), (1, 60)))
    assert LaplaceDP(epsilon=eps0).delta_at(eps) == pytest.approx(direct, rel=1e-8)


def test_approx_dp_calibration_uses_the_exact_profile():
    """for_approx_dp meets (eps, delta) exactly and adds less noise than for_epsilon."""
    m = Laplace.for_approx_dp(epsilon=1.0, delta=1e-3, sensitivity=1.0, relation=A)
    assert m.epsilon_at(1e-3) == pytest.approx(1.0, rel=1e-12)
    assert m.noise_scale < Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A).noise_scale


def test_huge_values_are_clamped_not_wrapped():
    """A value beyond the grid's exact range is released as the clamp bound would be
    (same seed, same output), never wrapped around and never refused."""
    m = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
    bound = m.clamp_bound()
    assert m.release(1e30, rng=0) == m.release(bound, rng=0)
    assert m.release(-np.inf, rng=0) == m.release(-bound, rng=0)
