"""Discretising exact privacy profiles on a grid: certified upper and lower PLDs, many
pairs at once.

Write ``x = e^eps`` and ``f(x) = H_x(P || Q)``, convex and decreasing in x, with
``f(0) = 1``. A PLD with masses ``p_i`` at losses ``l_i = (offset + i) step`` and mass
``p_inf`` at +infinity has the curve ``g(x) = sum_i p_i (1 - x e^-l_i)_+ + p_inf``,
piecewise linear in x with kinks at the grid's ``x_i = e^l_i``; conversely a convex,
decreasing, piecewise-linear g with kinks only there is such a curve, its masses being
``x_i`` times the jumps of its slope. Composition (convolution) keeps the order of
curves (see :mod:`privkit.pld`), so a PLD whose curve lies above f everywhere gives
certified upper bounds and one whose curve lies below f gives certified lower bounds.

* **Upper** ("connect the dots", Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022,
  PETS, arXiv:2207.04380v1, Algorithm 1): g interpolates f at the grid points, above f
  by convexity. Left of the grid the chord runs to ``(0, 1)``, right of it g is
  ``f(x_n)`` (a mass at +infinity).
* **Lower**: g interpolates ``f(x_i) - d_i``, where the lowering ``d`` makes every
  cell's chord lie below f, and is then replaced by its greatest convex minorant (an
  isotonic regression of its slopes, Barlow, Bartholomew, Bremner, Brunk 1972, which
  only lowers it). On a cell ``[a, b]`` the chord of f rises above f by the concave
  ``rho(t)`` (``t`` the position in the cell); the lowering of its two ends must
  dominate it: ``(1 - t) d_a + t d_b >= rho(t)``. ``rho`` is bounded from f at the
  cell's midpoint and from secants of the neighbouring half cells, which bound f' at the
  cell's ends: ``rho(t) <= min(A t, 2 rho_m (1 - t))`` on the left half and
  ``min(B (1 - t), 2 rho_m t)`` on the right one, with ``rho_m`` the rise at the midpoint
  and ``A``, ``B`` the end slopes of ``rho`` (the tangent-secant bound of a concave
  function). A cell is lowered flat by that bound's maximum (at most ``2 rho_m``), or,
  next to a cell where f is (nearly) linear, pivoted on the node it shares with it
  (``d = 0`` there, ``A`` or ``B`` at the other end), so that a kink at the edge of a
  loss distribution's support (the ``log(1 - q)`` edge of a subsampled mechanism) does
  not lower the linear region beside it. Left of the grid g continues with the secant
  slope of the first half cell, which is at least f' there; right of it g is
  ``min(f(x_n) - d_n, floor)``.

Rounding: profile values carry a relative error of a few units in the last place; each
mass is widened by a bound on what that error does to it (upper masses raised, lower
masses lowered), and negative masses are moved down (upper) or up (lower) until
absorbed, which never lowers, respectively raises, the curve.

Everything works on *rows*: ``n`` pairs discretised on one grid in one array
operation (a family of profiles evaluated at a column of parameters); only the
isotonic regression runs row by row, on the rows that need it.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Rows", "discretise_rows"]

Array = NDArray[np.float64]
#: A profile for eps >= 0 on a row of eps values, for every pair: shape (n, m) or (m,).
RowProfile = Callable[[Array], Array]

#: Relative error allowed in each profile value (units in the last place, generous).
_ULPS = 64 * np.finfo(float).eps


@attrs.frozen(eq=False)
class Rows:
    """PLDs of ``n`` pairs on one grid: ``pmf[r, j]`` is the mass of pair ``r`` at loss
    ``(offset + j) * step``, ``infinity[r]`` its mass at +infinity."""

    step: float
    offset: int
    pmf: Array
    infinity: Array

    @property
    def losses(self) -> Array:
        return np.arange(self.offset, self.offset + self.pmf.shape[1], dtype=float) * self.step


def _as_rows(values: ArrayLike, n: int, m: int) -> Array:
    out: Array = np.broadcast_to(np.asarray(values, dtype=float), (n, m)).astype(float)
    return out


def discretise_rows(forward: RowProfile, reverse: RowProfile, *, n: int, step: float,
                    first: int, last: int, floor: ArrayLike = 0.0, lower: bool = True
                    ) -> tuple[Rows, Rows | None]:
    """The upper and lower PLDs of ``n`` pairs on the grid ``{k step: first <= k <= last}``.

    ``forward(eps)`` is ``H_(e^eps)(P || Q)`` and ``reverse(eps)`` ``H_(e^eps)(Q || P)``,
    for ``eps >= 0``, of every pair (rows); ``floor[r]`` is at most ``H_inf(P_r || Q_r)``
    (the mass of P where Q has none), the lower PLD's mass at +infinity at most. The grid
    must contain 0 (``first <= -1 <= 1 <= last``).
    """
    h = float(step)
    fine = 2 if lower else 1
    k = np.arange(fine * first, fine * last + 1)
    eps = k.astype(float) * (h / fine)
    x = np.exp(eps)
    zero = -fine * first
    # V = u(x) = x H_(1/x)(Q || P) = f(x) - 1 + x left of eps = 0, f from 0 on: both are
    # computed without cancellation and agree at x = 1
    values = np.empty((n, k.size))
    values[:, :zero] = x[:zero] * _as_rows(reverse(-eps[:zero]), n, zero)
    values[:, zero:] = _as_rows(forward(eps[zero:]), n, k.size - zero)
    nodes = values[:, ::fine]
    upper = _upper(x[::fine], nodes, zero // fine, h, first)
    if not lower:
        return upper, None
    floors = np.broadcast_to(np.asarray(floor, dtype=float), (n,))
    return upper, _lower(x, values, zero, h, first, floors)


def _slopes(x: Array, values: Array, zero: int) -> Array:
    """f-slopes of consecutive segments (values hold u left of index ``zero``)."""
    out: Array = np.diff(values, axis=1) / np.diff(x)
    out[:, :zero] -= 1.0
    return out


def _error(x: Array, values: Array) -> Array:
    """A bound on how far rounding of ``values`` moves each mass ``x_i (s_i - s_(i-1))``
    (``s`` the slopes between consecutive points)."""
    widths = np.diff(x)
    slope_error = _ULPS * (np.abs(values[:, :-1]) + np.abs(values[:, 1:])) / widths
    padded = np.pad(slope_error, ((0, 0), (1, 1)))
    out: Array = x * (padded[:, 1:] + padded[:, :-1])
    return out


def _upper(x: Array, nodes: Array, zero: int, h: float, first: int) -> Rows:
    """Connect the dots: masses from the slopes of the interpolation of ``nodes``.

    Slopes stay in u-space left of eps = 0 (no cancellation there); only at eps = 0 the
    two meet (``f' = u' - 1`` left of it).
    """
    u = nodes[:, : zero + 1]
    d = nodes[:, zero:]
    us = np.diff(u, axis=1) / np.diff(x[: zero + 1])
    slopes_u = np.concatenate([u[:, :1] / x[0], us], axis=1)  # chord from (0, 0) in u
    slopes_d = np.concatenate([np.diff(d, axis=1) / np.diff(x[zero:]),
                               np.zeros((d.shape[0], 1))], axis=1)
    masses = np.empty(nodes.shape)
    masses[:, :zero] = x[:zero] * np.diff(slopes_u, axis=1)
    masses[:, zero] = x[zero] * (slopes_d[:, 0] - (slopes_u[:, -1] - 1.0))
    masses[:, zero + 1:] = x[zero + 1:] * np.diff(slopes_d, axis=1)
    masses += _error(x, nodes)
    masses, unabsorbed = _absorb_down(masses)
    return Rows(step=h, offset=first, pmf=masses, infinity=d[:, -1] + unabsorbed)


def _lower(x: Array, values: Array, zero: int, h: float, first: int, floors: Array) -> Rows:
    """The lowered interpolation's greatest convex minorant (see the module notes);
    ``values`` are on the half-step grid, nodes at even indices."""
    n = values.shape[0]
    xn = x[::2]
    nodes = values[:, ::2]
    zero_node = zero // 2
    widths = np.diff(xn)
    half = _slopes(x, values, zero)  # f-slopes of the half cells
    cell = _slopes(xn, nodes, zero_node)  # f-slopes of the cells (chords)
    left = np.concatenate([np.full((n, 1), -1.0), half[:, 1:-2:2]], axis=1)  # <= f'(a+)
    right = np.concatenate([half[:, 2::2], np.zeros((n, 1))], axis=1)  # >= f'(b-)
    a, mid, b = nodes[:, :-1], values[:, 1::2], nodes[:, 1:]
    t_mid = (x[1::2] - xn[:-1]) / widths
    rise = np.maximum(a + (b - a) * t_mid - mid, 0.0)  # chord above f at the midpoint
    # a rise within the rounding of the values and of the grid's x is the node
    # lowering's (below) to cover
    noise = _ULPS * (np.abs(a) + np.abs(b) + np.abs(mid) + np.abs(b - a) * xn[1:] / widths)
    rise[rise <= noise] = 0.0
    slope_a = np.maximum(widths * (cell - left), 2.0 * rise)  # rho'(0)
    slope_b = np.maximum(widths * (right - cell), 2.0 * rise)  # -rho'(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        flat = np.maximum(np.nan_to_num(2 * slope_a * rise / (slope_a + 2 * rise)),
                          np.nan_to_num(2 * slope_b * rise / (slope_b + 2 * rise)))
    lowering = np.zeros(nodes.shape)
    lowering[:, :-1] = flat
    lowering[:, 1:] = np.maximum(lowering[:, 1:], flat)
    lowered = nodes - lowering - _ULPS * np.abs(nodes)
    lowered[:, -1] = np.minimum(lowered[:, -1], floors)
    # every profile is at least (1 - x)_+, which is 0 in u-space left of eps = 0 and in
    # f-space from it on: lowered values below it are raised to it, and the cells next to
    # a raised node are checked against their rise and lowered at the other end if needed
    _clamp(lowered, nodes, rise, slope_a, slope_b)
    sigma = _slopes(xn, lowered, zero_node)
    _convex_minorant(sigma, widths)
    # left of the grid: the first half cell's secant, at least f' there
    masses = np.empty(nodes.shape)
    masses[:, 0] = xn[0] * (sigma[:, 0] - half[:, 0])
    masses[:, 1:-1] = xn[1:-1] * np.diff(sigma, axis=1)
    masses[:, -1] = xn[-1] * -sigma[:, -1]
    masses, infinity = _absorb_up(masses, lowered[:, -1])
    masses = np.maximum(masses - _error(xn, nodes) - _error(xn, lowered), 0.0)
    return Rows(step=h, offset=first, pmf=masses, infinity=infinity)


def _breakpoints(rise: Array, slope_a: Array, slope_b: Array) -> tuple[Array, Array]:
    """Positions ``t`` and values of the breakpoints of each cell's concave majorant of
    the chord's rise, ``min(A t, 2 rho (1 - t))`` on ``[0, 1/2]`` and
    ``min(B (1 - t), 2 rho t)`` on ``[1/2, 1]``: shape (..., 5)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t_a = np.nan_to_num(2 * rise / (slope_a + 2 * rise))
        t_b = 1.0 - np.nan_to_num(2 * rise / (slope_b + 2 * rise))
    t = np.stack([np.zeros_like(rise), t_a, np.full_like(rise, 0.5), t_b,
                  np.ones_like(rise)], axis=-1)
    value = np.stack([np.zeros_like(rise), slope_a * t_a, rise, slope_b * (1 - t_b),
                      np.zeros_like(rise)], axis=-1)
    return t, value


def _clamp(lowered: Array, nodes: Array, rise: Array, slope_a: Array, slope_b: Array
           ) -> None:
    """Raise lowered values below 0 (in the space of ``nodes``: u left of eps = 0, f from
    it on, both >= 0) to 0, keeping every cell's chord below the profile: a cell with a
    raised end is lowered at its other end as far as its majorant needs (the line of
    the two ends' lowerings must dominate it, which is checked at its breakpoints), which
    may raise that node in turn. In place."""
    cells = rise.shape[1]
    raised_rows, raised_at = np.nonzero(lowered < 0.0)
    while raised_rows.size:
        lowered[raised_rows, raised_at] = 0.0
        more_rows, more_at = [], []
        for side in (0, 1):  # the cell right of a raised node, then the one left of it
            cell = raised_at - side
            ok = (cell >= 0) & (cell < cells)
            r, c = raised_rows[ok], cell[ok]
            other = c + 1 - side  # the cell's other end
            if r.size == 0:
                continue
            fixed = nodes[r, c + side] - lowered[r, c + side]  # the raised end's lowering
            t, value = _breakpoints(rise[r, c], slope_a[r, c], slope_b[r, c])
            if side == 0:  # raised at t = 0: d_b >= (rho(t) - (1 - t) d_a) / t
                with np.errstate(invalid="ignore", divide="ignore"):
                    need = np.max(np.where(t > 0, (value - (1 - t) * fixed[:, None]) / t,
                                           -np.inf), axis=1)
            else:  # raised at t = 1: d_a >= (rho(t) - t d_b) / (1 - t)
                with np.errstate(invalid="ignore", divide="ignore"):
                    need = np.max(np.where(t < 1, (value - t * fixed[:, None]) / (1 - t),
                                           -np.inf), axis=1)
            both = lowered[r, other] <= 0.0  # 0 at both ends: 0 on the cell, below f
            target = nodes[r, other] - need
            lower = ~both & (target < lowered[r, other])
            lowered[r[lower], other[lower]] = target[lower]
            gone = lower & (target < 0.0)
            more_rows.append(r[gone])
            more_at.append(other[gone])
        raised_rows = np.concatenate(more_rows) if more_rows else np.zeros(0, int)
        raised_at = np.concatenate(more_at) if more_at else np.zeros(0, int)


def _convex_minorant(sigma: Array, widths: Array) -> None:
    """Replace each row's slopes by those of its greatest convex minorant (same end
    values): the weighted isotonic regression of the slopes. In place, only on rows that
    are not convex already."""
    bad = np.flatnonzero(np.any(np.diff(sigma, axis=1) < 0.0, axis=1))
    if bad.size == 0:
        return
    from scipy.optimize import isotonic_regression

    live = widths > 0.0  # a cell of no width (nodes that coincide in floating point)
    # moves no value: its slope is taken from its neighbours after the regression
    if not live.any():
        return
    index = np.maximum.accumulate(np.where(live, np.arange(widths.size), 0))
    first = int(np.argmax(live))
    index[:first] = first
    for r in bad:
        fitted = sigma[r].copy()
        fitted[live] = isotonic_regression(sigma[r, live], weights=widths[live]).x
        sigma[r] = fitted[index]


def _absorb_down(masses: Array) -> tuple[Array, Array]:
    """Make negative masses non-negative without lowering the curve anywhere.

    Moving (negative) mass from a loss to a lower one never lowers the curve, so a
    negative entry is pushed down until positive mass absorbs it. The resulting suffix
    sums are the running maximum, from the top, of the original ones; whatever reaches
    the bottom unabsorbed is returned (per row) to be added at +infinity.
    """
    suffix = np.cumsum(masses[:, ::-1], axis=1)[:, ::-1]
    lifted = np.maximum.accumulate(suffix[:, ::-1], axis=1)[:, ::-1]
    fixed = lifted - np.pad(lifted[:, 1:], ((0, 0), (0, 1)))
    return np.maximum(fixed, 0.0), lifted[:, 0] - suffix[:, 0]


def _absorb_up(masses: Array, infinity: Array) -> tuple[Array, Array]:
    """Make negative masses non-negative without raising the curve anywhere.

    The curve is a non-negative combination of the suffix sums ``S_i`` (mass at losses
    >= the i-th, the mass at +infinity included, which is the last of them), so
    replacing each by ``min_(j <= i) S_j`` never raises it; the new masses are the
    differences, and the last running minimum is the new mass at +infinity.
    """
    suffix = np.cumsum(masses[:, ::-1], axis=1)[:, ::-1] + infinity[:, None]
    lowered = np.minimum.accumulate(np.concatenate([suffix, infinity[:, None]], axis=1),
                                    axis=1)
    return np.maximum(lowered[:, :-1] - lowered[:, 1:], 0.0), lowered[:, -1]


def grid_span(lowest: float, highest: float, step: float) -> tuple[int, int]:
    """Grid indices ``(first, last)`` covering ``[lowest, highest]`` and 0 with a node on
    each side of it."""
    return min(math.floor(lowest / step), -1), max(math.ceil(highest / step), 1)
