"""The Accountant abstraction: turn a plan into a guarantee.

An accountant is stateless: it maps a :mod:`plan <privkit.plan>` (a tree of blocks) to
the privacy it can certify for it. Each says which nodes it has an analysis for and
refuses the rest with :class:`~privkit.errors.UnsupportedPlanError`, naming the node and
the accountants that can handle it. :func:`privkit.tightest` runs every accountant that
supports a plan and reports the best.

Subclasses implement ``_handles(block)`` (is there an analysis for this node or leaf,
ignoring its children?) and ``_epsilon(plan, delta)``; accountants with a direct formula
for delta override ``_delta``.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import abc
import math
from typing import ClassVar

from privkit import _validation as check
from privkit.errors import UnsupportedPlanError
from privkit.guarantees import ApproxDP, Guarantee, PureDP
from privkit.plan import Block, Leaf, PlanNode

__all__ = ["Accountant"]


class Accountant(abc.ABC):
    """Base class of accountants.

    Attributes
    ----------
    name : str
        Short name used by :func:`privkit.tightest`, the CLI and error messages.
    valid_for_adaptive_filter : bool
        Whether a :class:`~privkit.BudgetFilter` may use this accountant when each block
        is chosen after seeing the previous outputs (see the filter's documentation).
    certified : bool
        Whether every number it returns is an upper bound (False for approximations).
    """

    name: ClassVar[str]
    valid_for_adaptive_filter: ClassVar[bool] = False
    #: False for accountants whose numbers are approximations, not upper bounds;
    #: :func:`privkit.tightest` refuses to use them.
    certified: bool = True

    @abc.abstractmethod
    def _handles(self, block: Block) -> bool:
        """Whether this accountant has an analysis for ``block`` itself (not its children)."""

    @abc.abstractmethod
    def _epsilon(self, plan: Block, delta: float) -> float:
        """Epsilon at ``delta`` for a plan already known to be supported."""

    def first_unsupported(self, plan: Block) -> Block | None:
        """The first block in ``plan`` (depth first) this accountant cannot analyse."""
        check.instance("plan", plan, (Leaf, PlanNode), f"{type(self).__name__}")
        if not self._handles(plan):
            return plan
        if isinstance(plan, PlanNode):
            for child in plan.children:
                found = self.first_unsupported(child)
                if found is not None:
                    return found
        return None

    def supports(self, plan: Block) -> bool:
        """Whether this accountant can account for every node of ``plan``."""
        return self.first_unsupported(plan) is None

    def check(self, plan: Block) -> None:
        """Raise :class:`UnsupportedPlanError` if some node of ``plan`` is unsupported."""
        node = self.first_unsupported(plan)
        if node is None:
            return
        from privkit.accountants import available_accountants

        able = [a.name for a in available_accountants() if a._handles(node)]
        what = node.label() if isinstance(node, PlanNode) else str(node)
        can = (f"accountants that can: {', '.join(able)}" if able
               else "no available accountant handles it")
        raise UnsupportedPlanError(
            f"the {self.name} accountant cannot account for {what} "
            f"({type(node).__name__}); {can}"
        )

    def epsilon(self, plan: Block, *, delta: float) -> float:
        """A certified epsilon such that ``plan`` is (epsilon, delta)-DP (may be ``inf``)."""
        d = check.delta("delta", delta, f"{type(self).__name__}.epsilon")
        self.check(plan)
        return self._epsilon(plan, d)

    def delta(self, plan: Block, *, epsilon: float) -> float:
        """A certified delta such that ``plan`` is (epsilon, delta)-DP (at most 1)."""
        e = check.nonnegative("epsilon", epsilon, f"{type(self).__name__}.delta")
        self.check(plan)
        return self._delta(plan, e)

    def _delta(self, plan: Block, epsilon: float) -> float:
        """Default: the smallest delta whose epsilon fits, by bisection on log(delta).

        Every delta returned has been checked: ``_epsilon(plan, result) <= epsilon``.
        """
        if self._epsilon(plan, 0.0) <= epsilon:
            return 0.0
        lo, hi = -700.0, math.log1p(-1e-12)  # log delta, from ~1e-304 to just below 1
        if self._epsilon(plan, math.exp(hi)) > epsilon:
            return 1.0
        if self._epsilon(plan, math.exp(lo)) <= epsilon:
            return math.exp(lo)
        for _ in range(60):  # relative precision of delta ~ 700 / 2^60
            mid = (lo + hi) / 2.0
            if self._epsilon(plan, math.exp(mid)) <= epsilon:
                hi = mid
            else:
                lo = mid
        return math.exp(hi)

    def guarantee(self, plan: Block, *, delta: float) -> Guarantee:
        """The (epsilon, delta) guarantee for ``plan`` at ``delta``.

        Raises
        ------
        UnsupportedPlanError
            If the plan has a node this accountant cannot analyse, or if it certifies no
            finite epsilon at this delta.
        """
        eps = self.epsilon(plan, delta=delta)
        if not math.isfinite(eps):
            raise UnsupportedPlanError(
                f"the {self.name} accountant certifies no finite epsilon for this plan at "
                f"delta={delta!r}; allow a larger delta"
            )
        eps = max(eps, 5e-324)  # a guarantee's epsilon must be > 0
        return PureDP(epsilon=eps) if delta == 0.0 else ApproxDP(epsilon=eps, delta=delta)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
