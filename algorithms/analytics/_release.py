"""The release stage: from the exact table to the released one, through privkit's blocks.

Every random output goes through a mechanism's ``release`` (floating-point safe, recorded
in the open ledgers): the partition selection is a
:class:`~privkit.mechanisms.StabilityHistogram` on the units per partition, each summed
statistic one :class:`~privkit.mechanisms.Laplace` release of the vector over partitions
(integer-valued, so its grid does not depend on how many partitions there are), each
histogram one over the ``(partitions, bins)`` matrix, and each quantile one
:class:`~privkit.mechanisms.Exponential` selection per partition. Noise is drawn for every
partition of the exact table, and the ones selection suppresses are masked afterwards: the
same law as drawing for the selected ones only, and it lets an audit draw ``size``
released tables at once.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from privkit.algorithms.analytics._exact import ExactTable
from privkit.algorithms.analytics.aggregations import Quantile, Statistic

if TYPE_CHECKING:
    from privkit.algorithms.analytics.query import Query

__all__ = ["release_columns"]


def _selected(query: Query, exact: ExactTable, rng: np.random.Generator,
              shape: tuple[int, ...]) -> NDArray[np.bool_]:
    block = query.selection_block
    if block is None or len(exact) == 0:
        return np.ones((*shape, len(exact)), dtype=bool)
    labels = block.release(exact.units[:, None], rng=rng, size=shape or None)
    selected: NDArray[np.bool_] = np.asarray(labels) == 0
    return selected


def _statistic(query: Query, statistic: Statistic, exact: ExactTable,
               rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
    block = query.blocks[statistic]
    measure = query.measure(statistic)
    value = exact.buckets[measure.name] if statistic.kind == "buckets" \
        else exact.sums[measure.name]
    noisy = block.release(value.astype(np.float64), rng=rng, size=shape or None,
                          integer_valued=True)
    return np.asarray(noisy, dtype=np.float64) * measure.unit


def _quantile(query: Query, quantile: Quantile, exact: ExactTable,
              rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
    block = query.blocks[quantile]
    measure = query.measure(quantile.statistics()[0])
    utilities = quantile.utilities(exact.buckets[measure.name])
    chosen = np.empty((len(exact), *shape), dtype=np.float64)
    for i, row in enumerate(utilities):
        chosen[i] = block.release(row, rng=rng, size=shape or None)
    return np.moveaxis(chosen, 0, -1) if shape else chosen


def release_columns(query: Query, exact: ExactTable, rng: np.random.Generator,
                    shape: tuple[int, ...] = ()) -> tuple[NDArray[np.bool_],
                                                          dict[str, NDArray[np.float64]]]:
    """Which partitions are released (``(*shape, n_partitions)``) and each output column
    (``(*shape, n_partitions)``; NaN where a partition is not released), for ``shape``
    independent runs of the release stage (``()``: one run)."""
    selected = _selected(query, exact, rng, shape)
    released: dict[Any, NDArray[np.float64]] = {}
    for key in query.releases:
        if len(exact) == 0:
            width = key.bins if isinstance(key, Statistic) and key.kind == "buckets" else 0
            released[key] = np.zeros((*shape, 0, width) if width else (*shape, 0))
        elif isinstance(key, Quantile):
            released[key] = _quantile(query, key, exact, rng, shape)
        else:
            released[key] = _statistic(query, key, exact, rng, shape)
    columns: dict[str, NDArray[np.float64]] = {}
    for name, aggregation in query.aggregations:
        answer = np.asarray(aggregation.finish(released), dtype=np.float64)
        outputs = aggregation.output_names(name)
        if len(outputs) == 1:
            columns[name] = np.where(selected, answer, np.nan)
        else:
            for j, output in enumerate(outputs):
                columns[output] = np.where(selected, answer[..., j], np.nan)
    return selected, columns
