"""The polars engine: contribution bounding and exact statistics as one lazy query.

Bounding keeps, per privacy unit, the ``max_partitions`` (unit, partition) pairs with the
lowest secret priority (polars' seeded hash of the pair), ranked at the pair level so the
bound is exact whatever ties the hash has, and, per kept pair, the ``max_rows`` rows of
lowest random priority (an ordinal rank, exact under ties too). The per-row integers are
the same floating-point expressions as the pandas engine's, so both give the same exact
table when they keep the same rows.

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
    partition (see :func:`~._exact.assemble` for the tables returned)."""
    unit, by = bounding.privacy_unit, list(bounding.by)
    columns = list(dict.fromkeys([unit, *by, *bounding.value_columns]))
    salt = bounding.salt & _SEED_MASK
    frame = _filtered(data.lazy().select(columns), bounding)
    frame = frame.with_columns(
        pl.int_range(pl.len(), dtype=pl.UInt64).hash(seed=salt ^ 1).alias("__row_priority"))
    pairs = (frame.select([unit, *by]).unique()
             .with_columns(pl.struct([unit, *by]).hash(seed=salt).alias("__priority"))
             .sort([unit, "__priority", *by])
             .filter(pl.int_range(pl.len()).over(unit) < bounding.max_partitions)
             .select([unit, *by]))
    kept = (frame.join(pairs, on=[unit, *by], how="semi")
            .filter(pl.col("__row_priority").rank("ordinal").over([unit, *by])
                    <= bounding.max_rows)
            .with_columns([measure_expression(m).alias(m.name)
                           for m in bounding.measures if m.kind != "count"]))
    sums = [pl.len().cast(pl.Int64).alias(m.name) if m.kind == "count"
            else pl.col(m.name).sum().alias(m.name) for m in bounding.summed]
    per_partition = kept.group_by(by).agg(pl.col(unit).n_unique().alias(UNITS), *sums)
    queries = [per_partition] + [
        kept.group_by([*by, m.name]).agg(pl.len().alias(ROWS)).rename({m.name: BUCKET})
        for m in bounding.bucketed]
    results = pl.collect_all(queries)
    buckets = {m.name: results[i + 1].to_pandas() for i, m in enumerate(bounding.bucketed)}
    return results[0].to_pandas(), buckets
