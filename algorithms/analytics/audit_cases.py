"""``privkit audit`` cases for the query layer: each aggregation and partition selection,
run end to end on the released table.

Each case is a small query on a pandas table D and its neighbour D' = D plus one privacy
unit that has rows in two partitions, three rows in each, beyond ``max_rows = 1``: so the
audit covers contribution bounding (a row counted without bounding moves the answer
three times as far, and the audit sees it), the composition over the ``max_partitions =
2`` partitions the unit reaches, and the release. The system runs the real engine on the
table (bounding and exact statistics) and the real release stage for a batch of draws;
the statistic the auditor sees is a post-processing of the released table (so any bound
on it is a bound for the query): the released values of the unit's two partitions,
reduced to the one number on which the privacy loss is largest.

* Additive releases (count, sum, histogram, mean, variance): every noisy statistic of
  the unit's partitions moves by exactly its sensitivity share, so the event "each one
  is above its exact value on D by at least its shift" has probability ratio exactly
  ``e^epsilon`` (the Laplace densities' ratio is constant there). The statistic is the
  smallest of the normalised excesses ``(released - exact on D) / shift``; a mean's
  centred sum is read back from the released mean and count, a variance's centred sum
  of squares from the released variance, mean and count.
* Quantile: on D every partition holds an even number of rows in the top bucket, so
  every candidate has the same utility; the unit's row in the bottom bucket lowers the
  two end candidates and raises the others by one half, the exponential mechanism's
  worst case (privkit's ``NoisyArgmax.worst_case`` for this utility). The statistic is
  the number of the two partitions whose released quantile is an end candidate (the
  likelihood ratio's own statistic); the case's ceiling is the pair's exact epsilon
  over the claim.
* Selection: two partitions whose unit count sits at the stability threshold, as in
  ``StabilityHistogram.worst_case``; the statistic is how many of them are released.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from privkit.audits.pairs import NeighbouringPair
from privkit.audits.registry import AuditCase, audit_row, declared_rows
from privkit.mechanisms import Exponential
from privkit.neighbouring import Neighbouring

from ._release import release_columns
from .aggregations import Aggregation, Count, Histogram, Mean, Quantile, Sum, Variance
from .query import Query

__all__ = ["CASE_BUILDERS", "count_case", "histogram_case", "mean_case", "quantile_case",
           "selection_case", "sum_case", "variance_case"]

_PARTS = ("a", "b")
_EXTRA = ("c",)  # a partition the unit does not touch
_ROWS = 10  # rows per partition of D (one per unit)
_TRIALS = 400_000
_THREAT = ("black box on the released table (every column of the unit's two partitions); "
           "the unit has 3 rows in each, max_rows=1, max_partitions=2")

Statistic = Callable[[dict[str, NDArray[np.float64]], NDArray[np.bool_]],
                     NDArray[np.float64]]


def _table(values: dict[str, list[float]], unit_value: float | None) -> pd.DataFrame:
    """D (``unit_value`` None) or D': per partition, one row per unit with the given
    values; D' adds unit -1 with three rows of ``unit_value`` in each of ``_PARTS``."""
    rows = []
    unit = 0
    for part, xs in values.items():
        for x in xs:
            rows.append((unit, part, x))
            unit += 1
    if unit_value is not None:
        rows += [(-1, part, unit_value) for part in _PARTS for _ in range(3)]
    return pd.DataFrame(rows, columns=["unit", "part", "x"])


def _system(query: Query, statistic: Statistic) -> Callable[..., Any]:
    def system(data: pd.DataFrame, rng: np.random.Generator, size: int) -> Any:
        exact = query.exact(data, int(rng.integers(0, 2**62)))
        selected, columns = release_columns(query, exact, rng, (size,))
        keys = exact.keys["part"].tolist()
        index = [keys.index(p) if p in keys else -1 for p in _PARTS]
        picked = {name: np.stack([col[:, i] if i >= 0 else np.full(size, np.nan)
                                  for i in index], axis=1) for name, col in columns.items()}
        released = np.stack([selected[:, i] if i >= 0 else np.zeros(size, dtype=bool)
                             for i in index], axis=1)
        return statistic(picked, released)

    return system


def _case(query: Query, values: dict[str, list[float]], unit_value: float,
          statistic: Statistic, *, ceiling: float = 1.0, trials: int = _TRIALS) -> AuditCase:
    pair = NeighbouringPair(first=_table(values, None), second=_table(values, unit_value),
                            relation=Neighbouring.ADD_REMOVE,
                            description="one privacy unit added: 3 rows in each of 2 "
                                        "partitions")
    result = query.accounting
    return AuditCase(_system(query, statistic), pair, result.epsilon, query.delta,
                     max_trials=trials, ceiling=ceiling, threat_model=_THREAT)


def _public(aggregations: dict[str, Aggregation], epsilon: float) -> Query:
    return Query(privacy_unit="unit", by="part", aggregations=aggregations, epsilon=epsilon,
                 max_partitions=2, max_rows=1, partitions=[*_PARTS, *_EXTRA])


def _excess(released: NDArray[np.float64], base: float, shift: float) -> NDArray[np.float64]:
    return np.nan_to_num((released - base) / shift, nan=-np.inf)


def _base(value: float, rows: int = _ROWS) -> dict[str, list[float]]:
    return {p: [value] * rows for p in (*_PARTS, *_EXTRA)}


@audit_row("analytics_count", estimator="Query")
def count_case(*, epsilon: float, delta: float = 0.0) -> AuditCase:
    """Count: each of the unit's partitions gains one row."""
    query = _public({"n": Count()}, epsilon)

    def statistic(cols: dict[str, NDArray[np.float64]], _: Any) -> Any:
        return np.min(_excess(cols["n"], _ROWS, 1.0), axis=1)

    return _case(query, _base(1.0), 1.0, statistic)


@audit_row("analytics_sum", estimator="Query")
def sum_case(*, epsilon: float, delta: float = 0.0) -> AuditCase:
    """Sum on [-10, 10]: each of the unit's partitions gains one row at the bound."""
    query = _public({"s": Sum("x", lower=-10.0, upper=10.0)}, epsilon)

    def statistic(cols: dict[str, NDArray[np.float64]], _: Any) -> Any:
        return np.min(_excess(cols["s"], 0.0, 10.0), axis=1)

    return _case(query, _base(0.0), 10.0, statistic)


@audit_row("analytics_histogram", estimator="Query")
def histogram_case(*, epsilon: float, delta: float = 0.0) -> AuditCase:
    """Histogram of 4 buckets on [0, 4]: the unit's row lands in the last bucket."""
    query = _public({"h": Histogram("x", lower=0.0, upper=4.0, bins=4)}, epsilon)

    def statistic(cols: dict[str, NDArray[np.float64]], _: Any) -> Any:
        return np.min(_excess(cols["h[3]"], 0.0, 1.0), axis=1)

    return _case(query, _base(0.5), 3.5, statistic)


def _moments(cols: dict[str, NDArray[np.float64]], mid: float
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    count = cols["n"]
    return count, (cols["m"] - mid) * np.maximum(count, 1.0)


#: Rows per partition of D in the mean and variance cases: enough that the released
#: count is rarely near 0, where the mean is clamped and the sums cannot be read back.
_MOMENT_ROWS = 100


@audit_row("analytics_mean", estimator="Query")
def mean_case(*, epsilon: float, delta: float = 0.0) -> AuditCase:
    """Mean on [0, 10] with the count released beside it: the unit adds a row at the
    upper bound (count +1, centred sum +5) to each partition."""
    query = _public({"n": Count(), "m": Mean("x", lower=0.0, upper=10.0)}, epsilon)

    def statistic(cols: dict[str, NDArray[np.float64]], _: Any) -> Any:
        count, csum = _moments(cols, 5.0)
        return np.minimum(np.min(_excess(count, _MOMENT_ROWS, 1.0), axis=1),
                          np.min(_excess(csum, 0.0, 5.0), axis=1))

    return _case(query, _base(5.0, _MOMENT_ROWS), 10.0, statistic)


@audit_row("analytics_variance", estimator="Query")
def variance_case(*, epsilon: float, delta: float = 0.0) -> AuditCase:
    """Variance on [0, 10] with the count and mean beside it: count +1, centred sum +5,
    centred sum of squares +25 in each of the unit's partitions."""
    query = _public({"n": Count(), "m": Mean("x", lower=0.0, upper=10.0),
                     "v": Variance("x", lower=0.0, upper=10.0)}, epsilon)

    def statistic(cols: dict[str, NDArray[np.float64]], _: Any) -> Any:
        count, csum = _moments(cols, 5.0)
        c = np.maximum(count, 1.0)
        csumsq = (cols["v"] + (csum / c) ** 2) * c
        return np.minimum.reduce([np.min(_excess(count, _MOMENT_ROWS, 1.0), axis=1),
                                  np.min(_excess(csum, 0.0, 5.0), axis=1),
                                  np.min(_excess(csumsq, 0.0, 25.0), axis=1)])

    return _case(query, _base(5.0, _MOMENT_ROWS), 10.0, statistic)


#: Buckets of the quantile case: more candidates bring the pair's epsilon nearer the
#: claim (0.924 of it at 20 buckets and epsilon 1, 0.949 at 30), but make the end
#: candidates rarer (probability 2 / (bins + 1) on D, squared for both partitions), so
#: that more draws are needed: at 400,000 draws per side 20 buckets certify 0.83 of the
#: claim in 4 s, 40 buckets only 0.80.
_QUANTILE_BINS = 20


@audit_row("analytics_quantile", estimator="Query")
def quantile_case(*, epsilon: float, delta: float = 0.0) -> AuditCase:
    """Median on [0, 1] over 40 buckets (see the module docstring)."""
    aggregation = Quantile("x", 0.5, lower=0.0, upper=1.0, bins=_QUANTILE_BINS)
    query = _public({"q": aggregation}, epsilon)

    def statistic(cols: dict[str, NDArray[np.float64]], _: Any) -> Any:
        q = cols["q"]
        return np.sum((q == 0.0) | (q == 1.0), axis=1).astype(np.float64)

    block = query.blocks[aggregation]  # one partition's selection
    assert isinstance(block, Exponential)
    eta = block.pure_epsilon
    k = _QUANTILE_BINS
    ratio = (2.0 + (k - 1) * math.exp(eta)) / (k + 1)  # P_D(end) / P_D'(end)
    values = {p: [1.0] * _ROWS for p in _PARTS}
    return _case(query, values, 0.0, statistic,
                 ceiling=min(1.0, 2.0 * math.log(ratio) / query.accounting.epsilon))


@audit_row("analytics_selection", estimator="Query")
def selection_case(*, epsilon: float, delta: float = 1e-5) -> AuditCase:
    """Partition selection alone (a keys-only query): the unit's two partitions hold
    ``ceil(threshold)`` units on D."""
    query = Query(privacy_unit="unit", by="part", aggregations={}, epsilon=epsilon,
                  delta=delta, max_partitions=2, max_rows=1)
    block = query.selection_block
    assert block is not None
    units = math.ceil(block.threshold)
    values = {p: [0.0] * units for p in _PARTS}

    def statistic(_: Any, released: NDArray[np.bool_]) -> Any:
        return released.sum(axis=1).astype(np.float64)

    return _case(query, values, 0.0, statistic)


#: ``privkit audit`` names and builders: the rows declared above.
CASE_BUILDERS: dict[str, Callable[..., AuditCase]] = declared_rows(__name__)
