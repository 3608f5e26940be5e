"""The ledger records what ran and compares it with the declared plan."""

import contextvars
import threading

import numpy as np
import pytest

from privkit import Ledger, Neighbouring, Parallel, Repeat, Sequential, carry_context, record
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE
LAP = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=A)
GAU = Gaussian.for_gdp(1.0, sensitivity=1.0, relation=A)


def test_releases_are_recorded_with_batch_size():
    """Each release is recorded once per independent draw; simulate is not recorded."""
    with Ledger() as ledger:
        LAP.release(1.0, rng=0)
        LAP.release([1.0, 2.0], rng=0, size=(2, 3))
        GAU.simulate(1.0, rng=0, size=10)
    assert ledger.count(LAP) == 7
    assert ledger.count(GAU) == 0


def test_nothing_is_recorded_outside_a_ledger():
    """Releases outside any ledger are not recorded anywhere."""
    LAP.release(1.0, rng=0)
    with Ledger() as ledger:
        pass
    assert len(ledger) == 0


def test_nested_ledgers_both_record():
    """An inner ledger (an algorithm's) and an outer one (the user's) both see a release."""
    with Ledger() as outer:
        with Ledger() as inner:
            GAU.release(0.0, rng=1)
        LAP.release(0.0, rng=1)
    assert inner.counts() == {GAU: 1}
    assert outer.counts() == {GAU: 1, LAP: 1}


def test_compare_matches_declared_plan():
    """A run that follows its plan matches; a missing or extra run does not."""
    plan = Sequential(Repeat(GAU, 3), Parallel(LAP, LAP))
    with Ledger() as ledger:
        GAU.release([0.0, 1.0], rng=2, size=3)
        LAP.release(5.0, rng=2)
        LAP.release(7.0, rng=2)
    assert ledger.compare(plan).matches
    with Ledger() as short:
        GAU.release(0.0, rng=2, size=2)
        LAP.release(0.0, rng=2)
    comparison = short.compare(plan)
    assert not comparison
    assert comparison.missing == {GAU: 1, LAP: 1}
    assert "declared but not run" in str(comparison)


def test_as_plan_gives_what_ran():
    """as_plan turns the records into a Sequential plan in the order they ran."""
    with Ledger() as ledger:
        LAP.release(0.0, rng=3)
        GAU.release(0.0, rng=3, size=4)
    assert ledger.as_plan() == Sequential(LAP, Repeat(GAU, 4))


def test_threads_record_only_through_a_carried_context():
    """Work handed to a Thread or a ThreadPoolExecutor from inside ``with Ledger()`` is
    recorded when it carries the context (carry_context, contextvars.copy_context().run:
    1 + 7 + 1 releases) and not otherwise (the 1 + 7 bare releases: a new thread's
    context is empty, and a release there belongs to no ledger)."""
    from concurrent.futures import ThreadPoolExecutor

    with Ledger() as ledger:
        for target in (lambda: LAP.release(0.0, rng=4),
                       carry_context(lambda: LAP.release(0.0, rng=4))):
            t = threading.Thread(target=target)
            t.start()
            t.join()
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda seed: LAP.release(0.0, rng=seed), range(7)))
            list(pool.map(carry_context(lambda seed: GAU.release(0.0, rng=seed)), range(7)))
        contextvars.copy_context().run(lambda: LAP.release(0.0, rng=4))
    assert ledger.counts() == {LAP: 2, GAU: 7}


def test_carry_context_gives_each_call_its_own_copy():
    """Calls of one carried function run concurrently (one Context object cannot be
    entered twice at once), each in a fresh copy: a ledger opened inside a call records
    that call's releases only, and the caller's ledger records all of them."""
    barrier = threading.Barrier(4)

    def work(runs):
        with Ledger() as mine:
            barrier.wait()
            for _ in range(runs):
                LAP.release(0.0, rng=runs)
            barrier.wait()
        return len(mine)

    from concurrent.futures import ThreadPoolExecutor

    with Ledger() as outer, ThreadPoolExecutor(max_workers=4) as pool:
        counts = list(pool.map(carry_context(work), [1, 2, 3, 4]))
    assert counts == [1, 2, 3, 4]
    assert outer.count(LAP) == 10


def test_ledgers_in_three_threads_ignore_a_fourth_that_releases():
    """Ledgers open in 3 threads while a 4th thread, with no ledger, releases 50 times:
    each ledger records exactly its own thread's releases (3, 5, 7), none of the 4th's
    (before, every open ledger in the process took them: 10 and 20 became 60 and 70)."""
    opened, done = threading.Barrier(4), threading.Barrier(4)
    results = {}

    def owner(name, runs):
        with Ledger() as mine:
            opened.wait()
            for _ in range(runs):
                LAP.release(0.0, rng=runs)
            done.wait()
        results[name] = mine.counts()

    def stranger():
        opened.wait()
        for seed in range(50):
            GAU.release(0.0, rng=seed)
        done.wait()

    threads = [threading.Thread(target=owner, args=(name, runs))
               for name, runs in (("a", 3), ("b", 5), ("c", 7))]
    threads.append(threading.Thread(target=stranger))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"a": {LAP: 3}, "b": {LAP: 5}, "c": {LAP: 7}}


def test_estimators_fitted_in_a_thread_pool_match_their_plans():
    """8 estimators fitted at once in a thread pool, half of them carrying the caller's
    context, while another thread with no ledger releases all along: each estimator's
    ledger_ matches its plan_ (before, every open ledger took the other thread's
    releases), and the caller's ledger has the 4 carried fits' releases only."""
    from concurrent.futures import ThreadPoolExecutor

    from privkit.algorithms import OutputPerturbationClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)) / 3
    y = (X[:, 0] > 0).astype(int)

    def fit(seed):
        estimator = OutputPerturbationClassifier(epsilon=1.0, random_state=seed)
        if "classes" in estimator.get_params():
            estimator.set_params(classes=[0, 1])
        return estimator.fit(X, y)

    stop = threading.Event()

    def stranger():
        while not stop.is_set():
            GAU.release(0.0, rng=0)

    noise = threading.Thread(target=stranger)
    noise.start()
    try:
        with Ledger() as caller, ThreadPoolExecutor(max_workers=8) as pool:
            carried = [pool.submit(carry_context(fit), seed) for seed in range(4)]
            bare = [pool.submit(fit, seed) for seed in range(4, 8)]
            fitted = [future.result() for future in carried + bare]
    finally:
        stop.set()
        noise.join()
    for estimator in fitted:
        assert estimator.ledger_.compare(estimator.plan_).matches, estimator.ledger_
        assert len(estimator.ledger_) == 1
    assert len(caller) == 4
    assert caller.count(GAU) == 0


def test_tasks_with_their_own_ledgers_stay_apart():
    """Two threads that each open a ledger record only their own releases."""
    barrier = threading.Barrier(2)
    results = {}

    def work(name, block, runs):
        with Ledger() as mine:
            barrier.wait()
            for _ in range(runs):
                block.release(0.0, rng=1)
            barrier.wait()
        results[name] = mine.counts()

    threads = [threading.Thread(target=work, args=("a", LAP, 3)),
               threading.Thread(target=work, args=("b", GAU, 5))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["a"] == {LAP: 3}
    assert results["b"] == {GAU: 5}


def test_ledgers_closed_out_of_order_stop_recording():
    """Enter A, enter B, exit A: A records nothing more, B goes on."""
    a, b = Ledger(), Ledger()
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    LAP.release(0.0, rng=0)
    b.__exit__(None, None, None)
    LAP.release(0.0, rng=0)
    assert a.count(LAP) == 0
    assert b.count(LAP) == 1


def test_ledger_pickles_with_its_entries():
    """A ledger (e.g. an estimator's ledger_) round-trips through pickle."""
    import pickle

    with Ledger() as ledger:
        LAP.release(0.0, rng=0, size=3)
    copy = pickle.loads(pickle.dumps(ledger))
    assert copy.counts() == ledger.counts()
    with copy:
        GAU.release(0.0, rng=0)
    assert copy.count(GAU) == 1


def test_record_validates_count_and_ledger_refuses_reentry():
    """record(count=0) is refused; a ledger cannot be entered twice at once."""
    with pytest.raises(ValueError, match="`count` must be an integer >= 1"):
        record(LAP, 0)
    ledger = Ledger()
    with ledger, pytest.raises(RuntimeError, match="already active"):
        ledger.__enter__()
