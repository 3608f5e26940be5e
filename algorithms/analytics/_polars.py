"""The polars engine: contribution bounding and exact statistics as one lazy query.

Bounding keeps, per privacy unit, the ``max_partitions`` (unit, partition) pairs with the
lowest secret priority (polars' seeded hash of the pair, the key breaking ties, so the
bound is exact whatever the hash does) and, per kept pair, the ``max_rows`` rows of
lowest random priority (a seeded hash of the row's position; ties only decide which
row). The per-row integers are the same floating-point expressions as the pandas
engine's, so both give the same exact table when they keep the same rows.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import polars as pl

from privkit.algorithms.analytics._exact import BUCKET, ROWS, UNITS, Bounding, Measure

__all__ = ["aggregate", "measure_expression"]

_SEED_MASK = 2**63 - 1


def measure_expression(measure: Measure) -> pl.Expr:
    """The per-row integer of ``measure`` (see :class:`~._exact.Measure`)."""
    assert measure.column is not None
    clamped = pl.col(measure.column).cast(pl.Float64).clip(measure.lower, measure.upper)
    if measure.kind == "sum":
        value = (clamped / measure.unit + 0.5).floor()
    elif measure.kind == "csum":
        value = ((clamped - measure.midpoint) / measure.unit + 0.5).floor()
    elif measure.kind == "csumsq":
        centred = clamped - measure.midpoint
        value = (centred * centred / measure.unit + 0.5).floor()
    else:
        value = pl.min_horizontal(((clamped - measure.lower) / measure.width).floor(),
                                  pl.lit(float(measure.bins - 1)))
    return value.cast(pl.Int64)


def _filtered(frame: pl.LazyFrame, bounding: Bounding) -> pl.LazyFrame:
    schema = frame.collect_schema()
    keep = [pl.col(c).is_not_null() for c in (bounding.privacy_unit, *bounding.by)]
    keep += [pl.col(c).is_not_nan() for c in (bounding.privacy_unit, *bounding.by)
             if schema[c].is_float()]
    keep += [pl.col(c).cast(pl.Float64).is_finite().fill_null(False)
             for c in bounding.value_columns]
    frame = frame.filter(pl.all_horizontal(keep))
    if bounding.partitions is not None:
        declared = pl.from_pandas(bounding.partitions).lazy()
        declared = declared.with_columns([pl.col(c).cast(schema[c]) for c in bounding.by])
        frame = frame.join(declared, on=list(bounding.by), how="semi")
    return frame


def aggregate(data: Any, bounding: Bounding) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Bound the rows of a polars DataFrame (or LazyFrame) and aggregate them per
    partition (see :func:`~._exact.assemble` for the tables returned).

    One sort by (unit, pair priority, key, row priority) puts each unit's pairs in
    priority order and each pair's rows in random order; a pair's rank within its unit
    and a row's rank within its pair are then differences of running counts (no window
    over groups), and a partition's unit count is the number of kept pairs in it."""
    unit, by = bounding.privacy_unit, list(bounding.by)
    columns = list(dict.fromkeys([unit, *by, *bounding.value_columns]))
    salt = bounding.salt & _SEED_MASK
    frame = _filtered(data.lazy().select(columns), bounding)
    index = pl.int_range(pl.len(), dtype=pl.UInt64)
    first_of_unit = pl.col(unit).ne_missing(pl.col(unit).shift(1))
    first_of_pair = pl.any_horizontal([first_of_unit] + [
        pl.col(c).ne_missing(pl.col(c).shift(1)) for c in by])
    pair_id = pl.col("__first_of_pair").cast(pl.UInt64).cum_sum()
    kept = (frame
            .with_columns(pl.struct([unit, *by]).hash(seed=salt).alias("__priority"),
                          index.hash(seed=salt ^ 1).alias("__row_priority"))
            .sort([unit, "__priority", *by, "__row_priority"])
            .with_columns(first_of_unit.alias("__first_of_unit"),
                          first_of_pair.alias("__first_of_pair"), index.alias("__index"))
            .with_columns(pair_id.alias("__pair"))
            .with_columns(
                (pl.col("__pair") - pl.when("__first_of_unit").then("__pair")
                 .forward_fill()).alias("__pair_rank"),
                (pl.col("__index") - pl.when("__first_of_pair").then("__index")
                 .forward_fill()).alias("__row_rank"))
            .filter((pl.col("__pair_rank") < bounding.max_partitions)
                    & (pl.col("__row_rank") < bounding.max_rows))
            .with_columns([measure_expression(m).alias(m.name)
                           for m in bounding.measures if m.kind != "count"]))
    sums = [pl.len().cast(pl.Int64).alias(m.name) if m.kind == "count"
            else pl.col(m.name).sum().alias(m.name) for m in bounding.summed]
    per_partition = kept.group_by(by).agg(
        pl.col("__first_of_pair").cast(pl.Int64).sum().alias(UNITS), *sums)
    queries = [per_partition] + [
        kept.group_by([*by, m.name]).agg(pl.len().alias(ROWS)).rename({m.name: BUCKET})
        for m in bounding.bucketed]
    results = pl.collect_all(queries)
    buckets = {m.name: results[i + 1].to_pandas() for i, m in enumerate(bounding.bucketed)}
    return results[0].to_pandas(), buckets
