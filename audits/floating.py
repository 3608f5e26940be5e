"""Floating-point distinguishers: which doubles an output can be at all (Mironov 2012).

A mechanism that adds a floating-point noise sample ``z`` to a query answer ``c`` releases
``fl(c + z)``, and the doubles that sum can reach depend on ``c``: where the sum cancels
(``|c + z|`` well below ``|c|``) it is exact, so the output keeps the coarse spacing of
``c`` and ``z`` (a multiple of ``ulp(c) / 2``) although a double of its own magnitude
could be much finer. An output that uses bits below what ``c``'s spacing allows names the
input.

* :class:`Reachability`: the query answers f(D), f(D') are known (the pair holds them):
  ``S`` = the outputs reachable from one and not from the other;
* :class:`Granularity`: nothing but the outputs: each output's cell (sign, binary
  exponent, position of its lowest set bit) is a histogram cell, and ``S`` is the union
  of the cells whose likelihood ratio on the selection draws is largest. It needs no
  query answer, so it works on any system returning floats, with datasets as the pair's
  inputs.

Both are part of the default distinguisher for floating-point outputs
(:func:`~privkit.audits.distinguishers.choose`). A release on a fixed grid (privkit's
``release``, Mironov's snapping) has the same cells on both inputs, up to the noise law,
and passes.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit.audits.distinguishers import (
    Distinguisher,
    Rule,
    _ranked_bounds,
)
from privkit.audits.lower_bounds import epsilon_lower_bound

__all__ = ["Granularity", "Reachability", "cells", "reachable"]

_MANTISSA = np.uint64((1 << 52) - 1)
_HIDDEN = np.uint64(1 << 52)


def cells(outputs: Any) -> NDArray[np.int64]:
    """Each float64 entry's cell: ``sign * 2^17 + biased exponent * 64 + t``, where ``t``
    (0 to 52) is the position of the lowest set bit of its 53-bit significand (52: a power
    of two; zero and subnormals use the stored mantissa). Two doubles share a cell when
    they have the same sign and binade and the same spacing of the grid they lie on.

    Notes
    -----
    IEEE 754 binary64: bit 63 the sign, bits 52-62 the biased exponent, bits 0-51 the
    mantissa, with an implicit leading 1 for normal numbers.
    """
    x = np.ascontiguousarray(outputs, dtype=np.float64)
    bits = x.view(np.uint64)
    sign = (bits >> np.uint64(63)).astype(np.int64)
    exponent = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    significand = bits & _MANTISSA
    significand = np.where(exponent > 0, significand | _HIDDEN, significand)
    with np.errstate(over="ignore"):
        lowest = significand & (~significand + np.uint64(1))  # the lowest set bit
    t = np.where(significand > 0, np.log2(np.maximum(lowest, np.uint64(1)).astype(float)),
                 63.0).astype(np.int64)
    result: NDArray[np.int64] = sign * (1 << 17) + exponent * 64 + t
    return result


def _keys(outputs: Any) -> NDArray[np.int64]:
    """One row of cells per draw, each coordinate's cell tagged with its index (so a key
    names a coordinate and a cell, and occurs at most once per row)."""
    c = cells(outputs)
    flat = c.reshape(len(c), -1)
    result: NDArray[np.int64] = flat * np.int64(flat.shape[1]) + np.arange(flat.shape[1])[None, :]
    return result


#: The most selection draws per side a fit reads (the first ones): more only cost time
#: (a 10^8-draw audit selects on 10^7), the choice is already sharp.
FIT_DRAWS = 1_000_000


class Granularity(Distinguisher):
    """S = the draws with a coordinate in one of the chosen (coordinate, sign, binade,
    lowest-set-bit) cells: a floating-point test that needs no query answer.

    The cells are ranked by their likelihood ratio on the selection draws (add-one
    smoothing, both orientations), and the union of the top ones with the best bound
    (projected to the measured size, :meth:`Distinguisher.for_trials`) is the rule.
    Integer and boolean outputs have no floating-point leak: the rule is then empty,
    and its description says so.

    Notes
    -----
    Mironov 2012, "On significance of the least significant bits for differential
    privacy" (CCS), Section 3: the set of doubles ``fl(c + z)`` can reach depends on
    ``c``, most visibly where the sum cancels. The cell of an output is the part of its
    bit pattern that set depends on; the attack needs only the outputs.
    """

    name = "granularity"

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        if np.asarray(first).dtype.kind != "f" or np.asarray(second).dtype.kind != "f":
            return Rule(contains=lambda x: np.zeros(len(x), dtype=bool),
                        description="granularity: empty (the outputs are not "
                        "floating-point numbers)")
        first, second = first[:FIT_DRAWS], second[:FIT_DRAWS]  # enough to choose
        keys_a, keys_b = _keys(first), _keys(second)
        values, inverse = np.unique(np.concatenate([keys_a.ravel(), keys_b.ravel()]),
                                    return_inverse=True)
        count_a = np.bincount(inverse[: keys_a.size], minlength=values.size)
        count_b = np.bincount(inverse[keys_a.size:], minlength=values.size)
        n_a, n_b = len(first), len(second)
        best: tuple[float, NDArray[np.int64], bool] = (-1.0, values[:0], False)
        for favoured, other, n_f, n_o, swapped in ((count_a, count_b, n_a, n_b, False),
                                                   (count_b, count_a, n_b, n_a, True)):
            ratio = (favoured + 1.0) / (n_f + 1.0) / ((other + 1.0) / (n_o + 1.0))
            order = np.argsort(-ratio, kind="stable")
            # union of the top cells; for vectors the cumulative count over-counts rows
            # holding several chosen cells (it only ranks; the measured draws decide)
            hits = np.minimum(np.cumsum(favoured[order]), n_f)
            hits_other = np.minimum(np.cumsum(other[order]), n_o)
            bounds = _ranked_bounds(hits, n_f, hits_other, n_o, delta=delta,
                                    confidence=confidence, trials=self.trials)
            i = int(np.argmax(bounds))
            if bounds[i] > best[0]:
                best = (float(bounds[i]), values[order[: i + 1]], swapped)
        _, chosen, swapped = best

        def contains(x: NDArray[Any], chosen: NDArray[np.int64] = chosen) -> NDArray[np.bool_]:
            found: NDArray[np.bool_] = np.asarray(np.isin(_keys(x), chosen).any(axis=1))
            return found

        return Rule(contains=contains, swapped=swapped,
                    description=f"output in one of {chosen.size} (sign, binade, lowest "
                    "set bit) cells")


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


def _answers(first: Any, second: Any, outputs: NDArray[Any]
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """The pair's inputs as query answers for these outputs: float arrays that broadcast
    to one output row; None when they are not (datasets, other shapes, objects)."""
    if first is None or second is None:
        return None
    try:
        c1 = np.asarray(first, dtype=float)
        c2 = np.asarray(second, dtype=float)
        row = np.asarray(outputs).shape[1:]
        fits = all(np.broadcast_shapes(row, c.shape) == row for c in (c1, c2))
    except (TypeError, ValueError):
        return None
    return (c1, c2) if fits else None


class Reachability(Distinguisher):
    """S = the outputs reachable from f(D) by adding a double and not from f(D') (or the
    reverse): a floating-point distinguisher (Mironov 2012).

    ``first`` and ``second`` are the exact query answers f(D), f(D'); by default they are
    the pair's inputs (right for a mechanism's audit, where the pair holds query answers).
    Where they are not query answers for these outputs (a pair of datasets, or shapes that
    do not broadcast to one output row), it falls back on :class:`Granularity`, which
    needs none, and its rule's description says so.
    """

    name = "reachability"

    def __init__(self, first: Any = None, second: Any = None,
                 trials: int | None = None) -> None:
        super().__init__(trials)
        self.first, self.second = first, second

    def bind(self, pair: Any) -> Distinguisher:
        if self.first is not None:
            return self
        return Reachability(getattr(pair, "first", None), getattr(pair, "second", None),
                            trials=self.trials)

    def fit(self, first: NDArray[Any], second: NDArray[Any], *, delta: float,
            confidence: float) -> Rule:
        answers = _answers(self.first, self.second, first)
        if answers is None or np.asarray(first).dtype.kind != "f":
            inner = Granularity(trials=self.trials).fit(first, second, delta=delta,
                                                          confidence=confidence)
            return Rule(contains=inner.contains, swapped=inner.swapped,
                        description=inner.description + " (the pair's inputs are not "
                        "query answers of the outputs' shape)")
        c1, c2 = answers

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
