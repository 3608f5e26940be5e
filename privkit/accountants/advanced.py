"""Advanced composition: Dwork-Rothblum-Vadhan and Kairouz-Oh-Viswanath bounds.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import attrs

from privkit import _validation as check
from privkit import composition
from privkit.accountant import Accountant
from privkit.accountants import _runs
from privkit.guarantees import Guarantee
from privkit.plan import Leaf, Parallel, PlanNode

__all__ = ["AdvancedAccountant", "AdvancedComposition"]


@attrs.frozen
class AdvancedComposition(Guarantee):
    """Runs of (epsilon_i, delta_i)-DP blocks, ``runs = ((eps, delta, count), ...)``,
    read through the advanced composition theorems at each target delta.

    For a target delta, the part left after the blocks' own deltas,
    ``delta_slack = 1 - (1 - delta) / prod(1 - delta_i)``, is spent on the composition
    theorem, and epsilon is the smallest of

    * the basic sum of the eps_i;
    * Dwork-Rothblum-Vadhan 2010 (Dwork, Roth 2014, Thm 3.20) when all blocks share one
      epsilon: ``sqrt(2 k ln(1/delta_slack)) eps + k eps (e^eps - 1)``;
    * Kairouz-Oh-Viswanath 2015, Theorem 3.5, for heterogeneous epsilons.

    Every sum takes the counts as multipliers: the cost of a repeated block does not
    depend on its count.
    """

    runs: _runs.Runs

    def epsilon_at(self, delta: float) -> float:
        d = check.delta("delta", delta, "AdvancedComposition.epsilon_at")
        total = math.fsum(e * n for e, _, n in self.runs)
        log_survive = math.fsum(n * math.log1p(-dl) for _, dl, n in self.runs)
        if log_survive < math.log1p(-d):  # the blocks' own deltas exceed the target
            return math.inf
        # slack = 1 - (1 - delta) / survive
        slack = -math.expm1(math.log1p(-d) - log_survive)
        if slack <= 0.0:
            return total
        candidates = [total]
        if len(self.runs) == 1:
            e, _, n = self.runs[0]
            candidates.append(composition.drv_epsilon(epsilon=e, count=n, delta_slack=slack))
        candidates.append(composition.kov_heterogeneous_epsilon(
            [e for e, _, _ in self.runs], slack, counts=[n for _, _, n in self.runs]))
        return min(candidates)

    def delta_at(self, epsilon: float) -> float:
        e = check.nonnegative("epsilon", epsilon, "AdvancedComposition.delta_at")
        return _runs.smallest_delta(self.epsilon_at, e)

    def _is_implied_by(self, other: Guarantee) -> bool:
        return False  # a composition record, not a budget

    def __str__(self) -> str:
        return f"AdvancedComposition({sum(n for _, _, n in self.runs)} runs)"


class AdvancedAccountant(Accountant[_runs.Runs]):
    """The best of the advanced composition theorems for (epsilon, delta) blocks.

    Supports leaves with a pure-DP or ``ApproxDP`` guarantee, Sequential, Repeat,
    PostProcess, and Parallel nodes over pure blocks; its native guarantee is an
    :class:`AdvancedComposition`.

    Not valid for a budget filter: Dwork-Rothblum-Vadhan holds for adaptively chosen
    blocks whose privacy parameters are fixed in advance; when the parameters are chosen
    adaptively too (as a filter allows), Rogers, Roth, Ullman, Vadhan 2016 ("Privacy
    odometers and filters: pay-as-you-go composition", Theorem 5.1) give a filter with
    larger constants, which privkit does not implement.
    """

    name: ClassVar[str] = "advanced"
    valid_for_adaptive_filter: ClassVar[bool] = False
    adaptive_filter_note: ClassVar[str] = (
        "advanced composition (Dwork, Rothblum, Vadhan 2010) holds for adaptively chosen "
        "blocks with parameters fixed in advance; with adaptively chosen parameters it "
        "needs the larger constants of Rogers, Roth, Ullman, Vadhan (2016, Theorem 5.1), "
        "not implemented here")

    def accepts_leaf(self, leaf: Leaf) -> bool:
        return _runs.leaf_run(leaf) is not None

    def accepts_node(self, node: PlanNode) -> bool:
        if isinstance(node, Parallel):  # only pure parts: a fold of their basic costs
            from privkit.accountants.basic import BasicAccountant

            basic = BasicAccountant()
            return basic.supports(node) and math.isfinite(basic.epsilon(node, delta=0.0))
        return True

    def leaf(self, leaf: Leaf) -> _runs.Runs:
        run = _runs.leaf_run(leaf)
        assert run is not None
        return ((run[0], run[1], 1),)

    def sequential(self, costs: Sequence[_runs.Runs]) -> _runs.Runs:
        return _runs.merged(costs)

    def parallel(self, costs: Sequence[_runs.Runs]) -> _runs.Runs:
        runs = _runs.parallel_runs(costs)
        assert runs is not None
        return runs

    def repeat(self, cost: _runs.Runs, count: int) -> _runs.Runs:
        return _runs.repeated(cost, count)

    def to_guarantee(self, cost: _runs.Runs) -> Guarantee:
        return AdvancedComposition(cost)

