"""Privacy amplification by subsampling for Renyi DP: module-level math.

References
----------
.. [MTZ19] I. Mironov, K. Talwar, L. Zhang. Renyi differential privacy of the sampled
   Gaussian mechanism. arXiv:1908.10530v1, Section 3.3 (the quantity A_alpha).
.. [WBK19] Y.-X. Wang, B. Balle, S. Kasiviswanathan. Subsampled Renyi differential privacy
   and analytical moments accountant. AISTATS 2019 (arXiv:1808.00087v2), Theorem 9.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["poisson_gaussian_rdp", "without_replacement_rdp"]


def _log_add(a: float, b: float) -> float:
    hi, lo = max(a, b), min(a, b)
    return hi if lo == -math.inf else hi + math.log1p(math.exp(lo - hi))


def _log_sub(a: float, b: float) -> float:
    if b == -math.inf:
        return a
    if a == b:
        return -math.inf
    return a + math.log(-math.expm1(b - a))


def _log_a_integer(q: float, sigma: float, alpha: int) -> float:
    from scipy import special

    i = np.arange(alpha + 1)
    log_coef = (np.log(special.binom(alpha, i)) + i * math.log(q)
                + (alpha - i) * math.log1p(-q))
    return float(special.logsumexp(log_coef + (i * i - i) / (2.0 * sigma**2)))


def _log_a_fractional(q: float, sigma: float, alpha: float) -> float:
    from scipy import special

    log_a0, log_a1 = -math.inf, -math.inf
    z0 = sigma**2 * math.log(1.0 / q - 1.0) + 0.5
    i = 0
    while True:
        coef = float(special.binom(alpha, i))
        log_coef = math.log(abs(coef))
        j = alpha - i
        log_t0 = log_coef + i * math.log(q) + j * math.log1p(-q)
        log_t1 = log_coef + j * math.log(q) + i * math.log1p(-q)
        log_e0 = float(special.log_ndtr((z0 - i) / sigma))
        log_e1 = float(special.log_ndtr((j - z0) / sigma))
        log_s0 = log_t0 + (i * i - i) / (2.0 * sigma**2) + log_e0
        log_s1 = log_t1 + (j * j - j) / (2.0 * sigma**2) + log_e1
        if coef > 0:
            log_a0, log_a1 = _log_add(log_a0, log_s0), _log_add(log_a1, log_s1)
        else:
            log_a0, log_a1 = _log_sub(log_a0, log_s0), _log_sub(log_a1, log_s1)
        i += 1
        if max(log_s0, log_s1) < -30:
            return _log_add(log_a0, log_a1)


def poisson_gaussian_rdp(sampling_rate: float, noise_multiplier: float,
                         orders: ArrayLike) -> NDArray[np.float64]:
    """RDP of the Poisson-subsampled Gaussian mechanism at each order (ADD_REMOVE).

    Notes
    -----
    [MTZ19]_ Section 3.3: ``rdp(a) = log(A_a) / (a - 1)`` where, for integer a,
    ``A_a = sum_i C(a, i) q^i (1 - q)^(a - i) exp((i^2 - i) / (2 sigma^2))``, and for
    fractional a the two-sided series of their eq. for ``A_a`` with Gaussian tail terms,
    summed until the terms fall below e^-30. These are the series opacus evaluates, so
    the two agree to rounding. ``q = 1`` gives the Gaussian's ``a / (2 sigma^2)``.
    """
    a = np.asarray(orders, dtype=float)
    q, sigma = sampling_rate, noise_multiplier
    if q == 1.0:
        full: NDArray[np.float64] = a / (2.0 * sigma**2)
        return full
    out = np.empty(a.shape)
    for index, order in np.ndenumerate(a):
        log_a = (_log_a_integer(q, sigma, int(order)) if float(order).is_integer()
                 else _log_a_fractional(q, sigma, float(order)))
        out[index] = log_a / (order - 1.0)
    return out


def without_replacement_rdp(sampling_fraction: float, base_rdp: ArrayLike,
                            base_pure_epsilon: float, order: int) -> float:
    """RDP at integer ``order`` of a mechanism run on m of n records drawn without
    replacement (``sampling_fraction = m / n``), under REPLACE_ONE.

    Parameters
    ----------
    base_rdp : array
        The base mechanism's RDP at orders 2, 3, ..., ``order`` (in that order).
    base_pure_epsilon : float
        The base mechanism's pure epsilon (``inf`` if none).

    Notes
    -----
    [WBK19]_ Theorem 9: with ``g = m / n`` and ``e(j)`` the base RDP,
    ``(a - 1) rdp(a) <= log(1 + g^2 C(a, 2) min(4 (e^e(2) - 1), e^e(2) min(2,
    (e^e(inf) - 1)^2)) + sum_(j=3..a) g^j C(a, j) e^((j - 1) e(j)) min(2,
    (e^e(inf) - 1)^j))``, computed in log space.
    """
    from scipy import special

    g = sampling_fraction
    eps = np.asarray(base_rdp, dtype=float)
    log_cap = (math.log(2.0) if not math.isfinite(base_pure_epsilon)
               else min(math.log(2.0), 2 * math.log(math.expm1(base_pure_epsilon))))
    second = min(math.log(4.0) + math.log(math.expm1(eps[0])), eps[0] + log_cap)
    terms = [0.0, 2 * math.log(g) + math.log(special.binom(order, 2)) + second]
    for j in range(3, order + 1):
        cap = (math.log(2.0) if not math.isfinite(base_pure_epsilon)
               else min(math.log(2.0), j * math.log(math.expm1(base_pure_epsilon))))
        terms.append(j * math.log(g) + math.log(special.binom(order, j))
                     + (j - 1) * eps[j - 2] + cap)
    return float(special.logsumexp(terms)) / (order - 1)
