"""Run every accountant that supports a plan and keep the best certified bound.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs

from privkit import _validation as check
from privkit.accountant import Accountant, available_accountants
from privkit.errors import UnsupportedPlanError
from privkit.guarantees import Guarantee
from privkit.plan import Block

__all__ = ["AccountingResult", "tightest", "tightest_delta"]


@attrs.frozen(kw_only=True)
class AccountingResult:
    """The best bound over accountants, and what each accountant said.

    Attributes
    ----------
    epsilon, delta : float
        The best certified pair (one of the two was the target).
    accountant : str
        The name of the accountant that gave it.
    by_accountant : dict
        Each supporting accountant's value (epsilon for :func:`tightest`, delta for
        :func:`tightest_delta`).
    refused : dict
        Each accountant that refused the plan, with its reason.
    guarantee : Guarantee
        The winning accountant's native guarantee for the plan (``GDP(mu)`` from the GDP
        accountant, a PLD from the PLD accountant, ...), whose conversion at the target
        gives ``epsilon`` / ``delta``; estimators keep it as ``guarantee_``.

    .. versionchanged:: 0.2.0
       ``guarantee`` is the native guarantee, not an ``ApproxDP`` flattening of it.
    """

    epsilon: float
    delta: float
    accountant: str
    by_accountant: dict[str, float]
    refused: dict[str, str]
    guarantee: Guarantee

    def table(self) -> str:
        """A plain-text table of every accountant's answer."""
        target = "delta" if self.epsilon_was_target else "epsilon"
        rows = [f"{'accountant':<12} {target:>14}"]
        for name, value in sorted(self.by_accountant.items(), key=lambda kv: kv[1]):
            mark = "  <- tightest" if name == self.accountant else ""
            rows.append(f"{name:<12} {value:>14.6g}{mark}")
        rows += [f"{name:<12} {'refused':>14}  ({why})" for name, why in self.refused.items()]
        return "\n".join(rows)

    @property
    def epsilon_was_target(self) -> bool:
        """True for results of :func:`tightest_delta`."""
        return self.by_accountant.get(self.accountant) == self.delta


def _run(
    plan: Block, accountants: Sequence[Accountant[Any]] | None, owner: str
) -> tuple[list[Accountant[Any]], dict[str, str]]:
    refused: dict[str, str] = {}
    if accountants is None:  # every registered accountant whose numbers are bounds
        pool = []
        for a in available_accountants():
            if a.certified:
                pool.append(a)
            else:
                refused[a.name] = "its numbers are approximations, not upper bounds"
    else:
        pool = list(accountants)
        for i, a in enumerate(pool):
            check.instance(f"accountants[{i}]", a, Accountant, owner)
            if not a.certified:
                raise check.fail(f"accountants[{i}]", a, "an accountant whose numbers are "
                                 "upper bounds", owner, f"{a!r} computes an approximation")
    usable = []
    for a in pool:
        try:
            a.check(plan)
        except UnsupportedPlanError as exc:
            refused[a.name] = str(exc)
        else:
            usable.append(a)
    if not usable:
        raise UnsupportedPlanError(
            f"no accountant supports this plan: {'; '.join(refused.values())}"
        )
    return usable, refused


def tightest(
    plan: Block, *, delta: float, accountants: Sequence[Accountant[Any]] | None = None
) -> AccountingResult:
    """The smallest certified epsilon at ``delta`` over the accountants that support ``plan``.

    By default every registered accountant (:func:`privkit.available_accountants`) whose
    numbers are upper bounds is tried, third-party ones included.

    Examples
    --------
    >>> from privkit import tightest, Neighbouring
    >>> from privkit.mechanisms import Gaussian
    >>> g = Gaussian.for_gdp(0.5, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    >>> result = tightest(g.repeat(10), delta=1e-5)
    >>> result.accountant
    'gdp'
    """
    owner = "tightest"
    d = check.delta("delta", delta, owner)
    usable, refused = _run(plan, accountants, owner)
    natives = {a.name: a.guarantee(plan) for a in usable}
    values = {name: g.epsilon_at(d) for name, g in natives.items()}
    best = min(values, key=lambda name: values[name])
    return AccountingResult(epsilon=values[best], delta=d, accountant=best,
                            by_accountant=values, refused=refused, guarantee=natives[best])


def tightest_delta(
    plan: Block, *, epsilon: float, accountants: Sequence[Accountant[Any]] | None = None
) -> AccountingResult:
    """The smallest certified delta at ``epsilon`` over the accountants that support ``plan``."""
    owner = "tightest_delta"
    e = check.nonnegative("epsilon", epsilon, owner)
    usable, refused = _run(plan, accountants, owner)
    natives = {a.name: a.guarantee(plan) for a in usable}
    values = {name: (0.0 if math.isinf(e) else g.delta_at(e)) for name, g in natives.items()}
    best = min(values, key=lambda name: values[name])
    return AccountingResult(epsilon=e, delta=values[best], accountant=best,
                            by_accountant=values, refused=refused, guarantee=natives[best])


