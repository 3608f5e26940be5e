"""The number of runs of a private selection and what it costs: Papernot and Steinke,
"Hyperparameter tuning with Renyi differential privacy" (ICLR 2022, arXiv:2110.03620v2).

Run a private candidate a random number K of times and publish only the best run. If K
follows the truncated negative binomial distribution ``D_(eta, gamma)`` (Definition 1),

    ``P[K = k] = (1 - gamma)^k / (gamma^(-eta) - 1) * prod_(l=0)^(k-1) (l + eta) / (l + 1)``

for ``k >= 1``, with ``eta > -1`` (``eta = 0``: the logarithmic distribution,
``P[K = k] = (1 - gamma)^k / (k log(1 / gamma))``; ``eta = 1``: the geometric
distribution of Liu and Talwar 2019) and ``gamma`` in (0, 1), then Theorem 2 bounds the
Renyi divergence of the selection by that of one run (:func:`repeat_and_select_rdp`).
Neither K nor the other runs may be published: the bound is for the best run alone.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check

__all__ = ["draw_runs", "repeat_and_select_pure", "repeat_and_select_rdp",
           "runs_gamma", "runs_mean"]


def _check_shape(shape: Any, owner: str) -> float:
    value = check.real("shape", shape, owner)
    if not -1.0 < value < math.inf:
        raise check.fail("shape", shape, "a number > -1 (eta of Papernot and Steinke's "
                         "truncated negative binomial distribution)", owner)
    return value


def _log_odds_factor(gamma: float, shape: float) -> float:
    """``(gamma^(-eta) - 1) / eta`` (``log(1 / gamma)`` at ``eta = 0``), computed stably."""
    log_inverse = -math.log(gamma)
    return log_inverse if shape == 0.0 else math.expm1(shape * log_inverse) / shape


def runs_mean(gamma: float, shape: float) -> float:
    """``E[K]`` under ``D_(eta, gamma)``: ``eta (1 - gamma) / (gamma (1 - gamma^eta))``,
    and ``(1 / gamma - 1) / log(1 / gamma)`` at ``eta = 0`` (Papernot, Steinke 2022,
    Section 2.2)."""
    owner = "runs_mean"
    g = check.open_unit("gamma", gamma, owner)
    eta = _check_shape(shape, owner)
    # eta (1 - g) / (g (1 - g^eta)) = (1 - g) / (g (1 - g^eta) / eta), stably
    denominator = -math.log(g) if eta == 0.0 else -math.expm1(eta * math.log(g)) / eta
    return (1.0 - g) / (g * denominator)


def runs_gamma(shape: float, mean: float) -> float:
    """The ``gamma`` of ``D_(eta, gamma)`` whose mean is ``mean`` (> 1): ``E[K]`` falls
    from infinity to 1 as gamma grows from 0 to 1, so bisection finds it (to a relative
    1e-12; the smaller end, so the mean is at least ``mean``)."""
    owner = "runs_gamma"
    eta = _check_shape(shape, owner)
    target = check.positive_finite("expected_runs", mean, owner)
    if target <= 1.0:
        raise check.fail("expected_runs", mean, "a number > 1", owner)
    low, high = 0.0, 1.0
    while high - low > 1e-12 * high:
        middle = 0.5 * (low + high)
        if middle <= 0.0 or runs_mean(middle, eta) >= target:
            low = middle
        else:
            high = middle
    return low if low > 0.0 else high


def draw_runs(gamma: float, shape: float, rng: np.random.Generator) -> int:
    """One draw of K from ``D_(eta, gamma)``, by inversion of its distribution function
    with one uniform draw of ``rng`` (public randomness, independent of any data)."""
    u = float(rng.random())
    q = 1.0 - gamma
    p = q / _log_odds_factor(gamma, shape)  # P[K = 1] = (1 - gamma) eta / (gamma^-eta - 1)
    total, k = p, 1
    while total < u and p > 0.0:
        p *= q * (k + shape) / (k + 1)
        k += 1
        total += p
    return k


def repeat_and_select_rdp(orders: ArrayLike, rdp: ArrayLike, *, shape: float,
                          expected_runs: float) -> NDArray[np.float64]:
    """Renyi DP of the best of K runs, ``K ~ D_(eta, gamma)`` with ``E[K] =
    expected_runs``, from the RDP curve ``rdp`` of one run on ``orders``.

    Papernot, Steinke 2022 (arXiv:2110.03620v2), Theorem 2: if one run is
    ``(lambda, eps)``- and ``(lambda_hat, eps_hat)``-RDP, the selection is
    ``(lambda, eps')``-RDP with

        ``eps' = eps + (1 + eta) (1 - 1 / lambda_hat) eps_hat
        + (1 + eta) log(1 / gamma) / lambda_hat + log(E[K]) / (lambda - 1)``.

    ``lambda_hat`` ranges over ``orders`` (the best one is taken), and the result is made
    non-decreasing in the order (``D_lambda`` is non-decreasing in lambda: van Erven,
    Harremoes 2014, "Renyi divergence and Kullback-Leibler divergence", Theorem 3), as
    Google's dp_accounting does (``_compute_rdp_repeat_and_select``).
    """
    owner = "repeat_and_select_rdp"
    eta = _check_shape(shape, owner)
    a = np.asarray(orders, dtype=np.float64)
    r = np.asarray(rdp, dtype=np.float64)
    if a.ndim != 1 or a.shape != r.shape or a.size == 0 or np.any(a <= 1.0):
        raise check.fail("orders", orders, "a non-empty 1-D array of orders > 1, one per "
                         "value of rdp", owner)
    gamma = runs_gamma(eta, expected_runs)
    mean = runs_mean(gamma, eta)
    constant = (1.0 + eta) * float(np.min((1.0 - 1.0 / a) * r - math.log(gamma) / a))
    bound = r + math.log(mean) / (a - 1.0) + constant
    out: NDArray[np.float64] = np.minimum.accumulate(bound[::-1])[::-1]
    return out


def repeat_and_select_pure(epsilon: float, shape: float) -> float:
    """Pure DP of the best of K runs of an ``epsilon``-DP candidate, ``K ~ D_(eta,
    gamma)`` for any gamma: ``(2 + eta) epsilon``.

    An epsilon-DP run is ``(lambda, epsilon)``-RDP at every order, so Theorem 2 of
    Papernot, Steinke 2022 gives ``D_lambda <= epsilon + (1 + eta)(1 - 1 / lambda_hat)
    epsilon + (1 + eta) log(1 / gamma) / lambda_hat + log(E[K]) / (lambda - 1)`` for all
    lambda, lambda_hat; the max divergence is the limit of ``D_lambda`` as lambda grows
    (van Erven, Harremoes 2014, Theorem 4), and letting lambda_hat grow too leaves
    ``(2 + eta) epsilon``. With ``eta = 1`` this is Liu and Talwar's ``3 epsilon``
    (STOC 2019, Theorem 3.1).
    """
    owner = "repeat_and_select_pure"
    eps = check.positive_finite("epsilon", epsilon, owner)
    return (2.0 + _check_shape(shape, owner)) * eps
