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
import numbers
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit._pld_grid import Rows, discretise_rows, grid_span
from privkit.guarantees import Guarantee

__all__ = ["SAFE_SUM", "PLDGuarantee", "PrivacyLossDistribution", "discretise", "dominating_pld",
           "exp_ramp", "log_weighted_sums"]

Profile = Callable[[NDArray[np.float64]], NDArray[np.float64]]
#: How far below a PLD's top loss its suffix sums of ``p e^(top - l)`` reach.
_SPAN = 600.0
#: A sum of weighted masses at least this large is trusted: the terms lost to underflow
#: (each below 1e-307, a few million of them) are a relative 1e-100 of it at most.
SAFE_SUM = 1e-200
#: The most losses a lower PLD keeps for :meth:`PLDGuarantee.renyi_lower`.
_RENYI_POINTS = 1024


#: :func:`exp_ramp`'s blocks span at most this much of the exponent.
_RAMP_SPAN = 16.0


def exp_ramp(start: float, rate: float, n: int) -> NDArray[np.float64]:
    """``e^(start + rate j)`` for ``j = 0, ..., n - 1``, with about ``2 sqrt(n)``
    exponentials instead of ``n``.

    The exponents of a uniform grid form a ramp, so each value is a product
    ``e^(start + rate B k) e^(rate r)`` (``j = B k + r``, ``0 <= r < B``): one
    exponential per block of ``B`` consecutive entries and ``B`` shared ones. Each factor
    is the exponential of an argument rounded as the direct one's is, and
    ``|rate| B <= 16`` keeps the second factors within ``e^(+-16)``: the product is within
    a few units in the last place of the direct value wherever that is a normal number
    (a block factor that underflows loses only values below ``e^-729``).
    """
    owner = "exp_ramp"
    start = check.real("start", start, owner)
    rate = check.real("rate", rate, owner)
    given: Any = n  # annotated int; checked as any value a caller may pass
    if isinstance(given, bool | np.bool_) or not isinstance(given, numbers.Integral) \
            or given < 0:
        raise check.fail("n", given, "an integer >= 0", owner)
    n = int(given)
    if n == 0:
        return np.zeros(0)
    reach = _RAMP_SPAN / abs(rate) if abs(rate) * n > _RAMP_SPAN else n
    block = min(math.isqrt(n) + 1, int(reach))
    if block < 8:
        out: NDArray[np.float64] = np.exp(start + rate * np.arange(n, dtype=float))
        return out
    count = -(-n // block)
    coarse = np.exp(start + (rate * block) * np.arange(count, dtype=float))
    fine = np.exp(rate * np.arange(block, dtype=float))
    out = np.multiply.outer(coarse, fine).ravel()[:n]
    return out


def log_weighted_sums(pmf: NDArray[np.float64], losses: NDArray[np.float64],
                      tilts: NDArray[np.float64], step: float | None = None
                      ) -> NDArray[np.float64]:
    """``log sum_j pmf[r, j] e^(t losses[j])`` for each row r of ``pmf`` (or the one row
    of a 1-d ``pmf``) and each tilt t: shape (rows, tilts); ``-inf`` for an empty row.

    The rows share their losses, so each tilt's weights ``e^(t l_j - c_t)`` form one
    vector (``c_t``, the largest exponent, keeps every weight at most 1) and all sums are
    one product of the masses with a matrix of weights, with no exponential per mass
    (with ``step``, the losses are ``losses[0] + j step``, and the weights are ramps,
    :func:`exp_ramp`); the sums too small to trust (:data:`SAFE_SUM`: terms lost to
    underflow) are redone in log space.
    """
    rows = np.atleast_2d(np.asarray(pmf, dtype=float))
    t = np.asarray(tilts, dtype=float)
    if losses.size == 0:
        return np.full((rows.shape[0], t.size), -math.inf)
    centre = np.maximum(t * losses[0], t * losses[-1])
    weights = np.empty((t.size, losses.size))  # a row per tilt
    for k in range(t.size):
        if step is None:
            weights[k] = np.exp(t[k] * losses - centre[k])
        else:
            weights[k] = exp_ramp(float(t[k] * losses[0] - centre[k]), float(t[k]) * step,
                                  losses.size)
    sums = np.einsum("ij,kj->ik", rows, weights)  # not BLAS: its threads are slow here
    with np.errstate(divide="ignore"):
        out: NDArray[np.float64] = np.log(sums) + centre
    unsafe = ~(sums >= SAFE_SUM)
    unsafe &= np.any(rows > 0, axis=1)[:, None]
    for r in np.flatnonzero(np.any(unsafe, axis=1)):
        redo = unsafe[r]
        with np.errstate(divide="ignore"):
            z = np.log(rows[r])[None, :] + np.outer(t[redo], losses)
        top = np.max(z, axis=1)
        out[r, redo] = top + np.log(np.sum(np.exp(z - top[:, None]), axis=1))
    return out


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

    _sums: tuple[NDArray[np.float64], NDArray[np.float64], float] | None = attrs.field(
        init=False, default=None, repr=False, eq=False)
    _losses: NDArray[np.float64] | None = attrs.field(init=False, default=None, repr=False,
                                                      eq=False)
    _epsilons: dict[float, float] = attrs.field(init=False, factory=dict, repr=False,
                                                eq=False)

    @property
    def losses(self) -> NDArray[np.float64]:
        """The loss value of each entry of ``pmf`` (computed once)."""
        if self._losses is None:
            object.__setattr__(self, "_losses", np.arange(
                self.offset, self.offset + self.pmf.size, dtype=np.float64) * self.step)
        assert self._losses is not None
        return self._losses

    def _suffix_sums(self) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        """``S0[i] = sum_(j >= i) p_j`` and ``S1[i] = sum_(j >= i) p_j e^(top - l_j)``
        (with a trailing 0), and ``top``; computed once (from the top, small terms first).

        ``e^(top - l)`` (and sums of a million of them) stays finite for losses at most
        :data:`_SPAN` nats below the top; those further down are dropped from S1, which
        the queries above them do not use, and a query below them is answered by a direct
        sum (see :meth:`profile`).
        """
        if self._sums is None:
            ell = self.losses
            top = float(ell[-1])
            s0 = np.concatenate([np.cumsum(self.pmf[::-1])[::-1], [0.0]])
            near = int(np.count_nonzero(ell >= top - _SPAN))  # the others are dropped
            weights = np.zeros(ell.size)  # from S1: their queries sum directly
            weights[ell.size - near:] = (self.pmf[ell.size - near:]
                                         * exp_ramp(0.0, self.step, near)[::-1])
            s1 = np.concatenate([np.cumsum(weights[::-1])[::-1], [0.0]])
            object.__setattr__(self, "_sums", (s0, s1, top))
        assert self._sums is not None
        return self._sums

    def delta_at(self, epsilon: float) -> float:
        """``E[(1 - e^(eps - L))_+] + P[L = inf]``: the curve at ``epsilon``."""
        return float(self.profile(np.array([float(epsilon)]))[0])

    def epsilon_at(self, delta: float) -> float:
        """The smallest eps with ``self.delta_at(eps) <= delta``, solved exactly.

        Between consecutive grid losses ``delta(eps) = S0 - e^eps S1 + P[inf]`` with S0,
        S1 the sums of ``p`` and ``p e^-L`` over the losses above; the crossing segment is
        found on the grid and the equation solved in closed form. The result is rounded
        up until :meth:`delta_at` confirms it; it is kept (the PLD does not change), so a
        question asked again costs nothing.
        """
        key = float(delta)
        if key not in self._epsilons:
            self._epsilons[key] = self._solve_epsilon(key)
        return self._epsilons[key]

    def _solve_epsilon(self, delta: float) -> float:
        if self.infinity_mass > delta:
            return math.inf
        if self.delta_at(0.0) <= delta:
            return 0.0
        losses = self.losses
        s0, s1, top = self._suffix_sums()

        def at_grid(j: int) -> float:  # delta at grid loss j: the losses strictly above it
            return float(s0[j + 1] - math.exp(min(losses[j] - top, 0.0)) * s1[j + 1]
                         + self.infinity_mass)

        # the first grid loss where delta fits, by bisection (delta is non-increasing)
        lo, hi = 0, losses.size - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if at_grid(mid) <= delta:
                hi = mid
            else:
                lo = mid + 1
        i = lo
        if s1[i] <= 0.0:
            eps = max(float(losses[i]), 0.0)
        else:  # on (losses[i-1], losses[i]]: S0 - e^eps S1 + P[inf] = delta
            eps = top + math.log(max(s0[i] + self.infinity_mass - delta, 1e-300) / s1[i])
            below = float(losses[i - 1]) if i > 0 else -math.inf
            eps = min(max(eps, below, 0.0), float(losses[i]))
        while self.delta_at(eps) > delta:
            eps = math.nextafter(eps, math.inf) if eps > 0 else 5e-324
            eps += 1e-15 * max(1.0, abs(eps))
        return eps

    def profile(self, epsilons: NDArray[np.float64]) -> NDArray[np.float64]:
        """The curve at each of ``epsilons`` (any real values), vectorised."""
        e = np.asarray(epsilons, dtype=float)
        ell = self.losses
        s0, s1, top = self._suffix_sums()
        index = np.searchsorted(ell, e, side="right")
        value = s0[index] - np.exp(np.minimum(e - top, 0.0)) * s1[index]  # s1 = 0 above
        far = e < top - _SPAN  # S1 dropped some terms there: sum directly
        for j in np.flatnonzero(np.atleast_1d(far)):
            q = float(np.atleast_1d(e)[j])
            above = ell > q
            exact = float(np.sum(self.pmf[above] * -np.expm1(q - ell[above])))
            np.put(value, j, exact)
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
    step : float
        Grid spacing of the losses.
    lowest, highest : float
        The grid covers ``[lowest, highest]`` (rounded outwards to the grid, and 0).
    floor : float
        A number at most ``H_inf(P || Q)`` (the mass of P where Q has none): at most the
        lower PLD's mass at +infinity.
    lower : bool
        Whether to build the lower PLD too.

    Notes
    -----
    See :mod:`privkit._pld_grid` for both constructions and why the upper curve is at
    least, and the lower one at most, the pair's profile at every real eps.
    """
    h = check.positive_finite("step", step, "discretise")
    back = forward if reverse is None else reverse
    first, last = grid_span(lowest, highest, h)
    up, low = discretise_rows(forward, back, n=1, step=h, first=first, last=last,
                              floor=floor, lower=lower)
    return _single(up), None if low is None else _single(low)


def _single(rows: Rows) -> PrivacyLossDistribution:
    return PrivacyLossDistribution(step=rows.step, offset=rows.offset, pmf=rows.pmf[0],
                                   infinity_mass=float(rows.infinity[0]))


def dominating_pld(forward: Profile, reverse: Profile | None = None, *, step: float,
                   lowest: float, highest: float) -> PrivacyLossDistribution:
    """The upper ("connect the dots") PLD of :func:`discretise` alone."""
    return discretise(forward, reverse, step=step, lowest=lowest, highest=highest,
                      lower=False)[0]


@attrs.frozen(eq=False)
class PLDGuarantee(Guarantee):
    """A plan's privacy as privacy loss distributions: the native guarantee of the PLD
    accountant, two-sided.

    ``remove`` is the upper PLD of (P, Q) = (M(D), M(D')) with D' = D minus a record,
    ``add`` that of the reverse; for symmetric blocks they coincide. :meth:`epsilon_at`
    and :meth:`delta_at` are certified upper bounds. ``lower_remove`` / ``lower_add``,
    when present, are lower PLDs of the same directions: they give
    :meth:`epsilon_lower_at` and :meth:`delta_lower_at`, certified lower bounds on the
    exact privacy of the plan's blocks (no accountant can certify less) when
    ``lower_bounds_plan``; otherwise (bounded-range blocks, whose worst pair for one run is
    not the worst under composition) only on the exact composition of the blocks'
    dominating pairs, the accountant's own exact answer. The PLDs
    represent the curves at every ``eps >= 0`` (masses at negative losses, which do not
    enter there, are not kept). ``notes`` say how the grid was chosen.

    .. versionadded:: 0.2.0
    .. versionchanged:: 0.3.0
       Lower bounds and notes.
    """

    remove: PrivacyLossDistribution
    add: PrivacyLossDistribution
    lower_remove: PrivacyLossDistribution | None = None
    lower_add: PrivacyLossDistribution | None = None
    notes: tuple[str, ...] = ()
    lower_bounds_plan: bool = True

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
        return max([0.0, *(p.delta_at(e) for p in self._lowers())])

    def epsilon_lower_at(self, delta: float) -> float:
        """A certified lower bound on the exact epsilon at ``delta`` (0 if unknown):
        below it, some direction's lower curve is above ``delta``."""
        d = check.delta("delta", delta, "PLDGuarantee.epsilon_lower_at")
        best = 0.0
        for p in self._lowers():
            value = p.epsilon_at(d)
            if math.isfinite(value):  # the solve rounds up: step back below it
                value = max(0.0, value * (1.0 - 1e-12) - 1e-15)
            best = max(best, value)
        return best

    def renyi_lower(self, orders: NDArray[np.float64]) -> NDArray[np.float64]:
        """Certified lower bounds on the Renyi divergence of the plan's blocks at each
        order (0 where there is no lower PLD).

        ``E_Q[(dP/dQ)^a] = a (a - 1) int_0^inf x^(a - 2) H_x(P || Q) dx`` (integration by
        parts), which is increasing in the curve; a lower PLD's curve is below the exact
        one, so its ``log sum_l p_l e^((a - 1) l) / (a - 1)`` (the masses it kept, and
        infinity if it has mass at +infinity) is below ``D_a``. Any accountant's RDP or
        zCDP bound is at least this. Each lower PLD is first coarsened to at most
        :data:`_RENYI_POINTS` losses, every mass moved down to the lowest loss of its
        cell: a lower curve still (the curve is increasing in every loss), so the bound
        holds, lower by at most the cell's width.
        """
        a = np.asarray(orders, dtype=float)
        best = np.zeros(a.shape)
        for p in self._lowers():
            if p.infinity_mass > 0.0:
                return np.full(a.shape, math.inf)
            if not np.any(p.pmf > 0):
                continue
            width = -(-p.pmf.size // _RENYI_POINTS)  # cells merged into one
            pmf = np.pad(p.pmf, (0, -p.pmf.size % width)).reshape(-1, width).sum(axis=1)
            losses = (p.offset + width * np.arange(pmf.size)) * p.step
            total = log_weighted_sums(pmf, losses, a - 1.0, width * p.step)[0]
            best = np.maximum(best, total / (a - 1.0))
        return best

    def _is_implied_by(self, other: Guarantee) -> bool:
        return other is self  # no other guarantee is compared with a whole profile here

    def __str__(self) -> str:
        return (f"PLDGuarantee(step={self.remove.step:g}, "
                f"{self.remove.pmf.size + self.add.pmf.size} atoms)")
