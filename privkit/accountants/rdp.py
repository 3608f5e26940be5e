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
from privkit.amplification import poisson_gaussian_rdp, without_replacement_rdp
from privkit.guarantees import GDP
from privkit.neighbouring import Neighbouring
from privkit.plan import (
    Block,
    Leaf,
    Parallel,
    PoissonSubsample,
    PostProcess,
    Repeat,
    SampleWithoutReplacement,
    Sequential,
)

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
    if isinstance(plan, PoissonSubsample):
        mu = _gaussian_mu(plan.block)
        assert mu is not None
        return poisson_gaussian_rdp(plan.sampling_rate, 1.0 / mu, orders)
    if isinstance(plan, SampleWithoutReplacement):
        return _without_replacement_curve(plan, orders)
    assert isinstance(plan, PostProcess)
    return rdp_curve(plan.block, orders)


def _gaussian_mu(block: Block) -> float | None:
    """The GDP parameter of a Gaussian leaf (the only block MTZ 2019 analyses)."""
    if isinstance(block, Leaf):
        for g in block.guarantees():
            if isinstance(g, GDP):
                return g.mu
    return None


def _without_replacement_curve(plan: SampleWithoutReplacement, orders: NDArray[np.float64]
                               ) -> NDArray[np.float64]:
    """WBK 2019 Theorem 9 at integer orders; a fractional order uses the next integer one
    (RDP is non-decreasing in the order, so that bound holds)."""
    integer_orders = np.ceil(orders).astype(int)
    top = int(integer_orders.max())
    base = rdp_curve(plan.block, np.arange(2, top + 1, dtype=float))
    pure = plan.block.epsilon_at(0.0) if isinstance(plan.block, Leaf) else math.inf
    fraction = plan.sample_size / plan.population_size
    cache = {a: without_replacement_rdp(fraction, base[: a - 1], pure, a)
             for a in set(integer_orders.tolist())}
    return np.array([cache[int(a)] for a in integer_orders])


class RDPAccountant(Accountant):
    """Compose RDP curves on a grid of orders, then convert with Canonne-Kamath-Steinke.

    Besides leaves with an RDP curve and the composition nodes, it handles Poisson
    subsampling of a Gaussian leaf under ADD_REMOVE (Mironov, Talwar, Zhang 2019; the
    DP-SGD case, equal to opacus's RDP accountant) and sampling without replacement of any
    block under REPLACE_ONE (Wang, Balle, Kasiviswanathan 2019, Theorem 9).

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
        if isinstance(block, PoissonSubsample):
            return (block.relation is Neighbouring.ADD_REMOVE
                    and _gaussian_mu(block.block) is not None)
        if isinstance(block, SampleWithoutReplacement):
            return block.relation is Neighbouring.REPLACE_ONE
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
