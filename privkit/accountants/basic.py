"""Basic composition: epsilons and deltas add; disjoint parts cost their maximum.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import ClassVar

from privkit.accountant import Accountant
from privkit.plan import Block, Leaf, Parallel, PostProcess, Repeat, Sequential

__all__ = ["BasicAccountant"]


def _is_pure(leaf: Leaf) -> bool:
    return math.isfinite(leaf.epsilon_at(0.0))


class BasicAccountant(Accountant):
    """Sequential composition sums (epsilon, delta); parallel composition takes the max.

    Notes
    -----
    Dwork, Roth 2014, Theorem 3.16 (sequential, also under adaptive choice of the blocks)
    and McSherry 2009, Theorem 4 (parallel). A leaf with a pure-DP guarantee costs its
    pure epsilon and no delta. The target delta is split equally over the runs of the
    other leaves (a ``Repeat`` of ``k`` counts ``k`` times; disjoint parts of a
    ``Parallel`` share), and each such run costs its epsilon at its share, from its
    tightest guarantee. Any split is valid; the equal split is privkit's choice.
    """

    name: ClassVar[str] = "basic"
    valid_for_adaptive_filter: ClassVar[bool] = True

    def _handles(self, block: Block) -> bool:
        return isinstance(block, Leaf | Sequential | Parallel | Repeat | PostProcess)

    def _epsilon(self, plan: Block, delta: float) -> float:
        units = _delta_units(plan)
        share = delta / units if units else 0.0
        return _epsilon_at(plan, share)


def _delta_units(block: Block) -> int:
    if isinstance(block, Leaf):
        return 0 if _is_pure(block) else 1
    if isinstance(block, Sequential):
        return sum(_delta_units(b) for b in block.steps)
    if isinstance(block, Parallel):
        return max(_delta_units(b) for b in block.parts)
    if isinstance(block, Repeat):
        return block.count * _delta_units(block.block)
    assert isinstance(block, PostProcess)
    return _delta_units(block.block)


def _epsilon_at(block: Block, share: float) -> float:
    if isinstance(block, Leaf):
        return block.epsilon_at(0.0) if _is_pure(block) else block.epsilon_at(share)
    if isinstance(block, Sequential):
        return math.fsum(_epsilon_at(b, share) for b in block.steps)
    if isinstance(block, Parallel):
        return max(_epsilon_at(b, share) for b in block.parts)
    if isinstance(block, Repeat):
        return block.count * _epsilon_at(block.block, share)
    assert isinstance(block, PostProcess)
    return _epsilon_at(block.block, share)
