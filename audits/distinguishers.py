"""Distinguishers: choose a rejection set S from one split of the draws.

Each distinguisher looks at draws of M(D) and M(D') (the *selection* split) and returns a
:class:`Rule`: a rejection set and an orientation (which side is expected to land in S
more often). The attack then measures the rule on fresh draws, so the choice costs no
statistical validity (Jagielski, Ullman, Oprea 2020, Section 4).

* :class:`Threshold` for scalar outputs: ``S = {x > t}`` or ``{x < t}``;
* :class:`Histogram` for discrete outputs: ``S`` = the values whose empirical likelihood
  ratio is at least r;
* :class:`Projection` for vector outputs: a learned linear statistic (Fisher's
  discriminant on the selection split, in the spirit of DP-Sniper, Bichsel et al. 2021),
  then a threshold on it;
* :class:`Best` of several, judged on held-out selection draws.

Each picks, among its candidate sets, the one with the largest Clopper-Pearson lower
bound on the selection split.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit.audits.lower_bounds import epsilon_lower_bound

__all__ = ["Best", "Distinguisher", "Histogram", "Projection", "Rule", "Threshold", "choose"]


@attrs.frozen
class Rule:
    """A rejection set ``contains(outputs) -> bool array`` and its orientation.

    ``swapped`` means S is expected to hold M(D') more often than M(D): the bound is then
    computed with the roles of D and D' exchanged (neighbouring is symmetric).
    """

    contains: Callable[[NDArray[Any]], NDArray[np.bool_]] = attrs.field(eq=False)
    description: str
    swapped: bool = False


def _best(bounds: NDArray[np.float64]) -> int:
    return int(np.argmax(bounds))


class Distinguisher(abc.ABC):
    """Chooses a :class:`Rule` from selection draws of M(D) and M(D')."""

    name: str = "distinguisher"

    @abc.abstractmethod
    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        """The rule with the best lower bound on these draws."""


class Threshold(Distinguisher):
    """``S = {x > t}`` or ``{x < t}`` on scalar outputs, over ``candidates`` quantiles."""

    name = "threshold"

    def __init__(self, candidates: int = 400) -> None:
        self.candidates = candidates

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        a = np.sort(np.asarray(first, dtype=float).ravel())
        b = np.sort(np.asarray(second, dtype=float).ravel())
        pooled = np.concatenate([a, b])
        cuts = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, self.candidates)))
        n_a, n_b = a.size, b.size
        above_a = n_a - np.searchsorted(a, cuts, side="right")
        above_b = n_b - np.searchsorted(b, cuts, side="right")
        below_a, below_b = n_a - above_a, n_b - above_b
        options = [  # (hits of the favoured side, hits of the other side, description)
            (above_a, n_a, above_b, n_b, "x > {t:.6g}", False, "gt"),
            (below_a, n_a, below_b, n_b, "x <= {t:.6g}", False, "le"),
            (above_b, n_b, above_a, n_a, "x > {t:.6g}", True, "gt"),
            (below_b, n_b, below_a, n_a, "x <= {t:.6g}", True, "le"),
        ]
        best: tuple[float, tuple[float, str, bool, str] | None] = (-1.0, None)
        for hits, n, other, n_other, text, swapped, kind in options:
            bounds = epsilon_lower_bound(hits, n, other, n_other, delta=delta,
                                         confidence=confidence)
            i = _best(bounds)
            if bounds[i] > best[0]:
                best = (float(bounds[i]), (float(cuts[i]), text, swapped, kind))
        assert best[1] is not None
        t, text, swapped, kind = best[1]

        def contains(x: NDArray[Any], t: float = t, kind: str = kind) -> NDArray[np.bool_]:
            values = np.asarray(x, dtype=float)
            return values > t if kind == "gt" else values <= t

        return Rule(contains=contains, description=text.format(t=t), swapped=swapped)


class Histogram(Distinguisher):
    """S = the output values whose likelihood ratio (with add-one smoothing) is at least
    a cut chosen on the selection split; for outputs with few distinct values."""

    name = "histogram"

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        a = np.asarray(first).ravel()
        b = np.asarray(second).ravel()
        values, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
        count_a = np.bincount(inverse[: a.size], minlength=values.size)
        count_b = np.bincount(inverse[a.size:], minlength=values.size)
        best: tuple[float, tuple[NDArray[Any], bool] | None] = (-1.0, None)
        for favoured, other, n_f, n_o, swapped in ((count_a, count_b, a.size, b.size, False),
                                                   (count_b, count_a, b.size, a.size, True)):
            ratio = (favoured + 1.0) / (n_f + 1.0) / ((other + 1.0) / (n_o + 1.0))
            order = np.argsort(-ratio)
            hits = np.cumsum(favoured[order])
            hits_other = np.cumsum(other[order])
            bounds = epsilon_lower_bound(hits, n_f, hits_other, n_o, delta=delta,
                                         confidence=confidence)
            i = _best(bounds)
            if bounds[i] > best[0]:
                best = (float(bounds[i]), (values[order[: i + 1]], swapped))
        assert best[1] is not None
        chosen, swapped = best[1]

        def contains(x: NDArray[Any], chosen: NDArray[Any] = chosen) -> NDArray[np.bool_]:
            return np.isin(np.asarray(x), chosen)

        shown = ", ".join(str(v) for v in chosen[:6]) + (", ..." if chosen.size > 6 else "")
        return Rule(contains=contains, description=f"x in {{{shown}}}", swapped=swapped)


class Projection(Distinguisher):
    """Vector outputs: project on Fisher's discriminant direction learned on the selection
    split, then choose a threshold on the projection."""

    name = "projection"

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        a = np.asarray(first, dtype=float).reshape(len(first), -1)
        b = np.asarray(second, dtype=float).reshape(len(second), -1)
        covariance = np.cov(np.concatenate([a - a.mean(0), b - b.mean(0)]).T)
        covariance = np.atleast_2d(covariance) + 1e-12 * np.eye(a.shape[1])
        w = np.linalg.solve(covariance, b.mean(0) - a.mean(0))
        inner = Threshold().fit(a @ w, b @ w, delta=delta, confidence=confidence)

        def contains(x: NDArray[Any], w: NDArray[np.float64] = w) -> NDArray[np.bool_]:
            return inner.contains(np.asarray(x, dtype=float).reshape(len(x), -1) @ w)

        return Rule(contains=contains, description=f"w.x with {inner.description}",
                    swapped=inner.swapped)


class Best(Distinguisher):
    """Fit each candidate on 3/4 of the selection draws, score it on the held-out 1/4, and
    keep the best rule: guards against a flexible distinguisher (a histogram over many
    rare values) overfitting the selection split."""

    def __init__(self, *candidates: Distinguisher) -> None:
        self.candidates = candidates
        self.name = "best of " + ", ".join(c.name for c in candidates)

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        cut_a, cut_b = (3 * len(first)) // 4, (3 * len(second)) // 4
        best: tuple[float, Rule | None] = (-1.0, None)
        for candidate in self.candidates:
            rule = candidate.fit(first[:cut_a], second[:cut_b], delta=delta,
                                 confidence=confidence)
            a = int(np.sum(rule.contains(first[cut_a:])))
            b = int(np.sum(rule.contains(second[cut_b:])))
            hits, other = (b, a) if rule.swapped else (a, b)
            n_h, n_o = ((len(second) - cut_b, len(first) - cut_a) if rule.swapped
                        else (len(first) - cut_a, len(second) - cut_b))
            score = float(epsilon_lower_bound(hits, n_h, other, n_o, delta=delta,
                                              confidence=confidence))
            if score > best[0]:
                best = (score, rule)
        assert best[1] is not None
        return best[1]


def choose(outputs: NDArray[Any]) -> Distinguisher:
    """The default distinguisher for these outputs (one row per draw): a projection for
    vectors, a threshold for real numbers, and the better (on held-out draws) of a
    threshold and a histogram for integers."""
    x = np.asarray(outputs)
    if x.ndim > 1 and x[0].size > 1:
        return Projection()
    flat = x.reshape(len(x))
    if np.issubdtype(flat.dtype, np.integer) or np.issubdtype(flat.dtype, np.bool_):
        return Best(Threshold(), Histogram())
    return Threshold()
