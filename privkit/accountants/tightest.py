"""Run every accountant that supports a plan and keep the best certified bound.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from privkit import _validation as check
from privkit.accountant import Accountant
from privkit.errors import UnsupportedPlanError
from privkit.guarantees import ApproxDP, Guarantee, PureDP
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
    """

    epsilon: float
    delta: float
    accountant: str
    by_accountant: dict[str, float]
    refused: dict[str, str]

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
    def guarantee(self) -> Guarantee:
        """The result as a guarantee: ``PureDP`` at delta 0, else ``ApproxDP``."""
        if self.delta == 0.0:
            return PureDP(epsilon=max(self.epsilon, 5e-324))
        return ApproxDP(epsilon=max(self.epsilon, 5e-324), delta=self.delta)

    @property
    def epsilon_was_target(self) -> bool:
        """True for results of :func:`tightest_delta`."""
        return self.by_accountant.get(self.accountant) == self.delta


def _run(
    plan: Block, accountants: Sequence[Accountant] | None, owner: str
) -> tuple[list[Accountant], dict[str, str]]:
    from privkit.accountants import available_accountants

    pool = list(available_accountants() if accountants is None else accountants)
    for i, a in enumerate(pool):
        check.instance(f"accountants[{i}]", a, Accountant, owner)
        if not a.certified:
            raise check.fail(f"accountants[{i}]", a, "an accountant whose numbers are upper "
                             "bounds", owner, f"{a!r} computes an approximation")
    usable, refused = [], {}
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
    plan: Block, *, delta: float, accountants: Sequence[Accountant] | None = None
) -> AccountingResult:
    """The smallest certified epsilon at ``delta`` over the accountants that support ``plan``.

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
    values = {a.name: a.epsilon(plan, delta=d) for a in usable}
    best = min(values, key=lambda name: values[name])
    return AccountingResult(epsilon=values[best], delta=d, accountant=best,
                            by_accountant=values, refused=refused)


def tightest_delta(
    plan: Block, *, epsilon: float, accountants: Sequence[Accountant] | None = None
) -> AccountingResult:
    """The smallest certified delta at ``epsilon`` over the accountants that support ``plan``."""
    owner = "tightest_delta"
    e = check.nonnegative("epsilon", epsilon, owner)
    usable, refused = _run(plan, accountants, owner)
    values = {a.name: a.delta(plan, epsilon=e) for a in usable}
    best = min(values, key=lambda name: values[name])
    return AccountingResult(epsilon=e, delta=values[best], accountant=best,
                            by_accountant=values, refused=refused)


