"""FedDPDR-DPML on Flower: the same model as the in-process run, accounting, failures."""

import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")  # no network beyond localhost
pytest.importorskip("flwr")

from privkit import Parallel
from privkit.algorithms import FedDPDRDPMLClassifier, Server
from privkit.algorithms.flower import (
    FlowerFedDPDRDPMLClassifier,
    averaging_strategy,
    run_local_deployment,
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


@pytest.mark.slow
@pytest.mark.parametrize("declared", [True, False])
def test_flower_run_equals_in_process_run(declared):
    """Three participants (ids given out of order, unequal sizes), three classes declared
    or released privately by each participant, calibrated budgets: the Flower deployment
    gives the in-process model to 1e-12, the same label set, plan and guarantees; each
    client's ledger matches its participant's part of the plan and the union matches the
    whole plan."""
    X, y = data(n=900, classes=3)
    ids = np.array(["c", "a", "b", "a"] * 225)
    params = dict(epsilon=1.0 if declared else 8.0, delta=1e-4 if declared else 1e-3,
                  n_components=3, classes=[0, 1, 2] if declared else None, random_state=7)
    local = FedDPDRDPMLClassifier(**params).fit(X, y, participant=ids)
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
    # a different seed gives a different model, so the equality above is not vacuous
    other = FedDPDRDPMLClassifier(**{**params, "random_state": 8}).fit(X, y, participant=ids)
    assert np.abs(other.coef_ - flower.coef_).max() > 1e-3


class FailingParticipant(FlowerFedDPDRDPMLClassifier):
    """A deployment whose second participant fails in the model phase."""

    def participant_release(self, member, phase, received):
        if phase == "model" and member.size == 150:
            raise ValueError("participant 1 failed")
        return super().participant_release(member, phase, received)


@pytest.mark.slow
def test_participant_error_stops_the_run_and_restores_the_process():
    """A participant's error is raised by fit (no hang); Flower's SIGINT/SIGTERM handlers
    and log level are undone; a second run then works."""
    import logging

    X, y = data(n=300, classes=3)
    ids = np.where(np.arange(300) < 150, 0, 1)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    level = logging.getLogger("flwr").level
    with pytest.raises(ValueError, match="participant 1 failed"):
        FailingParticipant(n_components=3, classes=[0, 1, 2], random_state=0).fit(
            X, y, participant=ids)
    assert {s: signal.getsignal(s) for s in before} == before
    assert logging.getLogger("flwr").level == level
    X, y = data(n=300)
    ids = np.arange(300) % 2
    params = dict(epsilon=0.5, n_components=2, calibration="classic", classes=[0, 1],
                  random_state=1)
    assert_same_fit(FlowerFedDPDRDPMLClassifier(**params).fit(X, y, participant=ids),
                    FedDPDRDPMLClassifier(**params).fit(X, y, participant=ids))


@pytest.mark.slow
def test_repeated_runs_leave_no_threads_behind():
    """Flower keeps every run's exit handler, and with it the gRPC server's thread pool,
    in a process-wide list; run_local_deployment removes the run's handlers, so ten runs
    leave the thread count where one run left it, within a few seconds (gRPC's last
    polling thread of a run may take a moment to end, longer on a loaded machine: one such
    thread is tolerated; the leak kept two threads a run for good, 20 after ten runs)."""
    import time

    def settled(limit):
        deadline = time.monotonic() + 20.0
        while threading.active_count() > limit and time.monotonic() < deadline:
            time.sleep(0.05)
        return threading.active_count()

    case = FlowerFedDPDRDPMLClassifier.transcript_case(declare_classes=True)
    case.estimator.fit(case.X, case.y, **case.fit_params)  # imports flwr and gRPC
    after_one = settled(threading.active_count() - 1)
    for seed in range(10):
        case.estimator.set_params(random_state=seed).fit(case.X, case.y, **case.fit_params)
    assert settled(after_one) <= after_one + 1


def test_a_port_in_use_is_an_error_not_an_exit():
    """Flower exits the process when its port is taken; run_local_deployment turns that
    into a RuntimeError (the caller's process goes on) and restores the signal
    handlers."""
    import socket

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(RuntimeError, match=r"did not start.*already in use"):
            run_local_deployment([], averaging_strategy(1), port=port)
    assert {s: signal.getsignal(s) for s in before} == before


def fit_res(index, array, size, error=None):
    from flwr.common import Code, FitRes, Status, ndarrays_to_parameters

    metrics = {"participant": index} if error is None else {"participant": index,
                                                            "error": error}
    return None, FitRes(status=Status(code=Code.OK, message=""), num_examples=size,
                        parameters=ndarrays_to_parameters([array]), metrics=metrics)


def test_strategy_aggregates_in_participant_order_whatever_the_reply_order():
    """Round 1 gives Server.union of the label sets, round 2 Server.average_subspaces and
    round 3 Server.average of the releases in participant order, weighted by the
    reported sizes, for replies in any order; each round sends on what the next needs."""
    from flwr.common import parameters_to_ndarrays

    rng = np.random.default_rng(0)
    strategy = averaging_strategy(3)
    labels = [np.array([0, 2]), np.array([1]), np.array([0, 1])]
    params, _ = strategy.aggregate_fit(1, [fit_res(i, labels[i], 10) for i in (1, 2, 0)], [])
    np.testing.assert_array_equal(parameters_to_ndarrays(params)[0], [0, 1, 2])
    subspaces = [np.linalg.qr(rng.normal(size=(5, 2)))[0] for _ in range(3)]
    subspaces[1] = -subspaces[1]  # signs must be aligned to participant 0's
    sizes = [10, 30, 20]
    replies = [fit_res(i, subspaces[i], sizes[i]) for i in (2, 0, 1)]
    params, _ = strategy.aggregate_fit(2, replies, [])
    expected = Server.average_subspaces(subspaces, sizes)
    sent = parameters_to_ndarrays(params)
    np.testing.assert_array_equal(sent[0], expected)
    np.testing.assert_array_equal(sent[1], [0, 1, 2])
    np.testing.assert_array_equal(strategy.subspace_, expected)
    models = [rng.normal(size=(1, 3)) for _ in range(3)]
    params, _ = strategy.aggregate_fit(3, [fit_res(i, models[i], sizes[i]) for i in (1, 2, 0)],
                                       [])
    np.testing.assert_array_equal(strategy.model_, Server.average(models, sizes))
    np.testing.assert_allclose(strategy.model_, (10 * models[0] + 30 * models[1]
                                                 + 20 * models[2]) / 60, atol=1e-15)
    assert strategy.error_ is None


class NoClients:  # the client manager is not consulted once the run has ended
    def wait_for(self, num_clients, timeout):
        raise AssertionError("should not wait")


def test_strategy_stops_on_an_error_a_missing_participant_or_too_few_labels():
    """A client's reported error, or a participant missing from the replies, sets
    ``error_`` and aggregates nothing; a union of fewer than two labels ends the run
    without error; either way the next round selects no client."""
    strategy = averaging_strategy(2)
    params, _ = strategy.aggregate_fit(1, [fit_res(0, np.arange(2), 5)], [])
    assert params is None
    assert "expected each of 0..1 once" in strategy.error_
    assert strategy.configure_fit(2, None, NoClients()) == []
    strategy = averaging_strategy(2)
    replies = [fit_res(0, np.arange(2), 5), fit_res(1, np.arange(2), 5, error="boom")]
    assert strategy.aggregate_fit(1, replies, [])[0] is None
    assert strategy.error_ == "round 1: boom"
    strategy = averaging_strategy(2)
    replies = [fit_res(0, np.array([3]), 5), fit_res(1, np.empty(0), 5)]
    assert strategy.aggregate_fit(1, replies, [])[0] is not None
    np.testing.assert_array_equal(strategy.classes_, [3])
    assert strategy.error_ is None
    assert strategy.configure_fit(2, None, NoClients()) == []


def test_deployment_needs_the_main_thread_and_valid_rounds():
    """start_server installs signal handlers, so another thread is refused up front; a
    bad round count is refused by name."""
    errors = []

    def other():
        try:
            run_local_deployment([], None)
        except RuntimeError as exc:
            errors.append(str(exc))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert errors
    assert "must run in the main thread" in errors[0]
    with pytest.raises(ValueError, match="`rounds` must be"):
        run_local_deployment([], None, rounds=0)


@pytest.mark.slow
def test_importing_the_module_does_not_import_flwr():
    """flwr loads only when a Flower run (or a client or strategy) is built."""
    code = ("import sys; import privkit.algorithms.flower; "
            "assert 'flwr' not in sys.modules, 'flwr imported'")
    subprocess.run([sys.executable, "-P", "-c", code], check=True, cwd="/")
