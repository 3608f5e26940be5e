"""Shared pieces of the (epsilon, delta) accountants: groups of identical runs, a
certified inversion of delta(epsilon), and guarantees that say nothing.

``Runs`` maps an (epsilon, delta) pair to how many runs of a block with that guarantee
the plan makes. Counts are Python integers and ``Repeat`` multiplies them, so a repeated
block costs time and memory independent of its count. A leaf contributes its pure
epsilon if it has one, else the (epsilon, delta) of an ``ApproxDP`` guarantee; a
``Parallel`` node of pure parts contributes one pure run with the largest part's epsilon
(McSherry 2009, Theorem 4).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import attrs

from privkit import _leaves
from privkit.guarantees import ApproxDP, Guarantee
from privkit.plan import Leaf

__all__ = ["Runs", "Vacuous", "leaf_run", "merged", "parallel_runs", "repeated",
           "smallest_delta"]

Runs = tuple[tuple[float, float, int], ...]


def leaf_run(leaf: Leaf) -> tuple[float, float] | None:
    """The (epsilon, delta) a leaf contributes, or None if it has neither form."""
    pure = _leaves.pure_epsilon(leaf)
    if math.isfinite(pure):
        return pure, 0.0
    for g in _leaves.guarantees(leaf):
        if isinstance(g, ApproxDP):
            return g.epsilon, g.delta
    return None


def merged(groups: Sequence[Runs]) -> Runs:
    """The runs of blocks run one after another (identical pairs merged)."""
    totals: dict[tuple[float, float], int] = {}
    for runs in groups:
        for e, d, n in runs:
            totals[(e, d)] = totals.get((e, d), 0) + n
    return tuple((e, d, n) for (e, d), n in totals.items())


def repeated(runs: Runs, count: int) -> Runs:
    """The runs of ``count`` repetitions (the count multiplies; no expansion)."""
    return tuple((e, d, n * count) for e, d, n in runs)


def parallel_runs(parts: Sequence[Runs]) -> Runs | None:
    """One pure run of the worst part's basic epsilon, or None if a part is not pure."""
    if any(d > 0.0 for runs in parts for _, d, _ in runs):
        return None
    return ((max(math.fsum(e * n for e, _, n in runs) for runs in parts), 0.0, 1),)


def smallest_delta(epsilon_at: Callable[[float], float], epsilon: float) -> float:
    """The smallest delta whose epsilon fits, by bisection on log(delta).

    Every delta returned has been checked: ``epsilon_at(result) <= epsilon``.
    """
    if epsilon_at(0.0) <= epsilon:
        return 0.0
    lo, hi = -700.0, math.log1p(-1e-12)  # log delta, from ~1e-304 to just below 1
    if epsilon_at(math.exp(hi)) > epsilon:
        return 1.0
    if epsilon_at(math.exp(lo)) <= epsilon:
        return math.exp(lo)
    for _ in range(60):  # relative precision of delta ~ 700 / 2^60
        mid = (lo + hi) / 2.0
        if epsilon_at(math.exp(mid)) <= epsilon:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


@attrs.frozen
class Vacuous(Guarantee):
    """No privacy at all: what a cost that overflows (e.g. rho = inf) stands for."""

    reason: str = "the composed cost is infinite"

    def epsilon_at(self, delta: float) -> float:
        return math.inf

    def delta_at(self, epsilon: float) -> float:
        return 1.0

    def _is_implied_by(self, other: Guarantee) -> bool:
        return True

    def __str__(self) -> str:
        return f"Vacuous({self.reason})"
