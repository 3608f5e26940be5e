"""Distinguishers: choose a rejection set S from one split of the draws.

Each distinguisher looks at draws of M(D) and M(D') (the *selection* split) and returns a
:class:`Rule`: a rejection set and an orientation (which side is expected to land in S
more often). The attack then measures the rule on fresh draws, so the choice costs no
statistical validity (Jagielski, Ullman, Oprea 2020, Section 4).

* :class:`Threshold` for scalar outputs: ``S = {x > t}`` or ``{x < t}``;
* :class:`Bands` for scalar outputs: ``S = {a < x <= b}``;
* :class:`~privkit.audits.levels.LevelSets` for scalar outputs: a superlevel set of the
  binned likelihood ratio (tails, intervals, two-sided events);
* :class:`Histogram` for discrete outputs: ``S`` = the values whose empirical likelihood
  ratio is at least r;
* :class:`~privkit.audits.vectors.Projection` and :class:`~privkit.audits.vectors.Patterns`
  for vector outputs;
* :class:`~privkit.audits.floating.Reachability` and
  :class:`~privkit.audits.floating.Granularity` for floating-point outputs (Mironov 2012);
* :class:`~privkit.audits.events.Events` around any of them: NaN, infinities and missing
  outputs are events;
* :class:`Best` of several, judged on held-out selection draws.

Each picks, among its candidate sets, the one with the largest Clopper-Pearson lower
bound on the selection split.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit.audits.lower_bounds import clopper_pearson, epsilon_lower_bound

__all__ = ["MISSING", "Bands", "Best", "Distinguisher", "Histogram", "Rule", "Threshold",
           "choose", "is_missing"]

#: A NaN with its own payload: the output of a draw that returned ``None`` (missing).
MISSING = float(np.frombuffer(np.uint64(0x7FF8_0000_DEAD_BEEF).tobytes(), dtype=np.float64)[0])
_MISSING_BITS = np.uint64(0x7FF8_0000_DEAD_BEEF)


def is_missing(x: Any) -> NDArray[np.bool_]:
    """Which entries of an array are :data:`MISSING` (a draw that returned None)."""
    a = np.ascontiguousarray(x)
    if a.dtype != np.float64:
        return np.zeros(a.shape, dtype=bool)
    result: NDArray[np.bool_] = a.view(np.uint64) == _MISSING_BITS
    return result


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
    #: The draws per side that will measure the rule (:meth:`for_trials`); None: rank
    #: candidate sets by the selection split's own bound.
    trials: int | None = None

    def __init__(self, trials: int | None = None) -> None:
        self.trials = trials

    @abc.abstractmethod
    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        """The rule with the best lower bound on these draws."""

    def bind(self, pair: Any) -> Distinguisher:
        """This distinguisher told the pair under attack (:func:`~privkit.audits.audit`
        calls it); only distinguishers that use the inputs themselves change."""
        return self

    def for_trials(self, trials: int) -> Distinguisher:
        """This distinguisher told how many draws per side will measure its rule
        (:func:`~privkit.audits.audit` calls it). Those that rank candidate sets by their
        bound rank them by the bound *projected to that many draws* (selection counts
        scaled up, the unfavoured side's with one added: conservative), so that a small
        selection split picks the set that is best for a large measurement (at 10^8
        draws the best event of a Gaussian at delta 1e-5 is much further in the tail than
        at 10^6). Only the choice changes, never the bound's validity. Returns a copy (of
        the same class) with :attr:`trials` set; wrappers tell their inner ones too."""
        return _told(self, trials)


_D = TypeVar("_D", bound=Distinguisher)


def _told(distinguisher: _D, trials: int) -> _D:
    """A copy (of the same class, so subclasses keep their own ``fit``) with ``trials``."""
    told = copy.copy(distinguisher)
    told.trials = trials
    return told


#: One-sided level (about 1.5 standard deviations) at which selection frequencies are
#: moved against a set before it is ranked for a larger measurement.
_SHRINK_ALPHA = 0.07


def _ranked_bounds(hits: Any, n: int, other: Any, n_other: int, *, delta: float,
                   confidence: float, trials: int | None) -> NDArray[np.float64]:
    """Bounds by which candidate sets are ranked: the Clopper-Pearson bound on these
    counts, or (``trials`` given and larger than the split) the bound that the same
    frequencies would give at ``trials`` draws per side, each frequency first moved
    against the set to its one-sided Clopper-Pearson bound at level ``_SHRINK_ALPHA``
    (a set seen rarely, or never on the other side, is not taken for a perfect one)."""
    if trials is None or trials <= max(n, n_other):
        return epsilon_lower_bound(hits, n, other, n_other, delta=delta,
                                   confidence=confidence)
    # each selection frequency first moved against the set to its one-sided Clopper-Pearson
    # bound at _SHRINK_ALPHA: the far tail's few selection draws are noisy, and the best of
    # many candidates would otherwise be a lucky one (a set seen 0-2 times on the other
    # side looks perfect)
    low, _ = clopper_pearson(hits, n, _SHRINK_ALPHA)
    _, high = clopper_pearson(other, n_other, _SHRINK_ALPHA)
    h = np.round(np.asarray(low) * trials)
    o = np.minimum(np.round(np.asarray(high) * trials), trials)
    return epsilon_lower_bound(h, trials, o, trials, delta=delta, confidence=confidence)


class Threshold(Distinguisher):
    """``S = {x > t}`` or ``{x < t}`` on scalar outputs, over ``candidates`` quantiles."""

    name = "threshold"

    def __init__(self, candidates: int = 400, trials: int | None = None) -> None:
        super().__init__(trials)
        self.candidates = candidates

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        a = np.sort(np.asarray(first, dtype=float).ravel())
        b = np.sort(np.asarray(second, dtype=float).ravel())
        pooled = np.concatenate([a, b])
        # evenly spaced quantiles, and geometrically spaced ones in both tails down to 16
        # pooled draws: at small delta the best set lies beyond the 1/candidates quantile
        # (probability ~1e-4 for a Gaussian at delta 1e-5)
        deepest = min(16.0 / max(pooled.size, 1), 1.0 / self.candidates)
        tail = np.geomspace(deepest, 1.0 / self.candidates, 48)
        levels = np.concatenate([np.linspace(0.0, 1.0, self.candidates), tail, 1.0 - tail])
        cuts = np.unique(np.quantile(pooled, np.clip(levels, 0.0, 1.0)))
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
            bounds = _ranked_bounds(hits, n, other, n_other, delta=delta,
                                    confidence=confidence, trials=self.trials)
            i = _best(bounds)
            if bounds[i] > best[0]:
                best = (float(bounds[i]), (float(cuts[i]), text, swapped, kind))
        assert best[1] is not None
        t, text, swapped, kind = best[1]

        def contains(x: NDArray[Any], t: float = t, kind: str = kind) -> NDArray[np.bool_]:
            values = np.asarray(x, dtype=float)
            return values > t if kind == "gt" else values <= t

        return Rule(contains=contains, description=text.format(t=t), swapped=swapped)


class Bands(Distinguisher):
    """``S = {a < x <= b}`` on scalar outputs: every band between two of ``cuts`` pooled
    quantiles of the selection draws (both orientations). It expresses events a one-sided
    threshold cannot, e.g. the centre of a law that the other input spreads out."""

    name = "bands"

    def __init__(self, cuts: int = 64) -> None:
        super().__init__()
        self.cuts = cuts

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        a = np.sort(np.asarray(first, dtype=float).ravel())
        b = np.sort(np.asarray(second, dtype=float).ravel())
        edges = np.unique(np.quantile(np.concatenate([a, b]),
                                      np.linspace(0.0, 1.0, self.cuts)))
        edges = np.concatenate([[-np.inf], edges, [np.inf]])
        below_a = np.searchsorted(a, edges, side="right")
        below_b = np.searchsorted(b, edges, side="right")
        lo, hi = np.triu_indices(edges.size, k=1)
        in_a, in_b = below_a[hi] - below_a[lo], below_b[hi] - below_b[lo]
        best: tuple[float, int, bool] = (-1.0, 0, False)
        for swapped, (fav, n_f, oth, n_o) in ((False, (in_a, a.size, in_b, b.size)),
                                               (True, (in_b, b.size, in_a, a.size))):
            bounds = epsilon_lower_bound(fav, n_f, oth, n_o, delta=delta,
                                         confidence=confidence)
            k = _best(bounds)
            if bounds[k] > best[0]:
                best = (float(bounds[k]), k, swapped)
        low, high = float(edges[lo[best[1]]]), float(edges[hi[best[1]]])

        def contains(x: NDArray[Any]) -> NDArray[np.bool_]:
            values = np.asarray(x, dtype=float)
            result: NDArray[np.bool_] = (values > low) & (values <= high)
            return result

        return Rule(contains=contains, description=f"{low:.6g} < x <= {high:.6g}",
                    swapped=best[2])


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
            bounds = _ranked_bounds(hits, n_f, hits_other, n_o, delta=delta,
                                    confidence=confidence, trials=self.trials)
            i = _best(bounds)
            if bounds[i] > best[0]:
                best = (float(bounds[i]), (values[order[: i + 1]], swapped))
        assert best[1] is not None
        chosen, swapped = best[1]

        def contains(x: NDArray[Any], chosen: NDArray[Any] = chosen) -> NDArray[np.bool_]:
            return np.isin(np.asarray(x), chosen)

        shown = ", ".join(str(v) for v in chosen[:6]) + (", ..." if chosen.size > 6 else "")
        return Rule(contains=contains, description=f"x in {{{shown}}}", swapped=swapped)


class Best(Distinguisher):
    """Fit each candidate on 3/4 of the selection draws, score it on the held-out 1/4,
    and refit the best on all the selection draws: guards against a flexible
    distinguisher (a histogram over many rare values) overfitting the selection split."""

    def __init__(self, *candidates: Distinguisher, trials: int | None = None) -> None:
        super().__init__(trials)
        self.candidates = candidates
        self.name = "best of " + ", ".join(c.name for c in candidates)

    def bind(self, pair: Any) -> Distinguisher:
        return Best(*(c.bind(pair) for c in self.candidates), trials=self.trials)

    def for_trials(self, trials: int) -> Distinguisher:
        told = _told(self, trials)
        told.candidates = tuple(c.for_trials(trials) for c in self.candidates)
        return told

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        cut_a, cut_b = (3 * len(first)) // 4, (3 * len(second)) // 4
        best: tuple[float, Distinguisher | None] = (-1.0, None)
        for candidate in self.candidates:
            rule = candidate.fit(first[:cut_a], second[:cut_b], delta=delta,
                                 confidence=confidence)
            a = int(np.sum(rule.contains(first[cut_a:])))
            b = int(np.sum(rule.contains(second[cut_b:])))
            hits, other = (b, a) if rule.swapped else (a, b)
            n_h, n_o = ((len(second) - cut_b, len(first) - cut_a) if rule.swapped
                        else (len(first) - cut_a, len(second) - cut_b))
            score = float(_ranked_bounds(hits, n_h, other, n_o, delta=delta,
                                         confidence=confidence, trials=self.trials))
            if score > best[0]:
                best = (score, candidate)
        assert best[1] is not None
        # the winner is refitted on every selection draw (still none of the measured ones)
        return best[1].fit(first, second, delta=delta, confidence=confidence)


def _rows(mask: Any, n: int) -> NDArray[np.bool_]:
    """A rule's answer as one bool per draw (elementwise rules on rows of one value)."""
    m: NDArray[np.bool_] = np.asarray(mask, dtype=np.bool_)
    if m.ndim > 1:
        m = np.asarray(np.all(m.reshape(n, -1), axis=1), dtype=np.bool_)
    return m


def choose(outputs: NDArray[Any]) -> Distinguisher:
    """The default distinguisher for these outputs (one row per draw): the best on
    held-out selection draws (:class:`Best`) of

    * vectors: a projection and answer patterns with bands;
    * integers and booleans: a threshold and a histogram;
    * real numbers: a threshold (deep in the tails, for (epsilon, delta) audits of
      Gaussians) and the level sets of the binned likelihood ratio (intervals and
      two-sided events, :class:`~privkit.audits.levels.LevelSets`);
    * floating-point outputs, also: the reachability test of their low-order bits, which
      needs no query answer when the pair holds datasets
      (:class:`~privkit.audits.floating.Reachability` falls back on
      :class:`~privkit.audits.floating.Granularity`).
    """
    from privkit.audits.floating import Reachability
    from privkit.audits.levels import LevelSets
    from privkit.audits.vectors import Patterns, Projection

    x = np.asarray(outputs)
    if x.ndim > 1 and x[0].size > 1:
        if x.dtype.kind == "f":
            return Best(Projection(), Patterns(), Reachability())
        return Best(Projection(), Patterns())
    flat = x.reshape(len(x))
    if np.issubdtype(flat.dtype, np.integer) or np.issubdtype(flat.dtype, np.bool_):
        return Best(Threshold(), Histogram())
    return Best(Threshold(), LevelSets(), Reachability())
