"""Conversions between kinds of privacy guarantee: pure module-level math.

Every function takes and returns floats (or arrays over RDP orders), refuses arguments
outside its domain with an error that names the parameter (a negative rho, a delta
outside [0, 1), orders at or below 1), and computes in log space where a direct formula
would lose precision.
Each returns a *certified upper bound* on the privacy loss: rounding is never allowed to
make a guarantee look better than it is.

References
----------
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath. The composition theorem for differential
   privacy. ICML 2015 (arXiv:1311.0776v4), Theorem 2.1 (every (eps, delta)-DP mechanism is
   dominated by the generalised randomized response of eq. (3)).
.. [BS16] M. Bun, T. Steinke. Concentrated differential privacy: simplifications,
   extensions and lower bounds. TCC 2016 (arXiv:1605.02065v1), Prop. 1.4 and 1.6.
.. [Mir17] I. Mironov. Renyi differential privacy. CSF 2017 (arXiv:1702.07476v3).
.. [CKS20] C. Canonne, G. Kamath, T. Steinke. The discrete Gaussian for differential
   privacy. NeurIPS 2020 (arXiv:2004.00010v5), Prop. 12 and Cor. 13.
.. [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato. Hypothesis testing
   interpretations and Renyi differential privacy. AISTATS 2020 (arXiv:1905.09982v2),
   Theorem 21.
.. [DRS19] J. Dong, A. Roth, W. Su. Gaussian differential privacy. JRSS-B 2022
   (arXiv:1905.02383v3), Corollary 2.13.
.. [DDR20] J. Dong, D. Durfee, R. Rogers. Optimal differential privacy composition for
   exponential mechanisms. ICML 2020 (arXiv:1909.13830v4), Section 4 (every eta-bounded-
   range mechanism is a post-processing of a generalised randomized response RR(eta, t),
   t in [0, 1]).
.. [CR21] M. Cesar, R. Rogers. Bounding, concentrating, and truncating: unifying privacy
   loss composition for data analytics. ALT 2021 (arXiv:2004.07223v2), Lemma 3.2
   (eta-bounded range implies eta^2 / 8 zCDP).
.. [BW18] B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for differential
   privacy: analytical calibration and optimal denoising. ICML 2018
   (arXiv:1805.06530v2), Theorem 8.

scipy is imported inside the functions that need it, so that ``import privkit`` stays
fast.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check

__all__ = [
    "DEFAULT_ORDERS",
    "approx_dp_delta",
    "approx_dp_epsilon",
    "bounded_range_delta",
    "bounded_range_epsilon",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu_for_approx_dp",
    "gdp_profile",
    "laplace_delta",
    "laplace_epsilon",
    "laplace_rdp",
    "pure_dp_delta",
    "pure_dp_epsilon",
    "pure_dp_rdp",
    "rdp_to_delta",
    "rdp_to_epsilon",
    "zcdp_rho_for_approx_dp",
    "zcdp_to_delta",
    "zcdp_to_epsilon",
]

#: The RDP orders privkit uses by default: opacus's grid (fractional and integer orders).
DEFAULT_ORDERS: tuple[float, ...] = tuple(
    [1.0 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(12, 64)]
)


def _check_rho(rho: float, owner: str) -> None:
    check.positive_finite("rho", rho, owner)


def _check_delta(delta: float, owner: str) -> None:
    check.delta("delta", delta, owner)


def _orders(orders: ArrayLike, owner: str) -> NDArray[np.float64]:
    """RDP orders: finite numbers > 1 (at least one)."""
    try:
        a = np.asarray(orders, dtype=float)
    except (TypeError, ValueError):
        raise check.fail("orders", orders, "finite numbers > 1", owner) from None
    if a.size == 0 or not np.all(np.isfinite(a)) or not np.all(a > 1.0):
        raise check.fail("orders", orders, "finite numbers > 1", owner)
    return a


def _curve(orders: NDArray[np.float64], rdp: ArrayLike, owner: str) -> NDArray[np.float64]:
    """An RDP curve: one value >= 0 (or inf) per order, no NaN."""
    try:
        r = np.asarray(rdp, dtype=float)
    except (TypeError, ValueError):
        raise check.fail("rdp", rdp, "numbers >= 0, one per order", owner) from None
    if r.shape != orders.shape or np.any(np.isnan(r)) or np.any(r < 0.0):
        raise check.fail("rdp", rdp, f"numbers >= 0 (or inf), one per order "
                         f"({orders.size})", owner)
    return r


# --- pure and approximate DP -------------------------------------------------------------


def pure_dp_delta(*, epsilon: float, target_epsilon: float) -> float:
    """Tightest delta at ``target_epsilon`` implied by pure ``epsilon``-DP alone.

    Notes
    -----
    Every epsilon-DP mechanism is a post-processing of randomized response with
    parameter epsilon ([KOV15]_ Thm 2.1), whose privacy profile is
    ``delta(e') = (e^eps - e^e') / (1 + e^eps)`` for ``0 <= e' <= eps`` and 0 above.
    """
    check.positive_finite("epsilon", epsilon, "pure_dp_delta")
    check.nonnegative("target_epsilon", target_epsilon, "pure_dp_delta")
    return approx_dp_delta(epsilon=epsilon, delta=0.0, target_epsilon=target_epsilon)


def pure_dp_epsilon(*, epsilon: float, target_delta: float) -> float:
    """Tightest epsilon at ``target_delta`` implied by pure ``epsilon``-DP ([KOV15]_)."""
    check.positive_finite("epsilon", epsilon, "pure_dp_epsilon")
    check.delta("target_delta", target_delta, "pure_dp_epsilon")
    return approx_dp_epsilon(epsilon=epsilon, delta=0.0, target_delta=target_delta)


def approx_dp_delta(*, epsilon: float, delta: float, target_epsilon: float) -> float:
    """Tightest delta at ``target_epsilon`` implied by (epsilon, delta)-DP.

    Notes
    -----
    The worst (epsilon, delta)-DP mechanism is the generalised randomized response of
    [KOV15]_ eq. (3); its hockey-stick divergence at ``e^t`` is
    ``delta + (1 - delta) (e^eps - e^t) / (1 + e^eps)`` for ``0 <= t <= eps``.
    """
    check.positive_finite("epsilon", epsilon, "approx_dp_delta")
    check.delta("delta", delta, "approx_dp_delta")
    check.nonnegative("target_epsilon", target_epsilon, "approx_dp_delta")
    if target_epsilon >= epsilon:
        return delta
    t = max(target_epsilon, 0.0)
    # (e^eps - e^t) / (1 + e^eps) = -expm1(t - eps) / (1 + e^-eps)
    slack = -math.expm1(t - epsilon) / (1.0 + math.exp(-epsilon))
    return min(1.0, delta + (1.0 - delta) * slack)


def approx_dp_epsilon(*, epsilon: float, delta: float, target_delta: float) -> float:
    """Tightest epsilon at ``target_delta`` implied by (epsilon, delta)-DP ([KOV15]_).

    Returns ``inf`` when ``target_delta < delta``: an (epsilon, delta) guarantee says
    nothing about smaller deltas.
    """
    check.positive_finite("epsilon", epsilon, "approx_dp_epsilon")
    check.delta("delta", delta, "approx_dp_epsilon")
    check.delta("target_delta", target_delta, "approx_dp_epsilon")
    if target_delta < delta:
        return math.inf
    if target_delta == delta:
        return epsilon
    # Invert approx_dp_delta: e^t = e^eps - (target - delta)(1 + e^eps) / (1 - delta).
    x = (target_delta - delta) * (1.0 + math.exp(-epsilon)) / (1.0 - delta)
    if x >= 1.0:
        return 0.0
    return max(0.0, epsilon + math.log1p(-x))


def pure_dp_rdp(*, epsilon: float, orders: ArrayLike) -> NDArray[np.float64]:
    """Exact worst-case Renyi divergence of an epsilon-DP mechanism at each order.

    Notes
    -----
    By [KOV15]_ Thm 2.1 and the data-processing inequality, the largest Renyi divergence
    of any epsilon-DP mechanism is that of randomized response,
    ``D_a = log(p^a q^(1-a) + q^a p^(1-a)) / (a - 1)`` with ``p = e^eps / (1 + e^eps)``,
    ``q = 1 - p``. This is at most ``min(eps, a eps^2 / 2)`` ([BS16]_ Prop. 1.4).
    """
    check.positive_finite("epsilon", epsilon, "pure_dp_rdp")
    orders = _orders(orders, "pure_dp_rdp")
    a = np.asarray(orders, dtype=float)
    log_p = -np.logaddexp(0.0, -epsilon)  # log(e^eps / (1 + e^eps))
    log_q = -np.logaddexp(0.0, epsilon)
    terms = np.logaddexp(a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p)
    result: NDArray[np.float64] = np.maximum(terms / (a - 1.0), 0.0)
    return result


def bounded_range_delta(eta: float, target_epsilon: float) -> float:
    """Exact delta at ``target_epsilon`` of the worst eta-bounded-range mechanism.

    Notes
    -----
    By [DDR20]_ Section 4 the worst case is RR(eta, t): privacy loss ``t eta`` w.p. ``p``
    and ``(t - 1) eta`` otherwise. Its hockey-stick divergence at ``e^e`` is
    ``(1 - e^e / x - c x + c e^e) / (1 - c)`` with ``x = e^(t eta)``, ``c = e^-eta``,
    maximised at ``x = e^((e + eta) / 2)``, which gives, for ``0 <= e <= eta``::

        delta(e) = (1 - e^((e - eta) / 2))^2 / (1 - e^-eta)

    (``tanh(eta / 4)`` at ``e = 0``, against ``tanh(eta / 2)`` for pure eta-DP).
    """
    check.positive_finite("eta", eta, "bounded_range_delta")
    check.nonnegative("target_epsilon", target_epsilon, "bounded_range_delta")
    if target_epsilon >= eta:
        return 0.0
    t = max(target_epsilon, 0.0)
    return float(math.expm1((t - eta) / 2.0) ** 2 / -math.expm1(-eta))


def bounded_range_epsilon(eta: float, target_delta: float) -> float:
    """Exact epsilon at ``target_delta`` of the worst eta-bounded-range mechanism.

    The inverse of :func:`bounded_range_delta`:
    ``e = eta + 2 log(1 - sqrt(delta (1 - e^-eta)))``, clipped at 0.
    """
    check.positive_finite("eta", eta, "bounded_range_epsilon")
    check.delta("target_delta", target_delta, "bounded_range_epsilon")
    root = math.sqrt(target_delta * -math.expm1(-eta))
    if root >= 1.0:
        return 0.0
    return max(0.0, eta + 2.0 * math.log1p(-root))


def laplace_delta(*, epsilon: float, target_epsilon: float) -> float:
    """Exact delta at ``target_epsilon`` of the Laplace mechanism with ``Δ / b = epsilon``.

    Notes
    -----
    For ``0 <= t <= eps``, ``delta(t) = 1 - exp((t - eps) / 2)``, and 0 above: the
    privacy loss of the Laplace mechanism is ``eps`` w.p. 1/2 (outputs beyond the shifted
    mean), so ``P[L > t] - e^t Q[L > t]`` integrates in closed form (e.g. Koskela,
    Jälkö, Prediger, Honkela 2021, Section 4; checked by quadrature in the tests).
    """
    check.positive_finite("epsilon", epsilon, "laplace_delta")
    check.nonnegative("target_epsilon", target_epsilon, "laplace_delta")
    if target_epsilon >= epsilon:
        return 0.0
    return float(-math.expm1((max(target_epsilon, 0.0) - epsilon) / 2.0))


def laplace_epsilon(*, epsilon: float, target_delta: float) -> float:
    """Exact epsilon at ``target_delta`` of the Laplace mechanism (inverse of
    :func:`laplace_delta`): ``eps + 2 log(1 - delta)``, clipped at 0."""
    check.positive_finite("epsilon", epsilon, "laplace_epsilon")
    check.delta("target_delta", target_delta, "laplace_epsilon")
    return max(0.0, epsilon + 2.0 * math.log1p(-target_delta)) if target_delta < 1 else 0.0


def laplace_rdp(*, epsilon: float, orders: ArrayLike) -> NDArray[np.float64]:
    """Exact Renyi divergence of the Laplace mechanism with ``Δ / b = epsilon``.

    Notes
    -----
    Mironov 2017 (arXiv:1702.07476v3), Proposition 6, with ``b = 1 / epsilon``::

        D_a = log( a/(2a-1) exp((a-1) eps) + (a-1)/(2a-1) exp(-a eps) ) / (a - 1)

    evaluated with ``logaddexp``, and never above eps.
    """
    check.positive_finite("epsilon", epsilon, "laplace_rdp")
    orders = _orders(orders, "laplace_rdp")
    a = np.asarray(orders, dtype=float)
    log_terms = np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * epsilon,
                             np.log((a - 1) / (2 * a - 1)) - a * epsilon)
    result: NDArray[np.float64] = np.minimum(log_terms / (a - 1), epsilon)
    return result


def gdp_profile(mu: float, epsilons: ArrayLike) -> NDArray[np.float64]:
    """:func:`gdp_delta` vectorised over ``epsilons >= 0`` (one formula with the PLD
    accountant's, :data:`privkit._profiles.GAUSSIAN`)."""
    check.positive_finite("mu", mu, "gdp_profile")
    from privkit import _profiles

    return _profiles.GAUSSIAN((mu,), epsilons)


# --- Renyi DP and zCDP --------------------------------------------------------------------


def rdp_to_epsilon(orders: ArrayLike, rdp: ArrayLike, *, delta: float) -> tuple[float, float]:
    """Smallest epsilon at ``delta`` over an RDP curve, and the order that achieves it.

    Notes
    -----
    For each order ``a`` ([CKS20]_ Prop. 12, [BBGHS20]_ Thm 21)::

        eps = rdp_a + log((a - 1) / a) - (log(delta) + log(a)) / (a - 1)

    This is the conversion opacus uses, so the two agree on the same orders. A negative
    result is clipped to 0. With ``delta == 0`` no finite order gives a bound: ``inf``.
    """
    a = _orders(orders, "rdp_to_epsilon")
    r = _curve(a, rdp, "rdp_to_epsilon")
    check.delta("delta", delta, "rdp_to_epsilon")
    if delta <= 0.0:
        return math.inf, math.nan
    with np.errstate(invalid="ignore", over="ignore"):
        eps = r + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
    eps = np.where(np.isnan(eps), np.inf, eps)
    best = int(np.argmin(eps))
    return max(0.0, float(eps[best])), float(a[best])


def rdp_to_delta(orders: ArrayLike, rdp: ArrayLike, *, epsilon: float) -> tuple[float, float]:
    """Smallest delta at ``epsilon`` over an RDP curve, and the order that achieves it.

    Notes
    -----
    The inverse of :func:`rdp_to_epsilon` at each order ([CKS20]_ Prop. 12)::

        delta = exp((a - 1)(rdp_a - eps)) / a * (1 - 1/a)^(a - 1)

    computed in log space and capped at 1.
    """
    a = _orders(orders, "rdp_to_delta")
    r = _curve(a, rdp, "rdp_to_delta")
    check.nonnegative("epsilon", epsilon, "rdp_to_delta")
    with np.errstate(invalid="ignore", over="ignore"):
        log_delta = (a - 1.0) * (r - epsilon) - np.log(a) + (a - 1.0) * np.log1p(-1.0 / a)
    log_delta = np.where(np.isnan(log_delta), np.inf, log_delta)
    best = int(np.argmin(log_delta))
    return float(min(1.0, math.exp(min(log_delta[best], 0.0)))), float(a[best])


def _zcdp_log_delta(log_a_minus_1: float, rho: float, epsilon: float) -> float:
    a = 1.0 + math.exp(log_a_minus_1)
    return (a - 1.0) * (a * rho - epsilon) - math.log(a) + (a - 1.0) * math.log1p(-1.0 / a)


def _zcdp_epsilon_at(log_a_minus_1: float, rho: float, log_delta: float) -> float:
    a = 1.0 + math.exp(log_a_minus_1)
    return a * rho + math.log1p(-1.0 / a) - (log_delta + math.log(a)) / (a - 1.0)


def _minimise_over_orders(objective: object) -> float:
    """Minimise f(log(a - 1)) over a in (1, 1 + e^12]: grid search, then golden-section
    refinement between the grid minimum's neighbours (Kiefer 1953).

    Any order gives a valid bound, so the result is valid however well the search does;
    the grid makes it robust, the refinement makes it tight. Pure Python: importing
    scipy.optimize for this one call cost 0.9 s of every ``privkit account``.
    """
    f = objective  # a callable of log(a - 1)
    grid = np.linspace(-12.0, 12.0, 241)
    values = [f(t) for t in grid]  # type: ignore[operator]
    i = int(np.argmin(values))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, len(grid) - 1)])
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1, f2 = f(x1), f(x2)  # type: ignore[operator]
    while hi - lo > 1e-10:
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - ratio * (hi - lo)
            f1 = f(x1)  # type: ignore[operator]
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + ratio * (hi - lo)
            f2 = f(x2)  # type: ignore[operator]
    return float(min(values[i], f1, f2))


def zcdp_to_epsilon(rho: float, *, delta: float) -> float:
    """Smallest epsilon at ``delta`` implied by rho-zCDP.

    Notes
    -----
    rho-zCDP is RDP ``a * rho`` at every order ``a > 1``; privkit minimises the
    conversion of [CKS20]_ Cor. 13 over the continuum of orders. This is never larger
    than the familiar ``rho + 2 sqrt(rho log(1/delta))`` of [BS16]_ Prop. 1.3.
    """
    _check_rho(rho, "zcdp_to_epsilon")
    _check_delta(delta, "zcdp_to_epsilon")
    if delta <= 0.0:
        return math.inf
    log_delta = math.log(delta)
    best = _minimise_over_orders(lambda t: _zcdp_epsilon_at(t, rho, log_delta))
    return max(0.0, best)


def zcdp_rho_for_approx_dp(*, epsilon: float, delta: float) -> float:
    """The largest rho whose (epsilon, delta) conversion (:func:`zcdp_to_epsilon`) is at
    most ``epsilon``: bisection on ``[0, epsilon]`` (the conversion is at least rho),
    returning the lower end of the final bracket, so the result always fits."""
    check.positive_finite("epsilon", epsilon, "zcdp_rho_for_approx_dp")
    check.open_unit("delta", delta, "zcdp_rho_for_approx_dp")
    lo, hi = 0.0, epsilon
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if zcdp_to_epsilon(mid, delta=delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


def zcdp_to_delta(rho: float, *, epsilon: float) -> float:
    """Smallest delta at ``epsilon`` implied by rho-zCDP ([CKS20]_ Cor. 13)."""
    _check_rho(rho, "zcdp_to_delta")
    check.nonnegative("epsilon", epsilon, "zcdp_to_delta")
    best = _minimise_over_orders(lambda t: _zcdp_log_delta(t, rho, epsilon))
    return float(min(1.0, math.exp(min(best, 0.0))))


# --- Gaussian DP --------------------------------------------------------------------------


def gdp_delta(mu: float, *, epsilon: float) -> float:
    """Exact delta at ``epsilon`` of mu-GDP, which is the Gaussian mechanism's profile.

    Notes
    -----
    [DRS19]_ Cor. 2.13 (equivalently [BW18]_ Thm 8 with ``mu = sensitivity / sigma``)::

        delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)

    evaluated as ``Phi(a) * (1 - exp(eps + log Phi(b) - log Phi(a)))`` with ``log_ndtr``
    so that neither term underflows nor cancels.
    """
    check.positive_finite("mu", mu, "gdp_delta")
    check.nonnegative("epsilon", epsilon, "gdp_delta")
    from scipy import special

    eps = max(epsilon, 0.0)
    log_a = float(special.log_ndtr(-eps / mu + mu / 2.0))
    log_b = float(special.log_ndtr(-eps / mu - mu / 2.0))
    ratio = eps + log_b - log_a
    if ratio >= 0.0:  # only through rounding; the exact value is < 0
        return 0.0
    return float(min(1.0, math.exp(log_a) * -math.expm1(ratio)))


def gdp_epsilon(mu: float, *, delta: float) -> float:
    """Exact epsilon at ``delta`` of mu-GDP: the root of :func:`gdp_delta` in epsilon.

    The root is bracketed and refined to a relative tolerance of 1e-15, and the upper end
    of the final bracket is returned, so ``gdp_delta(mu, result) <= delta`` holds.
    """
    check.positive_finite("mu", mu, "gdp_epsilon")
    check.delta("delta", delta, "gdp_epsilon")
    from scipy import optimize

    if delta <= 0.0:
        return math.inf
    if gdp_delta(mu, epsilon=0.0) <= delta:
        return 0.0
    hi = mu * mu / 2.0 + mu * math.sqrt(2.0 * max(-math.log(delta), 1.0)) + 1.0
    while gdp_delta(mu, epsilon=hi) > delta:
        hi *= 2.0
    root = optimize.brentq(lambda e: gdp_delta(mu, epsilon=e) - delta, 0.0, hi,
                           xtol=1e-300, rtol=1e-15, maxiter=500)
    eps = float(root)
    # brentq returns a point within tolerance of the root; step up until it is certified.
    while gdp_delta(mu, epsilon=eps) > delta:
        eps = math.nextafter(eps, math.inf) if eps > 0 else 5e-324
    return eps


@functools.lru_cache(maxsize=1024)
def gdp_mu_for_approx_dp(*, epsilon: float, delta: float) -> float:
    """Largest mu such that mu-GDP (the Gaussian mechanism) is (epsilon, delta)-DP.

    Memoised (a pure function of two numbers, found by root finding): estimators that
    calibrate a Gaussian on every fit pay it once per budget.

    Notes
    -----
    This is the analytic Gaussian mechanism's calibration ([BW18]_ Alg. 1): the noise
    ``sigma = sensitivity / mu`` is the smallest for which the exact profile
    (:func:`gdp_delta`) is at most ``delta`` at ``epsilon``. ``gdp_delta`` increases in
    mu, so the root is unique; the lower end of the final bracket is returned so that the
    calibrated mechanism never exceeds the target.
    """
    check.positive_finite("epsilon", epsilon, "gdp_mu_for_approx_dp")
    check.open_unit("delta", delta, "gdp_mu_for_approx_dp")
    from scipy import optimize

    lo, hi = 0.5, 1.0
    while gdp_delta(hi, epsilon=epsilon) < delta:
        lo, hi = hi, hi * 2.0
    while gdp_delta(lo, epsilon=epsilon) > delta:
        lo, hi = lo / 2.0, lo
    root = float(optimize.brentq(lambda m: gdp_delta(m, epsilon=epsilon) - delta, lo, hi,
                                 xtol=1e-300, rtol=1e-15, maxiter=500))
    while gdp_delta(root, epsilon=epsilon) > delta:
        root = math.nextafter(root, 0.0)
    return root
