"""Renyi DP accounting over a grid of orders (Mironov 2017).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit import conversions
from privkit.accountant import Accountant
from privkit.plan import Block, Leaf, Parallel, PostProcess, Repeat, Sequential

__all__ = ["RDPAccountant", "rdp_curve"]


def rdp_curve(plan: Block, orders: NDArray[np.float64]) -> NDArray[np.float64]:
    """The plan's RDP bound at each order: sums over sequential runs, max over parts.

    Notes
    -----
    Mironov 2017 (arXiv:1702.07476v3), Proposition 1 (adaptive sequential composition);
    parallel composition holds order by order because a neighbouring change touches one
    part. Each leaf contributes its smallest RDP bound at each order.
    """
    if isinstance(plan, Leaf):
        return plan.rdp(orders)
    if isinstance(plan, Sequential):
        total: NDArray[np.float64] = np.sum([rdp_curve(b, orders) for b in plan.steps], axis=0)
        return total
    if isinstance(plan, Parallel):
        worst: NDArray[np.float64] = np.max([rdp_curve(b, orders) for b in plan.parts], axis=0)
        return worst
    if isinstance(plan, Repeat):
        return plan.count * rdp_curve(plan.block, orders)
    assert isinstance(plan, PostProcess)
    return rdp_curve(plan.block, orders)


class RDPAccountant(Accountant):
    """Compose RDP curves on a grid of orders, then convert with Canonne-Kamath-Steinke.

    Parameters
    ----------
    orders : sequence of float, optional
        Orders > 1 (default: :data:`privkit.conversions.DEFAULT_ORDERS`, opacus's grid).
    """

    name: ClassVar[str] = "rdp"
    valid_for_adaptive_filter: ClassVar[bool] = False

    def __init__(self, orders: Sequence[float] | None = None) -> None:
        grid = np.asarray(conversions.DEFAULT_ORDERS if orders is None else orders, float)
        if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 1):
            raise check.fail("orders", orders, "a non-empty sequence of finite numbers > 1",
                             "RDPAccountant")
        self.orders = np.unique(grid)

    def _handles(self, block: Block) -> bool:
        if isinstance(block, Leaf):
            return bool(np.any(np.isfinite(block.rdp(self.orders))))
        return isinstance(block, Sequential | Parallel | Repeat | PostProcess)

    def curve(self, plan: Block) -> NDArray[np.float64]:
        """The plan's RDP bound on this accountant's orders."""
        self.check(plan)
        return rdp_curve(plan, self.orders)

    def _epsilon(self, plan: Block, delta: float) -> float:
        return conversions.rdp_to_epsilon(self.orders, rdp_curve(plan, self.orders), delta)[0]

    def _delta(self, plan: Block, epsilon: float) -> float:
        curve = rdp_curve(plan, self.orders)
        if math.isinf(epsilon):
            return 0.0
        return conversions.rdp_to_delta(self.orders, curve, epsilon)[0]
