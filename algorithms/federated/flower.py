"""FedDPDR-DPML on Flower's deployment engine: one process per participant (Wang et al.
2024, "Differentially private SVMs with knowledge aggregation", Algorithm 1; Beutel et al.
2020, "Flower: a friendly federated learning framework", arXiv:2007.14390).

The protocol is the one of :mod:`privkit.algorithms.federated.federated`, run by Flower's Message
API (``flwr.serverapp.ServerApp``, ``flwr.clientapp.ClientApp``, flwr >= 1.42) instead of
in one process: three rounds, one per phase of
:data:`~privkit.algorithms.federated.federated.PHASES`, each participant's release computed by
:meth:`~privkit.algorithms.FedDPDRDPMLClassifier.participant_release`, as in process.

- Round 1 (``phase="labels"``): every participant sends its label set (the declared one,
  or its own private release); the server takes their union
  (:meth:`~privkit.algorithms.federated.federated.Server.union`) and ends the run when it holds
  fewer than two labels.
- Round 2 (``phase="subspace"``): every participant releases its private subspace (DPDR,
  Algorithm 2, on its own rows); the server aligns their signs and averages them by data
  size (:meth:`~privkit.algorithms.federated.federated.Server.average_subspaces`).
- Round 3 (``phase="model"``): every participant trains the objective-perturbation SVM on
  its rows projected on the global subspace and releases ``[coef | intercept]``; the
  server averages them by data size
  (:meth:`~privkit.algorithms.federated.federated.Server.average`).

The server orders the replies by participant index before aggregating, so a run equals
the in-process run of :class:`~privkit.algorithms.FedDPDRDPMLClassifier` with the same
``random_state`` (same child streams, same code, arrays sent losslessly by Flower's
``ArrayRecord``, which never pickles: labels must be numbers or strings).

Deployment (:func:`run_local_deployment`): Flower's own deployment engine on 127.0.0.1,
without ray: a SuperLink (``flower-superlink``), one SuperNode (``flower-supernode``) per
participant, and the run submitted by Flower's CLI (``flwr run``) as a Flower App written
to a private temporary folder. Flower's SuperExec starts the ServerApp in a process of its
own and, for every message, the participant's ClientApp in a process of its own
(``flwr-clientapp``) under that participant's SuperNode: no two participants share a
process, and none shares the caller's. A participant's state between rounds (its rows,
its random stream, its ledger) stays in its own file of that folder, as it would on its
own disk; only the releases cross the network. After the run every process started is
ended (its whole tree), the folder is deleted, and ``fit`` returns: no thread is started
in the caller's process and no port stays open. flwr is never imported by the caller's
process (the Flower processes import it).

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   Issue 27: Flower's deployment engine, one process per participant, replaces
   ``start_server`` / ``start_client`` (deprecated since Flower 1.13) in threads of one
   process; ``participant_client``, ``averaging_strategy`` and ``flower_history_`` are gone.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit.ledger import Ledger, LedgerEntry, record

from ._flower_processes import Deployment, write_atomically
from .federated import PHASES, FedDPDRDPMLClassifier, Federation, Participant, Server

__all__ = ["DeploymentResult", "FlowerFedDPDRDPMLClassifier", "flower_apps",
           "run_local_deployment"]

#: Seconds a run may take, from the start of the SuperLink to the server's result.
TIMEOUT = 600.0

_APP_MODULE = "privkit_fed_app"


@attrs.frozen
class DeploymentResult:
    """What a local deployment returns: the agreed label set, the global subspace and the
    averaged model (``None`` when fewer than two labels were agreed), the server's error
    (``None`` on success), each participant's ledger and exception (in participant
    order), what each participant recorded in each round (``rounds[r][i]``), and the
    processes that ran: the server's PID and, per round, each
    participant's ClientApp PID (diagnostics, not part of any release)."""

    classes: NDArray[Any] | None
    subspace: NDArray[np.float64] | None
    model: NDArray[np.float64] | None
    error: str | None
    ledgers: list[Ledger]
    rounds: list[list[tuple[LedgerEntry, ...]]]
    errors: list[BaseException | None]
    server_pid: int
    client_pids: NDArray[np.int64]
    ports: list[int]


def aggregate(phase: str, replies: Sequence[tuple[int, NDArray[Any], int]],
              n_participants: int) -> NDArray[Any]:
    """The server's step after ``phase``, on ``(participant index, release, size)``
    replies in any order: :meth:`Server.union` of the label sets,
    :meth:`Server.average_subspaces` or :meth:`Server.average` of the releases in
    participant order, weighted by the sizes (Wang et al. 2024, Section 4.1). Every
    participant must reply exactly once."""
    ordered = sorted(replies, key=lambda reply: reply[0])
    if [i for i, _, _ in ordered] != list(range(n_participants)):
        raise RuntimeError(f"replies from participants {[i for i, _, _ in ordered]}, "
                           f"expected each of 0..{n_participants - 1} once")
    arrays = [a for _, a, _ in ordered]
    sizes = [n for _, _, n in ordered]
    if phase == "labels":
        return Server.union(arrays)
    if phase == "subspace":
        return Server.average_subspaces(arrays, sizes)
    return Server.average(arrays, sizes)


def _participate(state_path: str, phase: str, received: list[NDArray[Any]]
                 ) -> tuple[NDArray[Any] | None, dict[str, Any]]:
    """One participant's step, in its own process: load its state (the protocol, its
    rows and random stream, its ledger), release what ``phase`` asks, save the state.
    An exception is kept in the state (the caller re-raises it) and reported as text."""
    path = Path(state_path)
    state = pickle.loads(path.read_bytes())
    reply: dict[str, Any] = {"participant": state["index"], "pid": os.getpid(),
                             "size": state["member"].size}
    out = None
    before = len(state["ledger"])
    try:
        with state["ledger"]:
            out = state["protocol"].participant_release(state["member"], phase, received)
        state["phases"].append(state["ledger"].entries[before:])
    except Exception as exc:  # reported to the server, re-raised by the caller
        state["error"] = exc
        reply["error"] = str(exc)
    write_atomically(path, pickle.dumps(state))
    return out, reply


def _serve(config: dict[str, Any], exchange: Any) -> dict[str, Any]:
    """The server's run: the phases in order, each a ``exchange(phase, arrays)`` with
    every participant (replies ``(release, reply)``), aggregated by :func:`aggregate`."""
    n = int(config["participants"])
    result: dict[str, Any] = {"server_pid": np.int64(os.getpid())}
    received: list[NDArray[Any]] = []
    pids = np.zeros((len(PHASES), n), dtype=np.int64)
    try:
        for r, phase in enumerate(PHASES):
            replies = exchange(phase, received)
            errors = [str(rep["error"]) for _, rep in replies if "error" in rep]
            if errors:
                raise RuntimeError(f"round {r + 1}: " + "; ".join(errors))
            for _, rep in replies:
                if 0 <= int(rep["participant"]) < n:
                    pids[r, int(rep["participant"])] = int(rep["pid"])
            sizes = [int(rep["size"]) for _, rep in replies]
            aggregated = aggregate(phase, [(int(rep["participant"]), out, size) for
                                           (out, rep), size in zip(replies, sizes,
                                                                   strict=True)], n)
            if phase == "labels":
                result["classes"] = aggregated
                if aggregated.size < 2:
                    break
                received = [aggregated]
            elif phase == "subspace":
                result["subspace"] = aggregated
                received = [aggregated, result["classes"]]
            else:
                result["model"] = aggregated
    except Exception as exc:  # the caller raises it
        result["error"] = np.array(str(exc))
    result["client_pids"] = pids
    return result


def flower_apps() -> tuple[Any, Any]:
    """Flower's ``ServerApp`` and ``ClientApp`` of the protocol (flwr loads here). The
    ServerApp reads ``participants``, ``out`` and ``timeout`` from the run config and
    writes its result to ``out`` (a ``.npz``); the ClientApp reads its state file from
    the node config's ``state``."""
    from flwr.app import ArrayRecord, ConfigRecord, Context, Message, RecordDict
    from flwr.clientapp import ClientApp
    from flwr.serverapp import Grid, ServerApp

    server, client = ServerApp(), ClientApp()

    @server.main()
    def main(grid: Grid, context: Context) -> None:
        import time

        config = dict(context.run_config)
        n, timeout = int(config["participants"]), float(config["timeout"])
        deadline = time.monotonic() + timeout
        nodes = sorted(grid.get_node_ids())
        while len(nodes) < n and time.monotonic() < deadline:
            time.sleep(0.05)
            nodes = sorted(grid.get_node_ids())

        def exchange(phase: str, arrays: list[NDArray[Any]]
                     ) -> list[tuple[NDArray[Any], dict[str, Any]]]:
            if len(nodes) != n:
                raise RuntimeError(f"{len(nodes)} of {n} participants connected in "
                                   f"{timeout:g} s")
            messages = [Message(content=RecordDict({"received": ArrayRecord(arrays),
                                                    "phase": ConfigRecord({"phase": phase})}),
                                dst_node_id=node, message_type="train") for node in nodes]
            left = max(1.0, deadline - time.monotonic())
            replies = []
            for message in grid.send_and_receive(messages, timeout=left):
                if message.has_error():
                    raise RuntimeError(f"a participant failed: {message.error.reason}")
                out = message.content.array_records["release"].to_numpy_ndarrays()
                replies.append((out[0] if out else np.empty(0),
                                dict(message.content.config_records["reply"])))
            if len(replies) != n:
                raise RuntimeError(f"{len(replies)} of {n} participants replied in "
                                   f"{timeout:g} s")
            return replies

        result = _serve(config, exchange)
        write_atomically(Path(str(config["out"])),
                         lambda f: np.savez(f, **result, allow_pickle=False))

    @client.train()
    def train(message: Message, context: Context) -> Message:
        phase = str(message.content.config_records["phase"]["phase"])
        received = message.content.array_records["received"].to_numpy_ndarrays()
        state = str(context.node_config["state"])
        out, reply = _participate(state, phase, received)
        arrays = [] if out is None else [np.asarray(out)]
        return Message(content=RecordDict({"release": ArrayRecord(arrays),
                                           "reply": ConfigRecord(reply)}),
                       reply_to=message)

    return server, client


_PYPROJECT = """\
[project]
name = "privkit-fed"
version = "1.0.0"
description = "FedDPDR-DPML (privkit) on Flower"
license = "BSD-3-Clause"
dependencies = []

[tool.flwr.app]
publisher = "privkit"

[tool.flwr.app.components]
serverapp = "{module}:server"
clientapp = "{module}:client"

[tool.flwr.app.config]
participants = 1
out = ""
timeout = 600.0
"""


def run_local_deployment(protocol: FedDPDRDPMLClassifier, members: Sequence[Participant],
                         *, timeout: float = TIMEOUT) -> DeploymentResult:
    """Run the protocol for ``members`` on Flower's deployment engine on 127.0.0.1: a
    SuperLink, one SuperNode per participant, the run submitted by ``flwr run`` (see
    the module docstring); every process is ended before this returns (also on error or
    interruption). ``protocol`` (the agreed public parameters) and each member are
    pickled into that member's state file, so ``protocol``'s class must be importable
    by the participants' processes (they get the caller's ``sys.path``)."""
    with Deployment(n_nodes=len(members), timeout=timeout) as deployment:
        app = deployment.folder / "app"
        app.mkdir()
        (app / "pyproject.toml").write_text(_PYPROJECT.format(module=_APP_MODULE))
        (app / f"{_APP_MODULE}.py").write_text(
            "from privkit.algorithms.federated.flower import flower_apps\n\n"
            "apps = flower_apps()\nserver = apps[0]\nclient = apps[1]\n")
        states = []
        for i, member in enumerate(members):
            states.append(deployment.folder / f"participant-{i}.pkl")
            write_atomically(states[-1], pickle.dumps(
                {"protocol": protocol, "member": member, "index": i, "ledger": Ledger(),
                 "phases": [], "error": None}))
        out = deployment.folder / "result.npz"
        deployment.start([f'state="{s}"' for s in states],
                         pythonpath=[p for p in sys.path if p and os.path.isdir(p)])
        deployment.submit(app, {"participants": len(members), "out": f'"{out}"',
                                "timeout": float(timeout)})
        deployment.wait_for(out)
        with np.load(out, allow_pickle=False) as result:
            arrays = {k: result[k] for k in result.files}
        participants = [pickle.loads(s.read_bytes()) for s in states]
        ports = deployment.ports
    return DeploymentResult(
        classes=arrays.get("classes"), subspace=arrays.get("subspace"),
        model=arrays.get("model"),
        error=str(arrays["error"]) if "error" in arrays else None,
        ledgers=[p["ledger"] for p in participants],
        rounds=[list(r) for r in zip(*(p["phases"] for p in participants), strict=False)],
        errors=[p["error"] for p in participants], server_pid=int(arrays["server_pid"]),
        client_pids=arrays["client_pids"], ports=ports)


class FlowerFedDPDRDPMLClassifier(FedDPDRDPMLClassifier):
    """FedDPDR-DPML (Wang et al. 2024, Algorithm 1) run on Flower's deployment engine,
    one process per participant.

    Parameters, plan, accounting and fitted attributes are those of
    :class:`~privkit.algorithms.FedDPDRDPMLClassifier`; ``fit(X, y, participant=ids)``
    runs the protocol as a local Flower deployment (:func:`run_local_deployment`), one
    SuperNode, and one ClientApp process per round, per participant id. With the same
    ``random_state`` the fitted model equals the in-process one.

    Accounting: as in-process (``guarantee_``, ``participant_guarantees_``). Every
    participant records its releases in its own ledger, in its own process
    (``participant_ledgers_``, in the order of ``participants_``); ``ledger_`` is their
    union, recorded in the ledgers open where ``fit`` was called.

    Public and private
    ------------------
    As :class:`~privkit.algorithms.FedDPDRDPMLClassifier`. What crosses the network is
    what the server receives in process; the participants' rows stay in their own state
    files (a private temporary folder, deleted after the run). A participant's exception
    is raised by ``fit``, as in process; a failure of the deployment itself (a process
    that exits, a timeout) is a ``RuntimeError`` that names no data.

    .. versionadded:: 0.2.0
    .. versionchanged:: 0.3.0
       Three rounds (the label set, then the two of Algorithm 1); issue 27: Flower's
       deployment engine, one process per participant; ``flower_history_`` is gone.
    """

    def _run_protocol(self, federation: Federation
                      ) -> tuple[NDArray[Any], tuple[NDArray[np.float64],
                                                     NDArray[np.float64]] | None]:
        self.__dict__.pop("_flower_run", None)  # not sent to the participants
        run = run_local_deployment(self, federation.members)
        self._flower_run = run  # diagnostics (processes, ports): not a fitted attribute
        for error in run.errors:
            if error is not None:
                raise error
        if run.error is not None or run.classes is None:
            raise RuntimeError(f"the Flower run failed: {run.error or 'no label set'}")
        self.participant_ledgers_ = run.ledgers
        for entries in (e for r in run.rounds for e in r):  # round by round, as in process
            for entry in entries:
                record(entry.block, entry.count)
        if run.model is None or run.subspace is None:
            return run.classes, None
        return run.classes, (run.subspace, run.model)
