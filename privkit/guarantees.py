"""Privacy guarantees as immutable, validated values.

A guarantee is a promise about a mechanism's output distributions on neighbouring
datasets. Each kind answers the same two questions with the tightest published
conversion (see :mod:`privkit.conversions` for the formulas and their sources):

* ``g.epsilon_at(delta)``: the smallest epsilon such that the guarantee implies
  (epsilon, delta)-DP;
* ``g.delta_at(epsilon)``: the smallest such delta at a given epsilon.

A guarantee's parameters are plain public fields (``PureDP(epsilon=1).epsilon == 1``);
conversions are the two verbs above, never confused with a parameter.

and ``g.within(budget)`` says whether ``g`` implies ``budget``.

Guarantees do not carry a neighbouring relation: that belongs to the mechanism, plan or
filter that makes the promise. The base class is :class:`privkit.guarantee.Guarantee`;
each kind's ``kind`` is its name in plan files, and its plan-file form is derived from its
fields (:mod:`privkit.spec`).

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   The base class moved to :mod:`privkit.guarantee` (re-exported here).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _profiles, conversions
from privkit import _validation as check
from privkit.guarantee import Guarantee, _delta_arg, _epsilon_arg, _orders_arg

__all__ = [
    "GDP",
    "RDP",
    "ZCDP",
    "ApproxDP",
    "BoundedRange",
    "Guarantee",
    "LaplaceDP",
    "PureDP",
]


def _epsilon_field() -> Any:
    return attrs.field(validator=check.attrs_validator(check.positive_finite))


@attrs.frozen(kw_only=True)
class PureDP(Guarantee):
    """Pure epsilon-differential privacy: ``P[M(D) in S] <= e^eps P[M(D') in S]``.

    Parameters
    ----------
    epsilon : float
        Finite and > 0, in nats.

    Examples
    --------
    >>> from privkit import PureDP
    >>> PureDP(epsilon=1.0).epsilon
    1.0
    >>> round(PureDP(epsilon=1.0).delta_at(0.5), 6)  # randomized-response profile
    0.287649

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "pure_dp"

    epsilon: float = _epsilon_field()

    def epsilon_at(self, delta: float) -> float:
        """Epsilon at ``delta`` (``epsilon_at(0)`` is this guarantee's own epsilon)."""
        return conversions.pure_dp_epsilon(
            epsilon=self.epsilon, target_delta=_delta_arg(delta, self))

    def delta_at(self, epsilon: float) -> float:
        """Delta at ``epsilon`` (0 at or above this guarantee's own epsilon)."""
        return conversions.pure_dp_delta(
            epsilon=self.epsilon, target_epsilon=_epsilon_arg(epsilon, self))

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        return conversions.pure_dp_rdp(epsilon=self.epsilon, orders=_orders_arg(orders, self))

    has_profile = True

    def _profile_family(self) -> tuple[_profiles.Family, tuple[float, ...]]:
        return _profiles.RANDOMIZED_RESPONSE, (self.epsilon, 0.0)

    def zcdp_rho(self) -> float:
        """``eps^2 / 2`` ([BS16] Prop. 1.4)."""
        return self.epsilon**2 / 2.0

    def _is_implied_by(self, other: Guarantee) -> bool:
        return other.epsilon_at(0.0) <= self.epsilon

    def __str__(self) -> str:
        return f"PureDP(ε={self.epsilon:.6g})"


@attrs.frozen(kw_only=True)
class ApproxDP(Guarantee):
    """Approximate (epsilon, delta)-DP: ``P[M(D) in S] <= e^eps P[M(D') in S] + delta``.

    Parameters
    ----------
    epsilon : float
        Finite and > 0, in nats.
    delta : float
        In [0, 1).

    Examples
    --------
    >>> from privkit import ApproxDP
    >>> g = ApproxDP(epsilon=1.0, delta=1e-6)
    >>> g.epsilon, g.delta
    (1.0, 1e-06)
    >>> g.epsilon_at(1e-7)  # no epsilon holds at a smaller delta
    inf
    >>> g.within(ApproxDP(epsilon=1.0, delta=1e-5))
    True

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "approx_dp"

    epsilon: float = _epsilon_field()
    delta: float = attrs.field(validator=check.attrs_validator(check.delta))

    def epsilon_at(self, delta: float) -> float:
        """Epsilon at ``delta`` (``inf`` below this guarantee's own delta)."""
        return conversions.approx_dp_epsilon(epsilon=self.epsilon, delta=self.delta,
                                             target_delta=_delta_arg(delta, self))

    def delta_at(self, epsilon: float) -> float:
        """Delta at ``epsilon`` (this guarantee's own delta at its own epsilon)."""
        return conversions.approx_dp_delta(epsilon=self.epsilon, delta=self.delta,
                                           target_epsilon=_epsilon_arg(epsilon, self))

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        if self.delta == 0.0:
            return conversions.pure_dp_rdp(epsilon=self.epsilon, orders=_orders_arg(orders, self))
        return super().rdp(orders)

    def zcdp_rho(self) -> float:
        return self.epsilon**2 / 2.0 if self.delta == 0.0 else math.inf

    has_profile = True

    def _profile_family(self) -> tuple[_profiles.Family, tuple[float, ...]]:
        return _profiles.RANDOMIZED_RESPONSE, (self.epsilon, self.delta)

    def _is_implied_by(self, other: Guarantee) -> bool:
        # Either certified direction proves the implication; checking both keeps a
        # root-finder's last ulp from refusing a guarantee that meets the budget exactly.
        return (other.delta_at(self.epsilon) <= self.delta
                or other.epsilon_at(self.delta) <= self.epsilon)

    def __str__(self) -> str:
        return f"ApproxDP(ε={self.epsilon:.6g}, δ={self.delta:.3g})"


@attrs.frozen(kw_only=True)
class ZCDP(Guarantee):
    """rho-zero-concentrated DP: ``D_a(M(D) || M(D')) <= a * rho`` for every order a > 1.

    Bun and Steinke 2016 (arXiv:1605.02065v1), Definition 1.1.

    Parameters
    ----------
    rho : float
        Finite and > 0.

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "zcdp"

    rho: float = attrs.field(validator=check.attrs_validator(check.positive_finite))

    def epsilon_at(self, delta: float) -> float:
        return conversions.zcdp_to_epsilon(self.rho, delta=_delta_arg(delta, self))

    def delta_at(self, epsilon: float) -> float:
        return conversions.zcdp_to_delta(self.rho, epsilon=_epsilon_arg(epsilon, self))

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        return self.rho * _orders_arg(orders, self)

    def zcdp_rho(self) -> float:
        return self.rho

    def _is_implied_by(self, other: Guarantee) -> bool:
        return other.zcdp_rho() <= self.rho

    def __str__(self) -> str:
        return f"ZCDP(ρ={self.rho:.6g})"


def _float_tuple(name: str, values: Any) -> tuple[float, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable | np.ndarray):
        raise check.fail(name, values, "a sequence of real numbers", "RDP")
    return tuple(check.real(name, v, "RDP") for v in np.asarray(values, dtype=object).ravel())


def _orders_tuple(values: Any) -> tuple[float, ...]:
    return _float_tuple("orders", values)


def _epsilons_tuple(values: Any) -> tuple[float, ...]:
    return _float_tuple("epsilons", values)


@attrs.frozen(kw_only=True)
class RDP(Guarantee):
    """Renyi DP: ``D_a(M(D) || M(D')) <= epsilons[i]`` at each ``a = orders[i]``.

    Mironov 2017 (arXiv:1702.07476v3), Definition 4.

    Parameters
    ----------
    orders : sequence of float
        Strictly increasing, each > 1 and finite.
    epsilons : sequence of float
        One bound per order, each >= 0 (``inf`` allowed: no bound at that order).

    Examples
    --------
    >>> from privkit import RDP
    >>> g = RDP(orders=[2.0, 8.0, 32.0], epsilons=[0.1, 0.4, 1.6])
    >>> round(g.epsilon_at(1e-5), 4)
    1.6141

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "rdp"

    orders: tuple[float, ...] = attrs.field(converter=_orders_tuple)
    epsilons: tuple[float, ...] = attrs.field(converter=_epsilons_tuple)

    def __attrs_post_init__(self) -> None:
        if not self.orders:
            raise check.fail("orders", self.orders, "a non-empty sequence", "RDP")
        if any(not (1.0 < a < math.inf) for a in self.orders):
            raise check.fail("orders", self.orders, "finite numbers > 1", "RDP")
        if any(b <= a for a, b in zip(self.orders, self.orders[1:], strict=False)):
            raise check.fail("orders", self.orders, "strictly increasing", "RDP")
        if len(self.epsilons) != len(self.orders):
            raise check.fail(
                "epsilons", self.epsilons, f"one value per order ({len(self.orders)})", "RDP"
            )
        if any(e < 0.0 for e in self.epsilons):
            raise check.fail("epsilons", self.epsilons, "numbers >= 0", "RDP")

    @classmethod
    def from_guarantee(cls, guarantee: Guarantee, orders: ArrayLike | None = None) -> RDP:
        """The RDP curve a guarantee implies on ``orders`` (default: DEFAULT_ORDERS)."""
        grid = np.asarray(conversions.DEFAULT_ORDERS if orders is None else orders, float)
        return cls(orders=grid, epsilons=guarantee.rdp(grid))

    def epsilon_at(self, delta: float) -> float:
        return conversions.rdp_to_epsilon(
            self.orders, self.epsilons, delta=_delta_arg(delta, self))[0]

    def delta_at(self, epsilon: float) -> float:
        return conversions.rdp_to_delta(
            self.orders, self.epsilons, epsilon=_epsilon_arg(epsilon, self))[0]

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        """The curve at ``orders``; orders not on this curve's grid get ``inf``.

        (A bound at one order does not bound other orders from above, except through
        monotonicity: ``D_a`` is non-decreasing in ``a``, so the next larger order on the
        grid bounds it. privkit uses that.)
        """
        grid = np.asarray(self.orders)
        values = np.asarray(self.epsilons)
        query = _orders_arg(orders, self)
        index = np.searchsorted(grid, query, side="left")
        out = np.full(query.shape, math.inf)
        inside = index < len(grid)
        out[inside] = values[index[inside]]
        return out

    def compose(self, other: RDP) -> RDP:
        """Sequential composition: the curves add order by order (Mironov 2017 Prop. 1)."""
        check.instance("other", other, RDP, "RDP.compose")
        if other.orders != self.orders:
            raise check.fail("other", other, "an RDP curve on the same orders", "RDP.compose")
        return RDP(orders=self.orders,
                   epsilons=[a + b for a, b in zip(self.epsilons, other.epsilons, strict=True)])

    def _is_implied_by(self, other: Guarantee) -> bool:
        return bool(np.all(other.rdp(self.orders) <= np.asarray(self.epsilons)))

    def __str__(self) -> str:
        return f"RDP({len(self.orders)} orders in [{self.orders[0]:g}, {self.orders[-1]:g}])"


@attrs.frozen(kw_only=True)
class GDP(Guarantee):
    """mu-Gaussian differential privacy (Dong, Roth, Su; arXiv:1905.02383v3, Def. 2.6).

    The trade-off curve is that of telling N(0, 1) from N(mu, 1). The Gaussian mechanism
    with L2 sensitivity s and noise sigma is exactly (s / sigma)-GDP (Thm 2.7), so for it
    this guarantee is exact, not a bound.

    Parameters
    ----------
    mu : float
        Finite and > 0.

    Examples
    --------
    >>> from privkit import GDP
    >>> round(GDP(mu=1.0).epsilon_at(1e-5), 4)
    4.3772

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "gdp"

    mu: float = attrs.field(validator=check.attrs_validator(check.positive_finite))

    def epsilon_at(self, delta: float) -> float:
        return conversions.gdp_epsilon(self.mu, delta=_delta_arg(delta, self))

    def delta_at(self, epsilon: float) -> float:
        return conversions.gdp_delta(self.mu, epsilon=_epsilon_arg(epsilon, self))

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        """``a mu^2 / 2``: exact for the Gaussian mechanism (Mironov 2017, Prop. 7)."""
        return self.mu**2 / 2.0 * _orders_arg(orders, self)

    def zcdp_rho(self) -> float:
        return self.mu**2 / 2.0

    has_profile = True

    def _profile_family(self) -> tuple[_profiles.Family, tuple[float, ...]]:
        return _profiles.GAUSSIAN, (self.mu,)

    def _is_implied_by(self, other: Guarantee) -> bool:
        return isinstance(other, GDP) and other.mu <= self.mu

    def __str__(self) -> str:
        return f"GDP(μ={self.mu:.6g})"


@attrs.frozen(kw_only=True)
class BoundedRange(Guarantee):
    """eta-bounded range: ``log(P[M(D)=o] / P[M(D')=o])`` ranges over an interval of
    width at most eta (Durfee, Rogers 2019, Def. 3.1; Dong, Durfee, Rogers 2020).

    The exponential mechanism with parameter epsilon is epsilon-bounded-range, which
    implies epsilon-DP but says more: its exact profile is that of the worst case
    (:func:`privkit.conversions.bounded_range_delta`), its zCDP is ``eta^2 / 8``
    (Cesar, Rogers 2021, Lemma 3.2), and compositions of it are far tighter than of
    pure epsilon-DP blocks.

    Parameters
    ----------
    eta : float
        The width of the range, finite and > 0.

    Examples
    --------
    >>> from privkit import BoundedRange, PureDP
    >>> round(BoundedRange(eta=1.0).delta_at(0.0), 4), round(PureDP(epsilon=1.0).delta_at(0.0), 4)
    (0.2449, 0.4621)

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "bounded_range"

    eta: float = attrs.field(validator=check.attrs_validator(check.positive_finite))

    def epsilon_at(self, delta: float) -> float:
        return conversions.bounded_range_epsilon(self.eta, _delta_arg(delta, self))

    def delta_at(self, epsilon: float) -> float:
        return conversions.bounded_range_delta(self.eta, _epsilon_arg(epsilon, self))

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        """``min(a eta^2 / 8, D_a(pure eta-DP))``: both bounds hold."""
        a = _orders_arg(orders, self)
        result: NDArray[np.float64] = np.minimum(a * self.eta**2 / 8.0,
                                                 conversions.pure_dp_rdp(epsilon=self.eta,
                                                                         orders=a))
        return result

    def zcdp_rho(self) -> float:
        return self.eta**2 / 8.0

    has_profile = True

    def _profile_family(self) -> tuple[_profiles.Family, tuple[float, ...]]:
        return _profiles.BOUNDED_RANGE, (self.eta,)

    def _is_implied_by(self, other: Guarantee) -> bool:
        return isinstance(other, BoundedRange) and other.eta <= self.eta

    def __str__(self) -> str:
        return f"BoundedRange(η={self.eta:.6g})"


@attrs.frozen(kw_only=True)
class LaplaceDP(Guarantee):
    """The exact privacy of the Laplace mechanism with ``sensitivity / scale = epsilon``.

    Pure epsilon-DP, and more: its whole profile is
    ``delta(t) = 1 - exp((t - epsilon) / 2)`` for ``0 <= t <= epsilon``
    (:func:`privkit.conversions.laplace_delta`), its RDP curve is Mironov's (2017, Prop. 6),
    and the privacy loss distribution accountant discretises this exact profile. It is
    to the Laplace mechanism what GDP is to the Gaussian mechanism.

    Parameters
    ----------
    epsilon : float
        ``Δ_1 / b``, finite and > 0.

    Examples
    --------
    >>> from privkit import LaplaceDP, PureDP
    >>> round(LaplaceDP(epsilon=1.0).delta_at(0.5), 4), round(PureDP(epsilon=1.0).delta_at(0.5), 4)
    (0.2212, 0.2876)

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "laplace_dp"

    epsilon: float = _epsilon_field()

    def epsilon_at(self, delta: float) -> float:
        """Epsilon at ``delta`` (``epsilon_at(0)`` is the mechanism's pure epsilon)."""
        return conversions.laplace_epsilon(
            epsilon=self.epsilon, target_delta=_delta_arg(delta, self))

    def delta_at(self, epsilon: float) -> float:
        return conversions.laplace_delta(
            epsilon=self.epsilon, target_epsilon=_epsilon_arg(epsilon, self))

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        return conversions.laplace_rdp(epsilon=self.epsilon, orders=_orders_arg(orders, self))

    def zcdp_rho(self) -> float:
        return self.epsilon**2 / 2.0

    has_profile = True

    def _profile_family(self) -> tuple[_profiles.Family, tuple[float, ...]]:
        return _profiles.LAPLACE, (self.epsilon,)

    def _is_implied_by(self, other: Guarantee) -> bool:
        return isinstance(other, LaplaceDP) and other.epsilon <= self.epsilon

    def __str__(self) -> str:
        return f"LaplaceDP(ε={self.epsilon:.6g})"
