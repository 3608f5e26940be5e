"""The PLD accountant's atoms on a grid: batches of rows ready to compose.

Leaves of one profile family (every Laplace block, every randomized response, ...) are
discretised together, a column of their parameters against a row of losses
(:mod:`privkit._profiles`), in chunks that keep each array small; every other atom
(subsampled or disjoint blocks, whose profiles are derived) is discretised on its own.
Rows of one chunk that run the same number of times form one
:class:`~privkit._pld_fft.Group`.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from privkit._pld_fft import Group
from privkit._pld_grid import Rows, discretise_rows, grid_span
from privkit._profiles import Family
from privkit.accountants._pld_terms import Atom, LeafAtom, Profile

__all__ = ["Batch", "Single", "sweep_top"]

Array = NDArray[np.float64]
Curves = tuple[Profile, Profile, Profile, Profile]

#: Where a profile is searched for the loss above which it is at most the tail.
_SWEEP = np.geomspace(1e-5, 700.0, 97)
#: The most entries (rows x grid points) discretised in one array operation.
_CHUNK = 2**19


def sweep_top(profile: Callable[[Array], Array], tail: float) -> float:
    """A loss above which ``profile`` (non-increasing) is within ``tail`` of its value at
    the largest loss searched (its mass at +infinity, for the pairs here): a geometric
    sweep, then a fine sweep of the bracket."""
    coarse = np.ravel(np.asarray(profile(_SWEEP), dtype=float))
    level = float(coarse[-1]) + tail
    i = int(np.argmax(coarse <= level))
    fine = np.linspace(float(_SWEEP[i - 1]) if i > 0 else 0.0, float(_SWEEP[i]), 33)
    values = np.ravel(np.asarray(profile(fine), dtype=float))
    below = values <= level
    return float(fine[int(np.argmax(below))] if below.any() else fine[-1])


class Batch:
    """Leaves of one profile family, with their counts."""

    def __init__(self, family: Family,
                 atoms: Sequence[tuple[LeafAtom, int, tuple[float, ...]]]) -> None:
        """``atoms``: each leaf with its count and its parameters in ``family``."""
        self.family = family
        params = [p for _, _, p in atoms]
        self.columns = tuple(np.array(c, dtype=float) for c in zip(*params, strict=True))
        self.counts = np.array([n for _, n, _ in atoms], dtype=np.int64)
        self.floors = np.array([a.floor for a, _, _ in atoms])

    @property
    def size(self) -> int:
        return int(self.counts.size)

    def tops(self, tail: Array) -> Array:
        """Per row, the loss above which its profile is at most its ``tail``."""
        if self.family.bound is not None:
            return self.columns[self.family.bound].copy()
        out = np.empty(self.size)
        for r in range(self.size):
            params = tuple(c[r] for c in self.columns)
            out[r] = sweep_top(functools.partial(self.family, params), float(tail[r]))
        return out

    def groups(self, step: float, tail: Array, lower: bool) -> tuple[list[Group],
                                                                     list[Group]]:
        """(upper groups, lower groups) on the grid of ``step`` (lower empty unless
        asked); symmetric pairs, so one list serves both directions."""
        tops = self.tops(tail)
        order = np.argsort(tops)  # rows of similar reach share a chunk (less padding)
        uppers: list[Group] = []
        lowers: list[Group] = []
        start = 0
        while start < self.size:
            top = float(tops[order[min(self.size - 1, start)]])
            width = 2 * math.ceil(top / step) + 8
            rows = max(1, _CHUNK // (2 * width))
            chosen = order[start: start + rows]
            start += rows
            reach = float(np.max(tops[chosen]))
            first, last = grid_span(-reach - step, reach + step, step)
            cols = tuple(c[chosen][:, None] for c in self.columns)

            def profile(e: Array, cols: tuple[Array, ...] = cols) -> Array:
                return self.family(cols, e[None, :])

            up, lo = discretise_rows(profile, profile, n=chosen.size, step=step,
                                     first=first, last=last, floor=self.floors[chosen],
                                     lower=lower)
            if self.family.bound is not None:  # no loss beyond the bound's grid point:
                # the masses there are rounding allowances, exactly 0 (pure DP needs it)
                bound = np.ceil(tops[chosen] / step * (1 - 1e-12))[:, None]
                index = np.arange(first, last + 1)[None, :]
                outside = np.abs(index) > bound
                up.pmf[outside] = 0.0
                if lo is not None:
                    lo.pmf[outside] = 0.0
            uppers += _by_count(up, self.counts[chosen])
            if lo is not None:
                lowers += _by_count(lo, self.counts[chosen])
        return uppers, lowers


def _by_count(rows: Rows, counts: NDArray[np.int64]) -> list[Group]:
    out = []
    for c in np.unique(counts):
        pick = counts == c
        out.append(Group(rows=Rows(step=rows.step, offset=rows.offset,
                                   pmf=rows.pmf[pick], infinity=rows.infinity[pick]),
                         count=int(c)))
    return out


class Single:
    """An atom discretised on its own (its profiles are derived: subsampling, parts)."""

    def __init__(self, atom: Atom, count: int, curves: Curves) -> None:
        self.atom = atom
        self.count = count
        self.curves = curves
        self._tops: dict[tuple[int, float], float] = {}

    def reach(self, tail: float, direction: int) -> tuple[float, float]:
        """The losses above which the direction's forward and reverse upper profiles are
        within ``tail`` of their values at the largest loss searched (:func:`sweep_top`;
        found once per profile and tail: both directions, both bounds and every step
        share them)."""
        tops = []
        for curve in ((0, 1) if direction == 0 else (1, 0)):
            key = (curve, tail)
            if key not in self._tops:
                self._tops[key] = sweep_top(self.curves[curve], tail)
            tops.append(self._tops[key])
        return tops[0], tops[1]

    def groups(self, step: float, tail: float, lower: bool, direction: int
               ) -> tuple[Group, Group | None]:
        """(upper, lower) of one direction (0: remove, 1: add) on the grid of ``step``."""
        up_r, up_a, lo_r, lo_a = self.curves
        forward, reverse = (up_r, up_a) if direction == 0 else (up_a, up_r)
        top_f, top_r = self.reach(tail, direction)
        first, last = grid_span(-top_r - step, max(top_f, top_r) + step, step)
        floor = self.atom.floor if direction == 0 else 0.0
        up, lo = discretise_rows(forward, reverse, n=1, step=step, first=first, last=last,
                                 floor=floor, lower=lower and lo_r is up_r)
        if lower and lo is None:
            low_f, low_r = (lo_r, lo_a) if direction == 0 else (lo_a, lo_r)
            _, lo = discretise_rows(low_f, low_r, n=1, step=step, first=first, last=last,
                                    floor=floor, lower=True)
        return (Group(rows=up, count=self.count),
                None if lo is None else Group(rows=lo, count=self.count))
