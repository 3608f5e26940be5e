"""Query answers are private: every mechanism's success and messages depend on public
things only (issue 22, channel 3; ``privkit.mechanism``'s module docstring).

Values beyond a mechanism's public range (infinities included) are clamped onto it, NaN
and non-integers under an integer declaration are refused without the value, empty
answers give empty releases, and nothing loops. The clamp's privacy argument (it moves
no two answers further apart) is checked as a property of the released map.
"""

import functools
import math

import numpy as np
import pytest
from _transcript import SENTINEL_FLOAT, capture, deadline, leaks
from hypothesis import given
from hypothesis import strategies as st

from privkit import AdditiveMechanism, InvalidParameterError, Ledger, registered_mechanisms
from privkit import _validation as check
from privkit.mechanism import FLOAT_BOUND, mechanism_from_spec
from privkit.mechanisms import (
    AnalyzeGauss,
    DiscreteGaussian,
    DiscreteLaplace,
    Exponential,
    Gaussian,
    L2Laplace,
    Laplace,
    ObjectivePerturbation,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
    SparseVector,
    StabilityHistogram,
    counts,
)
from privkit.mechanisms._grid import grid, release_on_grid
from privkit.mechanisms._noise import standard_laplace
from privkit.mechanisms._validators import add_integer_noise
from privkit.neighbouring import Neighbouring

A = Neighbouring.ADD_REMOVE
KINDS = sorted(k for k, cls in registered_mechanisms().items()
               if cls.__module__.startswith("privkit."))


@functools.cache
def built_in(kind):
    """A calibrated mechanism of ``kind`` with a valid answer and its release options."""
    if kind == "objective_perturbation":
        m = ObjectivePerturbation.for_epsilon(1.0, curvature=1.0, n_samples=100,
                                              regularization=0.1)
        return m, 3, {}
    worst = registered_mechanisms()[kind].worst_case(epsilon=1.0, delta=1e-5)
    return worst.mechanism, worst.first, worst.options


def with_nan(template):
    """``template`` (a valid answer) with one entry NaN."""
    x = np.array(template, dtype=float)
    x.reshape(-1)[0] = math.nan
    return x if x.ndim else float(x)


@pytest.mark.parametrize("kind", KINDS)
def test_nan_is_refused_without_the_value_and_nothing_is_recorded(kind):
    """Every mechanism refuses an answer holding NaN (objective perturbation: a NaN
    dimension) with InvalidParameterError naming `value` and showing neither the value
    nor a chained numpy error, on release and simulate; the ledger records nothing."""
    mechanism, template, options = built_in(kind)
    value = np.array([SENTINEL_FLOAT, math.nan]) if np.ndim(template) == 1 else with_nan(
        template)
    for method in (mechanism.release, mechanism.simulate):
        with Ledger() as ledger:
            said = capture(lambda method=method: method(value, rng=0, **options))
        assert isinstance(said.error, InvalidParameterError), (kind, said.error)
        assert "`value`" in str(said.error)
        assert "not shown" in str(said.error)
        assert said.error.__cause__ is None
        assert said.error.__context__ is None
        assert not leaks(said), leaks(said)
        assert len(ledger) == 0


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in (
    "objective_perturbation", "randomized_response")])  # an int dimension, int categories
def test_infinities_and_huge_answers_release_without_a_word(kind):
    """An answer with infinities or 1e308 entries (in an integer-valued answer: an
    integral float) is released, finite, with no warning and no output, on both paths."""
    mechanism, template, options = built_in(kind)
    x = np.array(template, dtype=float)
    flat = x.reshape(-1)
    for extreme in (math.inf, -math.inf, 1e308, -1e308):
        flat[0] = extreme
        for method in (mechanism.release, mechanism.simulate):
            said = capture(lambda method=method, x=x: method(x.copy(), rng=1, **options))
            assert said.error is None, (kind, extreme, said.error)
            assert said.warnings == []
            assert said.logs == []
            assert not said.stdout + said.stderr
            assert np.all(np.isfinite(np.asarray(said.result, dtype=float)))


ADDITIVE = [k for k in KINDS if issubclass(registered_mechanisms()[k], AdditiveMechanism)]


@pytest.mark.parametrize("kind", ADDITIVE)
def test_release_and_simulate_clamp_onto_the_stated_bounds(kind):
    """Beyond clamp_bound (and at infinity) an additive mechanism releases, for the same
    seed, exactly what it releases at the bound: the stated public map. simulate, with
    plain floats, clamps onto FLOAT_BOUND only (the same seed gives the same output for
    inf and for FLOAT_BOUND, and a value beyond clamp_bound is not clamped)."""
    mechanism, template, _options = built_in(kind)
    x = np.array(template, dtype=float)
    if kind == "analyze_gauss":
        x = np.zeros((2, 2))
        dimension = 3  # the upper triangle's entries
    else:
        x = np.atleast_1d(x)[:1].copy()
        dimension = 1
    for method, bound in ((mechanism.release, mechanism.clamp_bound(dimension)),
                          (mechanism.simulate, FLOAT_BOUND)):
        at = x.copy()
        at.reshape(-1)[0] = bound
        beyond = x.copy()
        beyond.reshape(-1)[0] = math.inf
        far = x.copy()
        far.reshape(-1)[0] = bound * 4.0
        reference = method(at, rng=9)
        assert np.array_equal(method(beyond, rng=9), reference)
        assert np.array_equal(method(far, rng=9), reference)
    if kind not in ("discrete_laplace", "discrete_gaussian"):  # their range is 2^62 for both
        inside = x.copy()
        inside.reshape(-1)[0] = mechanism.clamp_bound(dimension) * 4.0
        assert np.max(np.abs(mechanism.simulate(inside, rng=9))) > mechanism.clamp_bound(
            dimension) * 3.0


def test_clamp_bound_is_a_function_of_public_parameters():
    """The grid's bound: 2^28 (2^52 - 1 steps of 2^-24) for a scalar Laplace of scale 1,
    halved with the dimension's penalty; 2^62 for the discrete mechanisms."""
    lap = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
    assert lap.clamp_bound() == (2.0**52 - 1.0) * 2.0**-24
    assert lap.clamp_bound(2) == lap.clamp_bound() / 2
    assert lap.clamp_bound(0) == lap.clamp_bound(1)
    assert DiscreteLaplace.for_epsilon(1.0, sensitivity=1.0, relation=A).clamp_bound(9) == 2.0**62
    assert DiscreteGaussian.for_zcdp(1.0, sensitivity=1.0, relation=A).clamp_bound() == 2.0**62
    with pytest.raises(InvalidParameterError, match="`dimension` must be an integer >= 0"):
        lap.clamp_bound(-1)


def zero_noise(rng, shape):
    return np.zeros(shape)


@given(st.floats(allow_nan=False), st.floats(allow_nan=False),
       st.sampled_from([1e-3, 1.0, 1e4]))
def test_the_clamped_snapped_answer_moves_no_further_than_the_answer(x, y, scale):
    """The released map without noise, clip(rint(x / g)) g, moves two answers at most
    |x - y| + g apart (snapping adds one step, the grid's analysis pays for it; the clamp
    adds nothing), for every pair of doubles, infinities included: the property that
    makes the clamp free of privacy cost."""
    def release(v):
        return float(release_on_grid(v, noise_scale=scale, sensitivity=1.0,
                                     dimension_penalty=float, standard_noise=zero_noise,
                                     rng=np.random.default_rng(0), shape=(), owner="t"))
    g = grid(scale, 1.0, 1.0)[0]
    rx, ry = release(x), release(y)
    assert math.isfinite(rx)
    assert math.isfinite(ry)
    assert abs(rx - ry) <= abs(x - y) + g


@pytest.mark.parametrize(("mechanism", "empty", "shape"), [
    (Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A), [], (2, 0)),
    (Gaussian.for_gdp(1.0, sensitivity=1.0, relation=A), np.zeros((0, 3)), (2, 0, 3)),
    (L2Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A), [], (2, 0)),
    (L2Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A), np.zeros((3, 0)), (2, 3, 0)),
    (DiscreteLaplace.for_epsilon(1.0, sensitivity=1.0, relation=A), [], (2, 0)),
    (DiscreteGaussian.for_zcdp(1.0, sensitivity=1.0, relation=A), [], (2, 0)),
    (AnalyzeGauss(noise_scale=1.0, row_norm_bound=1.0, relation=A), np.zeros((0, 0)),
     (2, 0, 0)),
    (SparseVector.for_epsilon(1.0, sensitivity=1.0, relation=A), [], (2, 0)),
    (RandomizedResponse.for_epsilon(1.0), np.zeros(0, dtype=int), (2, 0)),
    (StabilityHistogram(noise_scale=1.0, threshold=2.0, n_classes=2, relation=A),
     np.zeros((0, 2), dtype=int), (2, 0)),
], ids=lambda v: type(v).__name__ if not isinstance(v, tuple | list | np.ndarray) else "")
def test_an_empty_answer_releases_an_empty_array_at_once(mechanism, empty, shape):
    """No coordinates, nothing to hide: an empty release of the right shape, on both
    paths, in well under a second (L2Laplace.release([]) used to loop forever)."""
    with deadline(10.0):
        for method in (mechanism.release, mechanism.simulate):
            assert method(empty, rng=0, size=2).shape == shape


@pytest.mark.parametrize("mechanism", [
    Exponential.for_epsilon(1.0, sensitivity=1.0, relation=A),
    ReportNoisyMax.for_epsilon(1.0, sensitivity=1.0, relation=A),
    PermuteAndFlip.for_epsilon(1.0, sensitivity=1.0, relation=A),
], ids=lambda m: type(m).__name__)
def test_selection_needs_one_candidate_and_ranks_infinities_as_extremes(mechanism):
    """The number of candidates is public: none is refused (no shape in the message).
    +inf is clamped to 2^1000 and wins against finite utilities at any epsilon; -inf is
    clamped to -2^1000 and never wins; both without a warning."""
    with pytest.raises(InvalidParameterError, match="at least one") as info:
        mechanism.release([], rng=0)
    assert "(0,)" not in str(info.value)
    for method in (mechanism.release, mechanism.simulate):
        said = capture(lambda method=method: method([0.0, math.inf, 5.0, -math.inf],
                                                    rng=0, size=200))
        assert said.error is None
        assert said.warnings == []
        assert np.all(said.result == 1)


def test_as_value_clamps_to_the_float_bound_and_never_modifies_its_input():
    """The default range is [-2^1000, 2^1000]; the input array is left as it was."""
    from privkit.mechanism import as_value

    x = np.array([math.inf, -1e308, 3.0])
    out = as_value(x, "t")
    assert out.tolist() == [FLOAT_BOUND, -FLOAT_BOUND, 3.0]
    assert x[0] == math.inf
    assert as_value(x, "t", bound=math.inf) is x  # float64 and no clamp: not copied


def test_sparse_vector_compares_clamped_answers():
    """+inf is above any threshold and -inf below, as their clamped values are."""
    svt = SparseVector.for_epsilon(1.0, sensitivity=1.0, relation=A, max_positives=1)
    out = svt.release([-math.inf, math.inf, 0.0], threshold=0.0, rng=3, size=50)
    assert np.all(out[:, :2] == [0, 1])
    assert np.all(out[:, 2] == -1)


class TestIntegerAnswers:
    def test_discrete_mechanisms_clamp_onto_2_62_and_refuse_fractions_silently(self):
        """inf and 1e30 are released as 2^62 is (same seed); a uint64 above 2^63 does not
        wrap; 2.5 is refused without showing it."""
        m = DiscreteLaplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
        at = m.release([2**62, -(2**62)], rng=5)
        assert np.array_equal(m.release([math.inf, -1e30], rng=5), at)
        assert np.array_equal(m.release(np.array([2**64 - 1, 0], dtype=np.uint64), rng=5)[:1],
                              at[:1])
        with pytest.raises(InvalidParameterError, match="integer-valued") as info:
            m.release([SENTINEL_FLOAT])
        assert not leaks(capture(lambda: m.release([SENTINEL_FLOAT])))
        assert "123456" not in str(info.value)

    def test_a_noise_draw_beyond_2_62_is_refused_not_wrapped(self):
        """The data-independent overflow event of int64 noise raises FloatingPointError."""
        with pytest.raises(FloatingPointError, match="does not depend on the data"):
            add_integer_noise(np.array([2**62]), np.array([2**62]), "t")
        assert add_integer_noise(np.array([2**62]), np.array([-3.0]), "t").tolist() == [
            2**62 - 3]

    def test_stability_histogram_clamps_counts_and_hides_the_number_of_cells(self):
        """Negative counts are clamped to 0 (an empty cell, never released); a wrong
        number of columns is refused without the array's shape (its rows are the
        data-dependent occupied cells)."""
        m = StabilityHistogram(noise_scale=0.5, threshold=1.0, n_classes=2, relation=A)
        out = m.release(np.array([[-5, -1], [math.inf, 0]]), rng=0, size=100)
        assert np.all(out[:, 0] == -1)
        assert np.all(out[:, 1] == 0)
        with pytest.raises(InvalidParameterError, match=r"\(n_cells, 2\) array") as info:
            m.release(np.zeros((1187, 3), dtype=int))
        assert "1187" not in str(info.value)

    def test_integer_valued_accepts_infinities_and_refuses_fractions_silently(self):
        """Under integer_valued=True, inf is clamped like any value beyond the range and a
        fraction is refused (scalar and vector paths) without the value."""
        lap = Laplace.for_histogram(epsilon=1.0, relation=A)
        assert np.isfinite(lap.release(math.inf, rng=0, integer_valued=True))
        assert np.all(np.isfinite(lap.release([math.inf, 3.0], rng=0, integer_valued=True)))
        for value in (SENTINEL_FLOAT, [SENTINEL_FLOAT, 1.0]):
            for method in (lap.release, lap.simulate):
                said = capture(lambda v=value, f=method: f(v, rng=0, integer_valued=True))
                assert isinstance(said.error, InvalidParameterError)
                assert "integer-valued" in str(said.error)
                assert not leaks(said)
        scalar = release_on_grid(2.5, noise_scale=1.0, sensitivity=1.0,
                                 dimension_penalty=float, standard_noise=standard_laplace,
                                 rng=np.random.default_rng(0), shape=(), owner="t")
        assert np.isfinite(scalar)  # no declaration: a fraction is released

    def test_counts_of_the_sentinel_labels(self):
        """counts drops what is not a label in range, whatever it is."""
        assert counts([SENTINEL_FLOAT, 1187, 1], 2).tolist() == [0, 1]


class TestValidationHelpers:
    def test_private_fail_names_the_parameter_and_never_the_value(self):
        """The message has the name, what is allowed, the owner and 'not shown'."""
        error = check.private_fail("value", "finite", "Laplace.release", "a hint")
        assert str(error) == ("`value` must be finite for Laplace.release "
                              "(the value is not shown: it is private); a hint")

    @pytest.mark.parametrize("bad", [
        [[SENTINEL_FLOAT], [1.0, 2.0]], "SENTINEL-7f3a", [str(SENTINEL_FLOAT)],
        np.array([SENTINEL_FLOAT, None], dtype=object), SENTINEL_FLOAT + 1j,
        [True, False], {"a": SENTINEL_FLOAT}, None,
    ])
    def test_private_array_refuses_non_numbers_with_no_chained_error(self, bad):
        """Ragged nesting, strings, objects, complex, bools, dicts, None: refused by
        dtype, with no __cause__ or __context__ (numpy's message quotes the value)."""
        said = capture(lambda: check.private_array("value", bad, "t"))
        assert isinstance(said.error, InvalidParameterError)
        assert said.error.__cause__ is None
        assert said.error.__context__ is None
        assert not leaks(said), leaks(said)

    def test_private_array_does_not_copy(self):
        x = np.arange(3.0)
        assert check.private_array("value", x, "t") is x


def test_a_plan_file_error_names_keys_not_the_values_under_them():
    """An unknown key (it may hold pasted data) is named; its value is not shown."""
    body = {"noise_scale": 2.0, "l1_sensitivity": 1.0, "rows": [SENTINEL_FLOAT]}
    said = capture(lambda: mechanism_from_spec("laplace", body, A))
    assert isinstance(said.error, InvalidParameterError)
    assert "unknown key(s) ['rows']" in str(said.error)
    assert not leaks(said), leaks(said)
