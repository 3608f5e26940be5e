"""Optimal composition of identical (epsilon, delta) blocks (Kairouz, Oh, Viswanath 2015).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import attrs

from privkit import _validation as check
from privkit import composition
from privkit.accountant import Accountant
from privkit.accountants import _runs
from privkit.accountants.advanced import AdvancedAccountant
from privkit.guarantees import Guarantee
from privkit.plan import Leaf, PlanNode

__all__ = ["OptimalAccountant", "OptimalComposition"]


@attrs.frozen(kw_only=True)
class OptimalComposition(Guarantee):
    """``count`` runs of one (epsilon, delta)-DP block, read exactly ([KOV15] Thm 3.3).

    ``delta_at`` is :func:`privkit.composition.optimal_homogeneous_delta`, ``epsilon_at``
    its certified inversion; both take time independent of ``count`` above
    :data:`privkit.composition.EXACT_SUM_LIMIT` runs.
    """

    epsilon: float
    delta: float
    count: int

    def epsilon_at(self, delta: float) -> float:
        d = check.delta("delta", delta, "OptimalComposition.epsilon_at")
        return composition.optimal_homogeneous_epsilon(epsilon=self.epsilon, delta=self.delta,
                                                       count=self.count, target_delta=d)

    def delta_at(self, epsilon: float) -> float:
        e = check.nonnegative("epsilon", epsilon, "OptimalComposition.delta_at")
        return composition.optimal_homogeneous_delta(epsilon=self.epsilon, delta=self.delta,
                                                     count=self.count, target_epsilon=e)

    def _is_implied_by(self, other: Guarantee) -> bool:
        return False  # a composition record, not a budget

    def __str__(self) -> str:
        return (f"OptimalComposition({self.count} x (ε={self.epsilon:.6g}, "
                f"δ={self.delta:.3g}))")


class OptimalAccountant(Accountant[_runs.Runs]):
    """The exact privacy of k runs of one (epsilon, delta)-DP block (KOV 2015, Thm 3.3).

    Exact for blocks known only by their (epsilon, delta): no analysis of such blocks can
    do better. Refuses plans whose runs do not all share one (epsilon, delta):
    heterogeneous optimal composition is #P-hard (Murtagh, Vadhan 2016); use the advanced
    or PLD accountant for those. Also refuses more than
    :data:`privkit.composition.MAX_RUNS` (10^10) runs, where no computation here is
    reliable. Its native guarantee is an :class:`OptimalComposition`.
    """

    name: ClassVar[str] = "optimal"
    adaptive_filter_note: ClassVar[str] = (
        "optimal composition (Kairouz, Oh, Viswanath 2015) is exact only for blocks whose "
        "parameters are fixed in advance")

    def __init__(self) -> None:
        self._runs_of = AdvancedAccountant()  # the same runs algebra

    def accepts_leaf(self, leaf: Leaf) -> bool:
        return self._runs_of.accepts_leaf(leaf)

    def accepts_node(self, node: PlanNode) -> bool:
        return self._runs_of.accepts_node(node)

    def _refuse_cost(self, cost: _runs.Runs) -> str | None:
        if len(cost) > 1:
            return ("its blocks are not all the same (epsilon, delta); the advanced "
                    "accountant composes different blocks")
        if cost[0][2] > composition.MAX_RUNS:
            return f"more than {composition.MAX_RUNS:.0e} runs"
        return None

    def leaf(self, leaf: Leaf) -> _runs.Runs:
        return self._runs_of.leaf(leaf)

    def sequential(self, costs: Sequence[_runs.Runs]) -> _runs.Runs:
        return _runs.merged(costs)

    def parallel(self, costs: Sequence[_runs.Runs]) -> _runs.Runs:
        return self._runs_of.parallel(costs)

    def repeat(self, cost: _runs.Runs, count: int) -> _runs.Runs:
        return _runs.repeated(cost, count)

    def to_guarantee(self, cost: _runs.Runs) -> Guarantee:
        ((e, d, n),) = cost
        return OptimalComposition(epsilon=e, delta=d, count=n)

