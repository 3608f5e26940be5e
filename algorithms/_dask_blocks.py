"""The row blocks a dask array of private rows is read in: whole numbers of
``chunk_size``-row pieces, one block per thread (or per piece when there are fewer), so
that every pass of a fit is one task per thread and the partial sums, piece by piece, are
the numpy path's, bit for bit.

The blocks depend on the number of rows, which is private under add-remove: they shape
only how the work is scheduled, never what a fit returns (rule R4, ``DESIGN.md``, "The
transcript is the release"). Used by :mod:`~privkit.algorithms._private_rows` (a dask
array read in its blocks) and the kernel family's passes over the rows
(:mod:`~privkit.algorithms.kernels.kmeans`).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["block_rows", "dask_row_blocks", "dask_threads", "is_dask_array", "map_pieces",
           "piece_results"]


def is_dask_array(X: Any) -> bool:
    """True for a ``dask.array.Array`` (without importing dask when it is not loaded)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _client() -> Any:
    """The current ``distributed`` client, or None (the local scheduler runs the tasks)."""
    if "distributed" not in sys.modules:
        return None
    from distributed import default_client

    try:
        return default_client()  # type: ignore[no-untyped-call]
    except ValueError:
        return None


def dask_threads() -> int:
    """The threads that run dask tasks: the current ``distributed`` client's (all its
    workers' threads), else the local scheduler's (one per core)."""
    client = _client()
    if client is not None:
        return max(1, int(sum(client.nthreads().values())))
    return max(1, os.cpu_count() or 1)


def block_rows(n_rows: int, chunk_size: int, threads: int) -> int:
    """Rows per dask block by privkit's rule: the ``ceil(n / chunk_size)`` pieces of
    ``chunk_size`` rows dealt out evenly, one block per thread, so that every thread has
    one task per pass (no more: a task costs about a millisecond of scheduling, a piece of
    65,536 rows several) and every block is a whole number of pieces (so the partial sums,
    piece by piece, are the numpy path's, bit for bit)."""
    pieces = max(1, math.ceil(n_rows / chunk_size))
    return math.ceil(pieces / max(1, min(threads, pieces))) * chunk_size


def dask_row_blocks(X: Any, chunk_size: int, *, persist: bool = False) -> Any:
    """X cut into row blocks that are whole numbers of ``chunk_size``-row pieces (the last
    may be shorter), one column block.

    Blocks that already are (at least one per thread, or one per piece when there are
    fewer pieces) are kept: no data moves. Otherwise (dask's default ``chunks="auto"``
    makes one 128 MiB block, a single task) the rows are rechunked by :func:`block_rows`;
    ``persist``, when X is held in a ``distributed`` cluster's memory (persisted, or
    computed from persisted data), keeps the new blocks in the workers' memory, one per
    worker thread in turn (a fit's passes read them in place instead of moving them again
    each pass; they are released with the array). A lazy X is not persisted (it may not
    fit in memory): its blocks are made again on each pass.
    """
    if any(math.isnan(c) for c in X.chunks[0]):  # unknown block sizes (after a filter)
        X = X.compute_chunk_sizes()
    rows = [int(c) for c in X.chunks[0]]
    threads = dask_threads()
    pieces = max(1, math.ceil(X.shape[0] / chunk_size))
    edges = [sum(rows[:i + 1]) for i in range(len(rows) - 1)]
    if (len(X.chunks[1]) == 1 and all(e % chunk_size == 0 for e in edges)
            and len(rows) >= min(threads, pieces)):
        return X
    Y = X.rechunk((block_rows(X.shape[0], chunk_size, threads), X.shape[1]))
    client = _client() if persist else None
    if client is None:
        return Y
    from distributed import futures_of

    # Only data already held by the cluster is copied into new blocks: a lazy array may
    # not fit in the workers' memory, so its blocks are made again on each pass.
    return _spread(client, Y) if futures_of(X) else Y  # type: ignore[no-untyped-call]


def _spread(client: Any, Y: Any) -> Any:
    """Y persisted with its blocks dealt out over the workers' threads in turn (the
    scheduler alone would leave them all next to the block they were cut from)."""
    import dask.array as da

    slots = [w for w, n in sorted(client.nthreads().items()) for _ in range(n)]
    blocks = [client.persist(Y.blocks[i], workers=[slots[i % len(slots)]])
              for i in range(Y.numblocks[0])]
    return da.concatenate(blocks, axis=0)  # type: ignore[no-untyped-call]


def piece_results(block: Any, function: Callable[[Any], Any], chunk_size: int) -> list[Any]:
    """``function`` of each ``chunk_size``-row piece of one block, in order (one dask task:
    the client adds the pieces' results in the numpy path's order)."""
    return [function(block[i:i + chunk_size])
            for i in range(0, max(block.shape[0], 1), chunk_size)]


def map_pieces(block: Any, function: Callable[[Any], Any], n_columns: int,
               chunk_size: int) -> Any:
    """``function`` applied piece by piece to one block's rows, stacked (one dask task)."""
    out = np.empty((block.shape[0], n_columns))
    for i in range(0, block.shape[0], chunk_size):
        out[i:i + chunk_size] = function(block[i:i + chunk_size])
    return out
