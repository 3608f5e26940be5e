"""Discrete privacy loss distributions: certified upper and lower bounds on a grid.

A :class:`PrivacyLossDistribution` (PLD) is a non-negative measure on privacy-loss values
of a uniform grid ``{k * step}`` plus a mass at +infinity. Its *curve* is
``delta(eps) = E[(1 - e^(eps - L))_+] + P[L = inf]``, the hockey-stick divergence at
``e^eps`` when the measure is the loss distribution of a pair (P, Q) under P.

Two kinds of PLD are built here from a pair's exact privacy profile:

* an **upper** PLD, whose curve is at least the pair's at every real eps ("connect the
  dots": Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, PETS, arXiv:2207.04380v1,
  Algorithm 1; the profile is convex in ``e^eps``, so its chords lie above it);
* a **lower** PLD, whose curve is at most the pair's at every real eps (the chords
  lowered by a certified bound on how far each rises above the profile, see
  :func:`discretise`).

Composition adds independent losses, so both compose by convolution, and the order is
kept: if the curve of ``A`` is below (above) that of the pair ``T_A`` at every eps, and
likewise for ``B``, then the curve of ``A * B`` is below (above) that of ``T_A x T_B``.
(The composed curve is ``sum_j b_j delta_A(eps - l_j)``, a non-negative combination of
shifted curves; apply it twice. Zhu, Dong, Wang 2022, "Optimal accounting of differential
privacy via characteristic function", Theorem 10, is the dominance form of the same fact.)
So every upper number computed here is a certified upper bound and every lower number a
certified lower bound on the exact composition, up to floating-point rounding in the
FFTs, which :mod:`privkit._pld_fft` measures and charges to both bounds.

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   Lower PLDs (two-sided answers); composition moved to :mod:`privkit._pld_fft`; no cap
   on loss values.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.guarantees import Guarantee

__all__ = ["PLDGuarantee", "PrivacyLossDistribution", "discretise", "dominating_pld"]

Profile = Callable[[NDArray[np.float64]], NDArray[np.float64]]

#: Relative rounding allowance on profile values (they are computed to ~1e-16 relative).
_ROUNDING = 1e-13


def _array_eq(a: NDArray[np.float64], b: NDArray[np.float64]) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b))


@attrs.frozen(kw_only=True, eq=False)
class PrivacyLossDistribution:
    """Masses ``pmf[i]`` at losses ``(offset + i) * step``, plus ``infinity_mass``.

    Build one with :func:`discretise` (or :func:`dominating_pld`) from an exact privacy
    profile and compose with :func:`privkit._pld_fft.compose`; query with
    :meth:`delta_at`, :meth:`epsilon_at` and :meth:`profile`.
    """

    step: float
    offset: int
    pmf: NDArray[np.float64] = attrs.field(eq=attrs.cmp_using(eq=_array_eq))
    infinity_mass: float = 0.0

    @property
    def losses(self) -> NDArray[np.float64]:
        """The loss value of each entry of ``pmf``."""
        return np.arange(self.offset, self.offset + self.pmf.size, dtype=np.float64) * self.step

    def delta_at(self, epsilon: float) -> float:
        """``E[(1 - e^(eps - L))_+] + P[L = inf]``: the curve at ``epsilon``."""
        return float(self.profile(np.array([float(epsilon)]))[0])

    def epsilon_at(self, delta: float) -> float:
        """The smallest eps with ``self.delta_at(eps) <= delta``, solved exactly.

        Between consecutive grid losses ``delta(eps) = S0 - e^eps S1 + P[inf]`` with S0,
        S1 the sums of ``p`` and ``p e^-L`` over the losses above; the crossing segment is
        found on the grid and the equation solved in closed form. The result is rounded
        up until :meth:`delta_at` confirms it.
        """
        if self.infinity_mass > delta:
            return math.inf
        if self.delta_at(0.0) <= delta:
            return 0.0
        losses = self.losses
        top = float(losses[-1])
        p = self.pmf
        scaled = p * np.exp(np.minimum(top - losses, 700.0))  # p e^-L, in units of e^-top
        s0 = np.cumsum(p[::-1])[::-1]
        s1 = np.cumsum(scaled[::-1])[::-1]
        # delta at each grid loss L_i counts the losses strictly above it
        s0_next = np.append(s0[1:], 0.0)
        s1_next = np.append(s1[1:], 0.0)
        at_grid = s0_next - np.exp(losses - top) * s1_next + self.infinity_mass
        i = int(np.argmax(at_grid <= delta))  # first grid loss where delta fits
        if i == 0 or s1[i] <= 0.0:
            eps = max(float(losses[i]), 0.0)
        else:
            eps = top + math.log(max(s0[i] + self.infinity_mass - delta, 1e-300) / s1[i])
            eps = min(max(eps, float(losses[i - 1]), 0.0), float(losses[i]))
        while self.delta_at(eps) > delta:
            eps = math.nextafter(eps, math.inf) if eps > 0 else 5e-324
            eps += 1e-15 * max(1.0, abs(eps))
        return eps

    def profile(self, epsilons: NDArray[np.float64]) -> NDArray[np.float64]:
        """The curve at each of ``epsilons`` (any real values), vectorised."""
        e = np.asarray(epsilons, dtype=float)
        ell = self.losses
        p = self.pmf
        # delta(e) = S0(e) - e^e S1(e) over losses > e, computed as sums of suffixes;
        # e^-L is formed relative to the largest loss to avoid overflow, and capped at
        # e^700: that only shrinks S1 for losses 700 nats below the largest, which can only
        # raise delta, instead of overflowing to inf * 0 = nan.
        shift = float(ell[-1]) if ell.size else 0.0
        s0 = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
        weights = p * np.exp(np.minimum(shift - ell, 700.0))
        s1 = np.concatenate([np.cumsum(weights[::-1])[::-1], [0.0]])
        index = np.searchsorted(ell, e, side="right")
        value = s0[index] - np.exp(np.minimum(e - shift, 0.0)) * s1[index]  # s1 = 0 above
        result: NDArray[np.float64] = np.clip(value + self.infinity_mass, 0.0, 1.0)
        return result


def discretise(
    forward: Profile,
    reverse: Profile | None = None,
    *,
    step: float,
    lowest: float,
    highest: float,
    floor: float = 0.0,
    lower: bool = True,
) -> tuple[PrivacyLossDistribution, PrivacyLossDistribution | None]:
    """The upper and lower PLDs on a grid of a pair (P, Q) with the given profiles.

    Parameters
    ----------
    forward : callable
        ``H_(e^eps)(P || Q)`` for ``eps >= 0``, vectorised.
    reverse : callable, optional
        ``H_(e^eps)(Q || P)`` for ``eps >= 0`` (default: ``forward``, a symmetric pair).
        For negative eps the profile is ``1 - e^eps + e^eps reverse(-eps)``.
    step : float
        Grid spacing of the losses.
    lowest, highest : float
        The grid covers ``[lowest, highest]`` (rounded outwards to the grid). The upper
        PLD puts the loss mass below ``lowest`` at the lowest grid point and replaces the
        profile above ``highest`` by ``delta(highest)`` (mass at +infinity).
    floor : float
        A number at most ``H_inf(P || Q)`` (the mass of P where Q has none): the lower
        PLD's mass at +infinity (default 0).
    lower : bool
        Whether to build the lower PLD too (it needs the profile at twice the points).

    Notes
    -----
    Write ``x = e^eps`` and ``f(x)`` for the profile, convex in x. The upper PLD's curve
    interpolates f linearly between grid points (Doroshenko et al. 2022, Algorithm 1):
    with ``D_i = f(x_i)``, its masses are ``p_i = x_i (s_i - s_(i-1))`` where ``s_i`` is
    the slope of D between ``x_i`` and ``x_(i+1)``, ``s_(-1) = (D_0 - 1) / x_0`` and
    ``s_n = 0``, and ``P[inf] = D_n``.

    The lower PLD interpolates ``f(x_i) - e_i``, where ``e_i`` is at least how far the
    chord of f rises above f on either cell next to ``x_i``. On a cell ``[a, b]`` with
    midpoint ``m`` (in eps) that rise is at most ``(c(m) - f(m)) + w (s_b - s_a) / 4``
    over the two half cells, where ``c`` is the chord, ``w`` a half cell's width and
    ``s_a <= f'`` at its left end, ``s_b >= f'`` at its right end come from the secants
    of the neighbouring half cells (for a convex function, the chord of an interval of
    width w rises above it by at most ``w (f'(b) - f'(a)) / 4``, the gap at the
    intersection of the two end tangents). Left of the grid the curve continues the
    first chord's line, which lies below f by convexity; right of it, it is ``floor``.

    Where eps < 0, f is close to 1 and differences would cancel; there the computation
    works on ``u(x) = f(x) - 1 + x = x reverse(-eps)``, which differs from f by a linear
    function and so has the same chords' rises. Masses that rounding (or the lowering)
    makes negative are moved down (upper PLD) or up (lower PLD) until positive mass
    absorbs them: moving mass to a lower loss never lowers the curve, to a higher one
    never raises it.
    """
    h = check.positive_finite("step", step, "discretise")
    back = forward if reverse is None else reverse
    first = min(math.floor(lowest / h), -1)
    last = max(math.ceil(highest / h), 1)
    fine = 2 if lower else 1
    k = np.arange(fine * first, fine * last + 1)
    eps = k.astype(np.float64) * (h / fine)
    x = np.exp(eps)
    zero = -fine * first  # index of eps = 0 on the fine grid
    # F = u left of eps = 0, f from 0 on: both exact, no cancellation
    values = np.empty(k.size)
    values[:zero] = x[:zero] * np.asarray(back(-eps[:zero]), dtype=float)
    values[zero:] = np.asarray(forward(eps[zero:]), dtype=float)
    nodes = slice(None, None, fine)
    upper = _from_values(x[nodes], values[nodes], zero // fine, h, first, upper=True)
    if not lower:
        return upper, None
    rise = _chord_rise(x, values, zero)
    margin = np.maximum(np.append(rise, 0.0), np.concatenate([[0.0], rise]))
    node_values = values[nodes]
    lowered = node_values - margin - _ROUNDING * np.abs(node_values) - 1e-300
    top = min(floor, float(lowered[-1]))
    lowered[-1] = max(top, 0.0)
    left_slope = (node_values[1] - node_values[0]) / (x[fine] - x[0])
    hull = _lower_hull(x[nodes], lowered, zero // fine)
    low = _from_values(x[nodes], hull, zero // fine, h, first, upper=False,
                       left_slope=left_slope)
    return upper, low


def _lower_hull(x: NDArray[np.float64], values: NDArray[np.float64], zero: int
                ) -> NDArray[np.float64]:
    """The values at every node of the lower convex hull of the points ``(x, f)``
    (``values`` hold u left of ``zero``, f from it on), by Andrew's monotone chain.

    The hull lies below the points' interpolation, hence below the profile, and being
    convex it has non-negative masses. Slopes are formed as ``(dF + dL) / dx`` with
    ``L = (1 - x)_+`` (``f = F + L``), which does not cancel where ``f`` is close to
    ``1 - x``.
    """
    xs = x.tolist()
    vs = values.tolist()
    ls = [max(1.0 - xi, 0.0) for xi in xs]

    def slope(a: int, b: int) -> float:
        return (vs[b] - vs[a] + ls[b] - ls[a]) / (xs[b] - xs[a])

    hull: list[int] = []
    for i in range(len(xs)):
        while len(hull) >= 2 and slope(hull[-2], hull[-1]) >= slope(hull[-1], i):
            hull.pop()
        hull.append(i)
    idx = np.asarray(hull)
    f_hull = values[idx] + np.maximum(1.0 - x[idx], 0.0)
    out = np.interp(x, x[idx], values[idx])
    # interpolate f, not F, across eps = 0: add back the part of L the chords miss
    chords_l = np.interp(x, x[idx], f_hull - values[idx])
    result: NDArray[np.float64] = out + chords_l - np.maximum(1.0 - x, 0.0)
    return result


def _chord_rise(x: NDArray[np.float64], values: NDArray[np.float64], zero: int
                ) -> NDArray[np.float64]:
    """A bound on how far each cell's chord rises above the profile (see
    :func:`discretise`), from values at the cells' ends and midpoints (``zero`` is the
    index of eps = 0; ``values`` hold u left of it, f from it on)."""
    widths = np.diff(x)
    secants = np.diff(values) / widths  # slopes of the half cells (of u left of eps = 0)
    # f' >= -1 at the left end (u' >= 0) and f' <= 0 at the right end
    before = np.concatenate([[0.0], secants[:-1]])
    after = np.concatenate([secants[1:], [0.0]])
    spread = after - before
    spread[zero - 1: zero + 1] += 1.0  # f's slope is u's minus 1 left of eps = 0
    half_rise = widths * np.maximum(spread, 0.0) / 4.0
    a, m, b = values[:-2:2], values[1::2], values[2::2]
    xa, xm, xb = x[:-2:2], x[1::2], x[2::2]
    chord_mid = a + (b - a) * (xm - xa) / (xb - xa)
    result: NDArray[np.float64] = (np.maximum(chord_mid - m, 0.0)
                                   + np.maximum(half_rise[0::2], half_rise[1::2]))
    return result


def _from_values(x: NDArray[np.float64], values: NDArray[np.float64], zero: int, h: float,
                 first: int, *, upper: bool, left_slope: float | None = None
                 ) -> PrivacyLossDistribution:
    """The PLD whose curve interpolates ``values`` (u left of ``zero``, f from it on)."""
    u = values[: zero + 1]
    d = values[zero:]
    us = np.diff(u) / np.diff(x[: zero + 1])
    start = u[0] / x[0] if left_slope is None else left_slope
    slopes_u = np.concatenate([[start], us])  # u's slope left of each node up to zero
    slopes_d = np.concatenate([np.diff(d) / np.diff(x[zero:]), [0.0]])
    masses = np.empty(values.size)
    masses[:zero] = x[:zero] * np.diff(slopes_u)  # the -1 of f's slopes cancels exactly
    masses[zero] = x[zero] * (slopes_d[0] - (-1.0 + slopes_u[-1]))
    masses[zero + 1:] = x[zero + 1:] * np.diff(slopes_d)
    if upper:
        masses, unabsorbed = _absorb_down(masses)
        infinity = float(d[-1]) + unabsorbed
    else:
        masses = _absorb_up(masses, float(d[-1]))
        infinity = float(d[-1])
    return PrivacyLossDistribution(step=h, offset=first, pmf=masses, infinity_mass=infinity)


def dominating_pld(forward: Profile, reverse: Profile | None = None, *, step: float,
                   lowest: float, highest: float) -> PrivacyLossDistribution:
    """The upper ("connect the dots") PLD of :func:`discretise` alone."""
    return discretise(forward, reverse, step=step, lowest=lowest, highest=highest,
                      lower=False)[0]


def _absorb_down(masses: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """Make negative masses non-negative without lowering the curve anywhere.

    Moving (negative) mass from a loss to a lower one never lowers the curve, so a
    negative entry is pushed down until positive mass absorbs it. The resulting suffix
    sums are the running maximum, from the top, of the original ones; whatever reaches
    the bottom unabsorbed is returned to be added at +infinity.
    """
    suffix = np.cumsum(masses[::-1])[::-1]
    lifted = np.maximum.accumulate(suffix[::-1])[::-1]
    fixed = lifted - np.append(lifted[1:], 0.0)
    return np.maximum(fixed, 0.0), float(lifted[0] - suffix[0])


def _absorb_up(masses: NDArray[np.float64], infinity: float) -> NDArray[np.float64]:
    """Make negative masses non-negative without raising the curve anywhere.

    The curve is increasing in every suffix sum ``S_i`` (mass at losses >= the i-th, the
    mass at +infinity included), so replacing each by ``min_(j <= i) S_j`` (a
    non-increasing sequence, hence non-negative masses) never raises it.
    """
    suffix = np.cumsum(masses[::-1])[::-1] + infinity
    lowered = np.minimum.accumulate(suffix)
    if lowered[-1] < infinity:  # not absorbable: the empty measure is a lower bound
        return np.zeros(masses.size)
    fixed = lowered - np.append(lowered[1:], infinity)
    result: NDArray[np.float64] = np.maximum(fixed, 0.0)
    return result


@attrs.frozen(eq=False)
class PLDGuarantee(Guarantee):
    """A plan's privacy as privacy loss distributions: the native guarantee of the PLD
    accountant, two-sided.

    ``remove`` is the upper PLD of (P, Q) = (M(D), M(D')) with D' = D minus a record,
    ``add`` that of the reverse; for symmetric blocks they coincide. :meth:`epsilon_at`
    and :meth:`delta_at` are certified upper bounds. ``lower_remove`` / ``lower_add``,
    when present, are lower PLDs of the same directions, and ``lower_slack`` a mass their
    curves may exceed the exact ones by (FFT rounding and aliasing, measured): they give
    :meth:`epsilon_lower_at` and :meth:`delta_lower_at`, certified lower bounds on the
    exact privacy of the plan's blocks. ``notes`` say how the grid was chosen.

    .. versionadded:: 0.2.0
    .. versionchanged:: 0.3.0
       Lower bounds and notes.
    """

    remove: PrivacyLossDistribution
    add: PrivacyLossDistribution
    lower_remove: PrivacyLossDistribution | None = None
    lower_add: PrivacyLossDistribution | None = None
    lower_slack: float = 0.0
    notes: tuple[str, ...] = ()

    def delta_at(self, epsilon: float) -> float:
        """The worse of the two directions (a certified upper bound)."""
        e = check.nonnegative("epsilon", epsilon, "PLDGuarantee.delta_at")
        return max(self.remove.delta_at(e), self.add.delta_at(e))

    def epsilon_at(self, delta: float) -> float:
        """The worse of the two directions (a certified upper bound)."""
        d = check.delta("delta", delta, "PLDGuarantee.epsilon_at")
        return max(self.remove.epsilon_at(d), self.add.epsilon_at(d))

    def _lowers(self) -> list[PrivacyLossDistribution]:
        return [p for p in (self.lower_remove, self.lower_add) if p is not None]

    def delta_lower_at(self, epsilon: float) -> float:
        """A certified lower bound on the exact delta at ``epsilon`` (0 if unknown)."""
        e = check.nonnegative("epsilon", epsilon, "PLDGuarantee.delta_lower_at")
        values = [p.delta_at(e) - self.lower_slack for p in self._lowers()]
        return max([0.0, *values])

    def epsilon_lower_at(self, delta: float) -> float:
        """A certified lower bound on the exact epsilon at ``delta`` (0 if unknown):
        below it, some direction's lower curve is above ``delta``."""
        d = check.delta("delta", delta, "PLDGuarantee.epsilon_lower_at")
        best = 0.0
        for p in self._lowers():
            target = d + self.lower_slack
            value = p.epsilon_at(target) if target < 1.0 else 0.0
            if math.isfinite(value):  # the solve rounds up: step back below it
                value = max(0.0, value * (1.0 - 1e-12) - 1e-15)
            best = max(best, value)
        return best

    def _is_implied_by(self, other: Guarantee) -> bool:
        return other is self  # no other guarantee is compared with a whole profile here

    def __str__(self) -> str:
        return (f"PLDGuarantee(step={self.remove.step:g}, "
                f"{self.remove.pmf.size + self.add.pmf.size} atoms)")
