"""FedDPDR-DPML on Flower: the participants as Flower clients, the weighted averaging as a
Flower server strategy (Wang et al. 2024, "Differentially private SVMs with knowledge
aggregation", Algorithm 1; Beutel et al. 2020, "Flower: a friendly federated learning
framework", arXiv:2007.14390).

The protocol is the one of :mod:`privkit.algorithms.federated`, run over Flower's gRPC
transport instead of in one process: three Flower rounds, one per phase of
:data:`~privkit.algorithms.federated.PHASES`, each client's release computed by
:meth:`~privkit.algorithms.FedDPDRDPMLClassifier.participant_release`, as in process.

- Round 1 (``phase="labels"``): every client sends its label set (the declared one, or
  its own private release); the strategy takes their union
  (:meth:`~privkit.algorithms.federated.Server.union`) and ends the run when it holds
  fewer than two labels.
- Round 2 (``phase="subspace"``): every client releases its private subspace (DPDR,
  Algorithm 2, on its own rows); the strategy aligns their signs and averages them by data
  size (:meth:`~privkit.algorithms.federated.Server.average_subspaces`).
- Round 3 (``phase="model"``): every client trains the objective-perturbation SVM on its
  rows projected on the global subspace and releases ``[coef | intercept]``; the strategy
  averages them by data size (:meth:`~privkit.algorithms.federated.Server.average`).

The strategy orders the clients' replies by participant index before aggregating, so the
result does not depend on the order in which replies arrive, and a run equals the
in-process run of :class:`~privkit.algorithms.FedDPDRDPMLClassifier` with the same
``random_state`` (same child streams, same code, arrays sent losslessly; labels must be
numbers or strings, which Flower's arrays carry without pickling).

Deployment: Flower's simulation engine needs ``ray`` (the ``flwr[simulation]`` extra), so
:func:`run_local_deployment` runs a local deployment instead: Flower's server
(``flwr.server.start_server``) in the calling thread and one Flower client
(``flwr.client.start_client``) per participant in its own thread, talking gRPC on
``127.0.0.1``. Both functions are deprecated by Flower since 1.13 in favour of the
``flower-superlink`` / ``flower-supernode`` commands, but remain the API that runs a
deployment from one Python call (checked with flwr 1.42). ``start_server`` installs
signal handlers, so the deployment runs from the main thread; the handlers it replaces
are restored afterwards. Flower's telemetry is switched off unless the environment
variable ``FLWR_TELEMETRY_ENABLED`` says otherwise (set before flwr is first imported).

flwr is imported by the functions that need it: importing this module does not load it.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import functools
import gc
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.ledger import Ledger, record

from .federated import PHASES, FedDPDRDPMLClassifier, Federation, Participant, Server

__all__ = [
    "FlowerFedDPDRDPMLClassifier",
    "averaging_strategy",
    "participant_client",
    "run_local_deployment",
]

#: Seconds the server waits for every client to connect, and for a round's replies.
TIMEOUT = 600


def _import_flwr() -> Any:
    os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")  # no network beyond localhost
    import flwr

    return flwr


@functools.cache
def _classes() -> tuple[type[Any], type[Any]]:
    """The Flower client and strategy classes, built on first use (flwr loads here)."""
    _import_flwr()
    from flwr.client import NumPyClient
    from flwr.common import (
        FitIns,
        FitRes,
        Parameters,
        Scalar,
        ndarrays_to_parameters,
        parameters_to_ndarrays,
    )
    from flwr.server.client_manager import ClientManager
    from flwr.server.client_proxy import ClientProxy
    from flwr.server.strategy import FedAvg

    class ParticipantClient(NumPyClient):
        """One participant as a Flower client: it holds its rows and releases, in each
        round, what :meth:`FedDPDRDPMLClassifier.participant_release` computes for that
        phase (``protocol`` holds the public parameters). What it releases is recorded in
        its own ``ledger``; an exception is kept in ``error`` and reported to the server,
        so the run stops cleanly."""

        def __init__(self, participant: Participant, *, index: int,
                     protocol: FedDPDRDPMLClassifier) -> None:
            self.participant = participant
            self.index = index
            self.protocol = protocol
            self.ledger = Ledger()
            self.error: BaseException | None = None

        def get_parameters(self, config: dict[str, Scalar]) -> list[NDArray[Any]]:
            return []

        def fit(self, parameters: list[NDArray[Any]], config: dict[str, Scalar]
                ) -> tuple[list[NDArray[Any]], int, dict[str, Scalar]]:
            try:
                with self.ledger:
                    out = self.protocol.participant_release(self.participant,
                                                            str(config.get("phase")),
                                                            list(parameters))
            except Exception as exc:  # reported to the server, re-raised by the caller
                self.error = exc
                return [], 0, {"participant": self.index, "error": str(exc)}
            return [out], self.participant.size, {"participant": self.index}

    class AveragingStrategy(FedAvg):
        """FedAvg's client selection with Wang et al.'s aggregation, one phase per round:
        round 1 takes the union of the label sets, round 2 averages subspaces (signs
        aligned, re-orthonormalised), round 3 averages models, both weighted by the data
        sizes the clients report (Section 4.1, ``w_i = n_i / sum n``). Every participant
        takes part in every round; replies are ordered by participant index. After the
        run: ``classes_``, ``subspace_``, ``model_`` and ``error_``. ``abort`` is polled
        while waiting for clients: a message stops the run."""

        def __init__(self, n_participants: int) -> None:
            super().__init__(
                fraction_fit=1.0, min_fit_clients=n_participants,
                min_available_clients=n_participants, fraction_evaluate=0.0,
                min_evaluate_clients=0, initial_parameters=ndarrays_to_parameters([]),
                on_fit_config_fn=lambda r: {"phase": PHASES[min(r, len(PHASES)) - 1]})
            self.n_participants = n_participants
            self.classes_: NDArray[Any] | None = None
            self.subspace_: NDArray[np.float64] | None = None
            self.model_: NDArray[np.float64] | None = None
            self.error_: str | None = None
            self.abort: Callable[[], str | None] = lambda: None

        def _finished(self, server_round: int) -> bool:
            return (self.error_ is not None or server_round > len(PHASES)
                    or (server_round > 1 and (self.classes_ is None
                                              or self.classes_.size < 2)))

        def configure_fit(self, server_round: int, parameters: Parameters,
                          client_manager: ClientManager) -> list[tuple[ClientProxy, FitIns]]:
            if self._finished(server_round):
                return []  # the server ends the run
            deadline = time.monotonic() + TIMEOUT
            while self.error_ is None and not client_manager.wait_for(self.n_participants,
                                                                      timeout=1):
                if time.monotonic() > deadline:
                    self.error_ = (f"only {client_manager.num_available()} of "
                                   f"{self.n_participants} participants connected in "
                                   f"{TIMEOUT} s")
                else:
                    self.error_ = self.abort()
            if self.error_ is not None:
                return []
            instructions: list[tuple[ClientProxy, FitIns]] = super().configure_fit(
                server_round, parameters, client_manager)
            return instructions

        def aggregate_fit(self, server_round: int,
                          results: list[tuple[ClientProxy, FitRes]],
                          failures: list[tuple[ClientProxy, FitRes] | BaseException]
                          ) -> tuple[Parameters | None, dict[str, Scalar]]:
            replies = sorted(((int(res.metrics["participant"]), res) for _, res in results),
                             key=lambda reply: reply[0])
            errors = [str(res.metrics["error"]) for _, res in replies if "error" in res.metrics]
            errors += [repr(f) for f in failures]
            if [i for i, _ in replies] != list(range(self.n_participants)):
                errors.append(f"replies from participants {[i for i, _ in replies]}, "
                              f"expected each of 0..{self.n_participants - 1} once")
            if errors:
                self.error_ = f"round {server_round}: " + "; ".join(errors)
                return None, {}
            arrays = [parameters_to_ndarrays(res.parameters)[0] for _, res in replies]
            sizes = [res.num_examples for _, res in replies]
            if server_round == 1:
                self.classes_ = Server.union(arrays)
                return ndarrays_to_parameters([self.classes_]), {}
            assert self.classes_ is not None
            if server_round == 2:
                self.subspace_ = Server.average_subspaces(arrays, sizes)
                return ndarrays_to_parameters([self.subspace_, self.classes_]), {}
            self.model_ = Server.average(arrays, sizes)
            return ndarrays_to_parameters([self.model_]), {}

    return ParticipantClient, AveragingStrategy


def participant_client(participant: Participant, *, index: int,
                       protocol: FedDPDRDPMLClassifier) -> Any:
    """A Flower ``NumPyClient`` for one participant of FedDPDR-DPML.

    ``protocol`` is the estimator whose public parameters (budget, label set, k, ...) the
    federation agreed on before training; the client releases what its
    :meth:`~privkit.algorithms.FedDPDRDPMLClassifier.participant_release` computes for
    each round's phase. For a remote deployment pass ``participant_client(...).to_client()``
    to ``flwr.client.start_client``.

    .. versionchanged:: 0.3.0
       ``protocol`` replaces ``budget``, ``delta``, ``n_components``, ``calibration``,
       ``classes`` and ``classifier`` (the budget now depends on the agreed label set).
    """
    client_class, _ = _classes()
    return client_class(participant, index=index, protocol=protocol)


def averaging_strategy(n_participants: int) -> Any:
    """The Flower server strategy that aggregates ``n_participants`` participants'
    releases (subclass of ``flwr.server.strategy.FedAvg``; three rounds, one per phase)."""
    _, strategy_class = _classes()
    return strategy_class(check.positive_int("n_participants", n_participants,
                                             "averaging_strategy"))


def _reserved_port() -> socket.socket:
    """A socket bound to a free port of 127.0.0.1 and kept bound, not listening, while
    the run's server starts: no other process's ``bind`` or outgoing connection can take
    the port in between (with a port freed and reused later, a busy machine did, and the
    server refused to start). Flower's own check and gRPC's server bind it all the same:
    both sockets set ``SO_REUSEADDR`` and gRPC sets ``SO_REUSEPORT`` (Linux)."""
    reservation = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if hasattr(socket, "SO_REUSEPORT"):
        reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    reservation.bind(("127.0.0.1", 0))
    return reservation


def run_local_deployment(clients: Sequence[Any], strategy: Any, *, rounds: int = len(PHASES),
                         port: int | None = None) -> Any:
    """Run Flower's server in this thread and each client in a thread of its own, over
    gRPC on ``127.0.0.1:port`` (a free port by default, reserved until the server
    listens); return Flower's ``History``. Where Flower would exit the process (a port
    already in use), a ``RuntimeError`` says why.

    Flower's log is silenced to errors while it runs, and the SIGINT/SIGTERM handlers that
    ``start_server`` installs are replaced by the previous ones when it returns. So are the
    exit handlers it adds to Flower's process-wide list (``flwr.supercore.exit``), which is
    never emptied: each holds the run's gRPC server, and with it the idle threads of the
    server's pool, so a process that fits many times (a search, a transcript audit) would
    keep two threads per run until it runs out (checked with flwr 1.42).
    """
    owner = "run_local_deployment"
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError(f"{owner} must run in the main thread: Flower's start_server "
                           "installs signal handlers")
    n_rounds = check.positive_int("rounds", rounds, owner)
    _import_flwr()
    from flwr.client import start_client
    from flwr.server import ServerConfig, start_server

    reservation = _reserved_port() if port is None else None
    host = "127.0.0.1"
    port = reservation.getsockname()[1] if reservation is not None else port
    crashed: list[str] = []
    stopped = threading.Event()

    def client_thread(client: Any) -> None:
        deadline = time.monotonic() + TIMEOUT
        try:  # connect once the server listens (start_client does not retry a refusal)
            while not stopped.is_set():
                try:
                    socket.create_connection((host, port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)
            else:
                return  # the server never started
            start_client(server_address=f"{host}:{port}", client=client, insecure=True)
        except Exception as exc:
            crashed.append(f"a client stopped: {exc!r}")

    threads = [threading.Thread(target=client_thread, args=(c.to_client(),), daemon=True,
                                name=f"flwr-client-{i}") for i, c in enumerate(clients)]
    if hasattr(strategy, "abort"):
        strategy.abort = lambda: crashed[0] if crashed else None
    logger = logging.getLogger("flwr")
    level = logger.level
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    logger.setLevel(logging.ERROR)
    exit_handlers = _exit_handlers()
    before = {id(h) for h in exit_handlers}
    try:
        for t in threads:
            t.start()
        try:
            history = start_server(server_address=f"{host}:{port}", strategy=strategy,
                                   config=ServerConfig(num_rounds=n_rounds,
                                                       round_timeout=TIMEOUT))
        except SystemExit as exc:  # Flower exits the process when it cannot serve
            raise RuntimeError(f"Flower's server did not start: {exc}") from None
        for t in threads:
            t.join(TIMEOUT)
    finally:
        stopped.set()
        if reservation is not None:
            reservation.close()
        logger.setLevel(level)
        for s, h in handlers.items():
            signal.signal(s, h)
        exit_handlers[:] = [h for h in exit_handlers if id(h) in before]
        gc.collect()  # the run's server and its pool are unreachable now: end its threads
    return history


def _exit_handlers() -> list[Any]:
    """Flower's process-wide list of exit handlers (an empty list if this Flower has none
    where 1.42 keeps it)."""
    try:
        from flwr.supercore.exit import exit_handler
    except ImportError:
        return []
    handlers: list[Any] = getattr(exit_handler, "registered_exit_handlers", [])
    return handlers


class FlowerFedDPDRDPMLClassifier(FedDPDRDPMLClassifier):
    """FedDPDR-DPML (Wang et al. 2024, Algorithm 1) run on Flower.

    Parameters, plan, accounting and fitted attributes are those of
    :class:`~privkit.algorithms.FedDPDRDPMLClassifier`; ``fit(X, y, participant=ids)``
    runs the protocol as a local Flower deployment (:func:`run_local_deployment`), one
    Flower client per participant id. With the same ``random_state`` the fitted model
    equals the in-process one.

    Accounting: as in-process (``guarantee_``, ``participant_guarantees_``). Every client
    records its releases in its own ledger (``participant_ledgers_``, in the order of
    ``participants_``), opened and closed inside its own ``fit`` call, so a client's
    ledger records what that client ran whatever thread Flower runs it in; ``ledger_`` is
    their union, recorded in the ledgers open where ``fit`` was called.

    Public and private
    ------------------
    As :class:`~privkit.algorithms.FedDPDRDPMLClassifier`. ``flower_history_`` is Flower's
    record of the run: per round, the metrics the clients report (their participant
    index, public) and no loss; what crosses the network is what the server receives
    in process.

    .. versionadded:: 0.2.0
    .. versionchanged:: 0.3.0
       Three rounds (the label set, then the two of Algorithm 1).
    """

    def _run_protocol(self, federation: Federation
                      ) -> tuple[NDArray[Any], tuple[NDArray[np.float64],
                                                     NDArray[np.float64]] | None]:
        clients = [participant_client(m, index=i, protocol=self)
                   for i, m in enumerate(federation.members)]
        strategy = averaging_strategy(len(clients))
        self.flower_history_ = run_local_deployment(clients, strategy)
        for client in clients:
            if client.error is not None:
                raise client.error
        if strategy.error_ is not None or strategy.classes_ is None:
            raise RuntimeError(f"the Flower run failed: {strategy.error_ or 'no label set'}")
        self.participant_ledgers_ = [client.ledger for client in clients]
        for client in clients:
            for entry in client.ledger.entries:
                record(entry.block, entry.count)
        if strategy.model_ is None:
            return strategy.classes_, None
        return strategy.classes_, (strategy.subspace_, strategy.model_)
