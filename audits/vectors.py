"""Distinguishers for vector outputs: a learned linear statistic, and answer patterns.

* :class:`Projection`: Fisher's discriminant direction learned on the selection split (in
  the spirit of DP-Sniper, Bichsel et al. 2021), then a threshold on the projection;
* :class:`Patterns`: answer patterns of the coded coordinates and bands of the continuous
  ones, as histogram cells.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit.audits.distinguishers import (
    Distinguisher,
    Histogram,
    Rule,
    Threshold,
    _rows,
)

__all__ = ["Patterns", "Projection"]


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
        inner = Threshold(trials=self.trials).fit(a @ w, b @ w, delta=delta,
                                                    confidence=confidence)

        def contains(x: NDArray[Any], w: NDArray[np.float64] = w) -> NDArray[np.bool_]:
            return inner.contains(np.asarray(x, dtype=float).reshape(len(x), -1) @ w)

        return Rule(contains=contains, description=f"w.x with {inner.description}",
                    swapped=inner.swapped)


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
        super().__init__()
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
