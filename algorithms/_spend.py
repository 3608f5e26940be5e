"""How an estimator spends its budget: on a caller's ``BudgetFilter`` before any noise is
drawn, and with a word when it is fitted where spending is easy to lose count of.

Every private estimator's ``fit`` calls :func:`charge` once, with the block it is about to
run (its plan, or for a classifier with a private label set the whole
``(epsilon, delta)`` as a claimed block), before it draws anything.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

from privkit import _validation as check
from privkit.filter import BudgetFilter
from privkit.plan import Block

__all__ = ["charge"]


def charge(estimator: Any, block: Block, budget_filter: Any, *,
           delta: float | None = None) -> None:
    """Spend ``block`` on ``budget_filter`` (if given) before any noise is drawn; a block
    that does not fit raises :class:`~privkit.errors.BudgetExceededError` with nothing run.

    ``delta``: the estimator's delta, for a block that is not pure. A basic-composition
    filter charges such a block its epsilon at that delta (it asks every approximate
    block for one); the other filters compose the block's own guarantee and take none.
    """
    if budget_filter is None:
        return
    check.instance("budget_filter", budget_filter, BudgetFilter, type(estimator).__name__)
    if delta and budget_filter.accountant == "basic":
        budget_filter.spend(block, delta=delta)
    else:
        budget_filter.spend(block)
