"""What every engine computes: the exact statistics of the bounded rows, per partition.

An engine (pandas, polars, Spark) receives a :class:`Bounding` (public parameters and a
secret salt) and returns, per partition with at least one bounded row, the number of
privacy units and one integer per :class:`Measure`, plus the bucket counts of the
bucketed columns, as small pandas tables. Everything here is computed from integers, so
every engine gives the same exact table bit for bit (sums of integers do not depend on
the order of addition): that is what makes a query's release the same on pandas, polars
and Spark for the same seed when the bounding keeps the same rows.

Per-row maps (public, applied to each row alone, before bounding):

* a row whose privacy unit or partition key is missing, or whose value in a column the
  query reads is missing or not finite, is removed (a public per-record predicate: under
  the add-remove relation of privacy units this preserves neighbours);
* with public partitions, a row whose key is not declared is removed likewise;
* a value is clamped to its aggregation's ``[lower, upper]`` and expressed in integer
  units of a public step ``q`` (``floor(v / q + 1/2)``), so that sums are exact integers.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["Bounding", "ExactTable", "Measure", "assemble"]

#: Column names the engines use internally (chosen not to collide with a user's).
UNITS = "__privkit_units"
BUCKET = "__privkit_bucket"
ROWS = "__privkit_rows"


@attrs.frozen
class Measure:
    """One integer per bounded row, summed per partition.

    ``kind``: ``"count"`` (1), ``"sum"`` (``floor(clamp(x) / q + 1/2)``), ``"csum"``
    (``floor((clamp(x) - mid) / q + 1/2)``), ``"csumsq"``
    (``floor((clamp(x) - mid)^2 / q + 1/2)``) or ``"buckets"``
    (``min(floor((clamp(x) - lower) / w), bins - 1)``, ``w = (upper - lower) / bins``,
    counted per bucket rather than summed).
    """

    name: str
    kind: str
    column: str | None
    lower: float
    upper: float
    unit: float
    bins: int = 0

    @property
    def midpoint(self) -> float:
        return 0.5 * (self.lower + self.upper)

    @property
    def width(self) -> float:
        return (self.upper - self.lower) / self.bins


@attrs.frozen
class Bounding:
    """Everything an engine needs: the public columns and bounds, and the salt.

    ``salt`` is secret randomness drawn from the query's generator: it chooses which
    partitions (at most ``max_partitions`` per unit) and which rows (at most
    ``max_rows`` per unit and partition) are kept, uniformly among those a unit has.
    """

    privacy_unit: str
    by: tuple[str, ...]
    value_columns: tuple[str, ...]
    max_partitions: int
    max_rows: int
    measures: tuple[Measure, ...]
    salt: int
    partitions: Any = attrs.field(default=None, eq=False)  # a pandas DataFrame of keys

    @property
    def summed(self) -> tuple[Measure, ...]:
        return tuple(m for m in self.measures if m.kind != "buckets")

    @property
    def bucketed(self) -> tuple[Measure, ...]:
        return tuple(m for m in self.measures if m.kind == "buckets")


@attrs.frozen(eq=False)
class ExactTable:
    """The exact statistics of the bounded rows, one row per partition, sorted by key.

    ``keys`` holds the partition key columns; ``units`` the number of privacy units with
    a bounded row there; ``sums[name]`` each summed measure; ``buckets[name]`` a
    ``(n_partitions, bins)`` matrix of bucket counts. Private: never published as is.
    """

    keys: pd.DataFrame
    units: NDArray[np.int64]
    sums: dict[str, NDArray[np.int64]]
    buckets: dict[str, NDArray[np.int64]]

    def __len__(self) -> int:
        return len(self.keys)

    def take(self, index: NDArray[np.int64]) -> ExactTable:
        """The partitions at ``index``."""
        return ExactTable(self.keys.iloc[index].reset_index(drop=True), self.units[index],
                          {k: v[index] for k, v in self.sums.items()},
                          {k: v[index] for k, v in self.buckets.items()})


def _mixed_order(column: pd.Series) -> pd.Series:
    return column.map(lambda v: (type(v).__name__, repr(v)))


def _sorted_keys(frame: pd.DataFrame, by: tuple[str, ...]) -> pd.DataFrame:
    """Sorted by key; a key column whose values do not compare with each other (mixed
    types) is ordered by type name, then representation: whether the keys compare must
    not decide whether the query succeeds."""
    try:
        return frame.sort_values(list(by), kind="stable").reset_index(drop=True)
    except TypeError:
        return frame.sort_values(list(by), kind="stable",
                                 key=_mixed_order).reset_index(drop=True)


def assemble(bounding: Bounding, per_partition: pd.DataFrame,
             bucket_tables: dict[str, pd.DataFrame]) -> ExactTable:
    """The exact table from an engine's aggregates: ``per_partition`` (key columns,
    :data:`UNITS` and one column per summed measure) and, per bucketed measure, a long
    table (key columns, :data:`BUCKET`, :data:`ROWS`). With public partitions, every
    declared key gets a row (zeros where no bounded row fell)."""
    by = list(bounding.by)
    if bounding.partitions is not None:
        keys = bounding.partitions
        table = keys.merge(per_partition, on=by, how="left", sort=False)
    else:
        table = _sorted_keys(per_partition, bounding.by)
    units = table[UNITS].fillna(0).to_numpy(dtype=np.int64)
    sums = {m.name: table[m.name].fillna(0).to_numpy(dtype=np.int64)
            for m in bounding.summed}
    keys_only = table[by].reset_index(drop=True)
    buckets: dict[str, NDArray[np.int64]] = {}
    if bounding.bucketed:
        index = keys_only.assign(**{ROWS + "_i": np.arange(len(keys_only))})
        for m in bounding.bucketed:
            matrix = np.zeros((len(keys_only), m.bins), dtype=np.int64)
            long = bucket_tables[m.name]
            if len(long):
                located = long.merge(index, on=by, how="inner")
                np.add.at(matrix, (located[ROWS + "_i"].to_numpy(np.int64),
                                   located[BUCKET].to_numpy(np.int64)),
                          located[ROWS].to_numpy(np.int64))
            buckets[m.name] = matrix
    return ExactTable(keys_only, units, sums, buckets)
