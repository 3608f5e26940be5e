"""The budget filter: spend privacy block by block, never past a limit.

A filter is one state: it refuses to be pickled or copied (a copy in another process
would spend on a state of its own, and the spends would never add up), and a filter that
a forked child inherited refuses to spend there. :meth:`BudgetFilter.shared` gives the
form that crosses process boundaries (:class:`~privkit.SharedBudgetFilter`).

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   Pickling and copying are refused; :meth:`BudgetFilter.shared`.
"""

from __future__ import annotations

import threading
from typing import Any, NoReturn

from privkit import _validation as check
from privkit._budget import Budget, FilterEntry, current_pid
from privkit.accountant import Accountant, available_accountants, get_accountant
from privkit.errors import BudgetExceededError, IncompatibleCompositionError
from privkit.guarantees import ApproxDP, Guarantee, PureDP
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Leaf, PlanNode
from privkit.shared_filter import SharedBudgetFilter

__all__ = ["Budget", "BudgetFilter", "FilterEntry"]

#: Relative slack in budget comparisons, to absorb floating-point rounding in sums
#: (0.1 + 0.2 > 0.3 in binary floating point). 1e-12 of the limit is far below anything
#: that matters for privacy, and keeps exact-fit spends from being refused.
_SLACK = 1e-12

class BudgetFilter:
    """A privacy filter: accepts blocks while the composed cost stays within a limit.

    ``spend(block)`` either fits, and is recorded, or raises
    :class:`~privkit.errors.BudgetExceededError` and changes nothing. Check-and-record is
    atomic, so concurrent threads never overspend.

    A filter is one state. It cannot be pickled or copied, and a copy that a forked child
    process inherited refuses to spend: either would spend on a state of its own that
    this filter never sees. To spend one budget from worker processes (a
    ``multiprocessing`` pool, a ``ProcessPoolExecutor``, joblib, or scikit-learn with
    ``n_jobs > 1``), share it: ``with budget.shared() as shared:`` and hand ``shared``
    to the workers (see :meth:`shared`).

    Parameters
    ----------
    epsilon : float
        The limit's epsilon (finite, > 0).
    delta : float, default 0
        The limit's delta, in [0, 1).
    accountant : str or Accountant, default "basic"
        How spends compose: a registered accountant's name or an instance. The filter
        asks the accountant whether it is valid when each block, and its parameters, are
        chosen after seeing earlier outputs (``valid_for_adaptive_filter``, whose
        citation is its ``adaptive_filter_note``), and refuses it otherwise, with that
        note. Among privkit's own:

        * ``"basic"``: epsilons and deltas add (Rogers, Roth, Ullman, Vadhan 2016,
          Theorem 3.6). A block without a pure-DP guarantee must say how much delta it
          uses: ``spend(block, delta=...)``.
        * ``"zcdp"``: rhos add, and the limit is the largest rho whose (epsilon, delta)
          conversion fits (Feldman, Zrnic 2021, Theorem 3.1). A block is charged its own
          rho: ``spend(block, delta=...)`` is refused.

        advanced, optimal, RDP, GDP and PLD composition are refused (see their notes).
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
        accountant: str | Accountant[Any] = "basic",
        relation: Neighbouring | None = None,
    ) -> None:
        owner = "BudgetFilter"
        self._epsilon = check.positive_finite("epsilon", epsilon, owner)
        self._delta = check.delta("delta", delta, owner)
        self._accountant = _filter_accountant(accountant)
        self._relation = None if relation is None else Neighbouring.parse(relation, owner=owner)
        self._limit = self._accountant.filter_limit(epsilon=self._epsilon, delta=self._delta)
        self._entries: list[FilterEntry] = []
        self._history: tuple[FilterEntry, ...] = ()  # the entries as last read
        self._total: Any = None
        self._lock = threading.Lock()
        self._pid = current_pid()

    # -- state ------------------------------------------------------------------------------

    @property
    def limit(self) -> Guarantee:
        """The limit as a guarantee."""
        if self._delta == 0.0:
            return PureDP(epsilon=self._epsilon)
        return ApproxDP(epsilon=self._epsilon, delta=self._delta)

    @property
    def accountant(self) -> str:
        """The name of the accountant spends compose under."""
        return self._accountant.name

    @property
    def relation(self) -> Neighbouring | None:
        """The neighbouring relation (``None`` until the first spend if not given)."""
        return self._relation

    @property
    def history(self) -> tuple[FilterEntry, ...]:
        """Every accepted spend, in order."""
        with self._lock:  # a spend appends in O(1); the tuple is rebuilt on read
            if len(self._history) != len(self._entries):
                self._history = tuple(self._entries)
            return self._history

    @property
    def rho_limit(self) -> float | None:
        """For the zCDP rule: the largest total rho that fits the limit."""
        return float(self._limit[2]) if len(self._limit) > 2 else None

    @property
    def spent(self) -> Budget:
        """What has been spent, as (epsilon, delta) (for zCDP: the total rho converted
        at the limit's delta)."""
        epsilon, delta = self._accountant.filter_spent(self._total, self._limit)
        return Budget(epsilon=epsilon, delta=delta)

    @property
    def remaining(self) -> Budget:
        """What one more block may still cost, never below zero: for basic composition
        the limit minus what has been spent; for zCDP the rho left as the epsilon of a pure
        block that still fits (``sqrt(2 rho_left)``) and no delta; for other accountants
        the largest pure epsilon that still fits. A block costing ``remaining`` fits."""
        relation = self._relation or Neighbouring.ADD_REMOVE
        epsilon, delta = self._accountant.filter_remaining(self._total, self._limit, _SLACK,
                                                           relation)
        return Budget(epsilon=epsilon, delta=delta)

    # -- spending ---------------------------------------------------------------------------

    def cost(self, block: Block, *, delta: float | None = None) -> FilterEntry:
        """What spending ``block`` would cost under this filter's accountant (changes
        nothing)."""
        owner = "BudgetFilter.spend"
        check.instance("block", block, (Leaf, PlanNode), owner)
        if self._relation is not None and block.relation is not self._relation:
            raise IncompatibleCompositionError(
                f"cannot spend a {block.relation.name} block in a {self._relation.name} "
                "filter; build the block with the filter's neighbouring relation"
            )
        charge = self._accountant.filter_charge(block, delta=delta, owner=owner)
        epsilon, dlt = self._accountant.filter_spent(charge, self._limit)
        rho = float(charge) if self.rho_limit is not None else None
        return FilterEntry(block=block, epsilon=epsilon, delta=dlt, rho=rho, cost=charge)

    def can_spend(self, block: Block, *, delta: float | None = None) -> bool:
        """Whether ``spend(block, delta=delta)`` would succeed now."""
        if self._pid != current_pid():
            self._refuse_copy("can_spend")
        entry = self.cost(block, delta=delta)
        with self._lock:
            return self._fits(entry) is not None

    def spend(self, block: Block, *, delta: float | None = None) -> FilterEntry:
        """Record ``block`` if it fits; otherwise raise and change nothing.

        Raises
        ------
        BudgetExceededError
            If the block would take the filter over its limit. The filter is unchanged.
        InvalidParameterError, IncompatibleCompositionError, UnsupportedPlanError
            For a bad block or delta. The filter is unchanged.
        RuntimeError
            In a forked child process that inherited this filter (see the class
            docstring). Nothing is spent.
        """
        if self._pid != current_pid():
            self._refuse_copy("spend")
        entry = self.cost(block, delta=delta)
        with self._lock:
            total = self._fits(entry)
            if total is None:
                left = self.remaining
                raise BudgetExceededError(
                    f"spending {_describe(block)} (epsilon={entry.epsilon:.6g}, "
                    f"delta={entry.delta:.3g}{_rho_text(entry)}) would exceed the remaining "
                    f"budget (epsilon={left.epsilon:.6g}, delta={left.delta:.3g}) of the "
                    f"limit {self.limit} under the {self.accountant} accountant"
                )
            if self._relation is None:
                self._relation = block.relation
            elif block.relation is not self._relation:  # a concurrent first spend set it
                raise IncompatibleCompositionError(
                    f"cannot spend a {block.relation.name} block in a "
                    f"{self._relation.name} filter"
                )
            self._entries.append(entry)
            self._total = total
        return entry

    def _fits(self, entry: FilterEntry) -> Any:
        """The new total if ``entry`` fits, else None."""
        total = (entry.cost if self._total is None
                 else self._accountant.sequential([self._total, entry.cost]))
        return total if self._accountant.filter_fits(total, self._limit, _SLACK) else None

    # -- one state across processes -----------------------------------------------------------

    def shared(self) -> SharedBudgetFilter:
        """This filter's state, shared with other processes.

        Returns a :class:`~privkit.SharedBudgetFilter`: a context manager whose handles
        pickle into worker processes (``multiprocessing`` with fork or spawn,
        ``concurrent.futures.ProcessPoolExecutor``, joblib's loky backend, so
        scikit-learn's ``n_jobs > 1``) and spend on this filter, atomically: a spend from
        any process either fits and is recorded here or is refused and changes nothing.
        Close it (leave the ``with`` block) when the workers are done.

        Examples
        --------
        >>> from privkit import BudgetFilter
        >>> budget = BudgetFilter(epsilon=1.0)
        >>> with budget.shared() as shared:
        ...     pass  # pool.map(work, [shared] * 8): each worker calls shared.spend(...)
        >>> budget.spent.epsilon
        0.0

        .. versionadded:: 0.3.0
        """
        if self._pid != current_pid():
            self._refuse_copy("shared")
        return SharedBudgetFilter(self)

    def _refuse_copy(self, method: str) -> NoReturn:
        raise RuntimeError(
            f"BudgetFilter.{method}: this filter was made in process {self._pid} and "
            f"inherited by process {current_pid()} through fork; a spend here would be recorded on "
            "this copy only, unseen by the original. Share the filter before starting the "
            "workers: `with budget.shared() as shared:` and use `shared` in the workers"
        )

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError(
            "a BudgetFilter cannot be pickled or copied: a copy (in a worker process, or "
            "in this one) would spend on a state of its own, and its spends would never "
            "reach this filter. To spend one budget from worker processes, share it: "
            "`with budget.shared() as shared:` and pass `shared` (it pickles into "
            "multiprocessing, concurrent.futures and joblib workers, scikit-learn's "
            "n_jobs included, and spends on this filter)"
        )

    def __repr__(self) -> str:
        return (f"BudgetFilter(limit={self.limit}, accountant={self.accountant!r}, "
                f"spent={self.spent}, spends={len(self._entries)})")


def _filter_accountant(accountant: str | Accountant[Any]) -> Accountant[Any]:
    """The accountant instance, if it is valid for adaptively chosen blocks."""
    owner = "BudgetFilter"
    if isinstance(accountant, str):
        instance = get_accountant(accountant)
    else:
        instance = check.instance("accountant", accountant, (str, Accountant), owner)
    if not instance.valid_for_adaptive_filter:
        valid = [a.name for a in available_accountants() if a.valid_for_adaptive_filter]
        raise check.fail("accountant", accountant,
                         f"{' or '.join(map(repr, valid))} (the registered accountants valid "
                         "for adaptively chosen blocks)", owner, instance.adaptive_filter_note)
    return instance


def _describe(block: Block) -> str:
    return block.label() if isinstance(block, PlanNode) else str(block)


def _rho_text(entry: FilterEntry) -> str:
    return "" if entry.rho is None else f", rho={entry.rho:.6g}"
