"""Flatten a plan into (epsilon, delta, count) groups of (epsilon, delta)-DP runs.

Used by the advanced and optimal accountants, which compose lists of (epsilon, delta)
blocks. A leaf contributes its pure epsilon if it has one, else the (epsilon, delta) of
an ``ApproxDP`` guarantee; a ``Parallel`` node contributes one pure block with the largest
part's pure epsilon; ``Repeat`` multiplies the count.
"""

from __future__ import annotations

import math

from privkit.accountants.basic import BasicAccountant
from privkit.guarantees import ApproxDP
from privkit.plan import Block, Leaf, Parallel, PostProcess, Repeat, Sequential

Run = tuple[float, float, int]


def leaf_run(leaf: Leaf) -> tuple[float, float] | None:
    """The (epsilon, delta) a leaf contributes, or None if it has neither form."""
    pure = leaf.epsilon_at(0.0)
    if math.isfinite(pure):
        return pure, 0.0
    for g in leaf.guarantees():
        if isinstance(g, ApproxDP):
            return g.epsilon, g.delta
    return None


def handles(block: Block) -> bool:
    if isinstance(block, Leaf):
        return leaf_run(block) is not None
    if isinstance(block, Parallel):
        basic = BasicAccountant()
        return basic.supports(block) and math.isfinite(basic.epsilon(block, delta=0.0))
    return isinstance(block, Sequential | Repeat | PostProcess)


def runs(block: Block) -> list[Run]:
    """The groups of identical runs in ``block`` (for a plan every node of which
    :func:`handles`)."""
    if isinstance(block, Leaf):
        run = leaf_run(block)
        assert run is not None
        return [(run[0], run[1], 1)]
    if isinstance(block, Parallel):
        return [(BasicAccountant().epsilon(block, delta=0.0), 0.0, 1)]
    if isinstance(block, Sequential):
        return _merged([r for b in block.steps for r in runs(b)])
    if isinstance(block, Repeat):
        return [(e, d, n * block.count) for e, d, n in runs(block.block)]
    assert isinstance(block, PostProcess)
    return runs(block.block)


def _merged(groups: list[Run]) -> list[Run]:
    totals: dict[tuple[float, float], int] = {}
    for e, d, n in groups:
        totals[(e, d)] = totals.get((e, d), 0) + n
    return [(e, d, n) for (e, d), n in totals.items()]
