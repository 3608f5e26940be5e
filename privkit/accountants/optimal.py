"""Optimal composition of identical (epsilon, delta) blocks (Kairouz, Oh, Viswanath 2015).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from typing import ClassVar

from privkit import composition
from privkit.accountant import Accountant
from privkit.accountants import _runs
from privkit.plan import Block

__all__ = ["OptimalAccountant"]


class OptimalAccountant(Accountant):
    """The exact privacy of k runs of one (epsilon, delta)-DP block (KOV 2015, Thm 3.3).

    Exact for blocks known only by their (epsilon, delta): no analysis of such blocks can
    do better. Refuses plans whose runs do not all share one (epsilon, delta):
    heterogeneous optimal composition is #P-hard (Murtagh, Vadhan 2016); use the advanced
    or PLD accountant for those.
    """

    name: ClassVar[str] = "optimal"

    def _handles(self, block: Block) -> bool:
        return _runs.handles(block)

    def first_unsupported(self, plan: Block) -> Block | None:
        found = super().first_unsupported(plan)
        if found is None and len(_runs.runs(plan)) > 1:
            return plan  # heterogeneous: not analysable here
        return found

    def _epsilon(self, plan: Block, delta: float) -> float:
        ((e, d, n),) = _runs.runs(plan)
        return composition.optimal_homogeneous_epsilon(e, d, n, delta)

    def _delta(self, plan: Block, epsilon: float) -> float:
        ((e, d, n),) = _runs.runs(plan)
        return composition.optimal_homogeneous_delta(e, d, n, epsilon)
