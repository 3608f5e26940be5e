"""Objective perturbation on one feature, correct and with two classic mistakes, black box.

Chaudhuri, Monteleoni, Sarwate 2011, "Differentially private empirical risk minimization"
(JMLR), Algorithm 2, with the Huber loss of smoothing ``h`` (curvature ``c = 1 / (2h)``):
spend ``eps' = eps - 2 log(1 + c / (n lambda))`` on the noise if positive, otherwise add
``Delta = c / (n (e^(eps/4) - 1)) - lambda`` to the regulariser and use ``eps' = eps / 2``;
the noise ``b`` has density proportional to ``exp(-eps' |b| / 2)``. On one feature, the
released ``w`` is a closed-form function of ``b``
(:func:`~privkit.algorithms.linear.audit_cases.objective_minimiser`), so each draw costs a few array
operations and the pair's exact epsilon is the largest privacy loss of ``w`` by a change
of variables: ``(|b'(w)| - |b(w)|) eps' / 2 + log((n Lambda + huber''(w')) / (n Lambda +
huber''(w)))`` (Chaudhuri et al., proof of Theorem 9), computed on a fine grid of ``w``.

The variants, each claiming ``epsilon``:

* ``"correct"``: the calibration above;
* ``"adjustment"``: ``Delta`` computed with ``e^eps`` in place of ``e^(eps/4)`` (the
  regulariser is too small, so the Jacobian term is larger than the claim allows);
* ``"curvature"``: calibrated for curvature ``1/(8h)`` (a quarter of the loss's).

The pair is :func:`~privkit.algorithms.linear.audit_cases.margin_pair`: one row at the norm bound
whose label flips. The audit sees only the released ``w`` (rounded to a 2^-30 grid, so
that floating-point artefacts of the closed form do not count as leaks).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from privkit.audits.pairs import NeighbouringPair

__all__ = ["VARIANTS", "ObjectiveVariant", "objective_variant"]

VARIANTS = ("correct", "adjustment", "curvature")
#: The one-feature problem: n rows, regulariser lambda, Huber smoothing h (c = 1 / (2h)).
N, LAMBDA, H = 10, 0.01, 0.5


@attrs.frozen
class ObjectiveVariant:
    """A black-box system releasing ``w``, its pair, its claim and its exact epsilon."""

    system: Callable[..., Any] = attrs.field(eq=False)
    pair: NeighbouringPair
    claim: float
    true_epsilon: float
    variant: str


def _calibration(eps: float, c: float, adjust_exponent: float) -> tuple[float, float]:
    """(noise scale 2 / eps', total regulariser Lambda) of Algorithm 2 for curvature c;
    ``adjust_exponent`` is the exponent's divisor in Delta (4 in the paper)."""
    x = c / (N * LAMBDA)
    eps_prime = eps - 2.0 * math.log1p(x)
    extra = 0.0
    if eps_prime <= 0.0:
        extra = max(c / (N * math.expm1(eps / adjust_exponent)) - LAMBDA, 0.0)
        eps_prime = eps / 2.0
    return 2.0 / eps_prime, LAMBDA + extra


def _privacy_loss(w: Any, scale: float, total: float) -> Any:
    from privkit.algorithms.linear.audit_cases import huber_derivative, huber_second

    a = N * total
    b_first = -a * w - huber_derivative(w, H)           # label +1
    b_second = -a * w + huber_derivative(-w, H)         # label -1
    jac = np.log((a + huber_second(w, H)) / (a + huber_second(-w, H)))
    return (np.abs(b_second) - np.abs(b_first)) / scale + jac


def objective_variant(variant: str, *, epsilon: float = 1.0) -> ObjectiveVariant:
    """The ``variant`` (one of :data:`VARIANTS`) claiming ``epsilon``, with its exact
    epsilon on the margin pair."""
    from privkit.algorithms.linear.audit_cases import margin_pair, objective_minimiser

    if variant not in VARIANTS:
        raise ValueError(f"`variant` must be one of {VARIANTS}; got {variant!r}")
    c = 1.0 / (2.0 * H)
    if variant == "curvature":
        c /= 4.0
    scale, total = _calibration(epsilon, c, 1.0 if variant == "adjustment" else 4.0)

    def system(rows: Any, rng: np.random.Generator, size: int) -> Any:
        b = rng.laplace(0.0, scale, size)
        w = objective_minimiser(b, float(rows[0, 1]), N, total, H)
        return np.round(np.asarray(w) * 2.0**30) / 2.0**30

    grid = np.linspace(-40.0, 40.0, 800_001)
    true = float(np.max(np.abs(_privacy_loss(grid, scale, total))))
    return ObjectiveVariant(system=system, pair=margin_pair(N), claim=epsilon,
                            true_epsilon=true, variant=variant)
