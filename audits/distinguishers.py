"""Distinguishers: choose a rejection set S from one split of the draws.

Each distinguisher looks at draws of M(D) and M(D') (the *selection* split) and returns a
:class:`Rule`: a rejection set and an orientation (which side is expected to land in S
more often). The attack then measures the rule on fresh draws, so the choice costs no
statistical validity (Jagielski, Ullman, Oprea 2020, Section 4).

* :class:`Threshold` for scalar outputs: ``S = {x > t}`` or ``{x < t}``;
* :class:`Bands` for scalar outputs: ``S = {a < x <= b}``;
* :class:`Histogram` for discrete outputs: ``S`` = the values whose empirical likelihood
  ratio is at least r;
* :class:`Projection` for vector outputs: a learned linear statistic (Fisher's
  discriminant on the selection split, in the spirit of DP-Sniper, Bichsel et al. 2021),
  then a threshold on it;
* :class:`Patterns` for vector outputs: answer patterns of the coded coordinates and
  bands of the continuous ones, as histogram cells;
* :class:`Reachability` for floating-point outputs: ``S`` = the outputs that adding a
  double to f(D) can produce and adding one to f(D') cannot (Mironov 2012);
* :class:`Events` around any of them: NaN, infinities and missing outputs (per
  coordinate) are events, together with the inner rule on the finite rows;
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

__all__ = ["MISSING", "Bands", "Best", "Distinguisher", "Events", "Histogram", "Patterns",
           "Projection", "Reachability", "Rule", "Threshold", "choose", "is_missing"]

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
        at 10^6). Only the choice changes, never the bound's validity."""
        return self


_D = TypeVar("_D", bound=Distinguisher)


def _trials(distinguisher: Distinguisher) -> int | None:
    """The measured size a distinguisher was told (None: rank by the split's own bound)."""
    trials: int | None = getattr(distinguisher, "trials", None)
    return trials


def _told(distinguisher: _D, trials: int) -> _D:
    """A copy (of the same class, so subclasses keep their own ``fit``) with ``trials``."""
    told = copy.copy(distinguisher)
    told.trials = trials  # type: ignore[attr-defined]
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
        self.candidates = candidates
        self.trials = trials

    def for_trials(self, trials: int) -> Distinguisher:
        return _told(self, trials)

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
                                    confidence=confidence, trials=_trials(self))
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

    def __init__(self, trials: int | None = None) -> None:
        self.trials = trials

    def for_trials(self, trials: int) -> Distinguisher:
        return _told(self, trials)

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
                                    confidence=confidence, trials=_trials(self))
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

    def __init__(self, trials: int | None = None) -> None:
        self.trials = trials

    def for_trials(self, trials: int) -> Distinguisher:
        return _told(self, trials)

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        a = np.asarray(first, dtype=float).reshape(len(first), -1)
        b = np.asarray(second, dtype=float).reshape(len(second), -1)
        covariance = np.cov(np.concatenate([a - a.mean(0), b - b.mean(0)]).T)
        covariance = np.atleast_2d(covariance) + 1e-12 * np.eye(a.shape[1])
        w = np.linalg.solve(covariance, b.mean(0) - a.mean(0))
        inner = Threshold(trials=_trials(self)).fit(a @ w, b @ w, delta=delta,
                                                    confidence=confidence)

        def contains(x: NDArray[Any], w: NDArray[np.float64] = w) -> NDArray[np.bool_]:
            return inner.contains(np.asarray(x, dtype=float).reshape(len(x), -1) @ w)

        return Rule(contains=contains, description=f"w.x with {inner.description}",
                    swapped=inner.swapped)


class Best(Distinguisher):
    """Fit each candidate on 3/4 of the selection draws, score it on the held-out 1/4,
    and refit the best on all the selection draws: guards against a flexible
    distinguisher (a histogram over many rare values) overfitting the selection split."""

    def __init__(self, *candidates: Distinguisher, trials: int | None = None) -> None:
        self.candidates = candidates
        self.trials = trials
        self.name = "best of " + ", ".join(c.name for c in candidates)

    def bind(self, pair: Any) -> Distinguisher:
        return Best(*(c.bind(pair) for c in self.candidates), trials=_trials(self))

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
                                         confidence=confidence, trials=_trials(self)))
            if score > best[0]:
                best = (score, candidate)
        assert best[1] is not None
        # the winner is refitted on every selection draw (still none of the measured ones)
        return best[1].fit(first, second, delta=delta, confidence=confidence)


class Patterns(Distinguisher):
    """Vector outputs as cells: each coordinate with few integer values (an answer code,
    an index) is kept as is, each continuous one is cut into ``bins`` bands at quantiles
    of the selection draws; a draw's cell is its tuple of codes and bands, and S is the
    union of the cells with the largest likelihood ratio (chosen like
    :class:`Histogram`'s). It expresses events no threshold or linear projection can,
    such as "this answer pattern, and the released value in its top band" (a sparse
    vector that also releases the noisy value of its first positive answer).
    """

    name = "patterns"

    def __init__(self, bins: int = 8, max_levels: int = 16) -> None:
        self.bins = bins
        self.max_levels = max_levels

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        a = np.asarray(first, dtype=float).reshape(len(first), -1)
        b = np.asarray(second, dtype=float).reshape(len(second), -1)
        pooled = np.concatenate([a, b])
        edges: list[NDArray[np.float64] | None] = []
        for j in range(pooled.shape[1]):
            column = pooled[:, j]
            levels = np.unique(column)
            if levels.size <= self.max_levels and np.all(levels == np.round(levels)):
                edges.append(None)
            else:
                cuts = np.quantile(column, np.linspace(0.0, 1.0, self.bins + 1)[1:-1])
                edges.append(np.unique(cuts))
        weights = np.random.default_rng(0x5EED).integers(
            1, 2**62, size=pooled.shape[1], dtype=np.int64).astype(np.uint64) | np.uint64(1)

        def keys(x: NDArray[Any]) -> NDArray[np.uint64]:
            rows = np.asarray(x, dtype=float).reshape(len(x), -1)
            codes = np.empty(rows.shape, dtype=np.int64)
            for j, cut in enumerate(edges):
                codes[:, j] = (np.searchsorted(cut, rows[:, j], side="right") if cut is not None
                               else rows[:, j].astype(np.int64))
            with np.errstate(over="ignore"):
                key: NDArray[np.uint64] = (codes.astype(np.uint64) * weights).sum(
                    axis=1, dtype=np.uint64)
            return key

        inner = Histogram().fit(keys(a), keys(b), delta=delta, confidence=confidence)
        banded = sum(e is not None for e in edges)

        def contains(x: NDArray[Any]) -> NDArray[np.bool_]:
            return _rows(inner.contains(keys(x)), len(x))

        return Rule(contains=contains, swapped=inner.swapped,
                    description=f"one of the chosen cells ({len(edges) - banded} coded, "
                    f"{banded} banded coordinates)")


def _codes(x: NDArray[Any]) -> NDArray[np.int8]:
    """Per entry: 0 finite, 1 NaN, 2 +inf, 3 -inf, 4 missing; one row per draw."""
    a = np.asarray(x)
    flat = a.reshape(len(a), -1)
    if flat.dtype.kind != "f":
        return np.zeros(flat.shape, dtype=np.int8)
    codes = np.zeros(flat.shape, dtype=np.int8)
    codes[np.isnan(flat)] = 1
    codes[flat == np.inf] = 2
    codes[flat == -np.inf] = 3
    codes[is_missing(flat)] = 4
    return codes


class Events(Distinguisher):
    """Non-finite and missing outputs as events, around an ``inner`` distinguisher.

    Each draw gets a label: its pattern of non-finite entries (which coordinates are NaN,
    +inf, -inf or missing), or, for a finite draw, whether the ``inner`` rule (fitted on
    the finite draws) contains it. The rejection set is the union of the labels whose
    likelihood ratio is largest, chosen like :class:`Histogram`'s. A system that returns
    NaN on one input only is thus a perfect distinguisher, as it should be (privkit's
    hardening issue: "non-finite and missing outputs are events like any other").
    Without non-finite draws in the selection split it is the inner rule itself (finite
    rule; non-finite draws met later are outside S).
    """

    def __init__(self, inner: Distinguisher) -> None:
        self.inner: Distinguisher = inner.inner if isinstance(inner, Events) else inner
        self.name = self.inner.name

    def bind(self, pair: Any) -> Distinguisher:
        return Events(self.inner.bind(pair))

    def for_trials(self, trials: int) -> Distinguisher:
        told = copy.copy(self)
        told.inner = self.inner.for_trials(trials)
        return told

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        code_a, code_b = _codes(first), _codes(second)
        finite_a, finite_b = ~code_a.any(axis=1), ~code_b.any(axis=1)
        inner: Rule | None = None
        if finite_a.sum() >= 2 and finite_b.sum() >= 2:
            inner = self.inner.fit(np.asarray(first)[finite_a], np.asarray(second)[finite_b],
                                   delta=delta, confidence=confidence)
        if finite_a.all() and finite_b.all():
            assert inner is not None
            return _finite_only(inner)
        patterns = np.unique(np.concatenate([code_a, code_b])[~np.concatenate(
            [finite_a, finite_b])], axis=0)

        def labels(x: NDArray[Any]) -> NDArray[np.int64]:
            codes = _codes(x)
            finite = ~codes.any(axis=1)
            out = np.full(len(codes), -1, dtype=np.int64)
            if inner is not None and finite.any():
                out[finite] = _rows(inner.contains(np.asarray(x)[finite]), int(finite.sum()))
            elif finite.any():
                out[finite] = 0
            if (~finite).any():
                match = (codes[~finite][:, None, :] == patterns[None]).all(axis=2)
                found = match.any(axis=1)
                out[np.flatnonzero(~finite)[found]] = 2 + np.argmax(match[found], axis=1)
            return out

        chosen = Histogram().fit(labels(first), labels(second), delta=delta,
                                 confidence=confidence)

        def contains(x: NDArray[Any]) -> NDArray[np.bool_]:
            return chosen.contains(labels(x))

        names = {0: "finite, outside the inner rule", 1: "finite, in "
                 + (inner.description if inner is not None else "-")}
        every = np.arange(2 + len(patterns))
        picked = every[np.asarray(chosen.contains(every), dtype=bool)]
        shown = [names.get(int(v)) or _pattern_text(patterns[int(v) - 2]) for v in picked]
        return Rule(contains=contains, description="one of: " + "; ".join(shown),
                    swapped=chosen.swapped)


def _pattern_text(codes: NDArray[np.int8]) -> str:
    words = {1: "NaN", 2: "+inf", 3: "-inf", 4: "missing"}
    if codes.size == 1:
        return words[int(codes[0])]
    return "[" + ", ".join(words.get(int(c), "x") for c in codes) + "]"


def _rows(mask: Any, n: int) -> NDArray[np.bool_]:
    """A rule's answer as one bool per draw (elementwise rules on rows of one value)."""
    m: NDArray[np.bool_] = np.asarray(mask, dtype=np.bool_)
    if m.ndim > 1:
        m = np.asarray(np.all(m.reshape(n, -1), axis=1), dtype=np.bool_)
    return m


def _finite_only(rule: Rule) -> Rule:
    def contains(x: NDArray[Any]) -> NDArray[np.bool_]:
        finite = np.asarray(~np.any(_codes(x), axis=1), dtype=np.bool_)
        out: NDArray[np.bool_] = np.zeros(finite.shape[0], dtype=np.bool_)
        if finite.any():
            out[finite] = _rows(rule.contains(np.asarray(x)[finite]), int(finite.sum()))
        return out

    return Rule(contains=contains, description=rule.description, swapped=rule.swapped)


def reachable(outputs: NDArray[Any], centre: Any) -> NDArray[np.bool_]:
    """Whether each output row (every coordinate) is ``fl(centre + z)`` for some double
    ``z``: the test ``fl(fl(y - c) + c) == y``.

    Notes
    -----
    Mironov 2012, "On significance of the least significant bits for differential
    privacy" (CCS): a floating-point sum ``c + z`` reaches only some doubles near ``y``
    (those whose low-order bits ``c``'s exponent allows), so an output reachable from
    f(D) and not from f(D') identifies the input. For ``y = fl(c + z)`` the candidate
    ``z' = fl(y - c)`` reproduces ``y``: exactly by Sterbenz's lemma where ``y`` and ``c``
    are within a factor 2, and by monotonicity of rounding otherwise; an output for which
    the candidate fails is (up to that check) not reachable.
    """
    y = np.asarray(outputs, dtype=np.float64)
    c = np.asarray(centre, dtype=np.float64)
    with np.errstate(all="ignore"):
        same = ((y - c) + c) == y
    flat = same.reshape(len(y), -1)
    result: NDArray[np.bool_] = flat.all(axis=1)
    return result


class Reachability(Distinguisher):
    """S = the outputs reachable from f(D) by adding a double and not from f(D') (or the
    reverse): a floating-point distinguisher (Mironov 2012).

    ``first`` and ``second`` are the exact query answers f(D), f(D'); by default they are
    the pair's inputs (right for a mechanism's audit, where the pair holds query answers).
    Where they do not broadcast against the outputs, the rule is empty.
    """

    name = "reachability"

    def __init__(self, first: Any = None, second: Any = None) -> None:
        self.first, self.second = first, second

    def bind(self, pair: Any) -> Distinguisher:
        if self.first is not None:
            return self
        return Reachability(getattr(pair, "first", None), getattr(pair, "second", None))

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        try:
            centres = (np.asarray(self.first, dtype=float), np.asarray(self.second, dtype=float))
            row = np.asarray(first).shape[1:]
            np.broadcast_shapes(row, centres[0].shape, centres[1].shape)
            usable = self.first is not None and np.asarray(first).dtype.kind == "f" and (
                np.broadcast_shapes(row, centres[0].shape) == row)
        except (TypeError, ValueError):
            usable = False
        if not usable:
            return Rule(contains=lambda x: np.zeros(len(x), dtype=bool),
                        description="reachability (inputs are not query answers): empty")
        c1, c2 = centres

        def event(x: NDArray[Any], own: Any, foreign: Any) -> NDArray[np.bool_]:
            result: NDArray[np.bool_] = reachable(x, own) & ~reachable(x, foreign)
            return result

        best: tuple[float, bool] = (-1.0, False)
        for swapped, (own, foreign) in ((False, (c1, c2)), (True, (c2, c1))):
            hits = int(event(first, own, foreign).sum())
            other = int(event(second, own, foreign).sum())
            favoured, against = (other, hits) if swapped else (hits, other)
            n_f, n_o = (len(second), len(first)) if swapped else (len(first), len(second))
            bound = float(epsilon_lower_bound(favoured, n_f, against, n_o, delta=delta,
                                              confidence=confidence))
            if bound > best[0]:
                best = (bound, swapped)
        swapped = best[1]
        own, foreign = (c2, c1) if swapped else (c1, c2)

        def contains(x: NDArray[Any]) -> NDArray[np.bool_]:
            return event(x, own, foreign)

        side, other_side = ("f(D')", "f(D)") if swapped else ("f(D)", "f(D')")
        return Rule(contains=contains, description=f"reachable from {side}, not from "
                    f"{other_side}", swapped=swapped)


def choose(outputs: NDArray[Any]) -> Distinguisher:
    """The default distinguisher for these outputs (one row per draw), each the best on
    held-out selection draws (:class:`Best`) of: a projection and answer patterns with
    bands for vectors; a threshold and a histogram for integers; a threshold for real
    numbers (:class:`Bands` is opt-in: in the default, its choice on held-out draws was
    noisier than the threshold's for (epsilon, delta) audits of Gaussians, whose best sets
    lie in the far tail); and, for floating-point outputs, the :class:`Reachability` test of their
    low-order bits."""
    x = np.asarray(outputs)
    if x.ndim > 1 and x[0].size > 1:
        if x.dtype.kind == "f":
            return Best(Projection(), Patterns(), Reachability())
        return Best(Projection(), Patterns())
    flat = x.reshape(len(x))
    if np.issubdtype(flat.dtype, np.integer) or np.issubdtype(flat.dtype, np.bool_):
        return Best(Threshold(), Histogram())
    return Best(Threshold(), Reachability())
