"""Advanced composition: Dwork-Rothblum-Vadhan and Kairouz-Oh-Viswanath bounds.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import ClassVar

from privkit import composition
from privkit.accountant import Accountant
from privkit.accountants import _runs
from privkit.plan import Block

__all__ = ["AdvancedAccountant"]


class AdvancedAccountant(Accountant):
    """The best of the advanced composition theorems for (epsilon, delta) blocks.

    For runs of (eps_i, delta_i)-DP blocks and a target delta, the part of the target
    left after the blocks' own deltas, ``delta_slack = 1 - (1 - delta) / prod(1 -
    delta_i)``, is spent on the composition theorem, and the result is the smallest of

    * the basic sum of the eps_i;
    * Dwork-Rothblum-Vadhan 2010 (Dwork, Roth 2014, Thm 3.20) when all blocks share one
      epsilon: ``sqrt(2 k ln(1/delta_slack)) eps + k eps (e^eps - 1)``;
    * Kairouz-Oh-Viswanath 2015, Theorem 3.5, for heterogeneous epsilons.

    Supports leaves with a pure-DP or ``ApproxDP`` guarantee, Sequential, Repeat,
    PostProcess, and Parallel nodes over pure blocks. Valid for adaptively chosen blocks
    with fixed parameters (DRV 2010).
    """

    name: ClassVar[str] = "advanced"

    def _handles(self, block: Block) -> bool:
        return _runs.handles(block)

    def _epsilon(self, plan: Block, delta: float) -> float:
        groups = _runs.runs(plan)
        total = math.fsum(e * n for e, _, n in groups)
        survive = math.prod((1.0 - d) ** n for _, d, n in groups)
        if survive < 1.0 - delta:  # the blocks' own deltas exceed the target
            return math.inf
        slack = 1.0 - (1.0 - delta) / survive if survive > 0 else 0.0
        if slack <= 0.0:
            return total
        candidates = [total]
        if len(groups) == 1:
            e, _, n = groups[0]
            candidates.append(composition.drv_epsilon(e, n, slack))
        expanded = [e for e, _, n in groups for _ in range(n)]
        candidates.append(composition.kov_heterogeneous_epsilon(expanded, slack))
        return min(candidates)
