"""Renyi DP accounting over a grid of orders (Mironov 2017).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from privkit import _leaves, conversions
from privkit import _validation as check
from privkit.accountant import Accountant
from privkit.amplification import poisson_gaussian_rdp, without_replacement_rdp
from privkit.guarantees import GDP, RDP, Guarantee
from privkit.neighbouring import Neighbouring
from privkit.plan import (
    Block,
    Leaf,
    PlanNode,
    PoissonSubsample,
    SampleWithoutReplacement,
)
from privkit.pld import PLDGuarantee

__all__ = ["RDPAccountant", "rdp_curve"]

Curve = NDArray[np.float64]


def rdp_curve(plan: Block, orders: NDArray[np.float64]) -> NDArray[np.float64]:
    """The plan's RDP bound at each of ``orders`` (see :class:`RDPAccountant`)."""
    return RDPAccountant(orders=orders).cost(plan)


def _gaussian_mu(block: Block) -> float | None:
    """The GDP parameter of a Gaussian leaf (the only block MTZ 2019 analyses)."""
    if isinstance(block, Leaf):
        for g in _leaves.guarantees(block):
            if isinstance(g, GDP):
                return g.mu
    return None


class RDPAccountant(Accountant[Curve]):
    """Compose RDP curves on a grid of orders; the native guarantee is
    ``RDP(orders, epsilons)`` (converted with Canonne-Kamath-Steinke only when asked).

    Besides leaves with an RDP curve and the composition nodes, it handles Poisson
    subsampling of a Gaussian leaf under ADD_REMOVE (Mironov, Talwar, Zhang 2019; the
    DP-SGD case, equal to opacus's RDP accountant) and sampling without replacement of any
    block under REPLACE_ONE (Wang, Balle, Kasiviswanathan 2019, Theorem 9).

    Notes
    -----
    Mironov 2017 (arXiv:1702.07476v3), Proposition 1 (adaptive sequential composition);
    parallel composition holds order by order because a neighbouring change touches one
    part. Each leaf contributes its smallest RDP bound at each order.

    Parameters
    ----------
    orders : sequence of float, optional
        Orders > 1 (default: :data:`privkit.conversions.DEFAULT_ORDERS`, opacus's grid).
    """

    name: ClassVar[str] = "rdp"
    adaptive_filter_note: ClassVar[str] = (
        "an RDP filter is valid at one fixed order (Feldman, Zrnic 2021); choosing the "
        "best order after the fact is not")

    def __init__(self, orders: Sequence[float] | NDArray[np.float64] | None = None) -> None:
        grid = np.asarray(conversions.DEFAULT_ORDERS if orders is None else orders, float)
        if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 1):
            raise check.fail("orders", orders, "a non-empty sequence of finite numbers > 1",
                             "RDPAccountant")
        self.orders = np.unique(grid)

    def accepts_leaf(self, leaf: Leaf) -> bool:
        return self._leaf_cost(leaf) is not None

    def _leaf_cost(self, leaf: Leaf) -> Curve | None:
        curve = _leaves.rdp(leaf, self.orders)
        return curve if bool(np.any(np.isfinite(curve))) else None

    def accepts_node(self, node: PlanNode) -> bool:
        if isinstance(node, PoissonSubsample):
            return (node.relation is Neighbouring.ADD_REMOVE
                    and _gaussian_mu(node.block) is not None)
        if isinstance(node, SampleWithoutReplacement):
            return node.relation is Neighbouring.REPLACE_ONE
        return True

    def leaf(self, leaf: Leaf) -> Curve:
        return _leaves.rdp(leaf, self.orders)

    def sequential(self, costs: Sequence[Curve]) -> Curve:
        total: Curve = np.sum(costs, axis=0)
        return total

    def parallel(self, costs: Sequence[Curve]) -> Curve:
        worst: Curve = np.max(costs, axis=0)
        return worst

    def repeat(self, cost: Curve, count: int) -> Curve:
        return float(count) * cost

    def poisson_subsample(self, cost: Curve, node: PoissonSubsample) -> Curve:
        mu = _gaussian_mu(node.block)
        assert mu is not None
        return poisson_gaussian_rdp(node.sampling_rate, 1.0 / mu, self.orders)

    def sample_without_replacement(self, cost: Curve, node: SampleWithoutReplacement
                                   ) -> Curve:
        """WBK 2019 Theorem 9 at integer orders; a fractional order uses the next integer
        one (RDP is non-decreasing in the order, so that bound holds)."""
        integer_orders = np.ceil(self.orders).astype(int)
        top = int(integer_orders.max())
        base = RDPAccountant(orders=np.arange(2, top + 1, dtype=float))._fold(node.block)
        pure = node.block.epsilon_at(0.0) if isinstance(node.block, Leaf) else math.inf
        fraction = node.sample_size / node.population_size
        cache = {a: without_replacement_rdp(fraction, base[: a - 1], pure, a)
                 for a in set(integer_orders.tolist())}
        return np.array([cache[int(a)] for a in integer_orders])

    def lower_bound(self, plan: Block, *, delta: float | None = None,
                    epsilon: float | None = None, evidence: Guarantee | None = None
                    ) -> float | None:
        """The conversion of a lower bound on the plan's Renyi divergences (from a
        two-sided PLD ``evidence``, :meth:`PLDGuarantee.renyi_lower`): this accountant's
        curve is at least that at every order, and the conversion is increasing in the
        curve."""
        if not isinstance(evidence, PLDGuarantee):
            return None
        curve = evidence.renyi_lower(self.orders)
        if epsilon is not None:
            return conversions.rdp_to_delta(self.orders, curve, epsilon=epsilon)[0]
        assert delta is not None
        return conversions.rdp_to_epsilon(self.orders, curve, delta=delta)[0]

    def curve(self, plan: Block) -> Curve:
        """The plan's RDP bound on this accountant's orders."""
        return self.cost(plan)

    def to_guarantee(self, cost: Curve) -> Guarantee:
        return RDP(orders=self.orders, epsilons=np.nan_to_num(cost, nan=math.inf))

