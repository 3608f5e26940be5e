"""Unit-scale continuous noise with exact, unbounded tails, for the floating-point-safe path.

numpy's samplers are fast ziggurats (Marsaglia and Tsang 2000, "The ziggurat method for
generating random variables", J. Stat. Softw. 5(8)) whose *tails* are drawn from a single
53-bit uniform, so they end: ``standard_exponential`` never exceeds about 44.43 (``r -
log(2^-53)`` with the ziggurat edge ``r = 7.6972``) and ``standard_normal`` never exceeds
about 12.2254 (its Marsaglia tail needs ``2 y > x^2`` with ``y <= 53 log 2``). An output of
``x + noise`` beyond those ends is reachable from one input and not from its neighbour, so
a pure or Gaussian-DP guarantee computed for the ideal law does not hold exactly for them.
The tails there are also coarse: ``-log(1 - U)`` for a 53-bit ``U`` takes values whose
gaps grow to ``log 2`` near the end, so on a fine output grid whole stretches of grid
points would be unreachable.

This module keeps numpy's *bulk*, where the ziggurat is fine-grained, and replaces every
draw beyond a cut-off by an exact tail draw built from the bulk alone:

* **Exponential** (:data:`EXP_CUTOFF` ``= c = 7``, below the ziggurat edge 7.6972). By
  memorylessness, ``E ~ Exp(1)`` has the law of ``c N + F`` with ``N`` geometric,
  ``P(N = k) = (1 - e^-c) e^(-c k)``, and ``F ~ (E | E < c)`` independent of ``N``:
  ``P(N = k, F in df) = e^(-c k) e^(-f) df = P(E in c k + df)`` for ``0 <= f < c``.
  So a draw ``>= c`` is replaced by ``c`` plus a fresh draw, repeatedly (vectorised over
  the few entries still ``>= c``); the support is unbounded and the ratio ``e^-c`` per
  step is exact. Only draws below ``c`` are ever kept, so every kept ``F`` comes from the
  ziggurat's rectangles and wedges (never its 53-bit tail).
* **Normal** (:data:`NORMAL_CUTOFF` ``= r = 3.5``, below the ziggurat edge 3.6542). A
  draw with ``|Z| >= r`` keeps its sign and gets a new magnitude from the exact tail of
  the half-normal beyond ``r`` by Marsaglia's method (Marsaglia 1964, "Generating a
  variable from the tail of the normal distribution", Technometrics 6(1)):
  ``x = sqrt(r^2 + 2E)`` with ``E ~ Exp(1)`` (exact, above) has density
  ``x exp(-(x^2 - r^2)/2)`` on ``x > r``, and accepting it with probability ``r / x``
  leaves a density proportional to ``exp(-x^2 / 2)``. The mixture of numpy's draws with
  ``|Z| < r`` and these tail draws, each with the probability numpy gives the event
  ``|Z| >= r``, is the standard normal. (numpy's sign of a draw from its own tail is a
  bit of the integer that was rejected, symmetric to within about ``2^-40``.)
* **L2 Laplace** (density proportional to ``exp(-||b||_2)`` in ``R^d``): the radius
  ``||b||`` is Gamma(d, 1), the sum of ``d`` exact exponentials, and the direction is
  uniform on the sphere, a vector of exact normals divided by its norm (redrawn in the
  event, of probability about ``2^-50 d`` under numpy's lattice and 0 under the ideal law,
  that the vector is exactly zero).

**What remains.** Within the bulk, numpy's draws are not a continuous law but a law on a
lattice: a ziggurat layer ``i`` returns ``k w_i`` for a 53-bit (exponential) or 52-bit
(normal) integer ``k``, and numpy's tables (``ziggurat_constants.h``) have
``max w_i = 9.66e-16 < 2^-49.8`` (``we_double``) and ``8.69e-16 < 2^-50`` (``wi_double``);
the exact tails above are built from such draws, so their lattice is no coarser. That is
the only difference from the ideal law left; :mod:`._grid` chooses its output grid so
that each grid cell holds at least ``2^17`` lattice points (every grid point is reachable
from every input) and says how much that lattice can move each grid point's probability.
Uniforms (``rng.random``, the Marsaglia acceptance test) are 53-bit: the acceptance
probability ``r / x`` is met to within ``2^-53``.

The samplers are :class:`StandardNoise` objects, callable as ``sampler(rng, shape)`` like
numpy's, with a ``scalar(rng)`` method used by the scalar fast path of
:func:`._grid.release_on_grid` (which needs samplers with exact tails: these).

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import final

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "EXP_CUTOFF",
    "NORMAL_CUTOFF",
    "StandardNoise",
    "l2_laplace_noise",
    "standard_exponential",
    "standard_l2_laplace",
    "standard_laplace",
    "standard_normal",
]

#: Exponential draws at or above this are replaced by ``EXP_CUTOFF`` + a fresh draw
#: (memorylessness). Below numpy's ziggurat edge 7.69719..., so its 53-bit tail is unused.
EXP_CUTOFF = 7.0
#: Normal draws with ``|z| >= NORMAL_CUTOFF`` get an exact tail magnitude (Marsaglia 1964).
#: Below numpy's ziggurat edge 3.65415..., so its truncated tail is unused.
NORMAL_CUTOFF = 3.5

_Array = NDArray[np.float64]


@final
class StandardNoise:
    """A unit-scale exact-tail sampler: ``sampler(rng, shape)`` draws an array,
    ``sampler.scalar(rng)`` one Python float (the fast path of ``release_on_grid``)."""

    __slots__ = ("_array", "name", "scalar")

    def __init__(self, name: str, array: Callable[[np.random.Generator, tuple[int, ...]], _Array],
                 scalar: Callable[[np.random.Generator], float]) -> None:
        self.name = name
        self._array = array
        #: One draw as a Python float (a plain attribute: one call less per draw).
        self.scalar = scalar

    def __call__(self, rng: np.random.Generator, shape: tuple[int, ...]) -> _Array:
        return self._array(rng, shape)

    def __repr__(self) -> str:
        return f"<StandardNoise {self.name}>"


# -- exponential ---------------------------------------------------------------------------

def _exponential_array(rng: np.random.Generator, shape: tuple[int, ...]) -> _Array:
    out = rng.standard_exponential(shape)
    flat = out.reshape(-1)  # a view: ``out`` is a fresh contiguous array
    idx = np.flatnonzero(flat >= EXP_CUTOFF)
    steps = 1
    while idx.size:  # every entry left in ``idx`` has been >= c exactly ``steps`` times
        fresh = rng.standard_exponential(idx.size)
        done = fresh < EXP_CUTOFF
        flat[idx[done]] = steps * EXP_CUTOFF + fresh[done]
        idx = idx[~done]
        steps += 1
    return out


def _exponential_scalar(rng: np.random.Generator) -> float:
    return _exponential_tail(rng.standard_exponential, float(rng.standard_exponential()))


def _exponential_tail(draw: Callable[[], float], e: float) -> float:
    """``e`` (a draw) with its exact tail: ``c`` plus a fresh draw while ``e >= c``."""
    shift = 0.0
    while e >= EXP_CUTOFF:
        shift += EXP_CUTOFF
        e = float(draw())
    return shift + e


standard_exponential = StandardNoise("standard_exponential", _exponential_array,
                                     _exponential_scalar)
"""Exp(1) with an exact, unbounded tail (memorylessness beyond :data:`EXP_CUTOFF`)."""


# -- Laplace -------------------------------------------------------------------------------

def _laplace_array(rng: np.random.Generator, shape: tuple[int, ...]) -> _Array:
    # Laplace(0, 1) = E1 - E2 for independent unit exponentials (exact in law).
    out: _Array = _exponential_array(rng, shape)
    out -= _exponential_array(rng, shape)
    return out


def _laplace_scalar(rng: np.random.Generator) -> float:
    # The same draws in the same order as _laplace_array for shape (1,) or ().
    draw = rng.standard_exponential
    a = float(draw())
    if a >= EXP_CUTOFF:
        a = _exponential_tail(draw, a)
    b = float(draw())
    if b >= EXP_CUTOFF:
        b = _exponential_tail(draw, b)
    return a - b


standard_laplace = StandardNoise("standard_laplace", _laplace_array, _laplace_scalar)
"""Laplace(0, 1) as the difference of two exact-tail unit exponentials."""


# -- normal --------------------------------------------------------------------------------

def _normal_tail(rng: np.random.Generator, n: int) -> _Array:
    """``n`` magnitudes from the half-normal conditioned on ``> NORMAL_CUTOFF`` (exact)."""
    r = NORMAL_CUTOFF
    out = np.empty(n)
    filled = 0
    while filled < n:
        want = n - filled
        m = want + want // 8 + 8  # acceptance is about 0.92 at r = 3.5
        x = np.sqrt(r * r + 2.0 * _exponential_array(rng, (m,)))
        accepted = x[rng.random(m) * x < r]  # accept with probability r / x
        take = min(accepted.size, want)
        out[filled:filled + take] = accepted[:take]
        filled += take
    return out


def _normal_array(rng: np.random.Generator, shape: tuple[int, ...]) -> _Array:
    out = rng.standard_normal(shape)
    flat = out.reshape(-1)
    idx = np.flatnonzero(np.abs(flat) >= NORMAL_CUTOFF)
    if idx.size:
        flat[idx] = np.copysign(_normal_tail(rng, idx.size), flat[idx])
    return out


def _normal_scalar(rng: np.random.Generator) -> float:
    z = float(rng.standard_normal())
    if -NORMAL_CUTOFF < z < NORMAL_CUTOFF:
        return z
    r = NORMAL_CUTOFF
    while True:
        x = math.sqrt(r * r + 2.0 * _exponential_scalar(rng))
        if float(rng.random()) * x < r:
            return math.copysign(x, z)


standard_normal = StandardNoise("standard_normal", _normal_array, _normal_scalar)
"""N(0, 1): numpy's ziggurat below :data:`NORMAL_CUTOFF`, Marsaglia's exact tail beyond."""


# -- L2 Laplace ----------------------------------------------------------------------------

def standard_l2_laplace(rng: np.random.Generator, shape: tuple[int, ...],
                        vector_ndim: int) -> _Array:
    """Unit-scale draws with density proportional to ``exp(-||b||_2)`` over the last
    ``vector_ndim`` axes of ``shape`` (``vector_ndim = 0``: independent unit Laplace).

    In ``R^d`` the norm of such a vector is Gamma(d, 1), drawn here as the sum of ``d``
    exact-tail exponentials, and its direction is uniform on the sphere, independent of
    the norm (a vector of exact-tail normals over its norm).
    """
    if vector_ndim == 0:
        return _laplace_array(rng, shape)
    lead = shape[: len(shape) - vector_ndim]
    d = math.prod(shape[len(shape) - vector_ndim:])
    if d == 0:  # no coordinates: nothing to draw (the direction of an empty vector does
        return np.zeros(shape)  # not exist, and redrawing it would never end)
    rows = _normal_array(rng, (math.prod(lead), d))
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    zero = np.flatnonzero(norms == 0.0)
    while zero.size:  # a null event of the ideal law; redraw to keep the direction uniform
        rows[zero] = _normal_array(rng, (zero.size, d))
        norms[zero] = np.sqrt(np.einsum("ij,ij->i", rows[zero], rows[zero]))
        zero = zero[norms[zero] == 0.0]
    radius = _exponential_array(rng, (math.prod(lead), d)).sum(axis=1)
    rows *= (radius / norms)[:, None]
    return rows.reshape(shape)


@functools.lru_cache(maxsize=64)
def l2_laplace_noise(vector_ndim: int) -> StandardNoise:
    """:func:`standard_l2_laplace` over the last ``vector_ndim`` axes, as a sampler for
    ``release_on_grid`` (with the Laplace scalar path when ``vector_ndim == 0``); one
    cached object per ``vector_ndim``."""
    if vector_ndim == 0:
        return standard_laplace

    def draw(rng: np.random.Generator, shape: tuple[int, ...]) -> _Array:
        return standard_l2_laplace(rng, shape, vector_ndim)

    def one(rng: np.random.Generator) -> float:
        # A scalar value has vector_ndim == 0; kept for completeness (d = 1).
        return float(standard_l2_laplace(rng, (1,) * vector_ndim, vector_ndim).reshape(()))

    return StandardNoise(f"standard_l2_laplace[{vector_ndim}]", draw, one)
