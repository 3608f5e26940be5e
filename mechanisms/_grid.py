"""Floating-point-safe release of additive noise on a power-of-two grid.

Mironov (2012, "On significance of the least significant bits for differential
privacy", CCS) showed that ``x + noise`` computed in floating point leaks ``x`` through
the set of reachable outputs, which depends on ``x``. privkit's publication path removes
that dependence:

1. choose a grid step ``g = 2^k`` from *public* quantities only (the noise scale, the
   sensitivity and the output dimension);
2. snap the exact answer to the grid, ``r = round(x / g)`` (exact: dividing by a power of
   two is exact in binary floating point, and so is rounding);
3. add noise in grid units and round it, ``y = r + round(Z * s / g)``, in int64;
4. publish ``y * g``.

Because ``r`` is an integer, ``r + round(Z s/g) = round(r + Z s/g)``: the output is a
deterministic function (post-processing) of the *ideal* continuous mechanism applied to
``r``. Its privacy is therefore exactly that of the ideal mechanism with the sensitivity
of ``r``, which snapping inflates by at most one grid step per coordinate:
``||r - r'||_1 <= ||x - x'||_1 / g + d`` and ``||r - r'||_2 <= ||x - x'||_2 / g + sqrt(d)``.
privkit scales the noise up by the same factor, ``(Δ + d_norm g) / Δ``, so the released
mechanism satisfies *exactly* the guarantee declared for the continuous one: the privacy
cost of the safe path is zero. The accuracy cost is a relative increase of the noise of
at most ``2^-24`` (the grid is chosen to make it so) plus rounding to a grid step at most
``2^-20`` of the noise scale.

Residual limitation (documented, not charged): the continuous noise ``Z`` comes from
numpy's double-precision samplers, whose tails end where a 53-bit uniform runs out (about
44 scale units for the exponential, 13.7 standard deviations for the normal). Under the
exact law those regions have probability below 1e-19 and 1e-40 respectively.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

#: Noise scale over grid step: the output is rounded to at most 2^-20 of the noise scale.
_SCALE_BITS = 20
#: Sensitivity over (dimension penalty x grid step): the noise grows by at most 2^-24.
_INFLATION_BITS = 24
#: int64 arithmetic stays exact below this magnitude (with room for the noise).
_INT_LIMIT = 2.0**62


def grid_step(noise_scale: float, sensitivity: float, dimension_penalty: float) -> float:
    """The power-of-two grid step for one release (a function of public values only)."""
    bound = min(noise_scale * 2.0**-_SCALE_BITS,
                sensitivity * 2.0**-_INFLATION_BITS / dimension_penalty)
    return math.ldexp(1.0, math.floor(math.log2(bound)))


def release_on_grid(
    value: NDArray[np.float64],
    *,
    noise_scale: float,
    sensitivity: float,
    dimension_penalty: Callable[[int], float],
    standard_noise: Callable[[np.random.Generator, tuple[int, ...]], NDArray[np.float64]],
    rng: np.random.Generator,
    shape: tuple[int, ...],
    owner: str,
) -> NDArray[np.float64]:
    """Release ``value + noise`` on the grid, with the noise inflated to pay for snapping.

    ``dimension_penalty(d)`` is how much snapping can add to the sensitivity in grid units
    for a ``d``-coordinate release (``d`` for L1, ``sqrt(d)`` for L2);
    ``standard_noise(rng, shape)`` draws unit-scale continuous noise.
    """
    d = max(int(value.size), 1)
    penalty = dimension_penalty(d)
    g = grid_step(noise_scale, sensitivity, penalty)
    scaled = value / g
    if np.any(np.abs(scaled) >= _INT_LIMIT):
        raise check.fail(
            "value", float(np.max(np.abs(value))),
            f"smaller than {_INT_LIMIT * g:.3g} in magnitude for this noise scale", owner,
            "centre the query (subtract a public offset) or release it in smaller units",
        )
    snapped = np.rint(scaled).astype(np.int64)
    inflated_scale = (noise_scale / g) * (sensitivity + penalty * g) / sensitivity
    noise = np.rint(standard_noise(rng, shape + value.shape) * inflated_scale).astype(np.int64)
    return (snapped + noise).astype(np.float64) * g
