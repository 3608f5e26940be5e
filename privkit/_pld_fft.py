"""Composing many discrete privacy loss distributions at once, on an exponentially tilted
circle.

A composition of pairs ``r`` run ``c_r`` times each has the loss ``S``, a sum of
independent losses, whose distribution is the convolution of theirs. It is computed on
a circular window ``[a, a + N)`` of grid indices as one product of spectra: the pairs
that run once are first convolved with each other in a balanced product tree (batched
FFTs of rows of equal length), the rest are raised to their counts by repeated squaring.

**Tilting.** The convolution is done on the distributions tilted by ``e^(theta l)``
(normalised), which composes to the tilted distribution of ``S``; the masses are untilted
at the end, ``p(s) = p~(s) e^(K(theta) - theta s)`` with ``K`` the log moment generating
function of ``S``. The tilt centres the computation on the losses that decide the answer
(``theta`` is chosen by the caller, near the saddle point of the question): there the
FFT's absolute rounding error, of the order of the machine epsilon relative to the
tilted masses, is a tiny relative error, where without the tilt it would swamp deltas of
1e-12.

**Certification.** Every computed entry is the true tilted mass at its index, plus the
aliased masses of the indices congruent to it (circular convolution), plus rounding. The
aliased masses are bounded by Chernoff bounds of the tilted sum (``P[S >= y] <=
exp(K~(t) - t y)``, ``K~`` its log-MGF, minimised over a few ``t``); the rounding by the
largest negative entry of the result (the noise floor of the FFTs, measured, not proved)
times a safety factor, and at least a few units in the last place of the largest entry.
The upper PLD adds the rounding bound to every entry (untilted) and charges the mass
above the window (a Chernoff bound of ``S`` itself) to +infinity; mass below the window
is moved up to it, which only raises the curve for the losses below. The lower PLD
subtracts the rounding and aliasing bounds from every entry (never below 0) and drops
what is outside the window. Both are exact representations of bounds on the curve at
losses from the window's start on; the accountant places it at or below 0, so the
curves are certified at every ``eps >= 0``.

Time and memory are linear in the number of pairs and in the window, logarithmic in the
counts.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit._pld_grid import Rows
from privkit.pld import SAFE_SUM, PrivacyLossDistribution, exp_ramp, log_weighted_sums

__all__ = ["Group", "Tilts", "compose", "log_mgf"]

Array = NDArray[np.float64]

#: The tilts at which log-MGFs are kept: the tilt theta of a composition is one of them,
#: and Chernoff bounds minimise over the others.
TILTS = np.array([-1.0, 0.0, 1 / 16, 1 / 4, 1.0, 2.0, 4.0, 8.0, 16.0])
#: Safety factor on the measured rounding noise.
_NOISE_FACTOR = 16.0
_EPS = float(np.finfo(float).eps)


@attrs.frozen(eq=False)
class Group:
    """Rows of PLDs on one grid, each run ``count`` times."""

    rows: Rows
    count: int


def log_mgf(rows: Rows, tilts: Array = TILTS) -> Array:
    """``log sum_j p_rj e^(t l_j)`` for each row r and tilt t (``-inf`` for an empty row):
    shape (n, len(tilts)). The mass at +infinity is not included."""
    return log_weighted_sums(rows.pmf, rows.losses, tilts, rows.step)


@attrs.frozen
class Tilts:
    """The log-MGF ``K`` of a composition at a few tilts (``points``, :data:`TILTS`
    first), the grid step and the range of grid indices the composition can reach."""

    points: Array
    values: Array
    step: float
    lowest: int
    highest: int

    @classmethod
    def of(cls, groups: Sequence[Group], points: Array = TILTS) -> Tilts:
        total = np.zeros(points.size)
        lowest = highest = 0
        for g in groups:
            total += g.count * np.sum(log_mgf(g.rows, points), axis=0)
            live = g.rows.pmf > 0  # the reach: first and last entry with mass, per row
            width = live.shape[1]
            first = np.argmax(live, axis=1)
            last = width - 1 - np.argmax(live[:, ::-1], axis=1)
            lowest += g.count * int(np.sum(g.rows.offset + first))
            highest += g.count * int(np.sum(g.rows.offset + last))
        return cls(points=points, values=total, step=groups[0].rows.step, lowest=lowest,
                   highest=highest)

    def around(self, groups: Sequence[Group], theta: float) -> Tilts:
        """These tilts and more near ``theta``, on the scale of the tilted sum's spread
        (``theta +- (10 / sd) 2^k``): the Chernoff bounds of a window ten spreads wide
        need tilts of that size."""
        variance = 0.0
        for g in groups:
            p, _ = _tilted(g.rows, theta)
            losses = g.rows.losses
            mean = np.sum(p * losses, axis=1)  # elementwise: BLAS threads are slow here
            variance += g.count * float(np.sum(np.sum(p * losses**2, axis=1) - mean**2))
        scale = 10.0 / math.sqrt(max(variance, (self.step / 2) ** 2))
        extra = theta + scale * np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])
        extra = extra[~np.isin(extra, self.points)]
        more = Tilts.of(groups, extra)
        order = np.argsort(np.concatenate([self.points, extra]))
        return Tilts(points=np.concatenate([self.points, extra])[order],
                     values=np.concatenate([self.values, more.values])[order],
                     step=self.step, lowest=self.lowest, highest=self.highest)

    def mass_above(self, index: float) -> float:
        """A bound on the (untilted) mass of ``S`` at grid indices ``>= index``."""
        if index > self.highest:
            return 0.0
        above = self.points > 0
        exponents = self.values[above] - self.points[above] * index * self.step
        return float(np.exp(min(np.min(exponents, initial=math.inf), self._at(0.0))))

    def mass_below(self, index: float) -> float:
        """A bound on the (untilted) mass of ``S`` at grid indices ``<= index``."""
        if index < self.lowest:
            return 0.0
        below = self.points < 0
        exponents = self.values[below] - self.points[below] * index * self.step
        return float(np.exp(min(np.min(exponents, initial=math.inf), self._at(0.0))))

    def upper_tail(self, index: float, theta: float = 0.0) -> float:
        """A bound on the mass (tilted by ``theta``, normalised) of ``S`` at grid
        indices ``>= index`` (0 beyond the reachable range)."""
        if index > self.highest:
            return 0.0
        above = self.points > theta
        exponents = (self.values[above] - self._at(theta)
                     - (self.points[above] - theta) * index * self.step)
        return float(min(1.0, np.exp(min(0.0, np.min(exponents))))) if exponents.size \
            else 1.0

    def lower_tail(self, index: float, theta: float = 0.0) -> float:
        """A bound on the tilted mass of ``S`` at grid indices ``<= index`` (0 beyond
        the reachable range)."""
        if index < self.lowest:
            return 0.0
        below = self.points < theta
        exponents = (self.values[below] - self._at(theta)
                     + (theta - self.points[below]) * index * self.step)
        return float(min(1.0, np.exp(min(0.0, np.min(exponents))))) if exponents.size \
            else 1.0

    def _at(self, theta: float) -> float:
        i = int(np.argmin(np.abs(self.points - theta)))
        if self.points[i] != theta:
            raise ValueError(f"theta={theta} is not one of the kept tilts")
        return float(self.values[i])

    def window(self, tail: float, theta: float) -> tuple[int, int]:
        """The smallest index range outside which each tilted tail is at most ``tail``
        (within the reachable range)."""
        if tail <= 0.0:
            return self.lowest, self.highest
        k = self._at(theta)
        log_tail = math.log(tail)
        above, below = self.points > theta, self.points < theta
        with np.errstate(invalid="ignore"):
            top = np.min((self.values[above] - k - log_tail) / (self.points[above] - theta),
                         initial=math.inf)
            bottom = np.max((log_tail - self.values[below] + k)
                            / (theta - self.points[below]), initial=-math.inf)
        last = min(self.highest, math.ceil(top / self.step)) if math.isfinite(top) \
            else self.highest
        first = max(self.lowest, math.floor(bottom / self.step)) if math.isfinite(bottom) \
            else self.lowest
        return first, max(last, first)


def _tilted(rows: Rows, theta: float) -> tuple[Array, Array]:
    """Each row tilted by ``e^(theta l)`` and normalised, with its log normaliser: the
    masses times one vector of weights (see :func:`log_mgf`), rows whose sum is too small
    to trust tilted in log space."""
    losses = rows.losses
    centre = theta * (losses[0] + losses[-1]) / 2 if losses.size else 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        p = rows.pmf * exp_ramp(theta * losses[0] - centre if losses.size else 0.0,
                                theta * rows.step, losses.size)
    total = np.sum(p, axis=1)
    with np.errstate(divide="ignore"):
        log_norm = np.log(total) + centre
    unsafe = ~(total >= SAFE_SUM) | ~np.isfinite(total)
    for r in np.flatnonzero(unsafe):
        with np.errstate(divide="ignore"):
            z = np.log(rows.pmf[r]) + theta * losses
        top = float(np.max(z))
        if not math.isfinite(top):  # an empty row
            p[r] = 0.0
            log_norm[r] = -math.inf
            continue
        p[r] = np.exp(z - top)
        total[r] = np.sum(p[r])
        log_norm[r] = top + math.log(total[r])
    live = total > 0
    p[live] /= total[live, None]
    return p, log_norm


def _tree(rows: Array, limit: int) -> list[tuple[Array, int]]:
    """Convolve rows pairwise (batched FFTs) until one is left or they would exceed
    ``limit`` entries. Returns each remaining row with how many of the given rows it
    convolves (its origin is that many times theirs)."""
    from scipy import fft

    out: list[tuple[Array, int]] = []
    width = 1
    while rows.shape[0] > 1 and 2 * rows.shape[1] - 1 <= limit:
        if rows.shape[0] % 2:  # the odd one out waits at this level
            out.append((rows[-1], width))
            rows = rows[:-1]
        size = 2 * rows.shape[1] - 1
        n = fft.next_fast_len(size, real=True)
        spectra = fft.rfft(rows, n, axis=1)
        rows = fft.irfft(spectra[0::2] * spectra[1::2], n, axis=1)[:, :size]
        width *= 2
    out.extend((row, width) for row in rows)
    return out


def _power(spectrum: NDArray[np.complex128], count: int) -> NDArray[np.complex128]:
    """``spectrum ** count`` by repeated squaring, in place of ``spectrum`` (which it
    overwrites)."""
    result: NDArray[np.complex128] | None = None
    base = spectrum
    while True:
        if count & 1:
            if result is None:
                result = base if count == 1 else base.copy()
            else:
                result *= base
        count >>= 1
        if not count:
            break
        base *= base
    assert result is not None
    return result


def compose(groups: Sequence[Group], *, theta: float, tilts: Tilts, tail: float,
            upper: bool, start: int | None = None) -> PrivacyLossDistribution:
    """The composition of ``groups`` on a circular window chosen for ``theta``: it holds
    every index whose tilted tail beyond it exceeds ``tail`` (by the Chernoff bounds of
    ``tilts``, which should hold tilts on the sum's scale, :meth:`Tilts.around`), and
    starts at grid index ``start`` or below when given. The result is certified for the
    curve at every ``eps >= 0`` (see the module notes), and exact up to its bounds'
    errors from the window's start on."""
    from scipy import fft

    step = tilts.step
    first, last = tilts.window(tail, theta)
    if start is not None:
        first = min(first, max(start, tilts.lowest))
    last = max(last, first + 1)
    size = fft.next_fast_len(last - first + 1, real=True)
    log_finite = 0.0  # logs of the products of the pairs' finite and total masses
    log_total = 0.0  # (the composition of formal measures, see _infinity)
    for g in groups:
        finite = np.sum(g.rows.pmf, axis=1)
        with np.errstate(divide="ignore"):
            log_finite += g.count * float(np.sum(np.log(finite)))
        log_total += g.count * float(np.sum(np.log(finite + g.rows.infinity)))
    if log_finite == -math.inf:  # some pair has all its mass at +infinity
        return _trimmed(step, first, np.zeros(1), min(1.0, math.exp(log_total)))
    spectrum = np.ones(size // 2 + 1, dtype=complex)
    base = 0  # the grid index of the circle's entry 0
    log_scale = 0.0  # K(theta) of the formal measures: untilting multiplies by it
    for g in groups:
        p, log_norm = _tilted(g.rows, theta)
        log_scale += g.count * float(np.sum(log_norm))
        pieces = _tree(p, size // 2) if g.count == 1 else [(row, 1) for row in p]
        for row, width in pieces:
            base += g.count * width * g.rows.offset
            term = fft.rfft(row if row.size <= size else _fold(row, size), size)
            spectrum *= _power(term, g.count) if g.count > 1 else term
    circle = fft.irfft(spectrum, size)
    low, high = float(circle.min()), float(circle.max())
    noise = max(_NOISE_FACTOR * max(0.0, -low),
                8 * _EPS * math.log2(size) * max(high, -low), 1e-300)
    infinity = _infinity(log_finite, log_total)
    # no mass lies beyond what the sum can reach: those entries are 0, rounding aside;
    # masses at negative losses do not enter the curve at eps >= 0, and no mass exceeds 1
    # (a cap that keeps both bounds: the exact masses are at most 1): only the indices
    # from max(first, 0, lowest) to min(first + size - 1, highest) are computed
    lo = max(first, tilts.lowest, 0)
    hi = min(first + size - 1, tilts.highest)
    if upper:
        pmf = _untilted(_arc(circle, lo - base, hi - lo + 1), log_scale, theta, step, lo,
                        raise_by=noise)
        if first > 0:  # what lies below the window (and above 0) is moved up to it
            if pmf.size == 0:
                pmf = np.zeros(1)
            pmf[0] += tilts.mass_below(first - 1)
        infinity += tilts.mass_above(first + size)  # what lies above it is charged
        return _trimmed(step, lo, pmf, min(infinity, 1.0))
    alias = tilts.upper_tail(first + size, theta) + tilts.lower_tail(first - 1, theta)
    pmf = _untilted(_arc(circle, lo - base, hi - lo + 1), log_scale, theta, step, lo,
                    lower_by=noise + alias)
    return _trimmed(step, lo, pmf, min(infinity, 1.0))


def _arc(circle: Array, start: int, length: int) -> Array:
    """``length`` consecutive entries of ``circle`` from ``start`` (modulo its size), a
    new array."""
    size = circle.size
    if length <= 0:
        return np.zeros(0)
    start %= size
    if start + length <= size:
        return circle[start: start + length].copy()
    return np.concatenate([circle[start:], circle[: start + length - size]])


#: Untilting multiplies by ``e^x``: directly while every such ``x`` is within this (no
#: overflow, no underflow below the normal range), else in log space.
_DIRECT = 700.0


def _untilted(tilted: Array, log_scale: float, theta: float, step: float, first: int, *,
              raise_by: float = 0.0, lower_by: float = 0.0) -> Array:
    """The masses at the grid indices ``i`` from ``first`` on, untilted (times
    ``e^(log_scale - theta i step)``) and capped at 1, from the tilted ones: raised by
    ``raise_by`` (the upper PLD: ``max(tilted, 0) + raise_by``) or lowered by
    ``lower_by`` (the lower one: ``max(tilted - lower_by, 0)``). In place of ``tilted``."""
    if lower_by:
        tilted -= lower_by
    np.maximum(tilted, 0.0, out=tilted)
    if raise_by:
        tilted += raise_by
    start = log_scale - theta * first * step  # the exponent is a ramp from here
    end = start - theta * (tilted.size - 1) * step
    if max(abs(start), abs(end)) < _DIRECT:
        tilted *= exp_ramp(start, -theta * step, tilted.size)
    else:
        index = np.arange(first, first + tilted.size, dtype=float)
        with np.errstate(divide="ignore"):
            np.log(tilted, out=tilted)
        tilted += log_scale - theta * index * step
        np.exp(tilted, out=tilted)
    np.minimum(tilted, 1.0, out=tilted)
    return tilted


def _infinity(log_finite: float, log_total: float) -> float:
    """Mass at +infinity of the composition of formal measures: total minus finite,
    ``prod T - prod F = prod F (prod (T/F) - 1)``."""
    if log_finite == -math.inf:
        return min(1.0, math.exp(log_total))
    return math.exp(log_finite) * math.expm1(log_total - log_finite)


def _fold(row: Array, size: int) -> Array:
    """A row longer than the circle, wrapped onto it."""
    out: Array = np.bincount(np.arange(row.size) % size, weights=row,
                             minlength=size).astype(np.float64, copy=False)
    return out


def _trimmed(step: float, first: int, pmf: Array, infinity: float) -> PrivacyLossDistribution:
    live = np.flatnonzero(pmf)
    if live.size == 0:
        return PrivacyLossDistribution(step=step, offset=first, pmf=np.zeros(1),
                                       infinity_mass=infinity)
    lo, hi = int(live[0]), int(live[-1]) + 1
    kept = pmf if lo == 0 and hi == pmf.size else pmf[lo:hi].copy()
    return PrivacyLossDistribution(step=step, offset=first + lo, pmf=kept,
                                   infinity_mass=infinity)
