"""Exact samplers for the discrete Laplace and discrete Gaussian distributions.

Canonne, Kamath, Steinke 2020, "The discrete Gaussian for differential privacy"
(arXiv:2004.00010v5), Algorithms 1-3, vectorised over numpy arrays. Every random choice
is a Bernoulli with a *rational* probability ``n / d``, drawn exactly as
``rng.integers(0, d) < n`` (numpy draws bounded integers without bias), so the output
distribution is exactly the stated one: no floating-point arithmetic touches a
probability. The loops of the algorithms run on the still-undecided entries only.

Parameters are rationals given as integer pairs. Intermediate products stay in int64
where they provably fit and switch to Python integers (object arrays) where they may not,
so large parameters are exact too, only slower.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "at_least",
    "bernoulli_exp",
    "bernoulli_exp_minus_one",
    "bernoulli_rational",
    "discrete_gaussian",
    "discrete_laplace",
]

_INT64_SAFE = 2**62
_FACTORIAL_20 = math.factorial(20)  # < 2^63
#: 20! / k! for k = 1..20: K > k (in Bernoulli(exp(-1))'s loop) iff M < 20!/k!.
_EXP_MINUS_ONE_THRESHOLDS = np.array([_FACTORIAL_20 // math.factorial(k) for k in range(1, 21)],
                                     dtype=np.int64)


def bernoulli_rational(
    rng: np.random.Generator,
    numerator: NDArray[np.int64] | int,
    denominator: NDArray[np.int64] | int,
    size: int,
) -> NDArray[np.bool_]:
    """Exact Bernoulli(numerator / denominator) draws (0 <= numerator <= denominator)."""
    n = np.broadcast_to(np.asarray(numerator), (size,))
    d = np.broadcast_to(np.asarray(denominator), (size,))
    if n.dtype == object or d.dtype == object:
        return np.array([_big_uniform(rng, int(dd)) < int(nn) for nn, dd in zip(n, d, strict=True)],
                        dtype=bool)
    return rng.integers(0, d, size=size) < n


def _big_uniform(rng: np.random.Generator, bound: int) -> int:
    """A uniform integer in [0, bound) of any size, by rejection on 32-bit words."""
    bits = bound.bit_length()
    while True:
        words = rng.integers(0, 2**32, size=(bits + 31) // 32, dtype=np.uint64)
        value = 0
        for w in words:
            value = (value << 32) | int(w)
        value >>= (32 * len(words) - bits)
        if value < bound:
            return value


def bernoulli_exp(
    rng: np.random.Generator, numerator: NDArray[np.int64], denominator: NDArray[np.int64]
) -> NDArray[np.bool_]:
    """Exact Bernoulli(exp(-numerator / denominator)) draws, elementwise (CKS Alg. 1).

    For gamma in [0, 1]: draw ``A_k ~ Bernoulli(gamma / k)`` for k = 1, 2, ... until one
    is 0; the result is 1 iff the stopping k is odd. For gamma > 1, multiply
    ``floor(gamma)`` draws of Bernoulli(exp(-1)) by one of Bernoulli(exp(-frac(gamma))).
    """
    num = np.asarray(numerator)
    den = np.asarray(denominator)
    big = num.dtype == object or den.dtype == object
    whole = num // den
    frac_num = num - whole * den
    if np.any(frac_num != 0):
        result = _bernoulli_exp_unit(rng, frac_num, den, big)
    else:
        result = np.ones(num.shape[0], dtype=bool)
    # floor(gamma) further draws of Bernoulli(exp(-1)); stop early where already 0.
    remaining = np.array(whole, dtype=object if big else np.int64)
    active = result & (remaining > 0)
    while np.any(active):
        index = np.flatnonzero(active)
        result[index] &= bernoulli_exp_minus_one(rng, index.size)
        remaining[index] -= 1
        active = result & (remaining > 0)
    return result


def bernoulli_exp_minus_one(rng: np.random.Generator, size: int) -> NDArray[np.bool_]:
    """Exact Bernoulli(exp(-1)) draws in one vectorised step.

    In CKS Alg. 1 with gamma = 1 the stopping index K has ``P(K > k) = 1 / k!``. With
    M uniform on ``[0, 20!)``, ``P(M < 20!/k!) = 1/k!`` exactly (20!/k! is an integer), so
    ``K = 1 + #{k : M < 20!/k!}`` for K <= 20; the rare M = 0 (probability 1/20!) continues
    the loop from k = 21. The result is 1 iff K is odd.
    """
    m = rng.integers(0, _FACTORIAL_20, size=size, dtype=np.int64)
    k = 1 + np.sum(m[:, None] < _EXP_MINUS_ONE_THRESHOLDS[None, :], axis=1)
    rare = np.flatnonzero(m == 0)  # K > 20: continue A_k ~ Bernoulli(1/k) from k = 21
    for i in rare:
        kk = 21
        while rng.integers(0, kk) < 1:
            kk += 1
        k[i] = kk
    odd: NDArray[np.bool_] = (k % 2 == 1)
    return odd


def _bernoulli_exp_unit(
    rng: np.random.Generator, num: NDArray[np.int64], den: NDArray[np.int64], big: bool
) -> NDArray[np.bool_]:
    """Bernoulli(exp(-num/den)) for num/den in [0, 1] (CKS Alg. 1, first branch)."""
    size = num.shape[0]
    k = np.ones(size, dtype=object if big else np.int64)
    active = np.ones(size, dtype=bool)
    while np.any(active):
        index = np.flatnonzero(active)
        a = bernoulli_rational(rng, num[index], den[index] * k[index], index.size)
        k[index[a]] += 1
        active[index[~a]] = False
    odd: NDArray[np.bool_] = (k % 2 == 1).astype(bool)
    return odd


def discrete_laplace(
    rng: np.random.Generator, scale: Fraction, size: int
) -> NDArray[np.int64]:
    """Exact draws with ``P(x) ∝ exp(-|x| / scale)`` on the integers (CKS Alg. 2).

    ``scale = t / s`` in lowest terms.
    """
    t, s = scale.numerator, scale.denominator
    out = np.zeros(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        n = todo.size
        u = rng.integers(0, t, size=n)
        keep = bernoulli_exp(rng, u, np.full(n, t, dtype=np.int64))
        v = np.zeros(n, dtype=np.int64)
        going = keep.copy()
        while np.any(going):
            index = np.flatnonzero(going)
            a = bernoulli_exp_minus_one(rng, index.size)
            v[index[a]] += 1
            going[index[~a]] = False
        x = u + t * v
        y = x // s
        b = rng.integers(0, 2, size=n).astype(bool)
        accept = keep & ~(b & (y == 0))
        out[todo[accept]] = np.where(b[accept], -y[accept], y[accept])
        todo = todo[~accept]
    return out


def discrete_gaussian(
    rng: np.random.Generator, sigma_squared: Fraction, size: int
) -> NDArray[np.int64]:
    """Exact draws with ``P(x) ∝ exp(-x^2 / (2 sigma^2))`` on the integers (CKS Alg. 3).

    Rejection from the discrete Laplace with scale ``t = floor(sigma) + 1``, accepting
    ``Y`` with probability ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))``.
    """
    p, q = sigma_squared.numerator, sigma_squared.denominator
    t = int(_isqrt_floor(sigma_squared)) + 1
    out = np.zeros(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        n = todo.size
        y = discrete_laplace(rng, Fraction(t), n)
        # gamma = (|Y| q t - p)^2 / (2 p q t^2), exact in integers: int64 when every
        # product provably fits (the usual case), Python integers otherwise.
        ay = np.abs(y)
        den_value = 2 * p * q * t * t
        largest = int(ay.max()) * q * t + p
        if largest * largest < _INT64_SAFE and den_value < _INT64_SAFE:
            a = ay * (q * t) - p
            accept = bernoulli_exp(rng, a * a, np.full(n, den_value, dtype=np.int64))
        else:
            a_big = ay.astype(object) * (q * t) - p
            accept = bernoulli_exp(rng, a_big * a_big, np.full(n, den_value, dtype=object))
        out[todo[accept]] = y[accept]
        todo = todo[~accept]
    return out


def _isqrt_floor(x: Fraction) -> int:
    """floor(sqrt(x)) for a non-negative rational, exactly."""
    from math import isqrt

    r = isqrt(x.numerator // x.denominator)
    while Fraction((r + 1) ** 2) <= x:
        r += 1
    while Fraction(r**2) > x:
        r -= 1
    return r


def at_least(value: float, *, relative_precision_bits: int = 28) -> Fraction:
    """The smallest ``p / 2^k`` >= ``value`` with ``k`` chosen so that the relative excess
    is at most ``2^-relative_precision_bits`` and the integers stay small.

    Samplers round their scale parameters *up* to such a rational: a larger scale only
    adds noise, so the declared guarantee (computed from ``value``) still holds.
    """
    exact = Fraction(value)
    k = max(0, relative_precision_bits - int(np.floor(np.log2(value))))
    q = 2**k
    p = -((-exact.numerator * q) // exact.denominator)  # ceil(value * q)
    return Fraction(p, q)
