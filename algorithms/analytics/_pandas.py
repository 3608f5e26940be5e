"""The pandas engine: contribution bounding and exact statistics in memory, vectorised.

Bounding works on integer codes: each row's privacy unit and partition are factorised, a
(unit, partition) pair gets a secret pseudo-random priority (splitmix64 of the pair's
code and the salt), each unit keeps its ``max_partitions`` pairs of lowest priority, and
each kept pair keeps its ``max_rows`` rows of lowest random priority. Both steps are one
sort of packed 64-bit keys; every kept element is counted by position, so the bounds hold
exactly whatever ties the priorities have (a tie only decides which element is kept).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from privkit.algorithms.analytics._exact import BUCKET, ROWS, UNITS, Bounding, Measure

__all__ = ["aggregate", "keep_rows", "measure_values", "mix64", "row_filter"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix64(x: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """splitmix64's finaliser (Steele, Lea, Flood 2014, "Fast splittable pseudorandom
    number generators"): a bijection of 64-bit integers that looks random."""
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        mixed: NDArray[np.uint64] = z ^ (z >> np.uint64(31))
        return mixed


def _bits(n: int) -> int:
    return max(1, int(n - 1).bit_length())


def _rank_within(groups: NDArray[np.int64], n_groups: int,
                 priority: NDArray[np.uint64]) -> NDArray[np.int64]:
    """Each element's rank, by ``priority``, among the elements of its group."""
    gbits = _bits(n_groups)
    shift = np.uint64(64 - gbits)
    key = (groups.astype(np.uint64) << shift) | (priority >> np.uint64(gbits))
    order = np.argsort(key)
    sorted_groups = groups[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    lengths = np.diff(np.r_[starts, len(order)])
    rank_sorted = np.arange(len(order)) - np.repeat(starts, lengths)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = rank_sorted
    return rank


def keep_rows(unit_codes: NDArray[np.int64], partition_codes: NDArray[np.int64],
              n_partitions: int, max_partitions: int, max_rows: int,
              salt: int) -> NDArray[np.bool_]:
    """Which rows contribution bounding keeps: at most ``max_partitions`` partitions per
    unit and ``max_rows`` rows per unit and partition, chosen by secret priorities."""
    if len(unit_codes) == 0:
        return np.zeros(0, dtype=np.bool_)
    pair_code = unit_codes * np.int64(n_partitions) + partition_codes
    pair_index, pairs = pd.factorize(pair_code)
    pairs = np.asarray(pairs, dtype=np.int64)
    pair_units, _ = pd.factorize(pairs // np.int64(n_partitions))
    priority = mix64(pairs.astype(np.uint64) ^ np.uint64(salt))
    kept_pair = _rank_within(pair_units.astype(np.int64), int(pair_units.max()) + 1,
                             priority) < max_partitions
    keep: NDArray[np.bool_] = kept_pair[pair_index]
    rows = np.flatnonzero(keep)
    generator = np.random.default_rng(np.random.SeedSequence([salt, 1]))
    row_priority = generator.integers(0, 2**63, size=len(rows), dtype=np.int64)
    groups = pair_index[rows].astype(np.int64)
    ranks = _rank_within(groups, len(pairs), row_priority.astype(np.uint64))
    keep[rows[ranks >= max_rows]] = False
    return keep


def row_filter(frame: pd.DataFrame, bounding: Bounding) -> NDArray[np.bool_]:
    """The public per-row predicate: keys and unit present, values finite, and the key
    declared (with public partitions)."""
    keep: NDArray[np.bool_] = frame[[bounding.privacy_unit, *bounding.by]].notna().all(
        axis=1).to_numpy().copy()
    for column in bounding.value_columns:
        keep &= np.isfinite(frame[column].to_numpy(dtype=np.float64, na_value=np.nan))
    if bounding.partitions is not None:
        if len(bounding.by) == 1:
            column = bounding.by[0]
            keep &= frame[column].isin(bounding.partitions[column]).to_numpy()
        else:
            declared = pd.MultiIndex.from_frame(bounding.partitions)
            keep &= pd.MultiIndex.from_frame(frame[list(bounding.by)]).isin(declared)
    return keep


def measure_values(values: NDArray[np.float64], measure: Measure) -> NDArray[np.float64]:
    """The per-row integer of a measure (as float64 holding an integer)."""
    clamped = np.clip(values, measure.lower, measure.upper)
    if measure.kind == "sum":
        return np.floor(clamped / measure.unit + 0.5)
    if measure.kind == "csum":
        return np.floor((clamped - measure.midpoint) / measure.unit + 0.5)
    if measure.kind == "csumsq":
        centred = clamped - measure.midpoint
        return np.floor(centred * centred / measure.unit + 0.5)
    bucket: NDArray[np.float64] = np.minimum(
        np.floor((clamped - measure.lower) / measure.width), measure.bins - 1.0)
    return bucket


def _partition_codes(frame: pd.DataFrame, by: tuple[str, ...]) -> tuple[NDArray[np.int64],
                                                                         pd.DataFrame]:
    if len(by) == 1:
        codes, uniques = pd.factorize(frame[by[0]])
        return codes.astype(np.int64), pd.DataFrame({by[0]: np.asarray(uniques)})
    grouped = frame.groupby(list(by), sort=False, observed=True)
    codes = grouped.ngroup().to_numpy(dtype=np.int64)
    keys = grouped.size().reset_index()[list(by)]
    return codes, keys


def aggregate(data: Any, bounding: Bounding) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Bound the rows of a pandas DataFrame and aggregate them per partition (see
    :func:`privkit.algorithms.analytics._exact.assemble` for the tables returned)."""
    columns = list(dict.fromkeys([bounding.privacy_unit, *bounding.by,
                                  *bounding.value_columns]))
    frame = data[columns]
    frame = frame[row_filter(frame, bounding)]
    unit_codes = pd.factorize(frame[bounding.privacy_unit])[0].astype(np.int64)
    partition_codes, keys = _partition_codes(frame, bounding.by)
    keep = keep_rows(unit_codes, partition_codes, len(keys), bounding.max_partitions,
                     bounding.max_rows, bounding.salt)
    codes = partition_codes[keep]
    kept = frame[keep]
    pairs = pd.unique(unit_codes[keep] * np.int64(max(len(keys), 1)) + codes)
    per_partition = keys.copy()
    per_partition[UNITS] = np.bincount(pairs % max(len(keys), 1), minlength=len(keys))
    for measure in bounding.summed:
        if measure.kind == "count":
            per_partition[measure.name] = np.bincount(codes, minlength=len(keys))
            continue
        values = measure_values(kept[measure.column].to_numpy(np.float64), measure)
        total = np.bincount(codes, weights=values, minlength=len(keys))  # exact: < 2^53
        per_partition[measure.name] = total.astype(np.int64)
    buckets: dict[str, pd.DataFrame] = {}
    for measure in bounding.bucketed:
        bucket = measure_values(kept[measure.column].to_numpy(np.float64),
                                measure).astype(np.int64)
        cell, counts = np.unique(codes * measure.bins + bucket, return_counts=True)
        long = keys.iloc[cell // measure.bins].reset_index(drop=True)
        long[BUCKET] = cell % measure.bins
        long[ROWS] = counts
        buckets[measure.name] = long
    occupied = per_partition[UNITS].to_numpy() > 0
    return per_partition[occupied].reset_index(drop=True), buckets
