"""The budget filter: spend privacy block by block, never past a limit.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
import threading
from typing import Any

import attrs

from privkit import _validation as check
from privkit import conversions
from privkit.accountant import Accountant
from privkit.accountants.basic import BasicAccountant
from privkit.accountants.zcdp import ZCDPAccountant, zcdp_rho
from privkit.errors import BudgetExceededError, IncompatibleCompositionError
from privkit.guarantees import ApproxDP, Guarantee, PureDP
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Leaf, PlanNode

__all__ = ["Budget", "BudgetFilter", "FilterEntry"]

#: Relative slack in budget comparisons, to absorb floating-point rounding in sums
#: (0.1 + 0.2 > 0.3 in binary floating point). 1e-12 of the limit is far below anything
#: that matters for privacy, and keeps exact-fit spends from being refused.
_SLACK = 1e-12


@attrs.frozen(kw_only=True)
class Budget:
    """An (epsilon, delta) amount: what a filter has spent or has left."""

    epsilon: float
    delta: float


@attrs.frozen(kw_only=True)
class FilterEntry:
    """One accepted spend: the block and what it cost under the filter's rule."""

    block: Block
    epsilon: float
    delta: float
    rho: float | None = None


class BudgetFilter:
    """A privacy filter: accepts blocks while the composed cost stays within a limit.

    ``spend(block)`` either fits, and is recorded, or raises
    :class:`~privkit.errors.BudgetExceededError` and changes nothing. Check-and-record is
    atomic, so concurrent threads never overspend.

    Parameters
    ----------
    epsilon : float
        The limit's epsilon (finite, > 0).
    delta : float, default 0
        The limit's delta, in [0, 1).
    accountant : {"basic", "zcdp"} or Accountant, default "basic"
        How spends compose. Only accountants that are valid when each block is chosen
        after seeing earlier outputs are accepted:

        * ``"basic"``: epsilons and deltas add. Valid for adaptively chosen blocks and
          adaptively chosen parameters (Rogers, Roth, Ullman, Vadhan 2016, Theorem 3.6).
          A block without a pure-DP guarantee must say how much delta it uses:
          ``spend(block, delta=...)``.
        * ``"zcdp"``: rhos add, and the limit is the largest rho whose (epsilon, delta)
          conversion fits. Valid for adaptively chosen blocks (Feldman, Zrnic 2021,
          Theorem 3.1, at every order, hence for zCDP).

        Every other accountant is refused, with the reason: advanced, optimal, GDP and
        PLD composition assume the blocks (or at least their parameters) are fixed in
        advance, and an RDP filter is only valid at one order fixed in advance.
    relation : Neighbouring, optional
        The neighbouring relation of every block; by default, that of the first spend.

    Examples
    --------
    >>> from privkit import BudgetFilter, Neighbouring, BudgetExceededError
    >>> from privkit.mechanisms import Laplace
    >>> f = BudgetFilter(epsilon=1.0)
    >>> query = Laplace.for_epsilon(0.4, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    >>> _ = f.spend(query); _ = f.spend(query)
    >>> f.remaining.epsilon  # doctest: +ELLIPSIS
    0.19999...
    >>> try:
    ...     f.spend(query)
    ... except BudgetExceededError as e:
    ...     print("refused")
    refused
    >>> len(f.history)
    2

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        accountant: str | Accountant = "basic",
        relation: Neighbouring | None = None,
    ) -> None:
        owner = "BudgetFilter"
        self._epsilon = check.positive_finite("epsilon", epsilon, owner)
        self._delta = check.delta("delta", delta, owner)
        self._rule = _rule_name(accountant)
        self._relation = None if relation is None else Neighbouring.parse(relation, owner=owner)
        self._rho_limit = (
            _largest_rho(self._epsilon, self._delta) if self._rule == "zcdp" else None
        )
        self._entries: tuple[FilterEntry, ...] = ()
        self._lock = threading.Lock()

    # -- state ------------------------------------------------------------------------------

    @property
    def limit(self) -> Guarantee:
        """The limit as a guarantee."""
        if self._delta == 0.0:
            return PureDP(epsilon=self._epsilon)
        return ApproxDP(epsilon=self._epsilon, delta=self._delta)

    @property
    def accountant(self) -> str:
        """The composition rule's name (``"basic"`` or ``"zcdp"``)."""
        return self._rule

    @property
    def relation(self) -> Neighbouring | None:
        """The neighbouring relation (``None`` until the first spend if not given)."""
        return self._relation

    @property
    def history(self) -> tuple[FilterEntry, ...]:
        """Every accepted spend, in order."""
        return self._entries

    @property
    def rho_limit(self) -> float | None:
        """For the zCDP rule: the largest total rho that fits the limit."""
        return self._rho_limit

    @property
    def spent(self) -> Budget:
        """What has been spent, as (epsilon, delta) at the limit's delta for zCDP."""
        return _total(self._entries, self._rule, self._delta)

    @property
    def remaining(self) -> Budget:
        """The limit minus what has been spent (never below zero)."""
        used = self.spent
        return Budget(epsilon=max(0.0, self._epsilon - used.epsilon),
                      delta=max(0.0, self._delta - used.delta))

    # -- spending ---------------------------------------------------------------------------

    def cost(self, block: Block, *, delta: float | None = None) -> FilterEntry:
        """What spending ``block`` would cost under this filter's rule (changes nothing)."""
        owner = "BudgetFilter.spend"
        check.instance("block", block, (Leaf, PlanNode), owner)
        if self._relation is not None and block.relation is not self._relation:
            raise IncompatibleCompositionError(
                f"cannot spend a {block.relation.name} block in a {self._relation.name} "
                "filter; build the block with the filter's neighbouring relation"
            )
        if self._rule == "zcdp":
            ZCDPAccountant().check(block)
            rho = zcdp_rho(block)
            return FilterEntry(block=block, epsilon=conversions.zcdp_to_epsilon(
                rho, self._delta) if self._delta > 0 else math.inf, delta=0.0, rho=rho)
        basic = BasicAccountant()
        basic.check(block)
        pure = basic.epsilon(block, delta=0.0)
        if math.isfinite(pure):
            return FilterEntry(block=block, epsilon=pure, delta=0.0)
        if delta is None:
            raise check.fail(
                "delta", delta, "a number in (0, 1)", owner,
                f"{_describe(block)} has no pure-DP guarantee: say how much of the "
                f"filter's delta ({self._delta:g}) it may use, spend(block, delta=...)",
            )
        share = check.open_unit("delta", delta, owner)
        return FilterEntry(block=block, epsilon=basic.epsilon(block, delta=share), delta=share)

    def can_spend(self, block: Block, *, delta: float | None = None) -> bool:
        """Whether ``spend(block, delta=delta)`` would succeed now."""
        entry = self.cost(block, delta=delta)
        with self._lock:
            return self._fits(entry)

    def spend(self, block: Block, *, delta: float | None = None) -> FilterEntry:
        """Record ``block`` if it fits; otherwise raise and change nothing.

        Raises
        ------
        BudgetExceededError
            If the block would take the filter over its limit. The filter is unchanged.
        InvalidParameterError, IncompatibleCompositionError, UnsupportedPlanError
            For a bad block or delta. The filter is unchanged.
        """
        entry = self.cost(block, delta=delta)
        with self._lock:
            if not self._fits(entry):
                used = _total(self._entries, self._rule, self._delta)
                raise BudgetExceededError(
                    f"spending {_describe(block)} (epsilon={entry.epsilon:.6g}, "
                    f"delta={entry.delta:.3g}{_rho_text(entry)}) would exceed the remaining "
                    f"budget (epsilon={max(0.0, self._epsilon - used.epsilon):.6g}, "
                    f"delta={max(0.0, self._delta - used.delta):.3g}) of the limit "
                    f"{self.limit}"
                )
            if self._relation is None:
                self._relation = block.relation
            elif block.relation is not self._relation:  # a concurrent first spend set it
                raise IncompatibleCompositionError(
                    f"cannot spend a {block.relation.name} block in a "
                    f"{self._relation.name} filter"
                )
            self._entries = (*self._entries, entry)
        return entry

    def _fits(self, entry: FilterEntry) -> bool:
        if self._rule == "zcdp":
            assert self._rho_limit is not None
            assert entry.rho is not None
            total = math.fsum([*(e.rho or 0.0 for e in self._entries), entry.rho])
            return total <= self._rho_limit * (1.0 + _SLACK)
        eps = math.fsum([*(e.epsilon for e in self._entries), entry.epsilon])
        dlt = math.fsum([*(e.delta for e in self._entries), entry.delta])
        return eps <= self._epsilon * (1.0 + _SLACK) and dlt <= self._delta * (1.0 + _SLACK)

    # -- pickling (the lock is not state) ------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"BudgetFilter(limit={self.limit}, accountant={self._rule!r}, "
                f"spent={self.spent}, spends={len(self._entries)})")


#: Why each other accountant cannot back a filter, whose blocks and their parameters may be
#: chosen after seeing earlier outputs.
_NOT_ADAPTIVE = {
    "advanced": "advanced composition holds for adaptively chosen blocks with parameters "
                "fixed in advance; with adaptively chosen parameters it needs the larger "
                "constants of Rogers, Roth, Ullman, Vadhan (2016), not implemented here",
    "optimal": "optimal composition (Kairouz, Oh, Viswanath 2015) is exact only for blocks "
               "fixed in advance",
    "rdp": "an RDP filter is valid at one fixed order (Feldman, Zrnic 2021); choosing the "
           "best order after the fact is not",
    "gdp": "composition of GDP blocks with adaptively chosen mu needs the filter of "
           "Smith and Thakurta (2022), not implemented here",
    "pld": "PLD composition assumes the blocks are fixed in advance; fully adaptive PLD "
           "filters (Whitehouse, Ramdas, Rogers, Wu 2023) are not implemented here",
}


def _rule_name(accountant: str | Accountant) -> str:
    owner = "BudgetFilter"
    name = accountant.name if isinstance(accountant, Accountant) else accountant
    if name in ("basic", "zcdp"):
        return str(name)
    why = _NOT_ADAPTIVE.get(str(name), "it is not a privkit accountant valid for filters")
    raise check.fail("accountant", accountant, "'basic' or 'zcdp'", owner, why)


def _largest_rho(epsilon: float, delta: float) -> float:
    """The zCDP budget equivalent to the limit (refused for pure-DP limits)."""
    if delta == 0.0:
        raise check.fail("delta", delta, "> 0 for a zCDP filter", "BudgetFilter",
                         "zCDP implies no pure-DP guarantee")
    return conversions.zcdp_rho_for_approx_dp(epsilon, delta)


def _total(entries: tuple[FilterEntry, ...], rule: str, delta: float) -> Budget:
    if rule == "zcdp":
        rho = math.fsum(e.rho or 0.0 for e in entries)
        eps = conversions.zcdp_to_epsilon(rho, delta) if rho > 0 else 0.0
        return Budget(epsilon=eps, delta=delta if rho > 0 else 0.0)
    return Budget(epsilon=math.fsum(e.epsilon for e in entries),
                  delta=math.fsum(e.delta for e in entries))


def _describe(block: Block) -> str:
    return block.label() if isinstance(block, PlanNode) else str(block)


def _rho_text(entry: FilterEntry) -> str:
    return "" if entry.rho is None else f", rho={entry.rho:.6g}"
