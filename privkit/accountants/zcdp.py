"""zCDP accounting: rho adds under composition (Bun, Steinke 2016).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from privkit import _leaves, conversions
from privkit import _validation as check
from privkit.accountant import Accountant
from privkit.accountants._runs import Vacuous
from privkit.guarantees import ZCDP, Guarantee
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Leaf
from privkit.pld import PLDGuarantee

__all__ = ["ZCDPAccountant", "zcdp_rho"]


def zcdp_rho(plan: Block) -> float:
    """The plan's rho: sums over sequential runs, max over disjoint parts.

    Raises :class:`~privkit.errors.UnsupportedPlanError` for a block without a zCDP
    guarantee (see :class:`ZCDPAccountant`).
    """
    return ZCDPAccountant().cost(plan)


class ZCDPAccountant(Accountant[float]):
    """Compose in zCDP; its native guarantee is ``ZCDP(rho)`` (converted to (epsilon,
    delta) only when asked, with Canonne, Kamath, Steinke 2020).

    Notes
    -----
    Bun, Steinke 2016 (arXiv:1605.02065v1), Lemma 2.3 (adaptive composition): rhos add;
    parallel composition holds because a neighbouring change touches one part (see
    ``Parallel``). Each leaf contributes its smallest rho (Gaussian: exact; pure DP:
    ``eps^2 / 2``, their Proposition 1.4). Valid for a budget filter: Feldman, Zrnic 2021
    ("Individual privacy accounting via a Renyi filter"), Theorem 3.1, holds at every
    order, hence for zCDP with adaptively chosen rhos.
    """

    name: ClassVar[str] = "zcdp"
    valid_for_adaptive_filter: ClassVar[bool] = True
    adaptive_filter_note: ClassVar[str] = (
        "zCDP rhos add when each block and its rho are chosen adaptively (Feldman, Zrnic "
        "2021, Theorem 3.1, at every order)")

    def accepts_leaf(self, leaf: Leaf) -> bool:
        return math.isfinite(_leaves.rho(leaf))

    def _leaf_cost(self, leaf: Leaf) -> float | None:
        rho = _leaves.rho(leaf)
        return rho if math.isfinite(rho) else None

    def leaf(self, leaf: Leaf) -> float:
        return _leaves.rho(leaf)

    def sequential(self, costs: Sequence[float]) -> float:
        return math.fsum(costs)

    def parallel(self, costs: Sequence[float]) -> float:
        return max(costs)

    def repeat(self, cost: float, count: int) -> float:
        return count * cost

    def lower_bound(self, plan: Block, *, delta: float | None = None,
                    epsilon: float | None = None, evidence: Guarantee | None = None
                    ) -> float | None:
        """The conversion of a lower bound on rho: ``rho >= D_a / a`` at every order, and
        the Renyi divergences are bounded below by a two-sided PLD ``evidence``
        (:meth:`PLDGuarantee.renyi_lower`); the conversion is increasing in rho."""
        if not isinstance(evidence, PLDGuarantee):
            return None
        orders = np.asarray(conversions.DEFAULT_ORDERS)
        rho = float(np.max(evidence.renyi_lower(orders) / orders))
        if not rho > 0.0:
            return None
        if epsilon is not None:
            return conversions.zcdp_to_delta(rho, epsilon=epsilon) if math.isfinite(rho) else 1.0
        assert delta is not None
        return conversions.zcdp_to_epsilon(rho, delta=delta) if math.isfinite(rho) else math.inf

    # -- budget filters ----------------------------------------------------------------------

    def filter_limit(self, *, epsilon: float, delta: float) -> Any:
        """The largest rho whose (epsilon, delta) conversion fits the limit (refused for a
        pure-DP limit: zCDP implies no pure-DP guarantee)."""
        if delta == 0.0:
            raise check.fail("delta", delta, "> 0 for a zCDP filter", "BudgetFilter",
                             "zCDP implies no pure-DP guarantee")
        return (epsilon, delta, conversions.zcdp_rho_for_approx_dp(epsilon=epsilon, delta=delta))

    def filter_fits(self, total: float, limit: Any, slack: float) -> bool:
        return bool(total <= limit[2] * (1.0 + slack))

    def filter_spent(self, total: float | None, limit: Any) -> tuple[float, float]:
        if not total:
            return 0.0, 0.0
        return conversions.zcdp_to_epsilon(total, delta=limit[1]), limit[1]

    def filter_remaining(self, total: float | None, limit: Any, slack: float,
                         relation: Neighbouring) -> tuple[float, float]:
        """The rho left, as the largest epsilon of a pure block that still fits:
        ``sqrt(2 rho_left)`` (a pure block costs ``eps^2 / 2``, Bun, Steinke 2016,
        Proposition 1.4), and no delta (a block's delta cannot be charged to zCDP)."""
        left = max(0.0, limit[2] - (total or 0.0))
        return math.sqrt(2.0 * left), 0.0

    def to_guarantee(self, cost: float) -> Guarantee:
        if not math.isfinite(cost):
            return Vacuous("rho overflows")
        return ZCDP(rho=cost)

