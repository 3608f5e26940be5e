"""The ledger: a record of every mechanism invocation that actually ran.

Mechanisms call :func:`record` each time they release; inside ``with Ledger() as
ledger:`` every such call is appended to that ledger (and to every enclosing one).

Which ledgers a release is recorded in: the ledgers open in the current context
(:mod:`contextvars`: a thread, an asyncio task, or a context copied from one), and no
others. Concurrent tasks that each open their own ledger stay apart, and a release in an
unrelated thread is recorded in none of them. A new thread starts with an empty context,
so work handed to a thread or a thread pool from inside ``with Ledger()`` is recorded
only if it runs in a copy of the context that opened the ledger:
:func:`carry_context` wraps a function so that it does (``asyncio.to_thread`` copies it
already; ``loop.run_in_executor`` does not). Ledgers may be closed in any order; a closed
ledger records nothing more.

An algorithm declares a :mod:`plan <privkit.plan>` before it touches the data; its
ledger of what ran must match that plan, which :meth:`Ledger.compare` checks.

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   A release in a context with no open ledger is no longer recorded in every ledger open
   in the process; :func:`carry_context`.
"""

from __future__ import annotations

import contextvars
import functools
import threading
from collections import Counter
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import attrs

from privkit import _validation as check

if TYPE_CHECKING:
    from privkit.plan import Block

__all__ = ["Ledger", "LedgerComparison", "LedgerEntry", "carry_context", "record"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

_ACTIVE: contextvars.ContextVar[tuple[Ledger, ...]] = contextvars.ContextVar(
    "privkit_active_ledgers", default=()
)


@attrs.frozen
class LedgerEntry:
    """One recorded invocation: the block that ran and how many independent releases."""

    block: Any
    count: int


@attrs.frozen
class LedgerComparison:
    """The difference between what a plan declared and what a ledger recorded.

    ``missing`` maps each declared block to how many of its declared runs were not
    recorded; ``unexpected`` maps each recorded block to how many runs were not declared.
    """

    missing: dict[Any, int]
    unexpected: dict[Any, int]

    @property
    def matches(self) -> bool:
        """True when the ledger ran exactly the declared blocks, each as often."""
        return not self.missing and not self.unexpected

    def __bool__(self) -> bool:
        return self.matches

    def __str__(self) -> str:
        if self.matches:
            return "ledger matches plan"
        lines = ["ledger does not match plan:"]
        lines += [f"  declared but not run ({n}x): {b}" for b, n in self.missing.items()]
        lines += [f"  run but not declared ({n}x): {b}" for b, n in self.unexpected.items()]
        return "\n".join(lines)


class Ledger:
    """A context manager that collects :class:`LedgerEntry` records.

    A ledger records the releases made in the context that opened it (see the module
    docstring): in its own thread or task, and in work that runs in a copy of that
    context. A release made in another thread is recorded only if that thread runs in
    such a copy: hand work to threads through :func:`carry_context` (for example
    ``pool.map(carry_context(fit_one), seeds)``; an estimator that fits in a thread pool
    does the same with its own work). Processes share no ledger: a worker process
    records in ledgers it opens itself.

    Examples
    --------
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> from privkit import Ledger, Neighbouring, carry_context
    >>> from privkit.mechanisms import Laplace
    >>> mech = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    >>> with Ledger() as ledger:
    ...     _ = mech.release(3.0, rng=0)
    ...     _ = mech.release([1.0, 2.0], rng=0, size=4)
    >>> ledger.count(mech)
    5
    >>> ledger.compare(mech.repeat(5)).matches
    True

    Work handed to a thread pool, with and without the context:

    >>> with Ledger() as ledger, ThreadPoolExecutor(2) as pool:
    ...     _ = list(pool.map(carry_context(lambda x: mech.release(x, rng=0)), [1.0, 2.0]))
    ...     _ = pool.submit(mech.release, 3.0, rng=0).result()  # not carried: not recorded
    >>> ledger.count(mech)
    2

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.3.0
       Records its own context's releases only (no process-wide fallback).
    """

    def __init__(self) -> None:
        self._entries: list[LedgerEntry] = []
        self._lock = threading.Lock()
        self._open = False

    def __enter__(self) -> Ledger:
        if self._open:
            raise RuntimeError("this Ledger is already active; create a new one to nest")
        self._open = True
        _ACTIVE.set((*_ACTIVE.get(), self))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._open = False
        _ACTIVE.set(tuple(ledger for ledger in _ACTIVE.get() if ledger is not self))

    def _append(self, entry: LedgerEntry) -> None:
        with self._lock:
            self._entries.append(entry)

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """The recorded invocations, in order."""
        with self._lock:
            return tuple(self._entries)

    def counts(self) -> Counter[Any]:
        """How many releases each distinct block made."""
        totals: Counter[Any] = Counter()
        for entry in self.entries:
            totals[entry.block] += entry.count
        return totals

    def count(self, block: Any) -> int:
        """How many releases ``block`` made."""
        return self.counts()[block]

    def as_plan(self) -> Block:
        """What ran, as a plan: a Sequential of the blocks in the order they ran."""
        from privkit.plan import Repeat, Sequential

        steps = [e.block if e.count == 1 else Repeat(e.block, e.count) for e in self.entries]
        if not steps:
            raise check.fail("ledger", "empty", "non-empty to form a plan", "Ledger.as_plan")
        return steps[0] if len(steps) == 1 else Sequential(*steps)

    def compare(self, plan: Block) -> LedgerComparison:
        """Compare the recorded runs with the runs ``plan`` declares (as multisets)."""
        from privkit.plan import leaf_counts

        declared = leaf_counts(plan)
        recorded = self.counts()
        missing = dict(declared - recorded)
        unexpected = dict(recorded - declared)
        return LedgerComparison(missing=missing, unexpected=unexpected)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __getstate__(self) -> dict[str, Any]:
        """The entries only: the lock and whether it is open are not state."""
        return {"_entries": self.entries}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._entries = list(state["_entries"])
        self._lock = threading.Lock()
        self._open = False

    def __repr__(self) -> str:
        return f"Ledger({len(self)} entries)"


def record(block: Any, count: int = 1) -> None:
    """Record that ``block`` made ``count`` independent releases, in every ledger open in
    the current context.

    Mechanisms call this themselves; call it directly for a block that privkit does not
    run (a :class:`~privkit.plan.Claimed` block, an external library's release).
    """
    n = count if type(count) is int and count >= 1 else check.positive_int("count", count,
                                                                            "record")
    ledgers = _ACTIVE.get()
    if not ledgers:
        return
    entry = LedgerEntry(block=block, count=n)
    for ledger in ledgers:
        if ledger._open:
            ledger._append(entry)


def carry_context(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function``, made to run in a copy of the current context wherever it is called.

    Wrap work before handing it to another thread (``ThreadPoolExecutor.submit`` or
    ``map``, ``threading.Thread(target=...)``, a thread-based scheduler), so that the
    releases it makes are recorded in the ledgers open here (and the values of every
    other context variable are those of here). Each call runs in a fresh copy of the
    context current when ``carry_context`` was called, so concurrent calls never share
    one and a ledger opened inside the function stays its own. For threads only: a
    worker process shares no ledger with its parent (and the wrapper does not pickle).

    Examples
    --------
    >>> import threading
    >>> from privkit import Ledger, Neighbouring, carry_context
    >>> from privkit.mechanisms import Laplace
    >>> mech = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    >>> with Ledger() as ledger:
    ...     worker = threading.Thread(target=carry_context(mech.release), args=(0.0,))
    ...     worker.start(); worker.join()
    >>> len(ledger)
    1

    .. versionadded:: 0.3.0
    """
    context = contextvars.copy_context()

    @functools.wraps(function)
    def in_context(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return context.copy().run(function, *args, **kwargs)

    return in_context
