"""Composition theorems for (epsilon, delta) blocks: module-level math.

References
----------
.. [DRV10] C. Dwork, G. Rothblum, S. Vadhan. Boosting and differential privacy. FOCS
   2010, Theorem III.3; as stated in Dwork, Roth 2014, Theorem 3.20.
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath. The composition theorem for differential
   privacy. ICML 2015 (arXiv:1311.0776v4), Theorem 3.3 (optimal homogeneous) and
   Theorem 3.5 (heterogeneous).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "drv_epsilon",
    "kov_heterogeneous_epsilon",
    "optimal_homogeneous_delta",
    "optimal_homogeneous_epsilon",
    "reijden_composition_epsilon",
]


def drv_epsilon(*, epsilon: float, count: int, delta_slack: float) -> float:
    """Advanced composition: k runs of an eps-DP block are (eps', k delta + delta_slack)-DP.

    Notes
    -----
    [DRV10]_: ``eps' = sqrt(2 k ln(1/delta_slack)) eps + k eps (e^eps - 1)``. For 100
    runs of eps = 0.1 at delta_slack = 1e-5 this is 5.8502.
    """
    return math.sqrt(2.0 * count * math.log(1.0 / delta_slack)) * epsilon \
        + count * epsilon * math.expm1(epsilon)


def reijden_composition_epsilon(*, epsilon: float, count: int, delta: float) -> float:
    """The form quoted by van der Reijden 2019, Theorem 1: T runs of an
    eps-DP block are (sqrt(8 T log(1/delta)) eps, delta)-DP.

    This simplification of [DRV10]_ drops the second-order term by absorbing it into the
    constant; it is valid only when ``drv_epsilon(eps, T, delta)`` does not exceed it
    (roughly ``e^eps - 1 <= sqrt(2 log(1/delta) / T)``). privkit keeps it to reproduce the
    paper's claims; its accountants never use it.
    """
    return math.sqrt(8.0 * count * math.log(1.0 / delta)) * epsilon


def kov_heterogeneous_epsilon(epsilons: Sequence[float], delta_slack: float, *,
                              counts: Sequence[int] | None = None) -> float:
    """Kairouz-Oh-Viswanath's bound for heterogeneous pure blocks ([KOV15]_ Thm 3.5).

    Parameters
    ----------
    epsilons : sequence of float
        The blocks' epsilons.
    delta_slack : float
        The delta spent on the composition theorem.
    counts : sequence of int, optional
        How many times each block runs (default: once each). The sums take the counts as
        multipliers, so the cost does not depend on them.

    Notes
    -----
    With ``s = sum eps_i (e^eps_i - 1) / (e^eps_i + 1)`` and ``v = sum eps_i^2``, the
    composition is (eps', delta_slack)-DP for eps' the minimum of ``sum eps_i``,
    ``s + sqrt(2 v log(e + sqrt(v) / delta_slack))`` and ``s + sqrt(2 v log(1/delta_slack))``.
    """
    e = np.asarray(epsilons, dtype=float)
    n = np.ones(e.shape) if counts is None else np.asarray([float(c) for c in counts])
    s = float(np.sum(n * e * np.tanh(e / 2.0)))
    v = float(np.sum(n * e * e))
    return min(float(np.sum(n * e)),
               s + math.sqrt(2.0 * v * math.log(math.e + math.sqrt(v) / delta_slack)),
               s + math.sqrt(2.0 * v * math.log(1.0 / delta_slack)))


#: Above this many runs, :func:`optimal_homogeneous_delta` uses binomial distribution
#: functions instead of summing ``count + 1`` terms.
EXACT_SUM_LIMIT = 100_000
#: The most runs :func:`optimal_homogeneous_delta` accepts: beyond, scipy's binomial
#: distribution functions lose the precision the difference of two of them needs (at
#: 10^20 runs the error is 10%, at 10^30 the difference comes out 0).
MAX_RUNS = 10**10
#: Absolute margin added to the binomial form (its observed error is below 1e-14 up to
#: :data:`MAX_RUNS` runs).
_CDF_MARGIN = 1e-12


def optimal_homogeneous_delta(*, epsilon: float, delta: float, count: int,
                              target_epsilon: float) -> float:
    """The exact delta at ``target_epsilon`` of ``count`` runs of an (eps, delta)-DP block.

    Notes
    -----
    [KOV15]_ Theorem 3.3: the worst case is ``count`` independent generalised randomized
    responses, whose composed hockey-stick divergence is
    ``1 - (1 - delta)^k (1 - sum_l C(k, l) [p^(k-l) q^l - e^t p^l q^(k-l)]_+)`` with
    ``p = e^eps / (1 + e^eps)``, ``q = 1 - p``; computed in log space and summed as
    ``(1 - (1 - delta)^k) + (1 - delta)^k * sum``, which does not cancel: a sum below
    1e-16 is not lost against 1. The result is positive for every ``t < k eps`` (the
    ``l = 0`` term is), so where the sum underflows the smallest positive float is
    returned, an upper bound; it is 0 exactly when ``delta = 0`` and ``t >= k eps``.
    """
    from scipy import special

    k = count
    if delta == 0.0 and target_epsilon >= k * epsilon:
        return 0.0  # k pure runs are (k eps, 0)-DP
    if k > EXACT_SUM_LIMIT:
        rr = _rr_binomial_bound(epsilon, k, target_epsilon)
    else:
        ones = np.arange(k + 1)  # l, the number of runs whose output favours Q
        log_binom = (special.gammaln(k + 1) - special.gammaln(ones + 1)
                     - special.gammaln(k - ones + 1))
        log_p = -float(np.logaddexp(0.0, -epsilon))  # log(e^eps / (1 + e^eps)), no overflow
        log_q = -float(np.logaddexp(0.0, epsilon))
        log_first = log_binom + (k - ones) * log_p + ones * log_q
        log_second = log_binom + target_epsilon + ones * log_p + (k - ones) * log_q
        live = log_first > log_second
        terms = log_first[live] + np.log(-np.expm1(log_second[live] - log_first[live]))
        rr = float(np.exp(special.logsumexp(terms))) if terms.size else 0.0
    log_kept = k * math.log1p(-delta)  # log (1 - delta)^k
    total = -math.expm1(log_kept) + math.exp(log_kept) * rr
    if total == 0.0 and target_epsilon < k * epsilon:
        return math.ulp(0.0)  # positive but below the smallest float: round up
    return min(1.0, total)


def _rr_binomial_bound(epsilon: float, count: int, target_epsilon: float) -> float:
    """An upper bound on the randomized-response sum of :func:`optimal_homogeneous_delta`
    in time independent of ``count`` (at most :data:`MAX_RUNS`).

    Notes
    -----
    The summand ``C(k, l) p^(k-l) q^l - e^t C(k, l) p^l q^(k-l)`` is
    ``P[B_q = l] - e^t P[B_p = l]`` for ``B_q ~ Bin(k, q)``, ``B_p ~ Bin(k, p)``, and is
    positive exactly for ``l < L* = (k - t / eps) / 2``, so the sum is
    ``F_q(L) - e^t F_p(L)`` with ``L`` the largest integer below ``L*`` and ``F`` the
    binomial distribution functions (regularised incomplete beta), plus an absolute
    margin of 1e-12 for their rounding.
    """
    from scipy import stats

    if count > MAX_RUNS:
        raise ValueError(f"count={count} is above MAX_RUNS={MAX_RUNS}")
    k = float(count)
    level = math.ceil((k - target_epsilon / epsilon) / 2.0) - 1.0
    if level < 0.0:
        return 0.0
    q = math.exp(-float(np.logaddexp(0.0, epsilon)))
    first = float(stats.binom.cdf(level, k, q))
    tail = float(stats.binom.cdf(level, k, 1.0 - q))
    log_second = target_epsilon + math.log(tail) if tail > 0.0 else -math.inf
    second = math.exp(log_second) if log_second < 700.0 else math.inf
    return min(1.0, max(0.0, first - second) + _CDF_MARGIN)


def optimal_homogeneous_epsilon(*, epsilon: float, delta: float, count: int,
                                target_delta: float) -> float:
    """The smallest eps' with ``optimal_homogeneous_delta(...) <= target_delta``.

    Bisection to 1e-12 on the exact formula; the upper end is returned (certified). For
    100 runs of eps = 0.1 at delta 1e-5 this is 4.3068. At ``target_delta = 0`` the
    answer is ``k eps`` for pure runs (the delta is positive below it) and infinite
    otherwise.
    """
    if target_delta == 0.0:
        return count * epsilon if delta == 0.0 else math.inf
    if optimal_homogeneous_delta(epsilon=epsilon, delta=delta, count=count,
                                 target_epsilon=count * epsilon) > target_delta:
        return math.inf
    lo, hi = 0.0, count * epsilon
    if optimal_homogeneous_delta(epsilon=epsilon, delta=delta, count=count,
                                 target_epsilon=0.0) <= target_delta:
        return 0.0
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = (lo + hi) / 2.0
        if optimal_homogeneous_delta(epsilon=epsilon, delta=delta, count=count,
                                     target_epsilon=mid) <= target_delta:
            hi = mid
        else:
            lo = mid
    return hi
