"""Exact privacy profiles of worst-case pairs, vectorised over their parameters.

A guarantee with an exact profile (``has_profile``) names a symmetric worst-case pair
(P, Q); its profile ``delta(t) = H_(e^t)(P || Q)`` for ``t >= 0`` is one of the
*families* below, a function of the guarantee's parameters. Each function broadcasts
its parameter arrays against the array of ``t`` values, so the privacy loss distribution
accountant discretises many blocks of one family in one array operation (a column of
parameters against a row of losses); a guarantee's own ``_profile_nonnegative`` is the
same function at scalar parameters, so the vectorised path and its scalar twin are one
formula.

A family also says how far the pair's finite losses reach (``bound``: the index of the
parameter that bounds ``|L|``, or ``None`` when the losses are unbounded) and whether the
loss has atoms at ``+-bound`` (``kinked``: the profile has a kink there, which a grid
represents exactly only when ``bound`` is a grid point).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["BOUNDED_RANGE", "GAUSSIAN", "LAPLACE", "RANDOMIZED_RESPONSE", "Family"]

Array = NDArray[np.float64]


def _randomized_response(epsilon: ArrayLike, delta: ArrayLike, t: ArrayLike) -> Array:
    """Generalised randomized response (Kairouz, Oh, Viswanath 2015, eq. (3)):
    ``delta + (1 - delta) (e^eps - e^t) / (1 + e^eps)`` for ``0 <= t <= eps``, ``delta``
    above (see :func:`privkit.conversions.approx_dp_delta`)."""
    e = np.asarray(epsilon, dtype=float)
    d = np.asarray(delta, dtype=float)
    s = np.minimum(np.asarray(t, dtype=float), e)
    slack = -np.expm1(s - e) / (1.0 + np.exp(-e))
    result: Array = np.minimum(1.0, d + (1.0 - d) * slack)
    return result


def _laplace(epsilon: ArrayLike, t: ArrayLike) -> Array:
    """The Laplace mechanism with ``Delta / b = epsilon``: ``1 - exp((t - eps) / 2)`` for
    ``0 <= t <= eps``, 0 above (see :func:`privkit.conversions.laplace_delta`)."""
    e = np.asarray(epsilon, dtype=float)
    result: Array = -np.expm1((np.minimum(np.asarray(t, dtype=float), e) - e) / 2.0)
    return result


def _gaussian(mu: ArrayLike, t: ArrayLike) -> Array:
    """mu-GDP: ``Phi(-t/mu + mu/2) - e^t Phi(-t/mu - mu/2)`` (Dong, Roth, Su 2019,
    Corollary 2.13), in log space (see :func:`privkit.conversions.gdp_profile`)."""
    from scipy import special

    m = np.asarray(mu, dtype=float)
    e = np.maximum(np.asarray(t, dtype=float), 0.0)
    log_a = special.log_ndtr(-e / m + m / 2.0)
    log_b = special.log_ndtr(-e / m - m / 2.0)
    ratio = np.minimum(e + log_b - log_a, 0.0)
    result: Array = np.minimum(1.0, np.exp(log_a) * -np.expm1(ratio))
    return result


def _bounded_range(eta: ArrayLike, t: ArrayLike) -> Array:
    """The worst eta-bounded-range pair: ``(1 - e^((t - eta) / 2))^2 / (1 - e^-eta)`` for
    ``0 <= t <= eta``, 0 above (see :func:`privkit.conversions.bounded_range_delta`)."""
    h = np.asarray(eta, dtype=float)
    s = np.minimum(np.asarray(t, dtype=float), h)
    result: Array = np.expm1((s - h) / 2.0) ** 2 / -np.expm1(-h)
    return result


@attrs.frozen
class Family:
    """A profile formula with the facts the PLD accountant uses about its losses."""

    name: str
    function: Callable[..., Array]
    bound: int | None
    kinked: bool

    def __call__(self, parameters: tuple[ArrayLike, ...], t: ArrayLike) -> Array:
        return self.function(*parameters, t)


RANDOMIZED_RESPONSE = Family("randomized_response", _randomized_response, 0, True)
LAPLACE = Family("laplace", _laplace, 0, True)
GAUSSIAN = Family("gaussian", _gaussian, None, False)
BOUNDED_RANGE = Family("bounded_range", _bounded_range, 0, False)
