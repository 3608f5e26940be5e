"""Attacks on neighbouring pairs: turn draws into a lower bound on epsilon.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import inspect
import math
import pickle
from collections.abc import Callable
from concurrent.futures import Executor
from contextlib import ExitStack
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit._progress import progress as progress_bar
from privkit.audits.distinguishers import MISSING, Distinguisher, choose, is_missing
from privkit.audits.events import Events
from privkit.audits.lower_bounds import epsilon_lower_bound, gdp_mu_lower_bound
from privkit.audits.pairs import NeighbouringPair
from privkit.audits.result import AuditResult
from privkit.rng import RNGLike

__all__ = ["MISSING", "audit", "draw", "is_missing", "search_pairs", "seed_root",
           "sequential_audit"]

#: A batched system under test: ``f(input, rng, size) -> array with size rows``.
Batched = Callable[[Any, np.random.Generator, int], Any]
_CHUNK = 250_000
#: Draws per chunk for non-batched systems: small, so process pools balance the work.
_CHUNK_SINGLE = 10_000
#: The fewest draws per side an audit accepts (fewer cannot certify anything).
MIN_TRIALS = 10
#: The fewest selection draws per side (the rejection set is chosen on them).
_MIN_SELECTION = 2
def _outputs(raw: Any, size: int, system: Any, batched: bool) -> NDArray[Any]:
    """The outputs of ``size`` draws as a numeric array, one row per draw.

    Bools, integers and floats are kept (NaN and infinities are events like any other
    output); a draw that returned ``None`` becomes a row of :data:`MISSING`; strings and
    other objects are refused.
    """
    owner = "audit"
    rows = list(raw) if not batched else None
    if batched:
        if raw is None:
            raise check.fail("system", system, f"a batched function returning {size} outputs",
                             owner, "it returned None; with batched=True it is called as "
                             "f(input, rng, size)")
        try:
            out = np.asarray(raw)
        except ValueError:  # ragged rows
            out = np.asarray(list(raw), dtype=object)
        if out.shape[:1] != (size,):
            raise check.fail("system", system, f"a batched function returning {size} rows "
                             f"for size={size} (got shape {out.shape})", owner,
                             "set batched=False for a function f(input, rng) returning one "
                             "output")
        if out.dtype != object:
            return _numeric(out, system)
        rows = list(out)
    assert rows is not None
    present = [r for r in rows if r is not None]
    if not present:
        return np.full(len(rows), MISSING)
    try:
        values = _numeric(np.asarray(present), system)
    except ValueError as exc:
        raise check.fail("system", system, "a function whose outputs all have the same shape",
                         owner) from exc
    if len(present) == len(rows):
        return values
    full = np.full((len(rows), *values.shape[1:]), MISSING)
    full[[i for i, r in enumerate(rows) if r is not None]] = values
    return full


def _numeric(out: NDArray[Any], system: Any) -> NDArray[Any]:
    if out.dtype.kind in "biuf":
        return out
    raise check.fail("system", system, "a function returning numbers (bools, integers or "
                     "floats; NaN, infinities and None are allowed as outputs)", "audit",
                     f"its outputs have dtype {out.dtype}: encode categories as integers")


def draw(system: Callable[..., Any], data: Any, seed: np.random.SeedSequence, size: int,
         batched: bool) -> NDArray[Any]:
    """``size`` outputs of ``system`` on ``data``, from the stream ``seed``."""
    rng = np.random.default_rng(seed)
    if batched:
        return _outputs(system(data, rng, size), size, system, batched)
    return _outputs([system(data, rng) for _ in range(size)], size, system, batched)


def _check_system(system: Any, batched: bool, owner: str) -> None:
    """A callable whose signature (where Python can read it) matches ``batched``."""
    if not callable(system):
        raise check.fail("system", system, "a callable f(input, rng, size) (batched=True) or "
                         "f(input, rng) (batched=False)", owner)
    check.instance("batched", batched, bool, owner)
    try:
        signature = inspect.signature(system)
    except (TypeError, ValueError):  # builtins without a signature: cannot tell
        return

    def accepts(*args: Any) -> bool:
        try:
            signature.bind(*args)
        except TypeError:
            return False
        return True

    if batched and not accepts(None, None, 1) and accepts(None, None):
        raise check.fail("batched", batched, "False for a system f(input, rng) that returns "
                         "one output", owner, "or make it batched: f(input, rng, size) "
                         "returning size outputs (much faster)")
    if not batched and not accepts(None, None) and accepts(None, None, 1):
        raise check.fail("batched", batched, "True for a system f(input, rng, size) that "
                         "returns size outputs", owner)


def seed_root(rng: Any, owner: str) -> np.random.SeedSequence:
    """The root SeedSequence of an audit: from None, an int >= 0, a sequence of them, a
    SeedSequence or a Generator (which is advanced)."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(int(rng.integers(2**63)))
    allowed = ("None, an int seed >= 0, a list of them, a SeedSequence or a "
               "numpy.random.Generator")
    if isinstance(rng, bool | float | str | bytes | np.bool_):
        raise check.fail("rng", rng, allowed, owner)
    try:
        return np.random.SeedSequence(rng)
    except (TypeError, ValueError) as exc:
        raise check.fail("rng", rng, allowed, owner) from exc


def _pickling_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, pickle.PicklingError) or "pickle" in text


def _jobs(pair: NeighbouringPair, root: np.random.SeedSequence, sizes: list[int]
          ) -> list[list[tuple[Any, np.random.SeedSequence, int]]]:
    """The chunks of draws of each side: (input, stream, size), in order."""
    seeds = [side.spawn(len(sizes)) for side in root.spawn(2)]
    return [[(data, s, n) for s, n in zip(side, sizes, strict=True)]
            for data, side in zip((pair.first, pair.second), seeds, strict=True)]


class _Stream:
    """Draws both sides chunk by chunk (in the caller's process or on ``executor``, every
    chunk submitted at once); checks that every chunk has the same row shape and that
    not every draw is missing. The selection draws are kept; the measured ones are only
    counted (:func:`audit`), so memory stays at a few chunks whatever the draws."""

    def __init__(self, system: Callable[..., Any], pair: NeighbouringPair,
                 root: np.random.SeedSequence, sizes: list[int], batched: bool,
                 executor: Executor | None, progress: bool | None) -> None:
        self.system, self.batched, self.executor = system, batched, executor
        self.jobs = _jobs(pair, root, sizes)
        self.bars = ExitStack()
        self.bar = self.bars.enter_context(progress_bar(2 * len(sizes), "audit draws",
                                                        unit="chunk", enabled=progress))
        self.futures: list[list[Any]] | None = None
        if executor is not None:
            self.futures = [[executor.submit(draw, system, *job, batched) for job in side]
                            for side in self.jobs]
        self.shape: tuple[int, ...] | None = None
        self.present = False

    def chunk(self, side: int, index: int) -> NDArray[Any]:
        try:
            if self.futures is None:
                part = draw(self.system, *self.jobs[side][index], self.batched)
            else:
                part = self.futures[side][index].result()
                self.futures[side][index] = None  # let the executor free it
        except Exception as exc:
            if self.executor is not None and _pickling_error(exc):
                raise check.fail("system", self.system, "picklable when an executor runs it "
                                 "in other processes", "audit", "define it (and what it "
                                 "uses) at module level, not as a lambda or closure; or use "
                                 "functools.partial of a module-level function; or pass "
                                 "executor=None") from exc
            raise
        if self.shape is None:
            self.shape = part.shape[1:]
        elif part.shape[1:] != self.shape:
            raise check.fail("system", self.system, "a function whose outputs have the same "
                             "shape on both inputs", "audit",
                             f"got row shapes {sorted({self.shape, part.shape[1:]})}")
        self.present = self.present or not bool(np.all(is_missing(part)))
        self.bar.update(1)
        return part

    def close(self) -> None:
        self.bars.close()

    def check_present(self) -> None:
        if not self.present:
            raise check.fail("system", self.system, "a function that returns its output",
                             "audit", "every draw on both inputs returned None")


def _measure(stream: _Stream, sizes: list[int], select: int, delta: float, confidence: float,
             candidates: list[Distinguisher | None], pair: NeighbouringPair, trials: int
             ) -> tuple[list[Any], list[str], list[list[int]]]:
    """Choose each candidate's rule on each side's first ``select`` draws, then count how
    many of the remaining ``trials`` draws of each side every rule contains, one chunk at
    a time.

    The draws, their streams and their split are those of drawing everything at once
    and slicing (the result does not depend on the chunking), and the rules are fixed
    before any measured draw is looked at: the validity argument is unchanged.
    """
    ends = np.cumsum(sizes)
    last = int(np.searchsorted(ends, select, side="left"))  # chunk holding draw select-1
    selection, rest = [], []
    for side in (0, 1):
        parts = [stream.chunk(side, i) for i in range(last + 1)]
        joined = parts[0] if len(parts) == 1 else np.concatenate(parts)
        selection.append(joined[:select])
        rest.append(joined[select:])
    rules, names = [], []
    for candidate in candidates:
        chooser = Events(candidate or choose(selection[0])).bind(pair).for_trials(trials)
        rules.append(chooser.fit(selection[0], selection[1], delta=delta,
                                 confidence=confidence))
        names.append(chooser.name)
    del selection
    hits = [[0, 0] for _ in rules]

    def count(side: int, part: NDArray[Any]) -> None:
        for k, rule in enumerate(rules):
            hits[k][side] += int(np.sum(rule.contains(part)))

    for side in (0, 1):
        if len(rest[side]):
            count(side, rest[side])
        rest[side] = rest[side][:0]
        for i in range(last + 1, len(sizes)):
            count(side, stream.chunk(side, i))
    stream.check_present()
    return rules, names, hits


def audit(
    system: Callable[..., Any],
    pair: NeighbouringPair,
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int = 1_000_000,
    confidence: float = 0.95,
    selection_fraction: float = 0.2,
    selection_trials: int | None = None,
    distinguisher: Distinguisher | list[Distinguisher] | None = None,
    batched: bool = True,
    rng: RNGLike | list[int] = None,
    executor: Executor | None = None,
    progress: bool | None = False,
    name: str = "audit",
    threat_model: str = "",
) -> AuditResult:
    """Test the claim that ``system`` is (epsilon, delta)-DP on ``pair``.

    Parameters
    ----------
    system : callable
        ``f(input, rng, size)`` returning ``size`` outputs (``batched=True``, the default,
        fast), or ``f(input, rng)`` returning one output (``batched=False``). Outputs are
        numbers or arrays of numbers; NaN, infinities and ``None`` (a missing output) are
        outputs like any other, so a system that fails on one input only is caught.
    pair : NeighbouringPair
        The two inputs.
    epsilon, delta : float
        The claim.
    trials : int
        Draws per side that measure the rejection set (at least 10). The
        ``selection_fraction`` draws that choose it come **on top**: each side is drawn
        ``trials + max(2, int(trials * selection_fraction))`` times
        (``AuditResult.selection_trials`` reports the extra draws). The measured draws
        are drawn and counted one chunk at a time, never held together, so 10^8 draws
        per side of a cheap sampler need only a few chunks of memory.
    selection_trials : int, optional
        The selection draws per side (at least 2), in place of
        ``trials * selection_fraction``: a large measurement (10^8 draws) needs far fewer
        selection draws than 20% of it (the distinguishers choose the set whose bound is
        best *at the measured size*, :meth:`~privkit.audits.Distinguisher.for_trials`).
    confidence : float
        The probability that the reported lower bound is valid.
    distinguisher : Distinguisher or list of them, optional
        Default: chosen from the outputs' type (:func:`~privkit.audits.distinguishers.choose`).
        Either way it is wrapped so that non-finite and missing outputs are events. A list
        of k distinguishers: each chooses its rule on the selection draws, every rule is
        measured on the same fresh draws, and the largest bound is reported with a
        Bonferroni correction over the k rules (each bound at level
        ``(1 - confidence) / k``), so the best of several costs a factor k in the
        confidence level and nothing in validity.
    rng : seed, list of seeds, SeedSequence or Generator
        The root of every draw: chunks get independent child streams, so the result does
        not depend on ``executor``.
    executor : concurrent.futures.Executor, optional
        Runs chunks (250,000 draws, or 10,000 for non-batched systems) in parallel: a
        ``ProcessPoolExecutor`` for slow mechanisms, or a ``dask.distributed.Client`` for
        a cluster. The system must then be picklable: a module-level function (or a
        ``functools.partial`` of one), not a lambda or a closure.
    progress : bool or None, default False
        Show a progress bar (tqdm, on stderr) over the chunks of draws: ``True`` always
        (when tqdm is installed), ``None`` only when stderr is a terminal, ``False``
        never (:mod:`privkit._progress`).
    threat_model : str
        What the adversary is assumed to see (printed with the result).

    Returns
    -------
    AuditResult
        Its ``verdict`` is "violation" only when the lower bound exceeds ``epsilon``.

    Notes
    -----
    Jagielski, Ullman, Oprea 2020, Algorithm 2, with the rejection set chosen on a
    separate split so no multiple-testing correction is needed beyond the two proportions.

    For floating-point outputs the default distinguisher includes
    :class:`~privkit.audits.Reachability` (Mironov 2012): a system that adds plain
    ``numpy`` noise to the answer leaks it through its low-order bits and is reported as
    a violation, whatever its scale. On a pair of query answers it tests which outputs
    each answer can reach; on a pair of datasets (or any inputs that are not answers of
    the outputs' shape) it tests the outputs' own cells (sign, binade, lowest set bit,
    :class:`~privkit.audits.Granularity`), which need no answer. To test only the
    noise's scale of such a simulation, pass ``distinguisher=Threshold()`` (or snap the
    outputs to a grid); privkit's own ``release`` passes.
    """
    owner = "audit"
    eps = check.positive_finite("epsilon", epsilon, owner)
    dlt = check.delta("delta", delta, owner)
    n = check.positive_int("trials", trials, owner)
    if n < MIN_TRIALS:
        raise check.fail("trials", trials, f"an integer >= {MIN_TRIALS} (draws per side)",
                         owner)
    conf = check.open_unit("confidence", confidence, owner)
    frac = check.open_unit("selection_fraction", selection_fraction, owner)
    check.instance("pair", pair, NeighbouringPair, owner)
    _check_system(system, batched, owner)
    candidates: list[Distinguisher | None] = [None]
    if isinstance(distinguisher, list | tuple):
        if not distinguisher or not all(isinstance(d, Distinguisher) for d in distinguisher):
            raise check.fail("distinguisher", distinguisher, "a Distinguisher or a non-empty "
                             "list of them", owner)
        candidates = list(distinguisher)
    elif distinguisher is not None:
        check.instance("distinguisher", distinguisher, Distinguisher, owner)
        candidates = [distinguisher]
    root = seed_root(rng, owner)
    if selection_trials is None:
        select = max(_MIN_SELECTION, int(n * frac))
    else:
        select = check.positive_int("selection_trials", selection_trials, owner)
        if select < _MIN_SELECTION:
            raise check.fail("selection_trials", selection_trials,
                             f"an integer >= {_MIN_SELECTION} (draws per side)", owner)
    total = n + select
    chunks = max(1, math.ceil(total / (_CHUNK if batched else _CHUNK_SINGLE)))
    sizes = [total // chunks + (1 if i < total % chunks else 0) for i in range(chunks)]
    stream = _Stream(system, pair, root, sizes, batched, executor, progress)
    try:
        rules, names, counts = _measure(stream, sizes, select, dlt, conf, candidates, pair,
                                        n)
    finally:
        stream.close()
    sets = len(rules)
    oriented = [(second, first) if rule.swapped else (first, second)
                for rule, (first, second) in zip(rules, counts, strict=True)]
    bounds = [float(epsilon_lower_bound(h, n, o, n, delta=dlt, confidence=conf, sets=sets))
              for h, o in oriented]
    best = int(np.argmax(bounds))
    rule, bound, (hits, other) = rules[best], bounds[best], oriented[best]
    chosen_by = names[best] if sets == 1 else f"best of {sets} by union bound: {names[best]}"
    mu = gdp_mu_lower_bound(hits, n, other, n, confidence=1.0 - (1.0 - conf) / sets)
    return AuditResult(name=name, claim_epsilon=eps, claim_delta=dlt, lower_bound=bound,
                       confidence=conf, trials=n, hits=hits, hits_other=other,
                       rule=rule.description, distinguisher=chosen_by, gdp_mu_lower=mu,
                       pair=pair, selection_trials=select, threat_model=threat_model)


def sequential_audit(
    system: Callable[..., Any],
    pair: NeighbouringPair,
    *,
    epsilon: float,
    delta: float = 0.0,
    first_stage: int = 2_000,
    growth: int = 4,
    max_trials: int = 1_000_000,
    confidence: float = 0.95,
    rng: RNGLike | list[int] = None,
    name: str = "audit",
    **kwargs: Any,
) -> AuditResult:
    """Audit in stages of growing size, stopping at the first stage that finds a violation.

    Stage k (k = 1, 2, ...) draws ``first_stage * growth^(k-1)`` fresh draws per side
    (capped by ``max_trials``) and runs :func:`audit` at confidence
    ``1 - (1 - confidence) / 2^k``. The stages' failure probabilities sum to less than
    ``1 - confidence``, so by the union bound every stage's lower bound holds
    simultaneously with probability at least ``confidence``: the verdict of whichever
    stage stops (and the bound it reports) is valid at the stated confidence, however
    the stopping depended on the data. The result's ``stages`` and ``draws_per_side``
    say how many stages ran and what the last one drew; earlier stages drew
    ``sum(first_stage * growth^j)`` more.

    Other keyword arguments (``executor``, ``batched``, ``distinguisher``, ``progress``,
    ...) go to :func:`audit`; with ``progress``, a bar over the stages (their number up
    to ``max_trials`` is fixed by the parameters) sits above each stage's bar of draws.
    """
    owner = "sequential_audit"
    size = check.positive_int("first_stage", first_stage, owner)
    if size < MIN_TRIALS:
        raise check.fail("first_stage", first_stage, f"an integer >= {MIN_TRIALS}", owner)
    grow = check.positive_int("growth", growth, owner)
    if grow < 2:
        raise check.fail("growth", growth, "an integer >= 2", owner)
    cap = check.positive_int("max_trials", max_trials, owner)
    conf = check.open_unit("confidence", confidence, owner)
    root = seed_root(rng, owner)
    stages = 1
    while size * grow ** (stages - 1) < cap:
        stages += 1
    stage = 0
    used = 0
    with progress_bar(stages, "audit stages", unit="stage",
                      enabled=kwargs.get("progress", False)) as bar:
        while True:
            stage += 1
            n = min(size * grow ** (stage - 1), cap)
            alpha = (1.0 - conf) / 2.0**stage
            result = audit(system, pair, epsilon=epsilon, delta=delta, trials=n,
                           confidence=1.0 - alpha, rng=root.spawn(1)[0], name=name, **kwargs)
            used += result.draws_per_side
            bar.update(1)
            if result.verdict == "violation" or n >= cap:
                return attrs.evolve(result, stages=stage, confidence=conf,
                                    selection_trials=used - result.trials)


def search_pairs(
    system: Callable[..., Any],
    candidates: list[NeighbouringPair],
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int = 1_000_000,
    screening_trials: int = 20_000,
    confidence: float = 0.95,
    rng: RNGLike | list[int] = None,
    name: str = "audit",
    **kwargs: Any,
) -> tuple[NeighbouringPair, AuditResult]:
    """Find the candidate pair on which ``system`` leaks most, then audit it afresh.

    Every candidate is screened with ``screening_trials`` draws per side; the one with the
    largest lower bound is audited again with ``trials`` fresh draws, so the final bound
    needs no correction for the search. Returns the pair and that final result.
    """
    if not candidates:
        raise check.fail("candidates", candidates, "a non-empty list of pairs",
                         "search_pairs")
    root = seed_root(rng, "search_pairs")
    screen_seeds = root.spawn(len(candidates) + 1)
    screened = [audit(system, pair, epsilon=epsilon, delta=delta, trials=screening_trials,
                      confidence=confidence, rng=seed, name=name, **kwargs)
                for pair, seed in zip(candidates, screen_seeds, strict=False)]
    best = int(np.argmax([r.lower_bound for r in screened]))
    final = audit(system, candidates[best], epsilon=epsilon, delta=delta, trials=trials,
                  confidence=confidence, rng=screen_seeds[-1], name=name, **kwargs)
    return candidates[best], final
