"""What the PLD accountant is asked, and how its grid and composition are tuned to it.

A :class:`Question` is epsilon at a delta, or delta at an epsilon (default: epsilon at
delta 1e-6). It fixes how much tail mass each composition may charge for truncation, the
tilt that centres a composition on the answer (:mod:`privkit._pld_fft`), and, for a
composition nested in another (a block composed on a finer grid first, or inside a
subsampled or disjoint block), how that one must be computed for the enclosing one.
:func:`best` keeps the tighter of two certified answers to a question, and
:func:`rough_add` composes a direction that does not decide the answer on a coarser grid.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import numpy as np

from privkit._pld_fft import TILTS, Group, Tilts, compose
from privkit.accountants._pld_rows import Batch, Single
from privkit.pld import PLDGuarantee, PrivacyLossDistribution

__all__ = ["DEFAULT_DELTA", "ROUGH", "THETAS", "WINDOW_TAIL", "Question", "best", "composed",
           "rough_add"]

#: The delta a guarantee is tuned for when no question is given.
DEFAULT_DELTA = 1e-6
#: The tilted mass left outside a composition's window (each side).
WINDOW_TAIL = 1e-10
#: The tilts a composition may be centred with.
THETAS = TILTS[TILTS >= 0.0]
#: The add direction is composed this many times coarser first; it is kept when it is not
#: the worse direction at the question (1: never).
ROUGH = 8


class Question:
    """What is asked (epsilon at a delta, or delta at an epsilon), and, for a composition
    nested in another, how that one needs it computed.

    A nested composition's curves enter its enclosing one at every ``eps >= 0``, so its
    windows start at or below 0 (``nested``), its tail allowances are at most the
    question's, and its tilts are fixed: the enclosing one's for blocks composed on a
    finer grid (it composes them further, tilted the same way), 0 for subsampled and
    disjoint blocks (whose curves enter through a change of variable).
    """

    def __init__(self, delta: float | None, epsilon: float | None) -> None:
        self.delta = delta
        self.epsilon = epsilon
        self.tilts: tuple[float, float] | None = None
        self.nested = False
        scale = delta if delta is not None and delta > 0 else DEFAULT_DELTA
        if epsilon is not None:
            scale = 1e-10
        #: The mass each composition may charge, in all, for truncating its blocks' losses.
        self.tail = max(scale * 1e-5, 1e-300)

    def fixed(self, tilts: tuple[float, float]) -> Question:
        """This question with the compositions' tilts fixed."""
        out = copy.copy(self)
        out.tilts = tilts
        return out

    def inner(self, fraction: float, tilts: tuple[float, float]) -> Question:
        """The question for a composition nested in this one, whose runs are
        ``fraction`` of this one's (it gets that share of the truncation budget)."""
        out = self.fixed(tilts)
        out.nested = True
        out.tail = self.tail * fraction
        return out

    @property
    def window_tail(self) -> float:
        """The tilted mass a composition's window may leave out on each side: none for
        pure DP (delta 0: whatever is charged to +infinity would make epsilon infinite)."""
        if self.delta == 0.0:
            return 0.0
        return min(WINDOW_TAIL, self.tail) if self.nested else WINDOW_TAIL

    def theta(self, tilts: Tilts, direction: int = 0) -> float:
        """The tilt that centres a composition on the answer: the Chernoff-optimal one
        (for epsilon at delta, the minimiser of ``(K(t) - log delta) / t``, the RDP
        conversion's optimal order minus one), unless fixed by an enclosing one."""
        if self.tilts is not None:
            return self.tilts[direction]
        k = tilts.values[np.isin(tilts.points, THETAS)]
        if self.epsilon is not None:
            objective = k - THETAS * self.epsilon
        else:
            d = DEFAULT_DELTA if not self.delta else self.delta
            with np.errstate(divide="ignore", invalid="ignore"):
                objective = np.where(THETAS > 0, (k - math.log(d)) / THETAS, np.inf)
        objective = np.where(np.isfinite(objective), objective, np.inf)
        return float(THETAS[int(np.argmin(objective))]) if np.isfinite(objective).any() \
            else 0.0

    def upper(self, p: PrivacyLossDistribution) -> float:
        if self.epsilon is not None:
            return p.delta_at(self.epsilon)
        return p.epsilon_at(DEFAULT_DELTA if self.delta is None else self.delta)

    def value(self, g: PLDGuarantee) -> tuple[float, float]:
        """(upper, lower) answers."""
        if self.epsilon is not None:
            return g.delta_at(self.epsilon), g.delta_lower_at(self.epsilon)
        d = DEFAULT_DELTA if self.delta is None else self.delta
        return g.epsilon_at(d), g.epsilon_lower_at(d)

    def gap(self, g: PLDGuarantee) -> float:
        """The relative gap between the two answers (``inf`` when unbounded)."""
        upper, lower = self.value(g)
        if not math.isfinite(upper):
            return math.inf
        return (upper - lower) / upper if upper > 0 else 0.0


def best(a: PLDGuarantee, b: PLDGuarantee, question: Question) -> PLDGuarantee:
    """The tighter upper and the tighter lower of two certified answers."""
    ua, la = question.value(a)
    ub, lb = question.value(b)
    upper = a if ua <= ub else b
    lower = a if la >= lb else b
    return PLDGuarantee(remove=upper.remove, add=upper.add, lower_remove=lower.lower_remove,
                        lower_add=lower.lower_add, notes=upper.notes)


def composed(groups: Sequence[Group], question: Question, direction: int, *, upper: bool
             ) -> PrivacyLossDistribution:
    """The composition of ``groups`` (one direction's PLDs), tilted and windowed for the
    question (:func:`privkit._pld_fft.compose`)."""
    tilts = Tilts.of(groups)
    theta = question.theta(tilts, direction)
    return compose(groups, theta=theta, tilts=tilts.around(groups, theta),
                   tail=question.window_tail, upper=upper,
                   start=0 if question.nested else None)


def rough_add(batches: list[Batch], singles: list[Single], step: float, tail: float,
              question: Question, bar: float) -> PrivacyLossDistribution | None:
    """The add direction's upper PLD on a grid :data:`ROUGH` times coarser, when its
    answer to the question is at most ``bar`` (the remove direction's on the grid of
    ``step``), else None.

    The answer is the worse direction's, so a direction that is not the worse one need
    not be tight: its coarse PLD is certified (connect the dots on any grid is), and the
    answer, the remove direction's, is the one a fine add direction gives too (on the
    finer grid its curve only comes down: the coarse grid's chords lie above the fine
    ones', and composition keeps the order). The guarantee stays certified at every
    question, tightest at the one asked; nested compositions, whose curves enter at
    every epsilon, keep both directions fine."""
    if ROUGH <= 1:
        return None
    coarse = step * ROUGH
    groups: list[Group] = []
    for b in batches:
        groups += b.groups(coarse, np.full(b.size, tail), lower=False)[0]
    groups += [s.groups(coarse, tail, False, 1)[0] for s in singles]
    rough = composed(groups, question, 1, upper=True)
    return rough if question.upper(rough) <= bar else None
