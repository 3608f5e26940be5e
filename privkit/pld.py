"""Pessimistic discrete privacy loss distributions.

A :class:`PrivacyLossDistribution` (PLD) is a distribution of privacy-loss values on a
uniform grid ``{k * step}`` plus a mass at +infinity. It represents a *dominating pair*:
a pair of output distributions whose hockey-stick divergence
``delta(eps) = E[(1 - e^(eps - L))_+] + P[L = inf]`` is at least that of the mechanism
it stands for, at every eps. Composition of mechanisms is the sum of independent
losses, so PLDs compose by convolution, and dominance survives composition (Zhu, Dong,
Wang 2022, "Optimal accounting of differential privacy via characteristic function",
Theorem 10): every number computed here is a certified upper bound, up to floating-point
rounding in the FFTs (absolute errors of order 1e-16 per grid point, far below any
delta of interest; negative rounding residues are clipped to zero).

Discretisation: "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022,
PETS, arXiv:2207.04380v1, Algorithm 1). Given the exact profile at grid points
``eps_i``, the PLD with atoms at ``eps_i`` whose profile interpolates those values
linearly in ``e^eps`` dominates the mechanism, because the true profile is convex in
``e^eps``. Its error is second order in the step, where rounding losses up to the grid
would shift every composition by half a step on average.

Truncation (pessimistic): after each convolution, mass in the upper tail beyond
``tail_mass`` is moved to +infinity and mass in the lower tail is moved up to the lowest
kept grid point; both can only increase delta.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.guarantees import Guarantee

__all__ = ["LOSS_CAP", "PLDGuarantee", "PrivacyLossDistribution", "dominating_pld"]

#: Default mass allowed in each truncated tail per convolution (moved pessimistically).
TAIL_MASS = 1e-16
#: Composed losses are kept within [-LOSS_CAP, LOSS_CAP] (pessimistically: mass above goes
#: to +infinity, mass below moves up to -LOSS_CAP), so a grid never outgrows
#: ``2 LOSS_CAP / step`` points whatever the number of compositions. Mass at a loss above
#: LOSS_CAP contributes at least ``1 - e^(eps - LOSS_CAP)`` to delta(eps), so moving it to
#: +infinity changes no delta at any eps below ~LOSS_CAP - 37 by more than 1e-16 of it.
LOSS_CAP = 150.0
#: Entries below this fraction of the largest are FFT noise and are cut (pessimistically).
_RELATIVE_FLOOR = 1e-14


def _array_eq(a: NDArray[np.float64], b: NDArray[np.float64]) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b))


@attrs.frozen(kw_only=True, eq=False)
class PrivacyLossDistribution:
    """Masses ``pmf[i]`` at losses ``(offset + i) * step``, plus ``infinity_mass``.

    Build one with :func:`dominating_pld` from an exact privacy profile; combine with
    :meth:`compose` and :meth:`self_compose`; query with :meth:`delta` and :meth:`epsilon`.
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
        """``E[(1 - e^(eps - L))_+] + P[L = inf]``: the hockey-stick divergence at e^eps."""
        losses = self.losses
        above = losses > epsilon
        total = float(np.sum(self.pmf[above] * -np.expm1(epsilon - losses[above])))
        return min(1.0, total + self.infinity_mass)

    def epsilon_at(self, delta: float) -> float:
        """The smallest eps with ``self.delta_at(eps) <= delta``, solved exactly.

        Between consecutive grid losses ``delta(eps) = S0 - e^eps S1 + P[inf]`` with S0,
        S1 the sums of ``p`` and ``p e^-L`` over the losses above; the crossing segment is
        found on the grid and the equation solved in closed form. The result is rounded
        up until :meth:`delta` confirms it.
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
            eps = top + math.log((s0[i] + self.infinity_mass - delta) / s1[i])
            eps = min(max(eps, float(losses[i - 1]), 0.0), float(losses[i]))
        while self.delta_at(eps) > delta:
            eps = math.nextafter(eps, math.inf) if eps > 0 else 5e-324
            eps += 1e-15 * max(1.0, abs(eps))
        return eps

    def compose(self, other: PrivacyLossDistribution, *,
                tail_mass: float = TAIL_MASS) -> PrivacyLossDistribution:
        """The PLD of running both mechanisms (sum of independent losses)."""
        if other.step != self.step:
            raise check.fail("other", f"a PLD with step {other.step}",
                             f"a PLD on the same grid (step {self.step})",
                             "PrivacyLossDistribution.compose")
        pmf = _convolve(self.pmf, other.pmf)
        infinity = 1.0 - (1.0 - self.infinity_mass) * (1.0 - other.infinity_mass)
        return _truncated(self.step, self.offset + other.offset, pmf, infinity, tail_mass)

    def self_compose(self, count: int, *, tail_mass: float = TAIL_MASS
                     ) -> PrivacyLossDistribution:
        """The PLD of ``count`` runs, by repeated squaring (``log2(count)`` convolutions,
        each on a grid bounded by :data:`LOSS_CAP`: time logarithmic in ``count``, memory
        independent of it)."""
        k = check.positive_int("count", count, "PrivacyLossDistribution.self_compose")
        result: PrivacyLossDistribution | None = None
        power = self
        while True:
            if power.infinity_mass >= 1.0:  # no privacy left: every further run is free
                return power
            if k & 1:
                result = power if result is None else result.compose(power, tail_mass=tail_mass)
            k >>= 1
            if not k:
                break
            power = power.compose(power, tail_mass=tail_mass)
        assert result is not None
        return result

    def profile(self, epsilons: NDArray[np.float64]) -> NDArray[np.float64]:
        """:meth:`delta` at each of ``epsilons`` (any real values), vectorised."""
        e = np.asarray(epsilons, dtype=float)
        losses = self.losses
        order = np.argsort(losses)
        p = self.pmf[order]
        ell = losses[order]
        # delta(e) = S0(e) - e^e S1(e) over losses > e, computed as sums of suffixes;
        # e^-L is formed relative to the largest loss to avoid overflow, and capped at
        # e^700: that only shrinks S1 for losses 700 nats below the largest, which can only
        # raise delta (the pessimistic direction), instead of overflowing to inf * 0 = nan.
        shift = float(ell[-1]) if ell.size else 0.0
        s0 = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
        weights = p * np.exp(np.minimum(shift - ell, 700.0))
        s1 = np.concatenate([np.cumsum(weights[::-1])[::-1], [0.0]])
        index = np.searchsorted(ell, e, side="right")
        value = s0[index] - np.exp(np.minimum(e - shift, 0.0)) * s1[index]  # s1 = 0 above
        result: NDArray[np.float64] = np.clip(value + self.infinity_mass, 0.0, 1.0)
        return result


Profile = Callable[[NDArray[np.float64]], NDArray[np.float64]]


def dominating_pld(
    forward: Profile,
    reverse: Profile | None = None,
    *,
    step: float,
    lowest: float,
    highest: float,
) -> PrivacyLossDistribution:
    """The "connect the dots" PLD that dominates a pair (P, Q) with the given profiles.

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
        The grid covers ``[lowest, highest]`` (rounded outwards to the grid). Mass of
        losses below ``lowest`` is placed at the lowest grid point and the profile above
        ``highest`` is replaced by the constant ``delta(highest)`` (mass at +infinity):
        both pessimistic.

    Notes
    -----
    With ``x_i = e^(eps_i)`` and ``D_i = delta(eps_i)``, the masses are
    ``p_i = x_i (s_i - s_(i-1))`` where ``s_i`` is the slope of D between ``x_i`` and
    ``x_(i+1)``, ``s_(-1) = (D_0 - 1) / x_0`` and ``s_n = 0``; ``P[inf] = D_n``
    (Doroshenko et al. 2022, Algorithm 1). Where eps < 0, D is close to 1 and its
    differences would cancel; there the slopes are computed as
    ``-1 + diff(x reverse(-eps)) / diff(x)``, whose constant -1 drops out of the second
    differences exactly. Masses that rounding still makes negative are pushed down to
    lower losses until positive mass absorbs them, which only increases delta.
    """
    h = check.positive_finite("step", step, "dominating_pld")
    back = forward if reverse is None else reverse
    first = min(math.floor(lowest / h), 0)
    last = max(math.ceil(highest / h), 1)
    k = np.arange(first, last + 1)
    losses = k.astype(np.float64) * h
    x = np.exp(losses)
    zero = -first  # index of eps = 0
    # eps <= 0: D = 1 - x + x r(-eps), slope -1 + u with u = diff(x r) / diff(x)
    xr = x[: zero + 1] * np.asarray(back(-losses[: zero + 1]), dtype=float)
    u = np.concatenate([[xr[0] / x[0]], np.diff(xr) / np.diff(x[: zero + 1])])
    # eps >= 0: D = forward(eps), slope diff(D) / diff(x), and 0 beyond the grid
    d = np.asarray(forward(losses[zero:]), dtype=float)
    slopes = np.concatenate([np.diff(d) / np.diff(x[zero:]), [0.0]])
    masses = np.empty(k.size)
    masses[:zero] = x[:zero] * np.diff(u)  # the -1 of both slopes cancels exactly
    masses[zero] = x[zero] * (slopes[0] - (-1.0 + u[-1]))
    masses[zero + 1:] = x[zero + 1:] * np.diff(slopes)
    masses, unabsorbed = _absorb_negative(masses)
    infinity = float(d[-1]) + unabsorbed
    return PrivacyLossDistribution(step=h, offset=first, pmf=masses, infinity_mass=infinity)


def _absorb_negative(masses: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """Make rounding's negative masses non-negative, pessimistically.

    Moving (negative) mass from a loss to a lower one never lowers delta at any eps, so a
    negative entry is pushed down until positive mass absorbs it. The resulting suffix sums
    are the running maximum, from the top, of the original ones; whatever reaches the
    bottom unabsorbed is returned to be added at +infinity.
    """
    suffix = np.cumsum(masses[::-1])[::-1]
    lifted = np.maximum.accumulate(suffix[::-1])[::-1]
    fixed = lifted - np.append(lifted[1:], 0.0)
    return np.maximum(fixed, 0.0), float(lifted[0] - suffix[0])


def _convolve(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Linear convolution of two non-negative arrays, by FFT for large inputs."""
    n = a.size + b.size - 1
    if min(a.size, b.size) < 64:
        out = np.convolve(a, b)
    else:
        size = 1 << (n - 1).bit_length()
        out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:n]
    result: NDArray[np.float64] = np.maximum(out, 0.0)
    return result


def _truncated(step: float, offset: int, pmf: NDArray[np.float64], infinity: float,
               tail_mass: float) -> PrivacyLossDistribution:
    """Cut both tails where the entries fall below a noise floor, pessimistically.

    Losses beyond +-:data:`LOSS_CAP` are first cut (above: to +infinity; below: moved up to
    the lowest allowed loss). FFT rounding leaves a floor of about 1e-17 per entry, so a
    cut on cumulative tail mass alone would never trim. Entries below
    ``max(pmf) * 1e-14`` at either end are cut; the upper cut's mass goes to +infinity
    and the lower cut's mass moves up to the first kept entry (both only increase
    delta). ``tail_mass`` additionally trims tails
    whose total is below it.
    """
    top_index = math.floor(LOSS_CAP / step) - offset  # last index allowed
    if top_index < pmf.size - 1:
        if top_index < 0:
            return PrivacyLossDistribution(step=step, offset=offset, pmf=np.zeros(1),
                                           infinity_mass=min(1.0, infinity + float(pmf.sum())))
        infinity = infinity + float(pmf[top_index + 1:].sum())
        pmf = pmf[:top_index + 1]
    bottom_index = math.ceil(-LOSS_CAP / step) - offset  # first index allowed
    if bottom_index > 0:
        if bottom_index >= pmf.size:  # all mass below the cap: move it up to the cap
            return PrivacyLossDistribution(
                step=step, offset=offset + bottom_index, pmf=np.array([float(pmf.sum())]),
                infinity_mass=min(1.0, infinity))
        moved = float(pmf[:bottom_index].sum())
        pmf = pmf[bottom_index:].copy()
        pmf[0] += moved
        offset += bottom_index
    if float(pmf.sum()) <= tail_mass:  # (almost) every loss is infinite: say so exactly
        return PrivacyLossDistribution(step=step, offset=offset, pmf=np.zeros(1),
                                       infinity_mass=1.0)
    floor = float(pmf.max()) * _RELATIVE_FLOOR
    above = np.flatnonzero(pmf > floor)
    if above.size == 0:
        return PrivacyLossDistribution(step=step, offset=offset, pmf=np.zeros(1),
                                       infinity_mass=min(1.0, infinity + float(pmf.sum())))
    keep_bottom, keep_top = int(above[0]), int(above[-1]) + 1
    upper = np.cumsum(pmf[keep_top - 1:keep_bottom:-1])  # tails by cumulative mass
    keep_top -= int(np.searchsorted(upper, tail_mass, side="right"))
    lower = np.cumsum(pmf[keep_bottom:keep_top - 1])
    keep_bottom += int(np.searchsorted(lower, tail_mass, side="right"))
    kept = pmf[keep_bottom:keep_top].copy()
    kept[0] += float(pmf[:keep_bottom].sum())
    moved_up = float(pmf[keep_top:].sum())
    return PrivacyLossDistribution(step=step, offset=offset + keep_bottom, pmf=kept,
                                   infinity_mass=min(1.0, infinity + moved_up))


@attrs.frozen(eq=False)
class PLDGuarantee(Guarantee):
    """A plan's privacy as a pair of pessimistic privacy loss distributions: the native
    guarantee of the PLD accountant.

    ``remove`` is the loss of (P, Q) = (M(D), M(D')) with D' = D minus a record, ``add``
    the reverse; for symmetric blocks they coincide. Each is a dominating pair (see
    :class:`PrivacyLossDistribution`), so both conversions are certified upper bounds.

    .. versionadded:: 0.2.0
    """

    remove: PrivacyLossDistribution
    add: PrivacyLossDistribution

    def delta_at(self, epsilon: float) -> float:
        """The worse of the two directions."""
        e = check.nonnegative("epsilon", epsilon, "PLDGuarantee.delta_at")
        return max(self.remove.delta_at(e), self.add.delta_at(e))

    def epsilon_at(self, delta: float) -> float:
        """The worse of the two directions."""
        d = check.delta("delta", delta, "PLDGuarantee.epsilon_at")
        return max(self.remove.epsilon_at(d), self.add.epsilon_at(d))

    def _is_implied_by(self, other: Guarantee) -> bool:
        return other is self  # no other guarantee is compared with a whole profile here

    def __str__(self) -> str:
        return (f"PLDGuarantee(step={self.remove.step:g}, "
                f"{self.remove.pmf.size + self.add.pmf.size} atoms)")
