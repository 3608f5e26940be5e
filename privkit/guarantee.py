"""The Guarantee abstraction: what every kind of privacy guarantee answers.

A guarantee is a promise about a mechanism's output distributions on neighbouring
datasets; :mod:`privkit.guarantees` has the kinds privkit knows (``PureDP``, ``ApproxDP``,
``ZCDP``, ``RDP``, ``GDP``, ``BoundedRange``, ``LaplaceDP``). Each kind answers the same
two questions (``epsilon_at``, ``delta_at``) and ``within``, and is registered under its
``kind`` (its name in plan files, :mod:`privkit.spec`): a kind defined outside privkit is
read from plan files as soon as its class is defined.

.. versionadded:: 0.3.0
   Split from :mod:`privkit.guarantees` (the base class apart from the kinds).
"""

from __future__ import annotations

import abc
import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _profiles
from privkit import _validation as check
from privkit.spec import GUARANTEES, Kinded, Kinds

__all__ = ["Guarantee"]


class Guarantee(Kinded, abc.ABC):
    """Base class of privacy guarantees (PureDP, ApproxDP, ZCDP, RDP, GDP)."""

    __slots__ = ()
    family: ClassVar[Kinds] = GUARANTEES

    @abc.abstractmethod
    def epsilon_at(self, delta: float) -> float:
        """Smallest epsilon such that this guarantee implies (epsilon, delta)-DP.

        ``inf`` when the guarantee implies nothing at that delta.
        """

    @abc.abstractmethod
    def delta_at(self, epsilon: float) -> float:
        """Smallest delta such that this guarantee implies (epsilon, delta)-DP."""

    def rdp(self, orders: ArrayLike) -> NDArray[np.float64]:
        """An upper bound on the Renyi divergence at each order (``inf`` where none)."""
        return np.full(np.shape(np.asarray(orders, dtype=float)), math.inf)

    #: Whether :meth:`profile` is available: the guarantee names a worst-case pair of
    #: output distributions whose whole privacy profile is known exactly.
    has_profile: bool = False

    def profile(self, epsilons: ArrayLike) -> NDArray[np.float64]:
        """The exact privacy profile ``delta(eps)`` of the worst-case pair, for every real eps.

        Defined for guarantees with ``has_profile``: each names a *symmetric* worst-case
        pair (P, Q), so for negative eps the identity
        ``H_g(P||Q) = 1 - g + g H_(1/g)(Q||P)`` with ``g = e^eps`` gives
        ``delta(eps) = 1 - e^eps + e^eps delta(-eps)``. The privacy loss distribution
        accountant builds its discretisations from this function.
        """
        if not self.has_profile:
            raise TypeError(f"{type(self).__name__} has no exact privacy profile")
        e = np.asarray(epsilons, dtype=float)
        positive = self._profile_nonnegative(np.abs(e))
        result: NDArray[np.float64] = np.where(
            e >= 0, positive, -np.expm1(e) + np.exp(e) * positive)
        return np.clip(result, 0.0, 1.0)

    def _profile_family(self) -> tuple[_profiles.Family, tuple[float, ...]]:
        """The profile's formula (:mod:`privkit._profiles`) and this guarantee's
        parameters in it (for guarantees with ``has_profile``)."""
        raise TypeError(f"{type(self).__name__} has no exact privacy profile")

    def _profile_nonnegative(self, epsilons: NDArray[np.float64]) -> NDArray[np.float64]:
        family, parameters = self._profile_family()
        return family(parameters, epsilons)

    def zcdp_rho(self) -> float:
        """The smallest rho such that this guarantee implies rho-zCDP (``inf`` if none)."""
        return math.inf

    def within(self, budget: Guarantee) -> bool:
        """Whether this guarantee implies ``budget`` (is at least as private).

        * ``PureDP`` / ``ApproxDP`` budgets: ``self.delta_at(budget.epsilon) <= budget.delta``
          or ``self.epsilon_at(budget.delta) <= budget.epsilon``;
        * ``ZCDP`` budgets: ``self.zcdp_rho() <= budget.rho``;
        * ``GDP`` budgets: only a GDP guarantee with ``mu <= budget.mu`` (GDP is a whole
          trade-off curve, which no other kind implies here);
        * ``RDP`` budgets: ``self.rdp(orders) <= budget.epsilons`` at every order.
        """
        check.instance("budget", budget, Guarantee, f"{type(self).__name__}.within")
        return budget._is_implied_by(self)

    @abc.abstractmethod
    def _is_implied_by(self, other: Guarantee) -> bool: ...


def _delta_arg(value: Any, owner: Guarantee) -> float:
    return check.delta("delta", value, f"{type(owner).__name__}.epsilon_at")


def _epsilon_arg(value: Any, owner: Guarantee) -> float:
    return check.nonnegative("epsilon", value, f"{type(owner).__name__}.delta_at")


def _orders_arg(orders: ArrayLike, owner: Guarantee) -> NDArray[np.float64]:
    a = np.asarray(orders, dtype=float)
    if a.size == 0 or not np.all(a > 1.0) or not np.all(np.isfinite(a)):
        raise check.fail("orders", orders, "finite numbers > 1", f"{type(owner).__name__}.rdp")
    return a
