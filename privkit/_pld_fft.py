"""Composing many discrete privacy loss distributions at once: one FFT per distinct block.

The composition of blocks ``a`` run ``c_a`` times each has the loss ``S``, a sum of
independent losses, whose distribution is the convolution ``prod_a pmf_a^(*c_a)``. It is
computed as one product of spectra, ``prod_a rfft(pmf_a)^c_a`` (powers by repeated
squaring), on a circular window ``[a, a + n)`` of grid indices. Circular convolution adds
to each window entry the mass of the indices congruent to it; choosing the window by
Chernoff bounds (``P[S >= b] <= exp(K(t) - t b)`` for ``t > 0`` and
``P[S <= a] <= exp(K(-t) + t a)``, with ``K`` the log moment generating function of
``S``, a sum of the blocks' own) makes that aliased mass certifiably small:

* for an upper PLD, the mass above the window (wrapped to its bottom) is charged in full
  to +infinity; mass below it wraps to the top, which only raises the curve;
* for a lower PLD, mass above the window wraps down, which only lowers the curve; the
  mass below it may wrap up, and its bound is returned as slack to subtract.

FFT rounding shows as small negative entries; their largest magnitude times the number
of entries bounds the rounding's total mass (measured, not proved), which is charged to
+infinity (upper) or to the slack (lower). Time and memory are linear in the number of
distinct blocks and in the window, and independent of the counts.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from privkit.pld import PrivacyLossDistribution

__all__ = ["Window", "compose", "window"]

#: Chernoff parameters tried (the best of them is used for each tail).
_TILTS = np.array([1 / 64, 1 / 8, 1 / 2, 1.0, 2.0, 8.0, 32.0])

Terms = Sequence[tuple[PrivacyLossDistribution, int]]


def _log_mgf(pld: PrivacyLossDistribution, tilts: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log sum_i p_i e^(t l_i)`` at each tilt t (``-inf`` for an empty measure)."""
    live = pld.pmf > 0
    p = pld.pmf[live]
    if p.size == 0:
        return np.full(tilts.shape, -math.inf)
    exponents = np.outer(tilts, pld.losses[live])
    top = exponents.max(axis=1)
    result: NDArray[np.float64] = top + np.log(np.exp(exponents - top[:, None]) @ p)
    return result


class Window:
    """Grid indices ``[first, first + size)`` and the log-MGF of the sum, per tilt."""

    def __init__(self, terms: Terms) -> None:
        self.step = terms[0][0].step
        self.up = np.zeros(_TILTS.size)
        self.down = np.zeros(_TILTS.size)
        self.lowest = 0
        self.highest = 0
        for pld, count in terms:
            self.up += count * _log_mgf(pld, _TILTS)
            self.down += count * _log_mgf(pld, -_TILTS)
            self.lowest += count * pld.offset
            self.highest += count * (pld.offset + pld.pmf.size - 1)

    def above(self, index: int) -> float:
        """A bound on the finite mass of S strictly above grid index ``index``."""
        if index >= self.highest:
            return 0.0
        level = (index + 1) * self.step
        return float(min(1.0, np.exp(np.min(self.up - _TILTS * level))))

    def below(self, index: int) -> float:
        """A bound on the finite mass of S strictly below grid index ``index``."""
        if index <= self.lowest:
            return 0.0
        level = (index - 1) * self.step
        return float(min(1.0, np.exp(np.min(self.down + _TILTS * level))))

    def span(self, upper_tail: float, lower_tail: float) -> tuple[int, int]:
        """The smallest window (first index, last index) the Chernoff bounds allow for
        the given tail masses."""
        top = np.min((self.up - math.log(upper_tail)) / _TILTS)
        bottom = np.max((math.log(lower_tail) - self.down) / _TILTS)
        last = min(self.highest, math.ceil(top / self.step) if math.isfinite(top)
                   else self.highest)
        first = max(self.lowest, math.floor(bottom / self.step) if math.isfinite(bottom)
                    else self.lowest)
        return first, max(last, first)


def _power(spectrum: NDArray[np.complex128], count: int) -> NDArray[np.complex128]:
    result: NDArray[np.complex128] | None = None
    base = spectrum
    while True:
        if count & 1:
            result = base if result is None else result * base
        count >>= 1
        if not count:
            break
        base = base * base
    assert result is not None
    return result


def compose(terms: Terms, first: int, last: int, *, upper: bool
            ) -> tuple[PrivacyLossDistribution, float]:
    """The composition of ``terms`` on the window ``[first, last]`` (grid indices).

    Returns the PLD and, for a lower PLD, the slack its curve may exceed the exact one by
    (for an upper PLD the charges are in its mass at +infinity, and the slack is 0).
    """
    from scipy import fft

    window = Window(terms)
    size = fft.next_fast_len(last - first + 1, real=True)
    base = sum(count * pld.offset for pld, count in terms)
    spectrum: NDArray[np.complex128] | None = None
    log_finite = 0.0
    for pld, count in terms:
        pmf = pld.pmf
        if pmf.size > size:  # fold onto the circle first
            pmf = np.bincount(np.arange(pmf.size) % size, weights=pmf, minlength=size)
        term = _power(fft.rfft(pmf, size), count)
        spectrum = term if spectrum is None else spectrum * term
        log_finite += count * math.log1p(-min(pld.infinity_mass, 1.0)) \
            if pld.infinity_mass < 1.0 else -math.inf
    assert spectrum is not None
    circle = fft.irfft(spectrum, size)
    pmf = np.roll(circle, -((first - base) % size))
    rounding = size * max(0.0, -float(pmf.min()))
    pmf = np.maximum(pmf, 0.0)
    infinity = -math.expm1(log_finite) if log_finite > -math.inf else 1.0
    top = first + size - 1
    if upper:
        infinity = min(1.0, infinity + window.above(top) + rounding)
        slack = 0.0
    else:
        slack = window.below(first) + rounding
    live = np.flatnonzero(pmf)
    if live.size == 0:
        return PrivacyLossDistribution(step=window.step, offset=first, pmf=np.zeros(1),
                                       infinity_mass=infinity), slack
    lo, hi = int(live[0]), int(live[-1]) + 1
    return PrivacyLossDistribution(step=window.step, offset=first + lo, pmf=pmf[lo:hi].copy(),
                                   infinity_mass=infinity), slack
