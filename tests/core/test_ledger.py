"""The ledger records what ran and compares it with the declared plan."""

import contextvars
import threading

import pytest

from privkit import Ledger, Neighbouring, Parallel, Repeat, Sequential, record
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


def test_worker_threads_started_inside_a_ledger_are_recorded():
    """Releases in a Thread and in a ThreadPoolExecutor started inside ``with Ledger()``
    are recorded (9 of 9; they were silently dropped), as is one run through
    contextvars.copy_context."""
    from concurrent.futures import ThreadPoolExecutor

    with Ledger() as ledger:
        t = threading.Thread(target=lambda: LAP.release(0.0, rng=4))
        t.start()
        t.join()
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda seed: LAP.release(0.0, rng=seed), range(7)))
        contextvars.copy_context().run(lambda: LAP.release(0.0, rng=4))
    assert ledger.count(LAP) == 9


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
