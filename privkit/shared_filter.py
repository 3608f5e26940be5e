"""One budget filter's state, spent on from several processes.

A :class:`~privkit.BudgetFilter` lives in one process. :meth:`BudgetFilter.shared
<privkit.BudgetFilter.shared>` serves it to others: it starts a small server (a thread
listening on a local socket, :mod:`multiprocessing.connection`) and returns a
:class:`SharedBudgetFilter`, a handle with the filter's interface. Handles pickle; a
handle unpickled in another process connects to the server and forwards each request to
the one filter, where check-and-record runs under the filter's lock: a spend from any
process either fits and is recorded there or is refused and changes nothing. In the
owning process a handle calls the filter directly.

Authentication. Each shared filter has its own random key, carried inside its pickled
handles, and the server accepts only connections that prove they hold it
(:mod:`multiprocessing.connection`'s HMAC challenge). A manager proxy instead proves the
process's ``multiprocessing`` authkey, which a worker process started by another library
need not share; carrying the key with the handle works in any worker that receives the
handle: ``multiprocessing`` pools (fork and spawn), ``concurrent.futures`` process pools
and joblib's loky backend (scikit-learn's ``n_jobs``). Whoever can read a pickled handle
can spend the budget (never raise it), as whoever reads a manager proxy's pickle can.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import contextlib
import pickle
import secrets
import threading
import weakref
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, Listener, Pipe, wait
from types import TracebackType
from typing import TYPE_CHECKING, Any, NoReturn

from privkit import _validation as check
from privkit._budget import Budget, FilterEntry, current_pid
from privkit.guarantees import Guarantee
from privkit.neighbouring import Neighbouring
from privkit.plan import Block

if TYPE_CHECKING:  # the filter module imports this one: it serves its filters
    from privkit.filter import BudgetFilter

__all__ = ["SharedBudgetFilter"]

#: What a handle may ask of the filter it shares: these calls, and these attributes.
_CALLS = frozenset({"spend", "can_spend", "cost"})
_READS = frozenset({"history", "spent", "remaining", "limit", "accountant", "relation",
                    "rho_limit"})
#: Seconds ``close`` waits for each server thread to finish its request.
_JOIN_SECONDS = 10.0

#: The live handles of this process, by filter: unpickling a handle where one of the same
#: filter is alive gives that one back (its connection, or the filter itself in the
#: owning process).
_HANDLES: weakref.WeakValueDictionary[bytes, SharedBudgetFilter] = (
    weakref.WeakValueDictionary())
_HANDLES_LOCK = threading.Lock()


class SharedBudgetFilter:
    """A handle on one :class:`~privkit.BudgetFilter` that works from any process.

    Made by :meth:`BudgetFilter.shared <privkit.BudgetFilter.shared>`. It has the
    filter's interface (``spend``, ``can_spend``, ``cost``, ``history``, ``spent``,
    ``remaining``, ``limit``, ``accountant``, ``relation``, ``rho_limit``) and every call
    answers from, or changes, the one filter. Pass it to worker processes as an argument
    (a pool's ``map``, ``submit``, ``initargs``, joblib's ``delayed``, scikit-learn's
    ``fit(..., budget_filter=shared)`` with ``n_jobs > 1``); a forked child that inherited
    it uses it the same way.

    It is a context manager: leaving the ``with`` block, or :meth:`close`, stops the
    server (its threads end and its socket is removed); it also stops when the handle is
    garbage collected or the interpreter exits. After that, workers can no longer spend
    (they get a ``RuntimeError`` and spend nothing); in the owning process the handle
    still reads and spends the filter directly.

    Raises
    ------
    RuntimeError
        In a worker, when the owner cannot be reached (it closed the handle, or exited).
        If the connection broke after a spend was sent, the spend may have been recorded:
        it then counts against the budget although the worker draws nothing for it.

    Examples
    --------
    >>> from concurrent.futures import ProcessPoolExecutor
    >>> from privkit import BudgetFilter, Claimed, Neighbouring, PureDP
    >>> budget = BudgetFilter(epsilon=1.0)
    >>> block = Claimed(PureDP(epsilon=0.6), relation=Neighbouring.ADD_REMOVE)
    >>> with budget.shared() as shared, ProcessPoolExecutor(2) as pool:
    ...     spends = [pool.submit(shared.spend, block) for _ in range(3)]
    ...     refused = sum(spend.exception() is not None for spend in spends)
    >>> refused, len(budget.history), budget.spent.epsilon
    (2, 1, 0.6)

    .. versionadded:: 0.3.0
    """

    _local: BudgetFilter | None
    _server: _Server | None

    def __init__(self, budget: BudgetFilter) -> None:
        if not all(callable(getattr(budget, name, None)) for name in _CALLS):
            raise check.fail("budget", budget, "a BudgetFilter", "SharedBudgetFilter")
        authkey = secrets.token_bytes(32)
        server = _Server(budget, authkey)
        self._setup(token=secrets.token_bytes(16), address=server.address, authkey=authkey,
                    owner=current_pid(), local=budget, server=server)
        weakref.finalize(self, server.close)
        with _HANDLES_LOCK:
            _HANDLES[self._token] = self

    def _setup(self, *, token: bytes, address: Any, authkey: bytes, owner: int,
               local: BudgetFilter | None, server: _Server | None) -> None:
        self._token = token
        self._address = address
        self._authkey = authkey
        self._owner = owner
        self._local = local
        self._server = server
        self._connection: Connection | None = None
        self._connection_pid = 0
        self._connection_lock = threading.Lock()

    @classmethod
    def _attach(cls, token: bytes, address: Any, authkey: bytes, owner: int
                ) -> SharedBudgetFilter:
        """The handle that a pickled handle becomes (see :func:`_attach`)."""
        with _HANDLES_LOCK:
            handle = _HANDLES.get(token)
            if handle is None:
                handle = cls.__new__(cls)
                handle._setup(token=token, address=address, authkey=authkey, owner=owner,
                              local=None, server=None)
                _HANDLES[token] = handle
            return handle

    # -- the filter's interface ---------------------------------------------------------------

    def spend(self, block: Block, *, delta: float | None = None) -> FilterEntry:
        """:meth:`BudgetFilter.spend <privkit.BudgetFilter.spend>` on the shared filter."""
        local = self._here()
        if local is not None:
            return local.spend(block, delta=delta)
        entry: FilterEntry = self._ask("call", "spend", block, delta=delta)
        return entry

    def can_spend(self, block: Block, *, delta: float | None = None) -> bool:
        """:meth:`BudgetFilter.can_spend <privkit.BudgetFilter.can_spend>` on the shared
        filter."""
        local = self._here()
        if local is not None:
            return local.can_spend(block, delta=delta)
        answer: bool = self._ask("call", "can_spend", block, delta=delta)
        return answer

    def cost(self, block: Block, *, delta: float | None = None) -> FilterEntry:
        """:meth:`BudgetFilter.cost <privkit.BudgetFilter.cost>` under the shared
        filter's accountant (changes nothing)."""
        local = self._here()
        if local is not None:
            return local.cost(block, delta=delta)
        entry: FilterEntry = self._ask("call", "cost", block, delta=delta)
        return entry

    @property
    def history(self) -> tuple[FilterEntry, ...]:
        """Every accepted spend, from every process, in order."""
        history: tuple[FilterEntry, ...] = self._read("history")
        return history

    @property
    def spent(self) -> Budget:
        """What has been spent, from every process."""
        spent: Budget = self._read("spent")
        return spent

    @property
    def remaining(self) -> Budget:
        """What one more block may still cost (:attr:`BudgetFilter.remaining
        <privkit.BudgetFilter.remaining>`)."""
        remaining: Budget = self._read("remaining")
        return remaining

    @property
    def limit(self) -> Guarantee:
        """The limit as a guarantee."""
        limit: Guarantee = self._read("limit")
        return limit

    @property
    def accountant(self) -> str:
        """The name of the accountant spends compose under."""
        name: str = self._read("accountant")
        return name

    @property
    def relation(self) -> Neighbouring | None:
        """The neighbouring relation (``None`` until the first spend if not given)."""
        relation: Neighbouring | None = self._read("relation")
        return relation

    @property
    def rho_limit(self) -> float | None:
        """For the zCDP rule: the largest total rho that fits the limit."""
        rho: float | None = self._read("rho_limit")
        return rho

    # -- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop serving the filter to other processes (in the owning process), or drop
        this process's connection to it (elsewhere). Idempotent."""
        if self._here() is not None:
            assert self._server is not None
            self._server.close()
            return
        with self._connection_lock:
            if self._connection is not None and self._connection_pid == current_pid():
                self._connection.close()
            self._connection = None

    @property
    def closed(self) -> bool:
        """In the owning process: whether the server has stopped. Elsewhere: False (a
        worker learns that the owner closed it when it next asks)."""
        return self._here() is not None and self._server is not None and self._server.closed

    def __enter__(self) -> SharedBudgetFilter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __reduce__(self) -> tuple[Any, ...]:
        if self.closed:
            raise TypeError("this SharedBudgetFilter is closed: its workers could not reach "
                            "the filter. Share the filter again with `budget.shared()`")
        return (_attach, (self._token, self._address, self._authkey, self._owner))

    def __repr__(self) -> str:
        local = self._here()
        if local is not None:
            state = "closed" if self.closed else "open"
            return f"SharedBudgetFilter({local!r}, {state})"
        return f"SharedBudgetFilter(handle on a filter of process {self._owner})"

    # -- plumbing -------------------------------------------------------------------------------

    def _here(self) -> BudgetFilter | None:
        """The filter itself, in the process that owns it (a forked child that inherited
        the handle is not that process: it asks the server)."""
        return self._local if self._owner == current_pid() else None

    def _read(self, name: str) -> Any:
        local = self._here()
        return getattr(local, name) if local is not None else self._ask("read", name)

    def _ask(self, kind: str, name: str, *args: Any, **kwargs: Any) -> Any:
        """One request to the owner's server, and its answer (or its exception, raised)."""
        with self._connection_lock:
            connection = self._connect()
            try:
                connection.send((kind, name, args, kwargs))
            except OSError:
                self._connection = None
                self._unreachable("nothing was spent")
            try:
                ok, value = connection.recv()
            except (EOFError, OSError):
                self._connection = None
                self._unreachable("the request was sent: if it was a spend, it may have "
                                  "been recorded, and nothing may be drawn for it")
        if not ok:
            raise value
        return value

    def _connect(self) -> Connection:
        if self._connection is None or self._connection_pid != current_pid():
            try:
                self._connection = Client(self._address, authkey=self._authkey)
            except AuthenticationError:
                self._connection = None
                raise RuntimeError(f"the shared budget filter of process {self._owner} "
                                   "refused this handle's key; nothing was spent") from None
            except (OSError, EOFError):
                self._connection = None
                self._unreachable("nothing was spent")
            self._connection_pid = current_pid()
        return self._connection

    def _unreachable(self, what: str) -> NoReturn:
        raise RuntimeError(
            f"cannot reach the shared budget filter of process {self._owner}: it was "
            f"closed, or that process exited; {what}. Keep the owner's `with "
            "budget.shared()` block open until the workers are done"
        ) from None


def _attach(token: bytes, address: Any, authkey: bytes, owner: int) -> SharedBudgetFilter:
    """Unpickle a handle: the live handle of the same filter in this process if there is
    one (so that a worker opens one connection per filter, and the owner gets its own
    handle back), else a new one that connects on first use."""
    return SharedBudgetFilter._attach(token, address, authkey, owner)


class _Server:
    """Serves one filter to authenticated connections: a thread accepts them, and one
    thread per connection answers its requests (so one slow client never holds up
    another; the filter's lock makes each request atomic)."""

    def __init__(self, state: BudgetFilter, authkey: bytes) -> None:
        self._state = state
        self._authkey = authkey
        self._listener = Listener(authkey=authkey)
        self.address = self._listener.address
        self._stop_reader, self._stop_writer = Pipe(duplex=False)
        self._pid = current_pid()
        self._lock = threading.Lock()
        self._closed = False
        self._threads: set[threading.Thread] = set()
        self._accepter = threading.Thread(target=self._accept, daemon=True,
                                          name="privkit-shared-filter-accept")
        self._accepter.start()

    @property
    def closed(self) -> bool:
        return self._closed

    def _accept(self) -> None:
        while True:
            try:
                connection = self._listener.accept()
            except (OSError, EOFError, AuthenticationError):
                if self._closed:
                    return
                continue  # a client that failed the handshake
            with self._lock:
                if self._closed:  # the connection that close() makes to wake us
                    connection.close()
                    return
                thread = threading.Thread(target=self._serve, args=(connection,),
                                          daemon=True, name="privkit-shared-filter-serve")
                self._threads.add(thread)
                thread.start()

    def _serve(self, connection: Connection) -> None:
        try:
            while True:
                if self._stop_reader in wait([connection, self._stop_reader]):
                    return
                try:
                    request = connection.recv()
                except (EOFError, OSError):
                    return  # the client closed its end
                except Exception as exc:  # a request this process cannot unpickle
                    answer: tuple[bool, Any] = (False, _portable(exc))
                else:
                    answer = self._answer(request)
                try:
                    connection.send(answer)
                except OSError:
                    raise
                except Exception as exc:  # an answer that cannot be pickled
                    connection.send((False, _portable(exc)))
        except OSError:
            return  # the client went away before its answer
        finally:
            connection.close()
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _answer(self, request: Any) -> tuple[bool, Any]:
        try:
            kind, name, args, kwargs = request
            if kind == "call" and name in _CALLS:
                return True, getattr(self._state, name)(*args, **kwargs)
            if kind == "read" and name in _READS and not args and not kwargs:
                return True, getattr(self._state, name)
            raise RuntimeError(f"a shared budget filter answers the calls {sorted(_CALLS)} "
                               f"and the attributes {sorted(_READS)} only")
        except Exception as exc:
            return False, _portable(exc)

    def close(self) -> None:
        """Stop accepting, end every connection once its current request is answered,
        remove the socket. Only the process that started the server can close it (a
        forked child's copy must not touch the parent's pipe)."""
        if self._pid != current_pid():
            return
        with self._lock:
            if self._closed:
                return
            self._closed = True
            threads = list(self._threads)
        self._stop_writer.send_bytes(b"stop")
        with contextlib.suppress(OSError, EOFError, AuthenticationError):
            # accept() has no timeout: one last connection wakes it
            Client(self.address, authkey=self._authkey).close()
        self._accepter.join(_JOIN_SECONDS)
        for thread in threads:
            thread.join(_JOIN_SECONDS)
        self._listener.close()
        if not self._accepter.is_alive() and not any(t.is_alive() for t in threads):
            self._stop_reader.close()
            self._stop_writer.close()


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling (privkit's errors do), else a RuntimeError with its
    type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc
