"""Rows as privkit's kernel estimators read them: private rows for ``fit`` (structure
checked, values never), query rows for ``predict`` and friends (checked strictly), numpy
or dask alike, and the row blocks a dask array is read in.

Under add-remove the number of rows is private, so no check here depends on it, and no
message names a value or the number of rows of private data (the transcript rules of
issue 22). Query rows are not private: a non-finite query row is an error, never a
silent answer.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

__all__ = ["block_rows", "dask_row_blocks", "dask_threads", "is_dask_array", "map_pieces",
           "piece_results", "private_labels", "private_rows", "query_rows"]


def is_dask_array(X: Any) -> bool:
    """True for a ``dask.array.Array`` (without importing dask when it is not loaded)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _is_sparse(X: Any) -> bool:
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and bool(sp.issparse(X))


def private_rows(X: Any, owner: str, name: str = "X", chunk_size: int | None = None) -> Any:
    """The private rows as fit reads them: a float64 numpy array (or a dask array), 2-D
    with at least one column and any number of rows, zero included (under add-remove the
    row count is private, so it never decides whether fit succeeds).

    Only the structure is checked (dense and real, the number of dimensions and of
    columns: the public schema); no message names a value or the number of rows. With
    ``chunk_size``, a dask array comes back in the row blocks of :func:`dask_row_blocks`
    (persisted on a distributed cluster when they had to be made, so that the passes of a
    fit read them where they are).
    """
    if not is_dask_array(X):
        if _is_sparse(X):
            raise check.fail(name, "a sparse matrix", "a dense array", owner,
                             "sparse input is not supported")
        allowed = "a numeric 2-D array (n_samples, n_features)"
        X = check.withheld(lambda: np.asarray(X), name, allowed, owner)
        if X.dtype.kind == "c":
            raise check.fail(name, "complex data", "a real array", owner,
                             "Complex data not supported")
        X = check.withheld(lambda: X.astype(np.float64, copy=False), name, allowed, owner)
    if len(X.shape) != 2 or X.shape[1] < 1:
        raise check.fail(name, f"a {len(X.shape)}-D array" if len(X.shape) != 2 else
                         "an array without columns", "a 2-D array (n_samples, n_features) "
                         "with at least one feature", owner)
    if chunk_size is not None and is_dask_array(X):
        X = dask_row_blocks(X, chunk_size, persist=True)
    return X


# -- the row blocks of a dask array ------------------------------------------------------------


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


def query_rows(estimator: Any, X: Any, method: str) -> Any:
    """Query rows for a fitted estimator's ``method`` (predict, transform, ...): they are
    not private, so they are checked strictly (scikit-learn's ``validate_data``: 2-D,
    ``n_features_in_`` columns, every entry finite); a dask array is checked block by
    block when it is computed. A non-finite row is an error, never a silent answer."""
    from sklearn.utils.validation import check_is_fitted, validate_data

    check_is_fitted(estimator)
    if not is_dask_array(X):
        out: NDArray[np.float64] = validate_data(estimator, X, dtype=np.float64, reset=False)
        return out
    owner = f"{type(estimator).__name__}.{method}"
    d = int(estimator.n_features_in_)
    if len(X.shape) != 2 or X.shape[1] != d:
        raise check.fail("X", f"a dask array of {len(X.shape)} dimensions and "
                         f"{X.shape[-1]} columns", f"a 2-D array with {d} columns", owner)

    def finite(block: NDArray[Any]) -> NDArray[np.float64]:
        rows = np.asarray(block, dtype=np.float64)
        if not np.isfinite(rows).all():
            raise check.fail("X", "a row with a non-finite entry", "finite query rows",
                             owner)
        return rows

    return X.map_blocks(finite, dtype=np.float64)


def private_labels(y: Any, n_rows: int, owner: str) -> NDArray[Any]:
    """One label per private row, as a 1-D array: a column vector is raveled with
    scikit-learn's ``DataConversionWarning`` (a matter of shape, which is public); the
    values are never checked (a label outside the label set is a neutral record, by the
    estimator's stated rule) nor named."""
    if y is None:
        raise check.fail("y", None, "one label per row of X", owner,
                         "requires y to be passed, but the target y is None")
    labels = np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        import warnings

        from sklearn.exceptions import DataConversionWarning

        warnings.warn("A column-vector y was passed when a 1d array was expected; it is "
                      "raveled", DataConversionWarning, stacklevel=3)
        labels = labels.ravel()
    if labels.ndim != 1 or labels.shape[0] != n_rows:
        raise check.fail("y", f"a {labels.ndim}-D array" if labels.ndim != 1 else
                         "a different number of labels than rows of X",
                         "one label per row of X (y should be a 1d array)", owner)
    return labels
