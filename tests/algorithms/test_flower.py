"""FedDPDR-DPML on Flower's deployment engine: one process per participant, the same model
as the in-process run, accounting, failures, nothing left behind."""

import os
import pickle
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest
from _fed_transcripts import FailingFlower

pytest.importorskip("flwr")

from privkit import Parallel
from privkit.algorithms import FedDPDRDPMLClassifier, Server
from privkit.algorithms.federated._flower_processes import alive, process_tree, write_atomically
from privkit.algorithms.federated.flower import (
    FlowerFedDPDRDPMLClassifier,
    _participate,
    _serve,
    aggregate,
)


def data(n=600, d=6, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(3.0, 0.2, d)
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    y = np.argmax(X[:, :classes], axis=1) if classes > 2 else (X[:, 0] > 0).astype(int)
    return X, y


def assert_same_fit(flower, local, delta=1e-4):
    np.testing.assert_allclose(flower.components_, local.components_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(flower.coef_, local.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(flower.intercept_, local.intercept_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(flower.participants_, local.participants_)
    assert flower.plan_ == local.plan_
    assert flower.guarantee_.epsilon_at(delta) == local.guarantee_.epsilon_at(delta)
    assert ([g.epsilon_at(delta) for g in flower.participant_guarantees_]
            == [g.epsilon_at(delta) for g in local.participant_guarantees_])


def port_is_free(port):
    """Nothing listens on ``port`` any more: it can be bound and listened on again (with
    SO_REUSEADDR, as any server does, so closed connections in TIME_WAIT do not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen()
        except OSError:
            return False
    return True


def assert_nothing_left(run, threads_before, tree_before):
    """Every process of the run has ended (server, every ClientApp, and no new child of
    this process remains: a worker of the test runner may hold children of earlier tests,
    such as a process pool, so the tree is compared with its state before the fit), its
    ports are free, and this process has no new thread."""
    pids = [run.server_pid, *run.client_pids.ravel().tolist()]
    assert not any(alive(pid) for pid in pids)
    assert sorted(process_tree(os.getpid())) == sorted(tree_before)
    assert all(port_is_free(port) for port in run.ports)
    assert threading.active_count() == threads_before


@pytest.mark.slow
@pytest.mark.parametrize("declared", [True, False])
def test_flower_run_equals_in_process_run_one_process_per_participant(declared):
    """Three participants (ids given out of order, unequal sizes), three classes declared
    or released privately by each participant, calibrated budgets: the Flower deployment
    gives the in-process model to 1e-12, the same label set, plan and guarantees; each
    participant's ledger matches its part of the plan. Every ClientApp ran in a process
    of its own, none shared between participants or with the server or this process, and
    after fit no process, port or thread of the run is left."""
    X, y = data(n=900, classes=3)
    ids = np.array(["c", "a", "b", "a"] * 225)
    params = dict(epsilon=1.0 if declared else 8.0, delta=1e-4 if declared else 1e-3,
                  n_components=3, classes=[0, 1, 2] if declared else None, random_state=7)
    local = FedDPDRDPMLClassifier(**params).fit(X, y, participant=ids)
    threads, tree = threading.active_count(), process_tree(os.getpid())
    flower = FlowerFedDPDRDPMLClassifier(**params).fit(X, y, participant=ids)
    assert_same_fit(flower, local, delta=params["delta"])
    np.testing.assert_array_equal(flower.classes_, [0, 1, 2])
    np.testing.assert_array_equal(flower.classes_, local.classes_)
    assert isinstance(flower.plan_, Parallel)
    assert len(flower.plan_.parts) == 3
    assert flower.ledger_.compare(flower.plan_).matches
    for ledger, part in zip(flower.participant_ledgers_, flower.plan_.parts, strict=True):
        assert ledger.compare(part).matches
    assert flower.score(X, y) == local.score(X, y)
    run = flower._flower_run
    pids = run.client_pids  # rounds x participants
    assert pids.shape == (3, 3)
    assert np.all(pids > 0)
    for r in range(3):  # in each round, one distinct process per participant
        assert len(set(pids[r].tolist())) == 3
    assert not set(pids.ravel().tolist()) & {run.server_pid, os.getpid()}
    for i in range(3):  # a participant's processes serve no other participant
        others = set(np.delete(pids, i, axis=1).ravel().tolist())
        assert not set(pids[:, i].tolist()) & others
    assert_nothing_left(run, threads, tree)
    # a different seed gives a different model, so the equality above is not vacuous
    other = FedDPDRDPMLClassifier(**{**params, "random_state": 8}).fit(X, y, participant=ids)
    assert np.abs(other.coef_ - flower.coef_).max() > 1e-3


@pytest.mark.slow
def test_participant_error_stops_the_run_and_leaves_nothing():
    """A participant's error, in its own process, is raised by fit with its type and
    message (no hang), and the deployment is torn down all the same."""
    X, y = data(n=300, classes=3)
    ids = np.where(np.arange(300) < 150, 0, 1)
    threads, tree = threading.active_count(), process_tree(os.getpid())
    model = FailingFlower(n_components=3, classes=[0, 1, 2], random_state=0)
    with pytest.raises(ValueError, match="participant 1 failed"):
        model.fit(X, y, participant=ids)
    assert_nothing_left(model._flower_run, threads, tree)


def members(n=200, seed=3):
    X, y = data(n=n, classes=3)
    model = FedDPDRDPMLClassifier(n_components=2, classes=[0, 1, 2], random_state=seed)
    ids = np.arange(n) % 2
    model.fit(X, y, participant=ids)  # sets the public state participant_release reads
    return model, model._federation(X, y, ids)


def test_a_participant_step_in_its_state_file_equals_the_in_process_release(tmp_path):
    """_participate (what a ClientApp runs) loads the state, releases, records in the
    participant's ledger and saves its stream: three phases give the in-process
    releases; an error is kept in the state and reported as text."""
    model, federation = members()
    _, twin = members()
    path = tmp_path / "state.pkl"
    from privkit.ledger import Ledger

    write_atomically(path, pickle.dumps({"protocol": model, "member": federation.members[0],
                                         "index": 0, "ledger": Ledger(), "phases": [],
                                         "error": None}))
    expected = twin.members[0]
    received, in_process = [], Ledger()
    for phase in ("labels", "subspace", "model"):
        out, reply = _participate(str(path), phase, received)
        with in_process:
            want = model.participant_release(expected, phase, received)
        np.testing.assert_array_equal(out, want)
        assert reply == {"participant": 0, "pid": os.getpid(), "size": expected.size}
        received = [out] if phase == "labels" else [out, received[0]]
    state = pickle.loads(path.read_bytes())
    assert state["ledger"].entries == in_process.entries
    assert sum(state["phases"], ()) == in_process.entries  # round by round
    assert len(in_process.entries) > 2
    assert state["error"] is None
    out, reply = _participate(str(path), "nonsense", [])
    assert out is None
    assert "phase" in reply["error"]
    assert isinstance(pickle.loads(path.read_bytes())["error"], ValueError)


def test_aggregation_is_in_participant_order_whatever_the_reply_order():
    """aggregate gives Server.union of the label sets, Server.average_subspaces and
    Server.average of the releases in participant order, weighted by the reported sizes,
    for replies in any order; a missing or repeated participant is an error."""
    rng = np.random.default_rng(0)
    labels = [np.array([0, 2]), np.array([1]), np.array([0, 1])]
    np.testing.assert_array_equal(
        aggregate("labels", [(i, labels[i], 10) for i in (1, 2, 0)], 3), [0, 1, 2])
    subspaces = [np.linalg.qr(rng.normal(size=(5, 2)))[0] for _ in range(3)]
    subspaces[1] = -subspaces[1]  # signs must be aligned to participant 0's
    sizes = [10, 30, 20]
    np.testing.assert_array_equal(
        aggregate("subspace", [(i, subspaces[i], sizes[i]) for i in (2, 0, 1)], 3),
        Server.average_subspaces(subspaces, sizes))
    models = [rng.normal(size=(1, 3)) for _ in range(3)]
    averaged = aggregate("model", [(i, models[i], sizes[i]) for i in (1, 2, 0)], 3)
    np.testing.assert_allclose(averaged, (10 * models[0] + 30 * models[1]
                                          + 20 * models[2]) / 60, atol=1e-15)
    with pytest.raises(RuntimeError, match=r"expected each of 0..1 once"):
        aggregate("labels", [(0, labels[0], 5), (0, labels[1], 5)], 2)


def test_server_stops_on_an_error_or_fewer_than_two_labels():
    """_serve (what the ServerApp runs): a participant's reported error ends the run with
    the error and aggregates nothing more; a union of fewer than two labels ends it
    without error after round 1."""
    def exchange_from(replies_by_phase):
        seen = []

        def exchange(phase, received):
            seen.append(phase)
            return replies_by_phase[phase]
        return exchange, seen

    def reply(i, array, error=None):
        rep = {"participant": i, "pid": 100 + i, "size": 5}
        return array, rep if error is None else {**rep, "error": error}

    exchange, seen = exchange_from({"labels": [reply(0, np.arange(2)),
                                               reply(1, np.arange(2), error="boom")]})
    result = _serve({"participants": 2}, exchange)
    assert str(result["error"]) == "round 1: boom"
    assert seen == ["labels"]
    exchange, seen = exchange_from({"labels": [reply(0, np.array([3])),
                                               reply(1, np.empty(0))]})
    result = _serve({"participants": 2}, exchange)
    assert "error" not in result
    assert seen == ["labels"]
    np.testing.assert_array_equal(result["classes"], [3])
    np.testing.assert_array_equal(result["client_pids"][0], [100, 101])


@pytest.mark.slow
def test_importing_the_module_does_not_import_flwr():
    """flwr loads only in the Flower processes (flower_apps), never in the caller's."""
    code = ("import sys; import privkit.algorithms.federated.flower; "
            "assert 'flwr' not in sys.modules, 'flwr imported'")
    subprocess.run([sys.executable, "-P", "-c", code], check=True, cwd="/")


@pytest.mark.slow
@pytest.mark.parametrize("declared", [True, False])
def test_transcript_case_gives_the_in_process_transcript(declared):
    """On its transcript case (both label modes), a Flower fit gives the caller exactly
    what the in-process FedDPDRDPMLClassifier gives: every fitted attribute with its
    values (bit for bit), warnings, errors and the query answers' shapes, but for
    ``participant_ledgers_``, which only the Flower run keeps. So the Flower estimator's
    transcript is the in-process one's, which the transcript audits cover."""
    from _fed_transcripts import case_transcript

    case = FlowerFedDPDRDPMLClassifier.transcript_case(declare_classes=declared)
    local_case = FedDPDRDPMLClassifier.transcript_case(declare_classes=declared)
    data = (case.X, case.y)
    flower = case_transcript(case, data, seed=3, values=True)
    local = case_transcript(local_case, data, seed=3, values=True)
    assert flower["error"] is None
    ledgers = flower["attributes"].pop("participant_ledgers_")
    assert len(ledgers) == 2
    differ = sorted(k for k in local["attributes"]
                    if flower["attributes"].get(k) != local["attributes"][k])
    assert not differ
    assert flower == local
