"""One budget, spent from several processes: SharedBudgetFilter (BudgetFilter.shared)."""

import gc
import multiprocessing
import os
import pickle
import threading
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from _spending import raises, read, spend_or_refuse, spend_until_refused

from privkit import (
    BudgetExceededError,
    BudgetFilter,
    Claimed,
    IncompatibleCompositionError,
    Neighbouring,
    PureDP,
    SharedBudgetFilter,
)
from privkit.mechanisms import Gaussian

A = Neighbouring.ADD_REMOVE
R = Neighbouring.REPLACE_ONE
SIXTY_PERCENT = Claimed(PureDP(epsilon=0.6), relation=A)


def server_threads():
    return [t for t in threading.enumerate() if t.name.startswith("privkit-shared-filter")]


def in_pool(kind, function, argument_lists):
    """``function(*arguments)`` for each list, in 4 worker processes of the given kind."""
    if kind in ("fork", "spawn"):
        with multiprocessing.get_context(kind).Pool(4) as pool:
            return pool.starmap(function, argument_lists)
    if kind == "executor":
        with ProcessPoolExecutor(max_workers=4) as pool:
            return list(pool.map(function, *zip(*argument_lists, strict=True)))
    from joblib import Parallel, delayed

    return Parallel(n_jobs=4, backend="loky")(delayed(function)(*a) for a in argument_lists)


#: spawn and loky start fresh interpreters (seconds each on a loaded machine): slow tier.
KINDS = ["fork", "executor", pytest.param("spawn", marks=pytest.mark.slow),
         pytest.param("loky", marks=pytest.mark.slow)]


@pytest.mark.parametrize("kind", KINDS)
def test_eight_spends_of_six_tenths_from_four_processes(kind):
    """From 4 worker processes (a multiprocessing pool with fork and with spawn, a
    ProcessPoolExecutor, joblib's loky backend), 8 spends of 0.6 into a limit of 1: exactly
    one is accepted, and the parent's filter shows it, exactly (before: all 8 accepted,
    the parent still at 0)."""
    budget = BudgetFilter(epsilon=1.0)
    with budget.shared() as shared:
        accepted = in_pool(kind, spend_or_refuse, [(shared, SIXTY_PERCENT)] * 8)
    assert sum(accepted) == 1
    assert len(budget.history) == 1
    assert budget.spent.epsilon == 0.6
    assert budget.remaining.epsilon == pytest.approx(0.4)


def test_check_and_record_is_atomic_across_processes():
    """4 processes spending 0.01 as fast as they can, 60 times each, into a limit of 1:
    exactly 100 spends are accepted in all, the history has 100 entries and the total
    never passes the limit."""
    budget = BudgetFilter(epsilon=1.0)
    block = Claimed(PureDP(epsilon=0.01), relation=A)
    with budget.shared() as shared:
        counts = in_pool("executor", spend_until_refused, [(shared, block, 60)] * 4)
    assert sum(counts) == len(budget.history) == 100
    assert budget.spent.epsilon <= 1.0 * (1 + 1e-12)


def test_a_worker_reads_the_one_state_and_gets_the_filters_errors():
    """A worker reads the parent's history, spent, remaining, limit, accountant, relation
    and rho limit; a refused spend raises the filter's own exception type there (with
    its message) and changes nothing."""
    budget = BudgetFilter(epsilon=2.0, delta=1e-5)
    budget.spend(Claimed(PureDP(epsilon=0.5), relation=A))
    with budget.shared() as shared, ProcessPoolExecutor(max_workers=1) as pool:
        seen = pool.submit(read, shared).result()
        wrong_relation = pool.submit(raises, shared, Claimed(PureDP(epsilon=0.1),
                                                             relation=R)).result()
        too_much = pool.submit(raises, shared, Claimed(PureDP(epsilon=1.6),
                                                       relation=A)).result()
    assert seen == (budget.history, budget.spent, budget.remaining, budget.limit,
                    budget.accountant, budget.relation, budget.rho_limit)
    assert wrong_relation[0] == IncompatibleCompositionError.__name__
    assert "REPLACE_ONE" in wrong_relation[1]
    assert too_much[0] == BudgetExceededError.__name__
    assert "would exceed the remaining budget" in too_much[1]
    assert len(budget.history) == 1


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="needs the fork start method")
def test_a_forked_child_that_inherited_the_handle_spends_on_the_parent():
    """A child forked after ``shared()`` holds a copy of the owner's handle without
    pickling it: its spend reaches the parent's filter."""
    budget = BudgetFilter(epsilon=1.0)
    with budget.shared() as shared:
        pid = os.fork()
        if pid == 0:
            try:
                shared.spend(SIXTY_PERCENT)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        assert len(budget.history) == 1
        with pytest.raises(BudgetExceededError):
            shared.spend(SIXTY_PERCENT)  # the owner's handle: the same state
    assert budget.spent.epsilon == 0.6


def test_in_the_owning_process_a_handle_is_the_filter():
    """In the owner, spends through the handle go straight to the filter, an unpickled
    handle is the same handle, and the handle still works after close."""
    budget = BudgetFilter(epsilon=1.0)
    with budget.shared() as shared:
        assert pickle.loads(pickle.dumps(shared)) is shared
        shared.spend(Claimed(PureDP(epsilon=0.25), relation=A))
    assert shared.closed
    shared.spend(Claimed(PureDP(epsilon=0.25), relation=A))
    assert budget.spent.epsilon == 0.5
    assert "closed" in repr(shared)


def remote(shared, *, authkey=None):
    """A handle on ``shared``'s server as another process would hold it (a token and an
    owner id that are not this process's), to exercise the server in one process."""
    return SharedBudgetFilter._attach(os.urandom(16), shared._address,
                                      authkey or shared._authkey, owner=-1)


def test_the_server_answers_only_the_filters_interface_and_only_its_key():
    """A connection with another key is refused; a request outside the filter's
    interface gets an error, and the connection still serves the next request."""
    budget = BudgetFilter(epsilon=1.0)
    with budget.shared() as shared:
        with pytest.raises(RuntimeError, match="refused this handle's key"):
            remote(shared, authkey=b"\0" * 32).spend(SIXTY_PERCENT)
        handle = remote(shared)
        with pytest.raises(RuntimeError, match="answers the calls"):
            handle._ask("call", "_refuse_copy", "spend")
        with pytest.raises(RuntimeError, match="answers the calls"):
            handle._ask("read", "_entries")
        assert handle.spend(SIXTY_PERCENT).epsilon == 0.6
        assert handle.can_spend(SIXTY_PERCENT) is False
        assert handle.cost(SIXTY_PERCENT).epsilon == 0.6
    assert len(budget.history) == 1


def test_a_gaussian_spend_with_its_delta_crosses_the_boundary():
    """``spend(block, delta=...)`` is forwarded with its keyword: (epsilon, delta) both
    charged."""
    budget = BudgetFilter(epsilon=5.0, delta=1e-5)
    block = Gaussian.for_gdp(0.5, sensitivity=1.0, relation=A)
    with budget.shared() as shared:
        entry = remote(shared).spend(block, delta=5e-6)
    assert entry.delta == 5e-6 == budget.spent.delta


def test_close_stops_the_server_and_workers_then_spend_nothing():
    """Leaving the block ends every server thread and removes the socket; a worker's
    spend afterwards raises a clear error and records nothing; a closed handle refuses to
    be pickled."""
    budget = BudgetFilter(epsilon=1.0)
    before = set(server_threads())
    with budget.shared() as shared:
        handle = remote(shared)
        handle.spend(Claimed(PureDP(epsilon=0.1), relation=A))
        assert len(server_threads()) == len(before) + 2  # the accepter, one connection
        address = shared._address
    assert set(server_threads()) == before
    assert not os.path.exists(address)
    with pytest.raises(RuntimeError, match="cannot reach the shared budget filter"):
        handle.spend(Claimed(PureDP(epsilon=0.1), relation=A))
    with pytest.raises(TypeError, match="closed"):
        pickle.dumps(shared)
    assert len(budget.history) == 1


def test_a_dropped_handle_stops_its_server():
    """A handle garbage collected without close stops its server too: no thread left."""
    before = set(server_threads())
    shared = BudgetFilter(epsilon=1.0).shared()
    assert len(server_threads()) == len(before) + 1
    del shared
    gc.collect()
    assert set(server_threads()) == before


def test_grid_search_with_two_jobs_records_every_fit():
    """GridSearchCV(n_jobs=2) over a privkit estimator fitted with
    ``fit(X, y, budget_filter=shared)``: the filter records the true total, 2 candidates
    x 3 splits + 1 refit = 7 fits of epsilon 0.5 (before: only the parent's refit, or
    the first fits of each worker's copy)."""
    from sklearn.model_selection import GridSearchCV

    from privkit.algorithms import OutputPerturbationClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    estimator = OutputPerturbationClassifier(epsilon=0.5, random_state=0)
    if "classes" in estimator.get_params():
        estimator.set_params(classes=[0, 1])
    search = GridSearchCV(estimator, {"regularization": [0.01, 0.1]}, cv=3, n_jobs=2)
    budget = BudgetFilter(epsilon=10.0)
    with budget.shared() as shared:
        search.fit(X, y, budget_filter=shared)
    assert len(budget.history) == 7
    assert budget.spent.epsilon == pytest.approx(7 * 0.5)
    assert all(entry.epsilon == pytest.approx(0.5) for entry in budget.history)


def test_a_plain_filter_given_to_parallel_workers_is_refused_with_the_way_out():
    """The same search with the plain filter fails before any fit: joblib cannot pickle
    the task, and the cause it chains is privkit's message naming budget.shared(); the
    filter is unchanged."""
    from _tiny_estimator import TinyPrivateEstimator
    from sklearn.model_selection import cross_val_score

    X = np.zeros((30, 2))
    y = np.arange(30) % 2
    budget = BudgetFilter(epsilon=10.0)
    with pytest.raises(Exception) as info:
        cross_val_score(TinyPrivateEstimator(), X, y, cv=3, n_jobs=2,
                        params={"budget_filter": budget})
    chain, error = [], info.value
    while error is not None:
        chain.append(str(error))
        error = error.__cause__
    assert any("budget.shared()" in message for message in chain), chain
    assert budget.history == ()


@pytest.mark.slow
def test_cross_validation_with_two_jobs_records_every_fit():
    """cross_val_score(n_jobs=2, params={"budget_filter": shared}) charges each of its 4
    fits."""
    from _tiny_estimator import TinyPrivateEstimator
    from sklearn.model_selection import cross_val_score

    X = np.zeros((40, 2))
    y = np.arange(40) % 2
    budget = BudgetFilter(epsilon=10.0)
    with budget.shared() as shared:
        cross_val_score(TinyPrivateEstimator(epsilon=0.75), X, y, cv=4, n_jobs=2,
                        params={"budget_filter": shared})
    assert budget.spent.epsilon == pytest.approx(4 * 0.75)
