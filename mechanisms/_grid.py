"""Floating-point-safe release of additive noise on a power-of-two grid.

Mironov (2012, "On significance of the least significant bits for differential
privacy", CCS) showed that ``x + noise`` computed in floating point leaks ``x`` through
the set of reachable outputs, which depends on ``x``. privkit's publication path removes
that dependence:

1. choose a grid step ``g = 2^k`` and a noise scale in grid units ``s`` from *public*
   quantities only (the noise scale ``b``, the sensitivity ``Δ`` and the dimension
   penalty ``p``, see below);
2. snap the exact answer to the grid, ``r = rint(x / g)`` (exact: dividing by a power of
   two is exact in binary floating point, and so is rounding);
3. add noise in grid units and round it, ``y = r + rint(Z s)`` with ``Z`` unit-scale noise
   from :mod:`._noise`, all in float64 integers below ``2^52`` (exact, no int64 cast);
4. publish ``y g``.

**Privacy.** Because ``r`` is an integer, ``r + rint(Z s) = rint(r + Z s)``: the output
is a deterministic function (post-processing) of the *ideal* continuous mechanism applied
to ``r``. Snapping moves each coordinate by at most half a step, so
``||r - r'||_1 <= ||x - x'||_1 / g + d`` and ``||r - r'||_2 <= ||x - x'||_2 / g + sqrt(d)``
for ``d`` coordinates: the sensitivity of ``r`` in grid units is at most ``Δ/g + p`` with
``p = d`` (L1) or ``sqrt(d)`` (L2). The noise in grid units is
``s = (b/g) (Δ + p g) / Δ = b/g + p b/Δ`` (computed, then raised by a factor
``1 + 2^-48`` that covers every rounding in it, including ``math.sqrt``'s), so
``(Δ/g + p) / s <= Δ / b``: every guarantee of an additive mechanism that depends only on
sensitivity over scale (pure DP of Laplace and L2 Laplace, GDP/zCDP/RDP of the Gaussian)
holds for the released mechanism as declared. The price is accuracy: the noise grows by
the factor ``1 + p g / Δ`` (the *inflation*) and the output is rounded to the grid. With
``integer_valued=True`` the caller declares (publicly) that every possible answer is an
integer vector; then a step ``g <= 1`` puts every answer on the grid, ``r = x / g``
exactly, ``p = 0`` and there is no inflation at all (this is what makes a 10^7-bin
histogram at small epsilon releasable). If no such step is safe, the penalty is paid.

**Exact tails.** ``Z`` has unbounded support and exactly the declared law except for the
lattice of numpy's bulk draws (:mod:`._noise` explains how the tails are made exact). The
one event not covered is a noise draw so large that ``|Z s| >= 2^52`` (``|Z| >= 2^20``
noise scales, since ``s <= 2^32``): beyond it ``rint(Z s)`` could no longer reach every
integer, so :func:`release_on_grid` raises ``FloatingPointError`` instead of releasing (no
int64 cast, nothing wraps). That event does not depend on the data; its probability is
``exp(-2^20)`` for Laplace noise, below ``exp(-2^39)`` for Gaussian noise and, bounding a
coordinate by the norm (Gamma(d)), below ``exp(-2^17)`` for L2 Laplace noise in ``d <=
2^19`` dimensions: all below the smallest positive double.

**Choice of grid, and what remains.** numpy's bulk draws lie on a lattice of spacing
``h <= 2^-49`` (:mod:`._noise`). A grid cell is an interval of length ``1/s`` in ``Z``
units, so when ``h s < 1`` every cell contains lattice points of the noise, and, the
noise's support being unbounded in both directions, every grid point is reachable from
every input: no reachability leak. (The product ``Z s`` is a double; ``|Z s| < 2^52``
keeps its spacing below one grid unit, and the sum ``c N + F`` of the exponential's
tail below ``2^-52 |Z|``.) The number of lattice points in a cell is ``1/(h s)`` up to
one, so the lattice moves the probability of a grid point by a relative amount of about
``h s`` against the ideal law, and a ratio of two of them by about ``2 h s``: this is the
one thing that remains between the released law and the declared one. The grid keeps it
tiny, and small against the mechanism's own privacy parameter ``Δ / b``:

* preferred: ``g = 2^floor(log2(min(b 2^-20, Δ 2^-24 / p)))``: the output resolution is
  at most ``2^-20`` of the noise scale and the inflation at most ``2^-24``;
* required: ``s <= 2^32`` (so ``h s <= 2^-17``: at least ``2^17`` lattice points per
  cell, and ``|Z s| < 2^52`` up to ``|Z| = 2^20``) and ``2 h s <= 2^-10 Δ / b`` (the
  lattice residual at most ``2^-10`` of the declared epsilon or mu); when the preferred
  grid breaks this, the grid is coarsened to the finest step that meets it, paying a
  larger inflation;
* refused (``InvalidParameterError`` naming ``noise_scale``) when no grid also has
  ``b / g >= 2^20`` and an inflation of at most ``2^-4``. With ``m = b / Δ``, a release
  is always accepted when ``1/m >= 2^-16.5 sqrt(p)`` and ``p m <= 2^27``, and refused when
  ``1/m < 2^-17 sqrt(p)`` or ``p m > 2^28``. For Laplace (``p = d``) that is epsilon at
  least about ``max(1.1e-5 sqrt(d), 7.5e-9 d)``: 1.1e-5 for a scalar, 0.075 for 10^7
  coordinates; for the Gaussian (``p = sqrt(d)``), mu at least about
  ``max(1.1e-5 d^(1/4), 7.5e-9 sqrt(d))``. With ``integer_valued=True`` (counts), any
  ``Δ / b >= 2^-17`` (7.6e-6) is accepted whatever ``d``, as long as
  ``b <= min(2^32, 2^38 Δ / b)`` (else the step would exceed 1 and the penalty is paid).

**The value range.** The snapped answer must stay below ``2^52`` grid steps in magnitude
for the integer arithmetic above to be exact, so each coordinate of ``rint(x / g)`` is
clamped onto ``[-(2^52 - 1), 2^52 - 1]`` (infinities included): the answer is released
as if clamped onto ``[-B, B]``, ``B = (2^52 - 1) g`` (:func:`clamp_bound`; ``B`` is a grid
point, so clamping and snapping commute). ``B`` is a function of public values only,
and a coordinatewise clamp is 1-Lipschitz in each coordinate, so the clamped answers of
neighbours are no further apart than the answers (L1, L2 and L-infinity): the analysis
above holds as it is, at no cost in privacy. Whether a release succeeds does not depend
on the answer's magnitude. A NaN answer is refused without showing it, and so is a
non-integer answer under ``integer_valued=True`` (``privkit.mechanism``'s rule: no query
that meets its declaration answers so). To keep answers inside ``B``, centre the query
by a public offset or use a larger noise scale (a coarser grid); smaller units cannot
help, as the grid scales with them.

The scalar fast path (a 0-d value, no ``size``) does the same arithmetic with
:mod:`math` and Python floats and caches the grid per parameter set.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

#: Preferred: noise scale over grid step at least 2^20 (output rounded to 2^-20 of b).
_SCALE_BITS = 20
#: Preferred: inflation (p g / Δ) at most 2^-24.
_INFLATION_BITS = 24
#: Largest inflation paid when the preferred grid is too fine: 2^-4 (6.25% more noise).
_MAX_INFLATION_BITS = 4
#: Upper bound on the noise scale in grid units s.
_MAX_UNITS = 2.0**32
#: numpy's bulk lattice spacing is at most 2^-_LATTICE_BITS (see _noise.py).
_LATTICE_BITS = 49
#: The lattice residual 2 h s must stay below 2^-_RESIDUAL_BITS of Δ / b.
_RESIDUAL_BITS = 10
#: Releases with sensitivity / noise_scale >= _FLOOR sqrt(penalty) are always accepted:
#: then p m^2 <= 2^33 for the multiplier m, the inflation is at most 2^-4 (module docstring).
_FLOOR = 2.0**-16.5
#: ... together with p m <= _MAX_SNAP (the snapping's share of s at most 2^27 grid units).
_MAX_SNAP = 2.0**27
#: float64 integers are exact, and their sums below 2^53, up to this magnitude.
_INT_LIMIT = 2.0**52
#: Snapped answers are clamped onto [-_SNAP_BOUND, _SNAP_BOUND] (an integer, so the clamp
#: commutes with snapping): below _INT_LIMIT, so answer + noise stays below 2^53.
_SNAP_BOUND = _INT_LIMIT - 1.0


def _pow2_floor(x: float) -> float:
    _, e = math.frexp(x)  # x = m 2^e with 0.5 <= m < 1
    return math.ldexp(1.0, e - 1)


def _pow2_ceil(x: float) -> float:
    m, e = math.frexp(x)
    return math.ldexp(1.0, e - 1) if m == 0.5 else math.ldexp(1.0, e)


_CACHE: dict[tuple[float, float, float, bool], tuple[float, float]] = {}


def grid(noise_scale: float, sensitivity: float, penalty: float, integer_valued: bool = False,
         owner: str = "release_on_grid") -> tuple[float, float]:
    """The grid step ``g`` (a power of two) and the noise scale in grid units ``s``.

    A function of public values only (see the module docstring for the rule), cached.
    Raises :class:`~privkit.errors.InvalidParameterError` naming ``noise_scale`` when no
    grid makes the release safe.
    """
    key = (noise_scale, sensitivity, penalty, integer_valued)
    found = _CACHE.get(key)
    if found is None:
        found = _grid(noise_scale, sensitivity, penalty, integer_valued, owner)
        if len(_CACHE) >= 1024:
            _CACHE.clear()
        _CACHE[key] = found
    return found


def _grid(noise_scale: float, sensitivity: float, penalty: float, integer_valued: bool,
          owner: str) -> tuple[float, float]:
    b, delta = float(noise_scale), float(sensitivity)
    if not (b > 0.0 and delta > 0.0 and math.isfinite(b) and math.isfinite(delta)):
        raise check.fail("noise_scale", b, "finite and > 0, with a finite sensitivity > 0",
                         owner)
    p = 0.0 if integer_valued else float(penalty)
    multiplier = b / delta
    limit = min(_MAX_UNITS, math.ldexp(1.0, _LATTICE_BITS - 1 - _RESIDUAL_BITS) / multiplier)
    q = p * multiplier  # the snapping's share of s, whatever the grid
    bound = math.ldexp(b, -_SCALE_BITS)
    if p > 0.0:
        bound = min(bound, math.ldexp(delta, -_INFLATION_BITS) / p)
    if integer_valued:
        bound = min(bound, 1.0)  # every integer is then a grid point
    g = _pow2_floor(bound) if bound >= 2.0**-1022 else 0.0
    if g == 0.0 or b / g + q > limit:  # too fine: the finest step with s <= limit
        room = limit - q
        g = _pow2_ceil(b / room) if room > 0.0 else math.inf
    if integer_valued and g > 1.0:  # integers are no longer grid points: pay the penalty
        return _grid(noise_scale, sensitivity, penalty, False, owner)
    if not 2.0**-1022 <= g < math.inf:
        if q < limit:  # the grid step left the normal doubles: b itself is extreme
            raise check.fail("noise_scale", b, "at least 2^-1000 (about 1e-301) for a "
                             "floating-point-safe release", owner,
                             "express the query in larger units")
        g = math.inf
    # s >= (b/g)(1 + p g/Δ) exactly: b/g is exact, and the margin covers the roundings of
    # b/Δ, p (math.sqrt is correctly rounded), their product and the sum (< 2^-50 in all).
    s = (b / g + q) * (1.0 + 2.0**-48)
    if not (g < math.inf and s <= limit and b / g >= 2.0**_SCALE_BITS
            and q * g / b <= 2.0**-_MAX_INFLATION_BITS):
        raise check.fail(
            "noise_scale", b,
            f"small enough against the sensitivity for a floating-point-safe release "
            f"(here noise_scale / sensitivity = {multiplier:.3g} with a snapping penalty of "
            f"{p:.3g}; releases are accepted whenever sensitivity / noise_scale >= "
            f"{_FLOOR:.3g} * sqrt(penalty) and penalty * noise_scale / sensitivity <= "
            f"{_MAX_SNAP:.3g})", owner,
            "use a smaller noise scale (a larger epsilon or mu), or integer_valued=True for "
            "answers known to be integers, such as counts (no snapping penalty); simulate() "
            "draws plain floats for experiments",
        )
    return g, s


def grid_step(noise_scale: float, sensitivity: float, dimension_penalty: float) -> float:
    """The power-of-two grid step for one release (a function of public values only)."""
    return grid(noise_scale, sensitivity, dimension_penalty)[0]


def clamp_bound(noise_scale: float, sensitivity: float, penalty: float,
                integer_valued: bool = False, owner: str = "clamp_bound") -> float:
    """``B = (2^52 - 1) g``: answers are released as if clamped onto ``[-B, B]`` (module
    docstring), a function of public values only."""
    return _SNAP_BOUND * grid(noise_scale, sensitivity, penalty, integer_valued, owner)[0]


def check_integers(value: NDArray[np.float64], owner: str) -> None:
    """Refuse, without showing it, an answer with a finite non-integer entry (the caller
    declared ``integer_valued=True``); infinities are clamped, not refused."""
    if not np.array_equal(np.rint(value), value):
        raise check.private_fail("value", "integer-valued (integer_valued=True was declared)",
                                 owner, "round the query to integers, or do not declare it")


def _noise_error(owner: str) -> Exception:
    return FloatingPointError(
        f"{owner}: a noise draw reached 2^52 grid steps (|Z| >= 2^20 noise scales, an event "
        "that does not depend on the data, of probability below exp(-2^17); see "
        "privkit/mechanisms/_grid.py); nothing was released, and a new call is safe")


def release_on_grid(
    value: NDArray[np.float64] | float,
    *,
    noise_scale: float,
    sensitivity: float,
    dimension_penalty: Callable[[int], float],
    standard_noise: Callable[[np.random.Generator, tuple[int, ...]], NDArray[np.float64]],
    rng: np.random.Generator,
    shape: tuple[int, ...],
    owner: str,
    integer_valued: bool = False,
) -> NDArray[np.float64]:
    """Release ``value + noise`` on the grid, with the noise inflated to pay for snapping.

    Parameters
    ----------
    value : ndarray or float
        The exact answer (private). A Python float or a 0-d array with ``shape == ()``
        takes the scalar fast path. Each coordinate is clamped onto
        ``[-clamp_bound, clamp_bound]`` (:func:`clamp_bound`, infinities included).
    noise_scale, sensitivity : float
        The declared noise scale ``b`` and sensitivity ``Δ`` (absolute, same units).
    dimension_penalty : callable
        ``p(d)``, how much snapping can add to the sensitivity in grid units for a
        ``d``-coordinate release: ``float`` (``d``) for L1, ``math.sqrt`` for L2.
    standard_noise : callable
        ``standard_noise(rng, shape)``: unit-scale noise of the declared law with exact
        tails, i.e. drawn by a sampler of :mod:`._noise` (``standard_laplace``,
        ``standard_normal``, ``standard_l2_laplace``/``l2_laplace_noise(k)``). The
        guarantee is only as exact as this sampler; numpy's own samplers are NOT enough
        (truncated tails). Pass the :class:`~._noise.StandardNoise` object itself (not a
        lambda around it) to get the scalar fast path's ``scalar(rng)`` draw.
    rng : numpy.random.Generator
    shape : tuple of int
        ``size`` (independent releases); the output shape is ``shape + value.shape``.
    owner : str
        The public name used in error messages.
    integer_valued : bool, default False
        A public promise that every possible answer is an integer vector (counts): no
        snapping penalty. A finite non-integer ``value`` is then refused.

    Returns
    -------
    ndarray (``np.float64`` for the scalar fast path)
        Every entry an integer multiple of the grid step.

    Raises
    ------
    InvalidParameterError
        ``noise_scale`` too large against the sensitivity for a safe grid; ``value`` with a
        NaN, or not integer with ``integer_valued`` (the message never shows the value).
    FloatingPointError
        A noise draw beyond ``2^52`` grid steps (data-independent; probability below
        ``exp(-2^17)``, see the module docstring).
    """
    if not shape and getattr(value, "ndim", 0) == 0:  # the scalar fast path, inlined
        v = float(value)
        penalty = dimension_penalty(1)
        found = _CACHE.get((noise_scale, sensitivity, penalty, integer_valued))
        g, s = found if found is not None else grid(noise_scale, sensitivity, penalty,
                                                    integer_valued, owner)
        scaled = v / g  # a Python float: overflows to an infinity, never raises
        if not -_SNAP_BOUND <= scaled <= _SNAP_BOUND:  # beyond the range (clamped), or NaN
            if scaled != scaled:
                raise check.private_nan("value", owner)
            scaled = math.copysign(_SNAP_BOUND, scaled)
        if integer_valued and not (v.is_integer() or math.isinf(v)):
            check_integers(np.asarray(v), owner)
        scalar = getattr(standard_noise, "scalar", None)  # a _noise.StandardNoise
        n = round((scalar(rng) if scalar is not None else float(standard_noise(rng, ()))) * s)
        if not -_INT_LIMIT < n < _INT_LIMIT:
            raise _noise_error(owner)
        out: Any = np.float64((round(scaled) + n) * g)  # |sum| < 2^53: exact; times 2^k: exact
        return out  # type: ignore[no-any-return]
    x = np.asarray(value, dtype=np.float64)
    g, s = grid(noise_scale, sensitivity, dimension_penalty(max(x.size, 1)), integer_valued,
                owner)
    with np.errstate(over="ignore"):  # a huge answer overflows to inf, then is clamped
        snapped = np.asarray(np.rint(x / g))  # a 0-d answer gives a 0-d array, not a scalar
    np.clip(snapped, -_SNAP_BOUND, _SNAP_BOUND, out=snapped)  # the public range, always
    if snapped.size and math.isnan(snapped.min()):  # min propagates NaN
        raise check.private_nan("value", owner)
    if integer_valued:
        check_integers(np.where(np.isinf(x), 0.0, x), owner)
    noise = standard_noise(rng, shape + x.shape)
    noise *= s
    np.rint(noise, out=noise)
    if noise.size and not (noise.min() > -_INT_LIMIT and noise.max() < _INT_LIMIT):
        raise _noise_error(owner)
    noise += snapped  # integers below 2^53 in magnitude: exact
    noise *= g  # a power of two: exact (barring underflow, a deterministic rounding)
    return noise

