"""The floating-point-safe release path (``mechanisms/_grid.py``) and its exact-tail noise
(``mechanisms/_noise.py``): issue 10, items 1 and 2.

Statistical tests are seeded and marked ``statistical``; each states its false-failure
rate for a random seed (for the fixed seed they are deterministic).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import ClassVar

import numpy as np
import pytest
from scipy import stats

from privkit import Neighbouring
from privkit.errors import InvalidParameterError
from privkit.mechanisms import _grid, _noise
from privkit.mechanisms._grid import clamp_bound, grid, release_on_grid
from privkit.mechanisms._noise import (
    EXP_CUTOFF,
    NORMAL_CUTOFF,
    l2_laplace_noise,
    standard_exponential,
    standard_l2_laplace,
    standard_laplace,
    standard_normal,
)

A = Neighbouring.ADD_REMOVE
ALPHA = 1e-3  # KS false-failure rate per test for a random seed
#: numpy's ziggurat edges (numpy/random/src/distributions/ziggurat_constants.h): beyond
#: them a draw comes from one 53-bit uniform, so its tail ends (44.43 and 12.2254).
ZIGGURAT_EXP_R = 7.69711747013104972
ZIGGURAT_NOR_R = 3.6541528853610088
NUMPY_EXP_MAX = 44.4339  # r - log(2^-53)
NUMPY_NORMAL_MAX = 12.2255  # the measured cut-off, rounded up


def laplace_release(x: object, b: float, *, rng: object, shape: tuple[int, ...] = (),
                    sensitivity: float = 1.0) -> np.ndarray:
    """What ``Laplace.release`` hands to release_on_grid (L1: penalty d)."""
    return release_on_grid(np.asarray(x, dtype=float), noise_scale=b, sensitivity=sensitivity,
                           dimension_penalty=float, standard_noise=standard_laplace,
                           rng=rng, shape=shape, owner="Laplace.release")


class ScriptedRNG:
    """A stand-in for ``numpy.random.Generator`` whose draws follow a script, then (if
    given) a fallback generator: it reaches the events numpy's samplers never produce."""

    def __init__(self, exponential: list[float] | None = None,
                 normal: list[float] | None = None, uniform: list[float] | None = None,
                 fallback: np.random.Generator | None = None,
                 exponential_scale: float = 1.0) -> None:
        self.script = {"exp": list(exponential or []), "nor": list(normal or []),
                       "uni": list(uniform or [])}
        self.fallback = fallback
        self.exponential_scale = exponential_scale

    def _take(self, kind: str, size: object, draw: Callable[[object], object]) -> object:
        n = 1 if size is None else math.prod(np.atleast_1d(np.asarray(size, dtype=int)))
        queue = self.script[kind]
        if len(queue) >= n:
            values, self.script[kind] = queue[:n], queue[n:]
            out = np.array(values, dtype=float)
        else:
            assert self.fallback is not None, f"script for {kind} ran out"
            out = np.asarray(draw(n), dtype=float).reshape(-1)
        if size is None:
            return float(out[0])
        return out.reshape(size if isinstance(size, tuple) else (int(size),))

    def standard_exponential(self, size: object = None) -> object:
        assert self.fallback is not None or self.script["exp"]
        gen = self.fallback
        return self._take("exp", size, lambda n: gen.standard_exponential(n)
                          * self.exponential_scale)

    def standard_normal(self, size: object = None) -> object:
        gen = self.fallback
        return self._take("nor", size, lambda n: gen.standard_normal(n))

    def random(self, size: object = None) -> object:
        gen = self.fallback
        return self._take("uni", size, lambda n: gen.random(n))


# -- the grid -------------------------------------------------------------------------------

class TestGrid:
    """The grid step and the noise scale in grid units."""

    # (noise_scale, sensitivity, penalty): typical, high-dimensional, small epsilon
    CASES: ClassVar[list[tuple[float, float, float]]] = [
        (1.0, 1.0, 1.0), (2.0, 1.0, 3.0), (1e4, 1.0, 1.0), (3.7306, 1.0, 100.0),
        (10.0, 1.0, 1e4), (1.0, 1.0, 1e7), (1e5, 1.0, 1.0), (1e-200, 3e-201, 7.0),
    ]

    @pytest.mark.parametrize(("b", "sens", "p"), CASES)
    def test_the_released_mechanism_has_exactly_the_declared_sensitivity_over_scale(
            self, b: float, sens: float, p: float) -> None:
        """(sensitivity of r in grid units) / s <= sensitivity / noise_scale, in exact
        rational arithmetic, with p rounded up by an ulp (math.sqrt may round down)."""
        g, s = grid(b, sens, p)
        p_up = Fraction(math.nextafter(p, math.inf))
        assert (Fraction(sens) / Fraction(g) + p_up) / Fraction(s) <= Fraction(sens) / Fraction(b)

    @pytest.mark.parametrize(("b", "sens", "p"), CASES)
    def test_step_is_a_power_of_two_and_the_scale_in_grid_units_is_bounded(
            self, b: float, sens: float, p: float) -> None:
        """g = 2^k; 2^20 <= b/g; s <= min(2^32, 2^38 sens/b), so that a cell (1/s in noise
        units) holds at least 2^17 of numpy's lattice points (spacing <= 2^-49) and the
        lattice residual 2 h s is at most 2^-10 of sens/b; the inflation p g/sens <= 2^-4."""
        g, s = grid(b, sens, p)
        assert math.frexp(g)[0] == 0.5
        assert b / g >= 2.0**20
        assert s <= min(2.0**32, 2.0**38 * sens / b) * (1 + 2.0**-40)
        assert 2 * 2.0**-49 * s <= 2.0**-10 * sens / b * (1 + 2.0**-40)
        assert p * g / sens <= 2.0**-4

    def test_preferred_grid_has_negligible_inflation_for_ordinary_parameters(self) -> None:
        """epsilon = 1, one coordinate: inflation at most 2^-24, resolution 2^-20 of b."""
        g, s = grid(1.0, 1.0, 1.0)
        assert g == 2.0**-24
        assert s / (1.0 / g) - 1.0 <= 2.0**-24 + 2.0**-47

    def test_grid_step_keeps_its_old_meaning(self) -> None:
        """grid_step(b, sens, p) is the step of grid(b, sens, p)."""
        assert _grid.grid_step(2.0, 1.0, 1.0) == grid(2.0, 1.0, 1.0)[0]

    @pytest.mark.parametrize(("m", "p"), [(1.0, 1.0), (1e3, 1.0), (9e4, 1.0), (1.0, 1e6),
                                          (100.0, 1e4), (20.0, 5e6)])
    def test_documented_acceptance_region_is_accepted(self, m: float, p: float) -> None:
        """sens/b >= 2^-16.5 sqrt(p) and p b/sens <= 2^27 are always released."""
        assert 1.0 / m >= _grid._FLOOR * math.sqrt(p)
        assert p * m <= _grid._MAX_SNAP
        grid(m * 0.37, 0.37, p)

    @pytest.mark.parametrize(("b", "p"), [(1e12, 1.0), (1e4, 1e7), (1.4e5, 1.0),
                                          (1e6, 1e3), (1.0, 2e9)])
    def test_unsafe_parameters_are_refused_naming_the_noise_scale(self, b: float, p: float
                                                                  ) -> None:
        """No grid is safe: a clear InvalidParameterError, never a silent overflow."""
        with pytest.raises(InvalidParameterError, match=r"`noise_scale` must be small enough"):
            grid(b, 1.0, p, False, "Laplace.release")

    def test_integer_valued_answers_pay_no_snapping_penalty(self) -> None:
        """Counts at epsilon 1e-4 in 10^7 bins: refused with the L1 penalty, accepted with
        integer_valued (g <= 1 divides every integer; s = b/g, no inflation)."""
        with pytest.raises(InvalidParameterError):
            grid(1e4, 1.0, 1e7)
        g, s = grid(1e4, 1.0, 1e7, True)
        assert g <= 1.0
        assert s == pytest.approx(1e4 / g, rel=2.0**-45)

    def test_extreme_absolute_scales(self) -> None:
        """Tiny but normal scales work; a subnormal scale is refused by name."""
        g, _ = grid(1e-300, 1e-300, 1.0)
        assert g >= 2.0**-1022
        with pytest.raises(InvalidParameterError, match="larger units"):
            grid(1e-310, 1e-310, 1.0)


# -- the reproducers of issue 10, items 1 and 2 ---------------------------------------------

class TestReproducers:
    """Each reproducer either is refused clearly or releases the declared law."""

    def test_laplace_at_epsilon_1e_minus_12_is_refused(self) -> None:
        """Laplace.for_epsilon(1e-12).release(x) returned x +- 2^39 in 58% of draws."""
        with pytest.raises(InvalidParameterError, match="noise_scale"):
            laplace_release(3.0, 1e12, rng=np.random.default_rng(0))

    def test_laplace_through_the_mechanism_is_refused_at_epsilon_1e_minus_12(self) -> None:
        """The same through the public class."""
        from privkit.mechanisms import Laplace

        m = Laplace.for_epsilon(1e-12, sensitivity=1.0, relation=A)
        with pytest.raises(InvalidParameterError, match="noise_scale"):
            m.release(3.0, rng=0)

    def test_gaussian_at_mu_1e_minus_12_is_refused(self) -> None:
        """Gaussian.for_gdp(mu=1e-12) overflowed the same way."""
        from privkit.mechanisms import Gaussian

        m = Gaussian.for_gdp(1e-12, sensitivity=1.0, relation=A)
        with pytest.raises(InvalidParameterError, match="noise_scale"):
            m.release([1.0, 2.0], rng=0)

    def test_l2_laplace_at_tiny_epsilon_is_refused(self) -> None:
        """L2Laplace (the noise of OutputPerturbationClassifier(epsilon=1e-300))."""
        from privkit.mechanisms import L2Laplace

        m = L2Laplace.for_epsilon(1e-300, sensitivity=1.0, relation=A)
        with pytest.raises(InvalidParameterError, match="noise_scale"):
            m.release([1.0, 2.0, 3.0], rng=0)

    def test_analyze_gauss_with_a_huge_noise_scale_is_refused(self) -> None:
        """AnalyzeGauss(noise_scale=1e12) on a 3x3 matrix (6 entries, L2 penalty sqrt(6))."""
        with pytest.raises(InvalidParameterError, match="noise_scale"):
            release_on_grid(np.ones(6), noise_scale=1e12, sensitivity=1.0,
                            dimension_penalty=math.sqrt, standard_noise=standard_normal,
                            rng=np.random.default_rng(0), shape=(), owner="AnalyzeGauss.release")

    def test_analyze_gauss_through_the_class_is_refused(self) -> None:
        """The same through AnalyzeGauss itself (its release goes through the grid)."""
        from privkit.mechanisms import AnalyzeGauss

        m = AnalyzeGauss(noise_scale=1e12, row_norm_bound=1.0, relation=A)
        with pytest.raises(InvalidParameterError, match="noise_scale"):
            m.release(np.eye(3), rng=0)

    def test_histogram_at_epsilon_1e_minus_4_is_refused_unless_declared_integer(self) -> None:
        """10^7 bins at epsilon 1e-4 left 3.8% of bins at the overflow value. Now the L1
        penalty makes it refused, and integer_valued=True releases it with no penalty
        (shown on 10^5 bins at the same scale, same grid)."""
        rng = np.random.default_rng(1)
        with pytest.raises(InvalidParameterError, match="integer_valued"):
            grid(1e4, 1.0, 1e7, False, "Laplace.release")
        counts = rng.integers(0, 50, 100_000).astype(float)
        out = release_on_grid(counts, noise_scale=1e4, sensitivity=1.0,
                              dimension_penalty=float, standard_noise=standard_laplace,
                              rng=rng, shape=(), owner="Laplace.release", integer_valued=True)
        g, _ = grid(1e4, 1.0, 1e7, True)
        assert np.all(np.mod(out / g, 1.0) == 0.0)
        assert np.max(np.abs(out - counts)) < 1e4 * 40  # no overflow value anywhere
        assert np.unique(out - counts, return_counts=True)[1].max() <= 4  # no atom

    def test_integer_valued_refuses_a_non_integer_answer(self) -> None:
        """The public promise is checked: a fractional count is an error naming value."""
        with pytest.raises(InvalidParameterError, match="`value`"):
            release_on_grid(np.array([1.0, 2.5]), noise_scale=1.0, sensitivity=1.0,
                            dimension_penalty=float, standard_noise=standard_laplace,
                            rng=np.random.default_rng(0), shape=(), owner="t",
                            integer_valued=True)
        with pytest.raises(InvalidParameterError, match="`value`"):
            release_on_grid(2.5, noise_scale=1.0, sensitivity=1.0, dimension_penalty=float,
                            standard_noise=standard_laplace, rng=np.random.default_rng(0),
                            shape=(), owner="t", integer_valued=True)

    @pytest.mark.statistical
    def test_neighbours_at_the_smallest_accepted_epsilon_are_not_told_apart(self) -> None:
        """Seeded audit at epsilon 1e-4 (b = 10^4, near the floor): the releases of 0 and
        1 share one grid, have no atom (the old bug put 58% of the mass on two values),
        and a two-sample KS test does not separate them (their true KS distance is
        1e-4/2; false-failure rate 1e-3 for a random seed)."""
        rng = np.random.default_rng(7)
        a = laplace_release(0.0, 1e4, rng=rng, shape=(100_000,))
        b = laplace_release(1.0, 1e4, rng=rng, shape=(100_000,))
        g, _ = grid(1e4, 1.0, 1.0)
        for out in (a, b):
            assert np.all(np.mod(out / g, 1.0) == 0.0)
            assert np.unique(out, return_counts=True)[1].max() <= 4
        assert stats.ks_2samp(a, b).pvalue > ALPHA

    def test_values_beyond_the_range_are_clamped_on_both_paths(self) -> None:
        """A value beyond 2^52 - 1 grid steps (or infinite) is released exactly as the
        clamp bound B = (2^52 - 1) g is, for the same seed, on the scalar and the vector
        path: the magnitude of the answer never decides whether a release succeeds."""
        g, _ = grid(1.0, 1.0, 1.0)
        bound = clamp_bound(1.0, 1.0, 1.0)
        assert bound == (2.0**52 - 1.0) * g
        for huge in (1e300, np.inf, bound * 2.0, np.nextafter(bound, np.inf)):
            for sign in (1.0, -1.0):
                same = laplace_release(sign * bound, 1.0, rng=np.random.default_rng(3))
                assert laplace_release(sign * huge, 1.0, rng=np.random.default_rng(3)) == same
        g2, _ = grid(1.0, 1.0, 2.0)
        vector = laplace_release(np.array([1e300, -np.inf]), 1.0,
                                 rng=np.random.default_rng(5))
        inside = laplace_release(np.array([1.0, -1.0]) * (2.0**52 - 1.0) * g2, 1.0,
                                 rng=np.random.default_rng(5))
        assert np.array_equal(vector, inside)

    def test_a_noise_draw_beyond_2_52_grid_steps_raises_and_never_wraps(self) -> None:
        """The one event the grid cannot represent (|Z| >= 2^20 scales, probability below
        exp(-2^18)) raises FloatingPointError on both paths instead of wrapping."""
        huge = np.random.default_rng(0)

        def enormous(rng: object, shape: tuple[int, ...]) -> np.ndarray:
            return np.full(shape, 2.0**31)

        with pytest.raises(FloatingPointError, match="2\\^52 grid steps"):
            release_on_grid(np.zeros(3), noise_scale=1.0, sensitivity=1.0,
                            dimension_penalty=float, standard_noise=enormous,
                            rng=huge, shape=(), owner="t")
        with pytest.raises(FloatingPointError):
            release_on_grid(0.0, noise_scale=1.0, sensitivity=1.0, dimension_penalty=float,
                            standard_noise=enormous, rng=huge, shape=(),
                            owner="t")


# -- exact tails ---------------------------------------------------------------------------

class TestExactTails:
    """Outputs beyond numpy's cut-offs are reachable, with the exact law."""

    def test_exponential_recursion_with_a_scripted_generator(self) -> None:
        """Two entries drawn 7.5 and 8 (both >= 7) are redrawn together: 30 (again >= 7)
        and 0.25, then 6.5: the outputs are 2 * 7 + 6.5 and 7 + 0.25 (fails if the cut-off
        7 or the shift changes); a draw of 6.99 is kept as it is."""
        rng = ScriptedRNG(exponential=[7.5, 8.0, 30.0, 0.25, 6.5])
        out = standard_exponential(rng, (2,))
        assert out.tolist() == [20.5, 7.25]
        rng = ScriptedRNG(exponential=[6.99])
        assert standard_exponential(rng, (1,)).tolist() == [6.99]
        rng = ScriptedRNG(exponential=[7.01, 0.5])
        assert standard_exponential.scalar(rng) == 7.5

    def test_exponential_beyond_numpys_end_is_reachable(self) -> None:
        """Ten draws >= 7 then 3: 73 > 44.43, which numpy's exponential never exceeds;
        through release_on_grid the output exceeds x + 44.43 b."""
        rng = ScriptedRNG(exponential=[7.5] * 10 + [3.0] + [0.0])
        assert standard_exponential.scalar(rng) == 73.0
        rng = ScriptedRNG(exponential=[7.5] * 10 + [3.0] + [0.0])
        out = release_on_grid(0.0, noise_scale=1.0, sensitivity=1.0, dimension_penalty=float,
                              standard_noise=standard_laplace, rng=rng, shape=(),
                              owner="t")
        assert out > NUMPY_EXP_MAX
        assert out == pytest.approx(73.0, rel=1e-6)  # times s g = 1 + 2^-24

    def test_normal_cutoff_with_a_scripted_generator(self) -> None:
        """3.49 is kept (fails if the cut-off drops below 3.49); 3.51 and -3.6 get exact
        tail magnitudes with their signs (fails if it rises above 3.51): E = 0.5 gives
        x = sqrt(3.5^2 + 1) = 3.640..., accepted when u x < 3.5."""
        x = math.sqrt(3.5**2 + 2 * 0.5)
        rng = ScriptedRNG(normal=[3.49, 3.51, -3.6], exponential=[0.5] * 10 + [0.0] * 30,
                          uniform=[0.5] * 40)
        out = standard_normal(rng, (3,))
        assert out.tolist() == [3.49, x, -x]
        rng = ScriptedRNG(normal=[-3.51], exponential=[0.5], uniform=[0.99, 0.0])
        rng.script["exp"] += [0.5]
        assert standard_normal.scalar(rng) == -x

    def test_normal_beyond_numpys_end_is_reachable(self) -> None:
        """A tail draw with E = 100 gives x = sqrt(3.5^2 + 200) = 14.57 > 12.2254, which
        numpy's normal never exceeds; accepted when u < 3.5 / x."""
        rng = ScriptedRNG(normal=[4.0], exponential=[7.0] * 14 + [2.0], uniform=[0.1])
        z = standard_normal.scalar(rng)
        assert z == pytest.approx(math.sqrt(3.5**2 + 200.0))
        assert z > NUMPY_NORMAL_MAX

    def test_cutoffs_lie_below_numpys_ziggurat_edges(self) -> None:
        """Only the fine-grained ziggurat layers are kept: never numpy's 53-bit tails."""
        assert EXP_CUTOFF == 7.0
        assert NORMAL_CUTOFF == 3.5
        assert EXP_CUTOFF < ZIGGURAT_EXP_R
        assert NORMAL_CUTOFF < ZIGGURAT_NOR_R

    @pytest.mark.statistical
    def test_memorylessness_gives_the_exact_law_for_any_rate(self) -> None:
        """Fed Exp(scale 10) draws, the recursion must return Exp(scale 10) exactly
        (memorylessness holds at every rate), far beyond 44.43 (P(E > 50) = e^-5): KS at
        alpha 1e-3, plus P(E > 50) within 5 standard errors (false-failure rate below
        1e-3 + 6e-7 for a random seed). A wrong shift or cut-off breaks both."""
        rng = ScriptedRNG(fallback=np.random.default_rng(11), exponential_scale=10.0)
        out = standard_exponential(rng, (200_000,))
        assert stats.kstest(out, stats.expon(scale=10.0).cdf).pvalue > ALPHA
        p, n = math.exp(-5.0), out.size
        assert abs(np.mean(out > 50.0) - p) < 5 * math.sqrt(p * (1 - p) / n)
        assert out.max() > NUMPY_EXP_MAX

    @pytest.mark.statistical
    def test_marsaglia_tail_has_the_exact_law_beyond_numpys_end(self) -> None:
        """With Exp(scale 25) fed in, x = sqrt(r^2 + 2E) accepted with probability r/x is
        the tail beyond r of N(0, 5^2) (Marsaglia 1964, at rate 1/25): KS against that
        truncated normal, 3% of it beyond 12.2254 (false-failure rate 1e-3)."""
        rng = ScriptedRNG(fallback=np.random.default_rng(12), exponential_scale=25.0)
        tail = _noise._normal_tail(rng, 100_000)
        law = stats.truncnorm(a=NORMAL_CUTOFF / 5.0, b=np.inf, scale=5.0)
        assert stats.kstest(tail, law.cdf).pvalue > ALPHA
        assert np.mean(tail > NUMPY_NORMAL_MAX) > 0.02


# -- the samplers' laws --------------------------------------------------------------------

@pytest.mark.statistical
class TestSamplerLaws:
    """Seeded KS tests at alpha 1e-3 (false-failure rate 1e-3 each for a random seed)."""

    @pytest.mark.parametrize(("sampler", "law"), [
        (standard_exponential, stats.expon()), (standard_laplace, stats.laplace()),
        (standard_normal, stats.norm()),
    ])
    def test_vector_draws(self, sampler: _noise.StandardNoise, law: object) -> None:
        """200,000 draws fit the law; a 5% scale error would be rejected (see
        tests/_stats.py for the power)."""
        out = sampler(np.random.default_rng(21), (400, 500))
        assert out.shape == (400, 500)
        assert stats.kstest(out.ravel(), law.cdf).pvalue > ALPHA

    @pytest.mark.parametrize(("sampler", "law"), [
        (standard_laplace, stats.laplace()), (standard_normal, stats.norm()),
    ])
    def test_scalar_draws(self, sampler: _noise.StandardNoise, law: object) -> None:
        """20,000 scalar draws fit the law."""
        rng = np.random.default_rng(22)
        out = [sampler.scalar(rng) for _ in range(20_000)]
        assert stats.kstest(out, law.cdf).pvalue > ALPHA

    def test_normal_tail_sampler(self) -> None:
        """The tail magnitudes alone: N(0, 1) conditioned on > 3.5."""
        tail = _noise._normal_tail(np.random.default_rng(23), 50_000)
        assert stats.kstest(tail, stats.truncnorm(a=3.5, b=np.inf).cdf).pvalue > ALPHA

    def test_l2_laplace_radius_is_gamma_and_direction_uniform(self) -> None:
        """In R^3: ||b|| ~ Gamma(3) and, by Archimedes, each coordinate of the direction
        is Uniform(-1, 1), independent of the radius (two KS tests and a rank correlation
        within 5 standard errors: false-failure rate below 2e-3 + 6e-7)."""
        out = standard_l2_laplace(np.random.default_rng(24), (50_000, 3), 1)
        radius = np.linalg.norm(out, axis=1)
        assert stats.kstest(radius, stats.gamma(3).cdf).pvalue > ALPHA
        first = out[:, 0] / radius
        assert stats.kstest(first, stats.uniform(loc=-1, scale=2).cdf).pvalue > ALPHA
        assert abs(stats.spearmanr(radius, np.abs(first))[0]) < 5 / math.sqrt(50_000)

    def test_l2_laplace_over_two_axes_and_zero_axes(self) -> None:
        """vector_ndim=2 treats a (2, 3) block as one 6-vector (radius Gamma(6));
        vector_ndim=0 is the unit Laplace; l2_laplace_noise wraps both."""
        out = standard_l2_laplace(np.random.default_rng(25), (20_000, 2, 3), 2)
        radius = np.sqrt(np.sum(out**2, axis=(1, 2)))
        assert stats.kstest(radius, stats.gamma(6).cdf).pvalue > ALPHA
        flat = standard_l2_laplace(np.random.default_rng(26), (50_000,), 0)
        assert stats.kstest(flat, stats.laplace().cdf).pvalue > ALPHA
        assert l2_laplace_noise(0) is standard_laplace
        vec = l2_laplace_noise(1)(np.random.default_rng(27), (4, 5))
        assert vec.shape == (4, 5)

    def test_l2_laplace_redraws_an_all_zero_direction(self) -> None:
        """A zero normal vector (possible on numpy's lattice) is redrawn, never NaN."""
        rng = ScriptedRNG(normal=[0.0, 0.0, 0.3, 0.4], exponential=[1.0, 2.0])
        out = standard_l2_laplace(rng, (2,), 1)
        np.testing.assert_allclose(out, [0.6 * 3.0, 0.8 * 3.0])


# -- the release path ----------------------------------------------------------------------

class TestRelease:
    """release_on_grid end to end."""

    @pytest.mark.statistical
    @pytest.mark.parametrize(("sampler", "penalty", "law"), [
        (standard_laplace, float, stats.laplace), (standard_normal, math.sqrt, stats.norm),
    ])
    def test_release_has_the_inflated_law(self, sampler: _noise.StandardNoise,
                                          penalty: Callable[[int], float],
                                          law: Callable[..., object]) -> None:
        """Outputs of x = 3 at b = 2 fit x + (inflated scale) Z (KS, alpha 1e-3; false-
        failure rate 1e-3 for a random seed; the grid step 2^-23 is invisible to KS)."""
        rng = np.random.default_rng(31)
        out = release_on_grid(np.full(4, 3.0), noise_scale=2.0, sensitivity=1.0,
                              dimension_penalty=penalty, standard_noise=sampler, rng=rng,
                              shape=(50_000,), owner="t")
        g, s = grid(2.0, 1.0, penalty(4))
        assert out.shape == (50_000, 4)
        fitted = law(loc=3.0, scale=s * g)
        assert stats.kstest(out.ravel(), fitted.cdf).pvalue > ALPHA

    def test_outputs_lie_on_one_grid_whatever_the_input(self) -> None:
        """Mironov's attack reads the input from reachable floats: every output is an
        integer multiple of the same power-of-two step, on both paths."""
        g, _ = grid(1.0, 1.0, 1.0)
        rng = np.random.default_rng(32)
        for x in (0.0, 0.1, 1 / 3, 12345.678):
            vector = laplace_release([x], 1.0, rng=rng, shape=(1000,))
            scalar = [laplace_release(x, 1.0, rng=rng) for _ in range(100)]
            assert np.all(np.mod(vector / g, 1.0) == 0.0)
            assert np.all(np.mod(np.array(scalar) / g, 1.0) == 0.0)

    def test_scalar_fast_path_computes_the_same_function_as_the_array_path(self) -> None:
        """Same seed, same draws: a 0-d value (fast path) and a 1-element vector give the
        identical release, for Laplace always and for the Gaussian outside its tail."""
        for seed in range(300):
            fast = laplace_release(0.3, 1.5, rng=np.random.default_rng(seed))
            slow = laplace_release([0.3], 1.5, rng=np.random.default_rng(seed))
            assert type(fast) is np.float64
            assert fast == slow[0]
        for seed in range(300):
            rng = np.random.default_rng(seed)
            z = rng.standard_normal()
            kwargs = dict(noise_scale=1.5, sensitivity=1.0, dimension_penalty=math.sqrt,
                          standard_noise=standard_normal, shape=(), owner="t")
            fast = release_on_grid(0.3, rng=np.random.default_rng(seed), **kwargs)
            slow = release_on_grid(np.array([0.3]), rng=np.random.default_rng(seed), **kwargs)
            if abs(z) < NORMAL_CUTOFF:
                assert fast == slow[0]

    def test_plain_callable_samplers_still_work(self) -> None:
        """A sampler without .scalar (e.g. a lambda around one) takes the generic draw."""
        out = release_on_grid(1.0, noise_scale=1.0, sensitivity=1.0, dimension_penalty=float,
                              standard_noise=lambda r, s: standard_laplace(r, s),
                              rng=np.random.default_rng(0), shape=(), owner="t")
        assert np.isfinite(out)

    def test_shapes_and_size(self) -> None:
        """Output shape is size + value.shape; an empty value gives an empty output."""
        rng = np.random.default_rng(33)
        assert laplace_release(np.zeros((2, 3)), 1.0, rng=rng, shape=(4,)).shape == (4, 2, 3)
        assert laplace_release(5.0, 1.0, rng=rng, shape=(7,)).shape == (7,)
        assert laplace_release(np.zeros(0), 1.0, rng=rng).shape == (0,)

    def test_the_mechanisms_draw_with_the_exact_tail_samplers(self) -> None:
        """Laplace, Gaussian, AnalyzeGauss and L2Laplace (and so the algorithms built on
        them) hand release_on_grid the samplers of _noise, whose tails are tested above."""
        from privkit.mechanisms import AnalyzeGauss, Gaussian, L2Laplace, Laplace

        lap = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
        gau = Gaussian.for_gdp(1.0, sensitivity=1.0, relation=A)
        ag = AnalyzeGauss(noise_scale=1.0, row_norm_bound=1.0, relation=A)
        l2 = L2Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
        for ndim in (0, 1, 2):
            assert lap.standard_noise(ndim) is standard_laplace
            assert gau.standard_noise(ndim) is standard_normal
            assert ag.standard_noise(ndim) is standard_normal
            assert l2.standard_noise(ndim) is l2_laplace_noise(ndim)
        assert l2.standard_noise(0) is standard_laplace


@pytest.mark.parametrize("seed", range(4))
def test_random_parameters_are_released_safely_or_refused(seed: int) -> None:
    """500 random (noise_scale, sensitivity, penalty, integer_valued) per seed over 540
    orders of magnitude: either refused with InvalidParameterError, or a power-of-two
    step with s <= min(2^32, 2^38 sens/b), b/g >= 2^20, inflation <= 2^-4 and
    (sens/g + p)/s <= sens/b exactly; the documented acceptance region is never refused
    and the documented refusal region never accepted (module docstring of _grid)."""
    rng = np.random.default_rng(seed)
    for _ in range(500):
        m = 2.0 ** rng.uniform(-30, 25)
        p = 2.0 ** rng.uniform(0, 40)
        b = 2.0 ** rng.uniform(-900, 900)
        sens, integer = b / m, bool(rng.random() < 0.2)
        documented = 1 / m >= _grid._FLOOR * math.sqrt(p) and p * m <= _grid._MAX_SNAP
        refused = 1 / m < 2.0**-17 * math.sqrt(p) or p * m > 2.0**28
        try:
            g, s = _grid._grid(b, sens, p, integer, "t")
        except InvalidParameterError:
            assert not documented, (b, sens, p, integer)
            continue
        assert integer or not refused, (b, sens, p)
        penalty = 0.0 if integer and g <= 1.0 else p
        assert math.frexp(g)[0] == 0.5
        assert b / g >= 2.0**20
        assert s <= min(2.0**32, 2.0**38 / m) * (1 + 2.0**-40)
        assert penalty * g / sens <= 2.0**-4 * (1 + 2.0**-40)
        p_up = Fraction(math.nextafter(penalty, math.inf)) if penalty else Fraction(0)
        assert (Fraction(sens) / Fraction(g) + p_up) / Fraction(s) <= Fraction(sens) / Fraction(b)



def test_a_long_histogram_at_small_epsilon_releases_as_integer_valued() -> None:
    """Laplace at epsilon 1e-4 on 10^5 counts is refused as real-valued (the snapping
    penalty is too large) and released through ``integer_valued=True``: the noise has the
    Laplace law (its median absolute value is b ln 2, within 2% at 10^5 draws: about
    eight standard errors) and no output sits at an overflow value (which 3.8% of bins
    did when the noise wrapped around int64)."""
    import pytest

    from privkit.errors import InvalidParameterError
    from privkit.mechanisms import Laplace

    m = Laplace.for_histogram(epsilon=1e-4, relation="add_remove")
    counts = np.zeros(100_000)
    with pytest.raises(InvalidParameterError, match="noise_scale"):
        m.release(counts, rng=0)
    out = m.release(counts, rng=0, integer_valued=True)
    assert np.max(np.abs(out)) < 40 * m.noise_scale
    assert abs(np.median(np.abs(out)) / m.noise_scale - np.log(2)) < 0.02
