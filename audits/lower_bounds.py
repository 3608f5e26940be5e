"""Statistically valid lower bounds on epsilon from attack outcomes.

An (epsilon, delta)-DP mechanism satisfies, for every rejection set S and neighbours
D, D', ``P[M(D) in S] <= e^eps P[M(D') in S] + delta``. Given how often the outputs fell
in S on fresh draws from each side, exact Clopper-Pearson intervals turn the two
frequencies into a lower bound on epsilon that holds with the stated confidence
(Jagielski, Ullman, Oprea 2020, "Auditing differentially private machine learning: how
private is private SGD?", NeurIPS, Algorithm 2).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check

__all__ = ["clopper_pearson", "epsilon_lower_bound", "gdp_mu_lower_bound"]


def clopper_pearson(successes: ArrayLike, trials: int, alpha: float
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One-sided exact bounds: ``P[p >= lower] >= 1 - alpha`` and ``P[p <= upper] >= 1 - alpha``.

    Notes
    -----
    Clopper, Pearson 1934: ``lower = Beta(alpha; k, n - k + 1)`` and
    ``upper = Beta(1 - alpha; k + 1, n - k)`` quantiles, with 0 and 1 at the edges.
    """
    from scipy import stats

    owner = "clopper_pearson"
    n = float(check.positive_int("trials", trials, owner))
    a = check.open_unit("alpha", alpha, owner)
    k = _counts("successes", successes, int(n), owner)
    alpha = a
    with np.errstate(all="ignore"):
        lower = np.where(k > 0, stats.beta.ppf(alpha, k, n - k + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, n - k), 1.0)
    return lower, upper


def _counts(name: str, value: ArrayLike, trials: int, owner: str) -> NDArray[np.float64]:
    """Success counts as floats; each an integer in [0, trials]."""
    try:
        k = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise check.fail(name, value, "integer counts", owner) from exc
    if not np.all(np.isfinite(k)) or np.any(k != np.round(k)) or np.any(k < 0) or np.any(
            k > trials):
        raise check.fail(name, value, f"integer counts in [0, {trials}] (the number of "
                         "trials)", owner)
    return k


def epsilon_lower_bound(hits: ArrayLike, trials: int, hits_other: ArrayLike,
                        trials_other: int, *, delta: float, confidence: float,
                        sets: int = 1) -> NDArray[np.float64]:
    """Lower bound on epsilon from ``hits`` of ``trials`` draws of M(D) in S and
    ``hits_other`` of ``trials_other`` draws of M(D') in S.

    With confidence ``confidence`` overall: each of the two proportions gets a one-sided
    Clopper-Pearson bound at level ``alpha / (2 sets)`` (Bonferroni over both proportions
    and over the ``sets`` rejection sets evaluated on these draws), and

        eps >= log((P_lower[M(D) in S] - delta) / P_upper[M(D') in S])

    (0 when the numerator is not positive). Vectorised over arrays of hit counts.
    """
    conf = check.open_unit("confidence", confidence, "epsilon_lower_bound")
    d = check.delta("delta", delta, "epsilon_lower_bound")
    m = check.positive_int("sets", sets, "epsilon_lower_bound")
    _counts("hits", hits, check.positive_int("trials", trials, "epsilon_lower_bound"),
            "epsilon_lower_bound")
    _counts("hits_other", hits_other, check.positive_int(
        "trials_other", trials_other, "epsilon_lower_bound"), "epsilon_lower_bound")
    alpha = (1.0 - conf) / (2.0 * m)
    p_low, _ = clopper_pearson(hits, trials, alpha)
    _, q_high = clopper_pearson(hits_other, trials_other, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(p_low > d, np.log(np.maximum(p_low - d, 1e-300) / q_high), 0.0)
    result: NDArray[np.float64] = np.maximum(bound, 0.0)
    return result


def gdp_mu_lower_bound(hits: int, trials: int, hits_other: int, trials_other: int, *,
                       confidence: float) -> float:
    """Lower bound on mu for a mechanism *assumed* to be mu-GDP (Gaussian-like).

    Notes
    -----
    Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini, Terzis 2023, "Tight auditing
    of differentially private machine learning" (USENIX Security), Section 4: a test with
    false-positive rate FPR and false-negative rate FNR against a mu-GDP mechanism obeys
    ``FNR >= Phi(Phi^-1(1 - FPR) - mu)``, so
    ``mu >= Phi^-1(1 - FPR) - Phi^-1(FNR)``; the rates are replaced by their
    Clopper-Pearson upper bounds (Bonferroni over the two). The result bounds epsilon
    only under the assumption that the mechanism's trade-off curve is Gaussian; for
    Gaussian mechanisms (DP-SGD) it is much tighter than the (epsilon, delta) bound.
    :func:`~privkit.audits.audit` evaluates it on the rejection set chosen for the
    (epsilon, delta) bound, which is not the set that maximises it.
    """
    from scipy import stats

    owner = "gdp_mu_lower_bound"
    conf = check.open_unit("confidence", confidence, owner)
    _counts("hits", hits, check.positive_int("trials", trials, owner), owner)
    _counts("hits_other", hits_other, check.positive_int("trials_other", trials_other, owner),
            owner)
    alpha = (1.0 - conf) / 2.0
    p_low, _ = clopper_pearson(hits, trials, alpha)
    _, fpr_high = clopper_pearson(hits_other, trials_other, alpha)
    fnr_high = 1.0 - float(p_low)
    if fnr_high <= 0.0 or float(fpr_high) >= 1.0:
        return 0.0
    mu = float(stats.norm.isf(float(fpr_high)) - stats.norm.ppf(fnr_high))
    return max(mu, 0.0)
