"""Attacks on neighbouring pairs: turn draws into a lower bound on epsilon.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.audits.distinguishers import Distinguisher, choose
from privkit.audits.lower_bounds import epsilon_lower_bound, gdp_mu_lower_bound
from privkit.audits.pairs import NeighbouringPair
from privkit.audits.result import AuditResult
from privkit.rng import RNGLike

__all__ = ["audit", "draw", "search_pairs"]

#: A batched system under test: ``f(input, rng, size) -> array with size rows``.
Batched = Callable[[Any, np.random.Generator, int], Any]
_CHUNK = 250_000
#: Draws per chunk for non-batched systems: small, so process pools balance the work.
_CHUNK_SINGLE = 10_000


def draw(system: Callable[..., Any], data: Any, seed: np.random.SeedSequence, size: int,
         batched: bool) -> NDArray[Any]:
    """``size`` outputs of ``system`` on ``data``, from the stream ``seed``."""
    rng = np.random.default_rng(seed)
    if batched:
        out = np.asarray(system(data, rng, size))
        if out.shape[:1] != (size,):
            raise check.fail("system", system, f"a batched function returning {size} rows "
                             f"for size={size} (got shape {out.shape})", "audit")
        return out
    return np.asarray([system(data, rng) for _ in range(size)])


def _both_sides(system: Callable[..., Any], pair: NeighbouringPair,
                root: np.random.SeedSequence, sizes: list[int], batched: bool,
                executor: Executor | None, progress: bool
                ) -> tuple[NDArray[Any], NDArray[Any]]:
    """Draws on both inputs; every chunk of both sides is submitted before any is awaited."""
    seeds = [side.spawn(len(sizes)) for side in root.spawn(2)]
    jobs = [(data, s, n) for data, side in zip((pair.first, pair.second), seeds, strict=True)
            for s, n in zip(side, sizes, strict=True)]
    bar = _progress_bar(len(jobs)) if progress else None
    if executor is None:
        parts = []
        for data, s, n in jobs:
            parts.append(draw(system, data, s, n, batched))
            if bar is not None:
                bar.update(1)
    else:
        futures = [executor.submit(draw, system, data, s, n, batched) for data, s, n in jobs]
        parts = []
        for f in futures:
            parts.append(f.result())
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    half = len(sizes)
    return np.concatenate(parts[:half]), np.concatenate(parts[half:])


def _progress_bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit="chunk", desc="audit draws", leave=False)


def audit(
    system: Callable[..., Any],
    pair: NeighbouringPair,
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int = 1_000_000,
    confidence: float = 0.95,
    selection_fraction: float = 0.2,
    distinguisher: Distinguisher | None = None,
    batched: bool = True,
    rng: RNGLike = None,
    executor: Executor | None = None,
    progress: bool = False,
    name: str = "audit",
) -> AuditResult:
    """Test the claim that ``system`` is (epsilon, delta)-DP on ``pair``.

    Parameters
    ----------
    system : callable
        ``f(input, rng, size)`` returning ``size`` outputs (``batched=True``, fast), or
        ``f(input, rng)`` returning one output (``batched=False``).
    pair : NeighbouringPair
        The two inputs.
    epsilon, delta : float
        The claim.
    trials : int
        Draws per side. A ``selection_fraction`` of them chooses the rejection set; the
        rest measure it.
    confidence : float
        The probability that the reported lower bound is valid.
    distinguisher : Distinguisher, optional
        Default: chosen from the outputs' type (:func:`~privkit.audits.distinguishers.choose`).
    rng : seed, SeedSequence or Generator
        The root of every draw: chunks get independent child streams, so the result does
        not depend on ``executor``.
    executor : concurrent.futures.Executor, optional
        Runs chunks (250,000 draws, or 10,000 for non-batched systems) in parallel: a
        ``ProcessPoolExecutor`` for slow mechanisms, or a ``dask.distributed.Client`` for
        a cluster (the system must then be picklable).
    progress : bool, default False
        Show a progress bar (tqdm) over the chunks of draws.

    Returns
    -------
    AuditResult
        Its ``verdict`` is "violation" only when the lower bound exceeds ``epsilon``.

    Notes
    -----
    Jagielski, Ullman, Oprea 2020, Algorithm 2, with the rejection set chosen on a
    separate split so no multiple-testing correction is needed beyond the two proportions.
    """
    owner = "audit"
    eps = check.positive_finite("epsilon", epsilon, owner)
    dlt = check.delta("delta", delta, owner)
    n = check.positive_int("trials", trials, owner)
    conf = check.open_unit("confidence", confidence, owner)
    frac = check.open_unit("selection_fraction", selection_fraction, owner)
    check.instance("pair", pair, NeighbouringPair, owner)
    root = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(
        rng.integers(2**63) if isinstance(rng, np.random.Generator) else rng)
    total = n + int(n * frac)
    chunks = max(1, math.ceil(total / (_CHUNK if batched else _CHUNK_SINGLE)))
    sizes = [total // chunks + (1 if i < total % chunks else 0) for i in range(chunks)]
    first, second = _both_sides(system, pair, root, sizes, batched, executor, progress)
    select = total - n
    chooser = distinguisher or choose(first[:select])
    rule = chooser.fit(first[:select], second[:select], delta=dlt, confidence=conf)
    hits_first = int(np.sum(rule.contains(first[select:])))
    hits_second = int(np.sum(rule.contains(second[select:])))
    hits, other = (hits_second, hits_first) if rule.swapped else (hits_first, hits_second)
    bound = float(epsilon_lower_bound(hits, n, other, n, delta=dlt, confidence=conf))
    mu = gdp_mu_lower_bound(hits, n, other, n, confidence=conf)
    return AuditResult(name=name, claim_epsilon=eps, claim_delta=dlt, lower_bound=bound,
                       confidence=conf, trials=n, hits=hits, hits_other=other,
                       rule=rule.description, distinguisher=chooser.name, gdp_mu_lower=mu,
                       pair=pair)


def search_pairs(
    system: Callable[..., Any],
    candidates: list[NeighbouringPair],
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int = 1_000_000,
    screening_trials: int = 20_000,
    confidence: float = 0.95,
    rng: RNGLike = None,
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
    if isinstance(rng, np.random.SeedSequence):
        root = rng
    else:
        root = np.random.SeedSequence(int(rng.integers(2**63)) if isinstance(
            rng, np.random.Generator) else rng)
    screen_seeds = root.spawn(len(candidates) + 1)
    screened = [audit(system, pair, epsilon=epsilon, delta=delta, trials=screening_trials,
                      confidence=confidence, rng=seed, name=name, **kwargs)
                for pair, seed in zip(candidates, screen_seeds, strict=False)]
    best = int(np.argmax([r.lower_bound for r in screened]))
    final = audit(system, candidates[best], epsilon=epsilon, delta=delta, trials=trials,
                  confidence=confidence, rng=screen_seeds[-1], name=name, **kwargs)
    return candidates[best], final
