"""The PLD accountant's fast paths give the answers of the direct ones (issue 25: DP-SGD
accounting at 1/30 of dp_accounting's time).

- The add direction, when it is not the worse one at the question, is composed on a grid
  8 times coarser (``ROUGH``): the answer and its lower bound are those of the fine
  add direction to 1e-9, and the coarse curve is above the fine one (certified, looser).
- Exponentials of a uniform grid's ramp are computed by blocks (:func:`exp_ramp`), and
  log-MGFs on a grid with them: within a few units in the last place of the direct ones.
- The composition untilts only the indices it keeps, directly while the exponents stay
  in range and in log space otherwise: both give the same PLD.
- Spectra are raised to their counts in place, in the order of the old repeated squaring.
- ``epsilon_at`` keeps its answers; the kept answer is the solved one.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import privkit._pld_fft as fft_module
import privkit.accountants._pld_question as question_module
from _blocks import gau, lap
from privkit import (
    Neighbouring,
    Norm,
    PLDAccountant,
    PoissonSubsample,
    Repeat,
    SampleWithoutReplacement,
    Sensitivity,
    Sequential,
    tightest,
    tightest_delta,
)
from privkit._pld_fft import _arc, _power
from privkit.mechanisms import Gaussian, Laplace
from privkit.pld import PrivacyLossDistribution, exp_ramp, log_weighted_sums

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE


def _gaussian(sigma, relation=A):
    return Gaussian(noise_scale=sigma,
                    sensitivity=Sensitivity(value=1.0, norm=Norm.L2, relation=relation))


def _laplace(scale, relation=A):
    return Laplace(noise_scale=scale,
                   sensitivity=Sensitivity(value=1.0, norm=Norm.L1, relation=relation))


#: Plans with an asymmetric block (subsampled), alone and beside symmetric ones.
PLANS = {
    "dp-sgd": Repeat(PoissonSubsample(_gaussian(1.0), 0.01), 2000),
    "large rate": Repeat(PoissonSubsample(_gaussian(2.0), 0.9), 50),
    "laplace": Repeat(PoissonSubsample(_laplace(1.0), 0.1), 100),
    "without replacement": Repeat(SampleWithoutReplacement(_gaussian(1.0, R), 100, 1000), 50),
    "mixed": Sequential(Repeat(PoissonSubsample(_gaussian(1.0), 0.02), 200),
                        Repeat(lap(0.05), 30), gau(0.3)),
}


def _both(plan, rough, **question):
    """The guarantee with the coarse add direction allowed (``rough`` = 8) or not (1)."""
    saved = question_module.ROUGH
    question_module.ROUGH = rough
    try:
        return PLDAccountant().guarantee(plan, **question)
    finally:
        question_module.ROUGH = saved


@pytest.mark.parametrize("name", sorted(PLANS))
@pytest.mark.parametrize("delta", [1e-5, 1e-2])
def test_coarse_add_direction_keeps_the_answer(name, delta):
    """Epsilon and its lower bound equal those with a fine add direction (to 1e-9: the
    remove direction decides both); the add direction was coarse (its step 8 times the
    remove one's), and its curve lies above the fine one's at every epsilon checked
    (coarser connect-the-dots chords lie above finer ones; 1e-12 for rounding)."""
    plan = PLANS[name]
    fine, coarse = _both(plan, 1, delta=delta), _both(plan, 8, delta=delta)
    assert coarse.epsilon_at(delta) == pytest.approx(fine.epsilon_at(delta), rel=1e-9,
                                                     abs=1e-12)
    assert coarse.epsilon_lower_at(delta) == pytest.approx(fine.epsilon_lower_at(delta),
                                                           rel=1e-9, abs=1e-12)
    assert coarse.add.step == pytest.approx(8 * coarse.remove.step)
    assert fine.add.step == fine.remove.step
    for e in np.linspace(0.0, 2 * fine.epsilon_at(delta), 9):
        assert coarse.add.delta_at(e) >= fine.add.delta_at(e) - 1e-12


@pytest.mark.parametrize("name", ["dp-sgd", "mixed"])
def test_coarse_add_direction_keeps_delta_at_epsilon(name):
    """The same for delta at an epsilon (tightest_delta's question)."""
    plan = PLANS[name]
    fine, coarse = _both(plan, 1, epsilon=1.0), _both(plan, 8, epsilon=1.0)
    assert coarse.delta_at(1.0) == pytest.approx(fine.delta_at(1.0), rel=1e-9, abs=1e-300)
    assert coarse.add.step > coarse.remove.step
    assert tightest_delta(plan, epsilon=1.0).delta == pytest.approx(
        fine.delta_at(1.0), rel=1e-9)


def test_coarse_add_direction_that_would_decide_is_recomputed_fine():
    """A coarse add direction whose answer is above the remove direction's is not kept:
    on a grid 2^12 times coarser it is (far) above it, and the accountant composes the
    add direction on the fine grid instead; the answer is the fine one's."""
    plan = PLANS["dp-sgd"]
    fine, forced = _both(plan, 1, delta=1e-5), _both(plan, 2**12, delta=1e-5)
    assert forced.add.step == forced.remove.step
    assert forced.epsilon_at(1e-5) == pytest.approx(fine.epsilon_at(1e-5), rel=1e-12)


def test_nested_and_fixed_step_compositions_keep_both_directions_fine():
    """A user's fixed step keeps both directions on it, and so do compositions nested in
    another (their curves enter at every epsilon): here a block run 2^16 times, composed
    on a finer grid first, whose answer matches the plan without the regridding to the
    accountant's tolerance."""
    plan = PLANS["dp-sgd"]
    g = PLDAccountant(step=1e-3).guarantee(plan, delta=1e-5)
    assert g.add.step == g.remove.step == 1e-3
    long = Repeat(PoissonSubsample(_gaussian(3.0), 0.001), 2**16)
    saved = question_module.ROUGH
    try:
        question_module.ROUGH = 1
        plain = PLDAccountant().epsilon(long, delta=1e-5)
    finally:
        question_module.ROUGH = saved
    assert PLDAccountant().epsilon(long, delta=1e-5) == pytest.approx(plain, rel=1e-9)


def test_default_dpsgd_answer_is_unchanged():
    """The issue's DP-SGD plan (10^4 steps): certified at most 6.189, lower bound within
    0.01, inside prv_accountant's certified interval [6.17739, 6.19804] (from its
    eps_error 0.01 run, benchmarks/results/accounting.md), and the same value with a
    fine add direction."""
    plan = Repeat(PoissonSubsample(_gaussian(1.0), 0.01), 10**4)
    result = tightest(plan, delta=1e-5)
    assert result.accountant == "pld"
    assert 6.17739 <= result.lower <= result.epsilon <= 6.189
    assert result.epsilon - result.lower <= 0.01
    assert result.epsilon == pytest.approx(_both(plan, 1, delta=1e-5).epsilon_at(1e-5),
                                           rel=1e-9)


@given(start=st.floats(-700.0, 700.0), rate=st.floats(-2.0, 2.0),
       n=st.integers(0, 20_000))
def test_exp_ramp_matches_direct_exponentials(start, rate, n):
    """``exp_ramp`` against ``np.exp`` of the ramp: within 1e-12 relative wherever the
    direct value is a normal number above 1e-290 (the arguments' own rounding, up to
    ~1e-13 at |x| ~ 700, dominates), and 0 or tiny where that underflows."""
    j = np.arange(n, dtype=float)
    with np.errstate(over="ignore"):
        direct = np.exp(start + rate * j)
        ours = exp_ramp(start, rate, n)
    assert ours.shape == (n,)
    normal = (direct > 1e-290) & np.isfinite(direct)
    np.testing.assert_allclose(ours[normal], direct[normal], rtol=1e-12)
    assert np.all(ours[direct <= 1e-290] <= 1e-280)


@given(offset=st.integers(-3000, 3000), step=st.floats(1e-4, 0.5),
       size=st.integers(1, 3000), seed=st.integers(0, 2**16))
def test_log_mgf_on_a_grid_matches_the_direct_sums(offset, step, size, seed):
    """Log-MGFs of random rows on a grid, with the ramps (``step`` given) and with one
    exponential per weight: within 1e-10 (the rows' sums are the same up to rounding,
    and so are their logarithms), at the tilts a composition uses."""
    rng = np.random.default_rng(seed)
    pmf = rng.random((3, size)) * (rng.random((3, size)) < 0.7)
    losses = np.arange(offset, offset + size, dtype=float) * step
    tilts = np.concatenate([fft_module.TILTS, [-3.0, 5.5, 40.0]])
    with np.errstate(over="ignore"):
        direct = log_weighted_sums(pmf, losses, tilts)
        ramps = log_weighted_sums(pmf, losses, tilts, step)
    finite = np.isfinite(direct)
    assert np.array_equal(finite, np.isfinite(ramps))
    np.testing.assert_allclose(ramps[finite], direct[finite], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["dp-sgd", "laplace", "mixed"])
def test_direct_and_log_space_untilting_agree(name):
    """The composition untilts directly (``e^x`` while every exponent is within 700) or
    in log space: with the direct path switched off (``_DIRECT = 0``) the PLDs are the
    same to 1e-12 relative in every mass above 1e-250 and in the answers."""
    plan = PLANS[name]
    direct = PLDAccountant().guarantee(plan, delta=1e-5)
    saved = fft_module._DIRECT
    try:
        fft_module._DIRECT = 0.0
        logs = PLDAccountant().guarantee(plan, delta=1e-5)
    finally:
        fft_module._DIRECT = saved
    for a, b in ((direct.remove, logs.remove), (direct.lower_remove, logs.lower_remove)):
        assert a.offset == b.offset
        assert a.pmf.size == b.pmf.size
        big = np.maximum(a.pmf, b.pmf) > 1e-250
        np.testing.assert_allclose(a.pmf[big], b.pmf[big], rtol=1e-12)
    assert direct.epsilon_at(1e-5) == pytest.approx(logs.epsilon_at(1e-5), rel=1e-12)
    assert direct.epsilon_lower_at(1e-5) == pytest.approx(logs.epsilon_lower_at(1e-5),
                                                          rel=1e-12)


def _old_power(spectrum, count):
    """The repeated squaring before it worked in place (new arrays at every step)."""
    result = None
    base = spectrum
    while True:
        if count & 1:
            result = base if result is None else result * base
        count >>= 1
        if not count:
            break
        base = base * base
    return result


@given(count=st.integers(1, 5000), size=st.integers(1, 64), seed=st.integers(0, 2**16))
def test_power_in_place_is_the_old_repeated_squaring(count, size, seed):
    """The same products in the same order, up to the rounding of numpy's in-place
    complex loops (a unit in the last place per product, which repeated squaring
    doubles at each of its log2(count) levels: 1e-11 relative to the largest entry
    covers count 5000 with room)."""
    rng = np.random.default_rng(seed)
    # a spectrum of a distribution: every entry within the unit disc
    spectrum = rng.random(size) * np.exp(2j * np.pi * rng.random(size))
    expected = _old_power(spectrum.copy(), count)
    ours = _power(spectrum.copy(), count)
    scale = float(np.max(np.abs(expected)))
    np.testing.assert_allclose(ours, expected, rtol=0.0, atol=1e-11 * scale + 1e-300)


@given(size=st.integers(1, 50), start=st.integers(-200, 200), length=st.integers(0, 50))
def test_arc_is_a_slice_of_the_rolled_circle(size, start, length):
    """``_arc(circle, start, length)`` is ``np.roll(circle, -start)[:length]`` (lengths
    up to the circle's size), a new array."""
    circle = np.arange(size, dtype=float)
    length = min(length, size)
    out = _arc(circle, start, length)
    assert np.array_equal(out, np.roll(circle, -start)[:length])
    out[...] = -1.0
    assert np.all(circle >= 0.0)


def test_epsilon_at_keeps_its_answers():
    """Asked again, a PLD gives the answer it solved, and each delta its own one: the
    kept answers equal fresh solves of equal PLDs, at deltas of a decade apart."""
    pmf = np.array([0.2, 0.3, 0.25, 0.15, 0.05, 0.04, 0.01])
    p = PrivacyLossDistribution(step=0.25, offset=-2, pmf=pmf, infinity_mass=1e-9)
    for delta in (1e-1, 1e-2, 1e-3, 1e-2):
        fresh = PrivacyLossDistribution(step=0.25, offset=-2, pmf=pmf, infinity_mass=1e-9)
        assert p.epsilon_at(delta) == fresh.epsilon_at(delta)
        assert p.delta_at(p.epsilon_at(delta)) <= delta
    assert p.epsilon_at(1e-10) == math.inf  # below the mass at infinity


@pytest.mark.parametrize(("args", "name"), [
    ((float("nan"), 0.1, 5), "start"), ((0.0, "fast", 5), "rate"),
    ((0.0, 0.1, -1), "n"), ((0.0, 0.1, 2.5), "n"), ((0.0, 0.1, True), "n")])
def test_exp_ramp_names_a_bad_argument(args, name):
    from privkit.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match=f"exp_ramp.*{name}|{name}.*exp_ramp"):
        exp_ramp(*args)
    assert exp_ramp(0.0, 0.1, 0).shape == (0,)
