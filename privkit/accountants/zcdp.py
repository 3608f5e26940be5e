"""zCDP accounting: rho adds under composition (Bun, Steinke 2016).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import ClassVar

from privkit import conversions
from privkit.accountant import Accountant
from privkit.plan import Block, Leaf, Parallel, PostProcess, Repeat, Sequential

__all__ = ["ZCDPAccountant", "zcdp_rho"]


def zcdp_rho(plan: Block) -> float:
    """The plan's rho: sums over sequential runs, max over disjoint parts.

    Notes
    -----
    Bun, Steinke 2016 (arXiv:1605.02065v1), Lemma 2.3 (adaptive composition); parallel
    composition holds because a neighbouring change touches one part (see ``Parallel``).
    Each leaf contributes its smallest rho (``inf`` if it has no zCDP guarantee).
    """
    if isinstance(plan, Leaf):
        return plan.zcdp_rho()
    if isinstance(plan, Sequential):
        return math.fsum(zcdp_rho(b) for b in plan.steps)
    if isinstance(plan, Parallel):
        return max(zcdp_rho(b) for b in plan.parts)
    if isinstance(plan, Repeat):
        return plan.count * zcdp_rho(plan.block)
    assert isinstance(plan, PostProcess)
    return zcdp_rho(plan.block)


class ZCDPAccountant(Accountant):
    """Compose in zCDP, convert once to (epsilon, delta) (Canonne, Kamath, Steinke 2020).

    Supports leaves with a zCDP guarantee (Gaussian: exact; pure DP: ``eps^2 / 2``) and
    the Sequential, Parallel, Repeat and PostProcess nodes.
    """

    name: ClassVar[str] = "zcdp"
    valid_for_adaptive_filter: ClassVar[bool] = True

    def _handles(self, block: Block) -> bool:
        if isinstance(block, Leaf):
            return math.isfinite(block.zcdp_rho())
        return isinstance(block, Sequential | Parallel | Repeat | PostProcess)

    def _epsilon(self, plan: Block, delta: float) -> float:
        return conversions.zcdp_to_epsilon(zcdp_rho(plan), delta)

    def _delta(self, plan: Block, epsilon: float) -> float:
        return conversions.zcdp_to_delta(zcdp_rho(plan), epsilon)
