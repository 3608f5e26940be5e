"""Deliberately broken mechanisms, each with the exact epsilon it has on its pair.

The auditor's own test suite: every case claims epsilon = 1 (or (1, 1e-5)) but its true
epsilon on the given pair, computed exactly below, is at least 1.2. A sound auditor flags
every one (``privkit audit`` must not call them consistent). They are the classic
mistakes of the literature: noise too small, sensitivity declared too small, unclipped
data, delta mis-scaled, sparse vector without halting (Lyu, Su, Li 2017, Section 3), the
exponential mechanism and report-noisy-max without their factor 2, overlapping "parallel"
parts, randomized response calibrated for the wrong number of categories, an L2
sensitivity used with Laplace noise, replace-one histograms with add/remove sensitivity,
and a release repeated without accounting.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from privkit.audits.pairs import NeighbouringPair
from privkit.audits.registry import AUDIT_DELTA, AuditCase
from privkit.guarantees import GDP
from privkit.neighbouring import Neighbouring

__all__ = ["BROKEN", "BrokenCase"]

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE


@attrs.frozen
class BrokenCase:
    """A broken mechanism: what it claims, and its exact epsilon on ``case.pair``."""

    case: AuditCase
    true_epsilon: float
    mistake: str


def _snap(x: Any) -> Any:
    """Round float outputs to multiples of 2^-30: a post-processing that removes the
    floating-point leak of ``x + numpy noise`` (Mironov 2012), so each case measures its
    own mistake and its exact epsilon below stays an upper bound (the leak itself is
    audited by the naive float Laplace test)."""
    return np.round(np.asarray(x) * 2.0**30) / 2.0**30


def _laplace(scale: float, draws: int = 1) -> Callable[..., Any]:
    def system(value: Any, rng: np.random.Generator, size: int) -> Any:
        x = np.asarray(value, dtype=float)
        shape = (size, draws, *x.shape) if draws > 1 else (size, *x.shape)
        noisy = _snap(x + rng.laplace(0.0, scale, shape))
        return noisy.reshape(size, -1) if noisy.ndim > 1 else noisy

    return system


def _pair(first: Any, second: Any, relation: Neighbouring = A) -> NeighbouringPair:
    return NeighbouringPair(first=first, second=second, relation=relation)


def laplace_scale_too_small() -> BrokenCase:
    return BrokenCase(AuditCase(_laplace(1 / 1.5), _pair(0.0, 1.0), 1.0, 0.0), 1.5,
                      "Laplace noise of scale 1/1.5 for a claimed epsilon of 1")


def sensitivity_declared_too_small() -> BrokenCase:
    # a sum of values in [0, 2] declared to have sensitivity 1: scale 1, shift 2
    return BrokenCase(AuditCase(_laplace(1.0), _pair(0.0, 2.0), 1.0, 0.0), 2.0,
                      "sum of values in [0, 2] with declared sensitivity 1")


def unclipped_mean() -> BrokenCase:
    n = 100  # mean of n records "in [0, 1]" (sensitivity 1/n) without clipping; one is 3

    def system(data: Any, rng: np.random.Generator, size: int) -> Any:
        return _snap(np.mean(data) + rng.laplace(0.0, 1.0 / n, size))

    other = np.zeros(n)
    other[0] = 3.0
    return BrokenCase(AuditCase(system, _pair(np.zeros(n), other, R), 1.0, 0.0), 3.0,
                      "mean with bound 1 declared but never enforced (a record is 3)")


def gaussian_delta_misscaled() -> BrokenCase:
    from privkit.mechanisms import analytic_gaussian_sigma

    # calibrated for delta = 1e-2
    sigma = analytic_gaussian_sigma(epsilon=1.0, delta=1e-2, sensitivity=1.0)

    def system(value: Any, rng: np.random.Generator, size: int) -> Any:
        return _snap(value + rng.normal(0.0, sigma, size))

    true = GDP(mu=1.0 / sigma).epsilon_at(AUDIT_DELTA)
    return BrokenCase(AuditCase(system, _pair(0.0, 1.0), 1.0, AUDIT_DELTA), true,
                      "Gaussian calibrated for delta 1e-2, claimed at delta 1e-5")


def gaussian_sensitivity_too_small() -> BrokenCase:
    from privkit.mechanisms import analytic_gaussian_sigma

    # calibrated for sensitivity 1
    sigma = analytic_gaussian_sigma(epsilon=1.0, delta=AUDIT_DELTA, sensitivity=1.0)

    def system(value: Any, rng: np.random.Generator, size: int) -> Any:
        return _snap(value + rng.normal(0.0, sigma, size))

    true = GDP(mu=1.5 / sigma).epsilon_at(AUDIT_DELTA)
    return BrokenCase(AuditCase(system, _pair(0.0, 1.5), 1.0, AUDIT_DELTA), true,
                      "Gaussian calibrated for sensitivity 1, true sensitivity 1.5")


def sparse_vector_without_halting() -> BrokenCase:
    from scipy import integrate, stats

    from privkit.mechanisms import SparseVector

    svt = SparseVector.for_epsilon(1.0, sensitivity=1.0, relation=A, max_positives=1)
    half = 5  # 10 queries, all answered: 5 move up by 1 on D', 5 move down

    def system(value: Any, rng: np.random.Generator, size: int) -> Any:
        rho = rng.laplace(0.0, svt.threshold_scale, (size, 1))
        nu = rng.laplace(0.0, svt.query_scale, (size, 2 * half))
        above = value + nu >= rho
        # the counts of ABOVE in each half are sufficient (queries are exchangeable there)
        return above[:, :half].sum(axis=1) * (half + 1) + above[:, half:].sum(axis=1)

    def law(up: float, down: float, a: int, b: int) -> float:
        def integrand(r: float) -> float:
            s1 = stats.laplace.sf(r - up, scale=svt.query_scale)
            s2 = stats.laplace.sf(r - down, scale=svt.query_scale)
            return float(stats.laplace.pdf(r, scale=svt.threshold_scale)
                         * s1**a * (1 - s1) ** (half - a) * s2**b * (1 - s2) ** (half - b))

        return float(integrate.quad(integrand, -120, 120, limit=400, points=[-1.0, 0.0, 1.0])[0])

    true = float(max(abs(math.log(law(1.0, -1.0, a, b) / law(0.0, 0.0, a, b)))
                     for a in range(half + 1) for b in range(half + 1)))
    second = np.concatenate([np.ones(half), -np.ones(half)])
    return BrokenCase(AuditCase(system, _pair(np.zeros(2 * half), second), 1.0, 0.0), true,
                      "sparse vector answering all 10 queries (no halting)")


def exponential_without_factor_two() -> BrokenCase:
    k = 8  # non-monotone utilities with scale Δ/eps instead of 2Δ/eps

    def system(u: Any, rng: np.random.Generator, size: int) -> Any:
        return np.argmax(np.asarray(u) + rng.gumbel(size=(size, k)), axis=1)

    other = -np.ones(k)
    other[0] = 1.0
    p = np.exp(other - np.max(other))
    p /= p.sum()
    true = float(np.max(np.abs(np.log(p * k))))
    return BrokenCase(AuditCase(system, _pair(np.zeros(k), other, R), 1.0, 0.0), true,
                      "exponential mechanism exp(eps u / Δ) for non-monotone utilities")


def report_noisy_max_without_factor_two() -> BrokenCase:
    def system(u: Any, rng: np.random.Generator, size: int) -> Any:
        return np.argmax(np.asarray(u) + rng.laplace(0.0, 1.0, (size, 2)), axis=1)

    # P(L1 - L0 > g) = (1/2 + g/4) e^-g for unit Laplace noise; gap 2 on D'
    low = 0.5 * math.exp(-2.0) + 0.5 * math.exp(-2.0)
    true = max(abs(math.log(low / 0.5)), abs(math.log((1 - low) / 0.5)))
    return BrokenCase(AuditCase(system, _pair(np.zeros(2), np.array([1.0, -1.0]), R), 1.0,
                                0.0), true, "report noisy max with Lap(Δ/eps), non-monotone")


def overlapping_parallel_parts() -> BrokenCase:
    return BrokenCase(AuditCase(_laplace(1.0, draws=2), _pair(0.0, 1.0), 1.0, 0.0), 2.0,
                      "'parallel' parts that share a record: both counts move")


def randomized_response_wrong_categories() -> BrokenCase:
    k, p = 4, math.e / (1 + math.e)  # binary calibration used for 4 categories

    def system(value: Any, rng: np.random.Generator, size: int) -> Any:
        keep = rng.random(size) < p
        return np.where(keep, value, (value + rng.integers(1, k, size)) % k)

    return BrokenCase(AuditCase(system, _pair(0, 1, R), 1.0, 0.0),
                      math.log(p * (k - 1) / (1 - p)),
                      "randomized response with the binary keep probability for k = 4")


def laplace_with_l2_sensitivity() -> BrokenCase:
    d = 4  # each coordinate moves by 1: L1 4, L2 2; scale set from the L2 value
    return BrokenCase(AuditCase(_laplace(2.0), _pair(np.zeros(d), np.ones(d)), 1.0, 0.0),
                      2.0, "Laplace calibrated with the L2 sensitivity of a 4-vector")


def histogram_replace_one_undercounted() -> BrokenCase:
    return BrokenCase(AuditCase(_laplace(1.0), _pair(np.array([1.0, 0.0]),
                                                        np.array([0.0, 1.0]), R), 1.0, 0.0),
                      2.0, "histogram under REPLACE_ONE with add/remove sensitivity 1")


def release_repeated_unaccounted() -> BrokenCase:
    return BrokenCase(AuditCase(_laplace(1.0, draws=2), _pair(0.0, 1.0), 1.0, 0.0), 2.0,
                      "the same eps = 1 release made twice, accounted once")


BROKEN: dict[str, Callable[[], BrokenCase]] = {
    f.__name__: f for f in (
        laplace_scale_too_small, sensitivity_declared_too_small, unclipped_mean,
        gaussian_delta_misscaled, gaussian_sensitivity_too_small,
        sparse_vector_without_halting, exponential_without_factor_two,
        report_noisy_max_without_factor_two, overlapping_parallel_parts,
        randomized_response_wrong_categories, laplace_with_l2_sensitivity,
        histogram_replace_one_undercounted, release_repeated_unaccounted,
    )
}
