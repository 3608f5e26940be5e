"""The Spark engine: contribution bounding and exact statistics as DataFrame operations.

Everything runs in the cluster: two window functions over the rows partitioned by
privacy unit (a dense rank of the unit's (partition) pairs by a secret priority,
``xxhash64`` of the pair and the salt with the key as tie-break, so at most
``max_partitions`` distinct pairs survive exactly; then a row number per pair by a seeded
random priority, at most ``max_rows``), then ``groupBy`` aggregations. The driver
receives only the aggregated table, one row per partition (and per bucket for
histograms and quantiles): :func:`collect` is the only place rows leave the cluster,
and the test suite probes how many it brings back.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from privkit.algorithms.analytics._exact import BUCKET, ROWS, UNITS, Bounding, Measure

__all__ = ["aggregate", "collect", "measure_column"]

_SEED_MASK = 2**63 - 1


def measure_column(measure: Measure) -> Any:
    """The per-row integer of ``measure`` as a Spark column expression."""
    from pyspark.sql import functions as F  # noqa: N812  (pyspark's own convention)

    assert measure.column is not None
    value = F.col(measure.column).cast("double")
    clamped = F.least(F.greatest(value, F.lit(measure.lower)), F.lit(measure.upper))
    if measure.kind == "sum":
        result = F.floor(clamped / F.lit(measure.unit) + F.lit(0.5))
    elif measure.kind == "csum":
        result = F.floor((clamped - F.lit(measure.midpoint)) / F.lit(measure.unit)
                         + F.lit(0.5))
    elif measure.kind == "csumsq":
        centred = clamped - F.lit(measure.midpoint)
        result = F.floor(centred * centred / F.lit(measure.unit) + F.lit(0.5))
    else:
        bucket = F.floor((clamped - F.lit(measure.lower)) / F.lit(measure.width))
        result = F.least(bucket, F.lit(measure.bins - 1))
    return result.cast("long")


def collect(frame: Any) -> pd.DataFrame:
    """Bring an aggregated Spark DataFrame to the driver as pandas (through rows, not
    pyspark's pandas conversion, which does not support pandas 3 yet)."""
    rows = frame.collect()
    names = frame.columns
    return pd.DataFrame([tuple(r) for r in rows], columns=names) if rows \
        else pd.DataFrame({n: np.zeros(0, dtype=np.int64) for n in names})


def _filtered(frame: Any, bounding: Bounding) -> Any:
    from pyspark.sql import functions as F  # noqa: N812  (pyspark's own convention)

    condition = F.lit(True)
    floats = {f.name for f in frame.schema.fields
              if type(f.dataType).__name__ in ("FloatType", "DoubleType")}
    for column in (bounding.privacy_unit, *bounding.by):
        condition = condition & F.col(column).isNotNull()
        if column in floats:
            condition = condition & ~F.isnan(F.col(column))
    for column in bounding.value_columns:
        value = F.col(column).cast("double")
        condition = condition & value.isNotNull() & ~F.isnan(value) \
            & (F.abs(value) < F.lit(float("inf")))
    frame = frame.where(condition)
    if bounding.partitions is not None:
        spark = frame.sparkSession
        rows = [tuple(r) for r in bounding.partitions.itertuples(index=False)]
        schema = frame.select(*bounding.by).schema
        declared = spark.createDataFrame(rows, schema=schema)
        frame = frame.join(F.broadcast(declared), on=list(bounding.by), how="left_semi")
    return frame


def frames(data: Any, bounding: Bounding) -> tuple[Any, dict[str, Any], Any]:
    """The aggregated Spark DataFrames (not yet run): per partition, and per bucketed
    measure; and the bounded rows they are computed from (for caching)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812  (pyspark's own convention)

    unit, by = bounding.privacy_unit, list(bounding.by)
    columns = list(dict.fromkeys([unit, *by, *bounding.value_columns]))
    salt = bounding.salt & _SEED_MASK
    # measure names hold dots and colons, which Spark parses: work under plain names
    safe = {m.name: f"__privkit_m{i}" for i, m in enumerate(bounding.measures)}
    frame = _filtered(data.select(*columns), bounding)
    priority = F.xxhash64(*[F.col(c) for c in (unit, *by)], F.lit(salt))
    pair_order = Window.partitionBy(unit).orderBy(priority, *[F.col(c) for c in by])
    row_order = Window.partitionBy(unit, *by).orderBy(F.rand(salt % (2**31)))
    kept = (frame.withColumn("__pair_rank", F.dense_rank().over(pair_order))
            .where(F.col("__pair_rank") <= bounding.max_partitions)
            .withColumn("__row_rank", F.row_number().over(row_order))
            .where(F.col("__row_rank") <= bounding.max_rows)
            .select(*columns, *[measure_column(m).alias(safe[m.name])
                                for m in bounding.measures if m.kind != "count"]))
    sums = [F.count(F.lit(1)).cast("long").alias(m.name) if m.kind == "count"
            else F.sum(safe[m.name]).cast("long").alias(m.name)
            for m in bounding.summed]
    per_partition = kept.groupBy(*by).agg(F.countDistinct(unit).alias(UNITS), *sums)
    buckets = {m.name: kept.groupBy(*by, F.col(safe[m.name]).alias(BUCKET))
               .agg(F.count(F.lit(1)).alias(ROWS)) for m in bounding.bucketed}
    return per_partition, buckets, kept


def aggregate(data: Any, bounding: Bounding) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Bound the rows of a Spark DataFrame and aggregate them per partition (see
    :func:`~._exact.assemble` for the tables returned). Only the aggregated tables are
    collected."""
    per_partition, buckets, kept = frames(data, bounding)
    if bounding.bucketed:
        kept.persist()
    try:
        return collect(per_partition), {name: collect(f) for name, f in buckets.items()}
    finally:
        if bounding.bucketed:
            kept.unpersist()
