"""Non-finite and missing outputs as events, around any distinguisher.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit.audits.distinguishers import Distinguisher, Histogram, Rule, _rows, is_missing

__all__ = ["Events"]


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
        super().__init__()
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


def _finite_only(rule: Rule) -> Rule:
    def contains(x: NDArray[Any]) -> NDArray[np.bool_]:
        finite = np.asarray(~np.any(_codes(x), axis=1), dtype=np.bool_)
        out: NDArray[np.bool_] = np.zeros(finite.shape[0], dtype=np.bool_)
        if finite.any():
            out[finite] = _rows(rule.contains(np.asarray(x)[finite]), int(finite.sum()))
        return out

    return Rule(contains=contains, description=rule.description, swapped=rule.swapped)
