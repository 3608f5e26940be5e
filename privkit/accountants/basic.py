"""Basic composition: epsilons and deltas add; disjoint parts cost their maximum.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs

from privkit import _leaves
from privkit import _validation as check
from privkit.accountant import Accountant
from privkit.accountants._runs import smallest_delta
from privkit.guarantees import ApproxDP, Guarantee, PureDP
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Leaf, PlanNode, PostProcess, Repeat, Sequential

__all__ = ["BasicAccountant", "BasicComposition"]

#: A term of a basic composition: ``count`` runs of a non-pure leaf, or of a group of
#: disjoint parts (a ``Parallel`` node with a non-pure part), costing their maximum.
Term = tuple[int, Leaf | tuple["BasicComposition", ...]]


def _describe(block: Block) -> str:
    return block.label() if isinstance(block, PlanNode) else str(block)


def _is_pure(leaf: Leaf) -> bool:
    return math.isfinite(_leaves.pure_epsilon(leaf))


@attrs.frozen(kw_only=True, eq=False)
class BasicComposition(Guarantee):
    """What basic composition proves for a plan, as a function of the target delta.

    ``pure`` is the sum of the pure blocks' epsilons (and of charges with a fixed
    ``fixed_delta``, see :class:`~privkit.BudgetFilter`); ``terms`` are the runs of blocks
    without a pure-DP guarantee; ``units`` counts those runs (a ``Repeat`` of ``k`` counts
    ``k`` times, disjoint parts share). At a target delta, what is left after
    ``fixed_delta`` is split equally over the units, and each costs its epsilon at its
    share, from its tightest guarantee (any split is valid; the equal split is privkit's
    choice). Dwork, Roth 2014, Theorem 3.16; McSherry 2009, Theorem 4.
    """

    pure: float = 0.0
    fixed_delta: float = 0.0
    terms: tuple[Term, ...] = ()
    units: int = 0

    def epsilon_at(self, delta: float) -> float:
        d = check.delta("delta", delta, "BasicComposition.epsilon_at")
        if d < self.fixed_delta:
            return math.inf
        share = (d - self.fixed_delta) / self.units if self.units else 0.0
        return self._at_share(share)

    def _at_share(self, share: float) -> float:
        parts = [self.pure]
        for count, item in self.terms:
            if isinstance(item, Leaf):
                parts.append(count * item.epsilon_at(share))
            else:
                parts.append(count * max(p._at_share(share) for p in item))
        return math.fsum(parts)

    def delta_at(self, epsilon: float) -> float:
        e = check.nonnegative("epsilon", epsilon, "BasicComposition.delta_at")
        return smallest_delta(self.epsilon_at, e)

    def _is_implied_by(self, other: Guarantee) -> bool:
        return False  # a composition record, not a budget

    def __str__(self) -> str:
        return (f"BasicComposition(pure ε={self.pure:.6g}, {self.units} runs sharing "
                f"δ{f' after {self.fixed_delta:.3g}' if self.fixed_delta else ''})")


class BasicAccountant(Accountant[BasicComposition]):
    """Sequential composition sums (epsilon, delta); parallel composition takes the max.

    Its native guarantee is ``PureDP`` (the sum) for a plan of pure blocks, else a
    :class:`BasicComposition` that splits a target delta equally over the runs of the
    other blocks.

    Notes
    -----
    Dwork, Roth 2014, Theorem 3.16 (sequential) and McSherry 2009, Theorem 4 (parallel).
    :meth:`epsilon` reports the basic sum itself; the ``PureDP`` guarantee of a pure plan
    may convert to a smaller epsilon at delta > 0 (randomized response's profile).
    Valid for a budget filter: sums of (epsilon, delta) hold when each block and its
    parameters are chosen adaptively (Rogers, Roth, Ullman, Vadhan 2016, "Privacy
    odometers and filters: pay-as-you-go composition", Theorem 3.6).
    """

    name: ClassVar[str] = "basic"
    valid_for_adaptive_filter: ClassVar[bool] = True
    adaptive_filter_note: ClassVar[str] = (
        "basic composition holds when each block and its (epsilon, delta) are chosen "
        "adaptively (Rogers, Roth, Ullman, Vadhan 2016, Theorem 3.6)")

    def accepts_leaf(self, leaf: Leaf) -> bool:
        return True

    def leaf(self, leaf: Leaf) -> BasicComposition:
        pure = _leaves.pure_epsilon(leaf)
        if math.isfinite(pure):
            return BasicComposition(pure=pure)
        return BasicComposition(terms=((1, leaf),), units=1)

    def sequential(self, costs: Sequence[BasicComposition]) -> BasicComposition:
        counts: dict[int, int] = {}
        items: dict[int, Leaf | tuple[BasicComposition, ...]] = {}
        for cost in costs:
            for count, item in cost.terms:
                counts[id(item)] = counts.get(id(item), 0) + count
                items[id(item)] = item
        return BasicComposition(
            pure=math.fsum(c.pure for c in costs),
            fixed_delta=math.fsum(c.fixed_delta for c in costs),
            terms=tuple((counts[k], items[k]) for k in counts),
            units=sum(c.units for c in costs))

    def parallel(self, costs: Sequence[BasicComposition]) -> BasicComposition:
        if all(not c.terms and not c.fixed_delta for c in costs):
            return BasicComposition(pure=max(c.pure for c in costs))
        return BasicComposition(terms=((1, tuple(costs)),), units=max(c.units for c in costs),
                                fixed_delta=max(c.fixed_delta for c in costs))

    def repeat(self, cost: BasicComposition, count: int) -> BasicComposition:
        return BasicComposition(pure=count * cost.pure, fixed_delta=count * cost.fixed_delta,
                                terms=tuple((n * count, item) for n, item in cost.terms),
                                units=count * cost.units)

    def to_guarantee(self, cost: BasicComposition) -> Guarantee:
        if cost.units == 0 and math.isfinite(cost.pure):
            if cost.fixed_delta == 0.0:
                return PureDP(epsilon=max(cost.pure, 5e-324))
            if cost.fixed_delta < 1.0:
                return ApproxDP(epsilon=max(cost.pure, 5e-324), delta=cost.fixed_delta)
        return cost

    def lower_bound(self, plan: Block, *, delta: float | None = None,
                    epsilon: float | None = None, evidence: Guarantee | None = None
                    ) -> float | None:
        """The pure blocks' epsilons add to at most the answer (the other blocks add
        non-negative terms); the fold is cheap, the other blocks' conversions are not.
        At an ``epsilon`` below that sum no delta is certified (the answer is 1).

        With a certified ``evidence`` (at ``delta``), or at ``epsilon``, the sum stops as
        soon as it passes that value: a partial sum is a lower bound too, and one past
        the evidence's answer already shows this accountant cannot win (a wide plan of
        small pure blocks is decided by its first few thousand leaves)."""
        if epsilon is not None:
            enough = epsilon
        elif evidence is not None and delta is not None:
            enough = evidence.epsilon_at(delta)
        else:
            enough = math.inf
        if math.isfinite(enough) and self.supports(plan):
            partial = _pure_partial_sum(plan, enough)
            if partial > enough:
                return 1.0 if epsilon is not None else partial
        cost = self.cost(plan)
        if epsilon is not None:
            return 1.0 if cost.pure > epsilon else None
        return cost.pure

    # -- budget filters ----------------------------------------------------------------------

    def filter_charge(self, block: Block, *, delta: float | None, owner: str
                      ) -> BasicComposition:
        """A pure block costs its pure epsilon; any other must say how much delta it uses
        (``spend(block, delta=...)``) and costs its epsilon at that delta."""
        cost = self.cost(block)
        if cost.units == 0 and not cost.fixed_delta:
            return cost
        if delta is None:
            raise check.fail(
                "delta", delta, "a number in (0, 1)", owner,
                f"{_describe(block)} has no pure-DP guarantee: say how much of the "
                "filter's delta it may use, spend(block, delta=...)")
        share = check.open_unit("delta", delta, owner)
        return BasicComposition(pure=cost.epsilon_at(share), fixed_delta=share)

    def filter_fits(self, total: BasicComposition, limit: Any, slack: float) -> bool:
        epsilon, delta = limit
        return (total.units == 0 and total.pure <= epsilon * (1.0 + slack)
                and total.fixed_delta <= delta * (1.0 + slack))

    def filter_spent(self, total: BasicComposition | None, limit: Any) -> tuple[float, float]:
        return (0.0, 0.0) if total is None else (total.pure, total.fixed_delta)

    def filter_remaining(self, total: BasicComposition | None, limit: Any, slack: float,
                         relation: Neighbouring) -> tuple[float, float]:
        """The limit minus what has been spent, in epsilon and in delta."""
        spent_epsilon, spent_delta = self.filter_spent(total, limit)
        return max(0.0, limit[0] - spent_epsilon), max(0.0, limit[1] - spent_delta)

    def epsilon(self, plan: Block, *, delta: float) -> float:
        """The basic composition theorem's epsilon at ``delta`` (the sum, unconverted)."""
        d = check.delta("delta", delta, "BasicAccountant.epsilon")
        return self.cost(plan).epsilon_at(d)

    def delta(self, plan: Block, *, epsilon: float) -> float:
        """The smallest delta at which :meth:`epsilon` is at most ``epsilon``."""
        e = check.nonnegative("epsilon", epsilon, "BasicAccountant.delta")
        return self.cost(plan).delta_at(e)


def _pure_partial_sum(plan: Block, enough: float) -> float:
    """The pure epsilons of the leaves reached through ``Sequential``, ``Repeat`` and
    ``PostProcess`` nodes, times their counts, added up depth first until the sum passes
    ``enough`` (the other nodes add non-negative terms to the pure sum and are passed
    over): at most the plan's pure sum (Dwork, Roth 2014, Theorem 3.16, basic
    composition)."""
    total = 0.0
    stack: list[tuple[Block, float]] = [(plan, 1.0)]
    while stack:
        block, times = stack.pop()
        if isinstance(block, Leaf):
            pure = _leaves.pure_epsilon(block)
            if math.isfinite(pure):
                total += times * pure
                if total > enough:
                    return total
        elif isinstance(block, Sequential | PostProcess):
            stack.extend((child, times) for child in reversed(block.children))
        elif isinstance(block, Repeat):
            stack.append((block.children[0], times * block.count))
    return total
