"""The Spark engine (local mode, 2 cores): the same release as pandas for the same seed,
the bounds held in the cluster, and no raw row brought to the driver.

Slow tier: starting a JVM takes 15-30 s on this machine, and each query a few seconds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pyspark = pytest.importorskip("pyspark")

from privkit.algorithms.analytics import (  # noqa: E402
    Count,
    Histogram,
    Mean,
    Quantile,
    Query,
    Variance,
    _spark,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("privkit-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def query(**changes) -> Query:
    params = dict(privacy_unit="user", by="day", epsilon=2.0, max_partitions=3, max_rows=1,
                  partitions=None, delta=1e-6, aggregations={
                      "n": Count(), "m": Mean("x", lower=0, upper=10),
                      "v": Variance("x", lower=0, upper=10),
                      "q": Quantile("x", 0.5, lower=0, upper=10, bins=50),
                      "h": Histogram("x", lower=0, upper=10, bins=3)})
    params.update(changes)
    return Query(**params)


def within_bounds(n_units: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Each unit has one row on each of 3 days: bounding keeps every row."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"user": np.repeat(np.arange(n_units), 3),
                         "day": np.tile(["mon", "tue", "wed"], n_units),
                         "x": rng.uniform(-1, 11, 3 * n_units)})


def to_spark(spark, frame: pd.DataFrame):
    return spark.createDataFrame([tuple(r) for r in frame.itertuples(index=False)],
                                 schema=list(frame.columns))


def test_same_seed_same_release_as_pandas(spark):
    """Every row within the bounds: the exact tables are equal (integer sums), so the
    released tables are equal bit for bit."""
    data = within_bounds()
    q = query()
    local = q.run(data, rng=11)
    remote = q.run(to_spark(spark, data), rng=11)
    assert len(local) == 3
    pd.testing.assert_frame_equal(remote, local, check_dtype=False)


def test_bounds_hold_in_the_cluster(spark):
    """A unit with rows on 5 days (3 rows each) beside light units: at most 3 of its
    partitions and 1 row in each are counted, as in pandas."""
    heavy = pd.DataFrame({"user": -1, "day": np.repeat(["d0", "d1", "d2", "d3", "d4"], 3),
                          "x": 5.0})
    light = pd.DataFrame({"user": np.arange(50), "day": np.repeat(["d0", "d1"], 25),
                          "x": 5.0})
    q = query(partitions=["d0", "d1", "d2", "d3", "d4"], delta=0.0)
    for salt in (1, 2, 3):
        exact = q.exact(to_spark(spark, pd.concat([heavy, light])), salt)
        heavy_units = exact.units - np.array([25, 25, 0, 0, 0])
        heavy_rows = exact.sums["__count"] - np.array([25, 25, 0, 0, 0])
        assert heavy_units.sum() == 3
        np.testing.assert_array_equal(heavy_rows, heavy_units)


def test_only_aggregates_reach_the_driver(spark, monkeypatch):
    """Row-count probe: every DataFrame the engine collects is an aggregate (its physical
    plan ends in a hash aggregation) and brings at most one row per partition (per bucket
    for histograms and quantiles), never the 30,000 input rows."""
    data = to_spark(spark, within_bounds(n_units=10_000))
    collected = []
    original = _spark.collect

    def probe(frame):
        plan = frame._jdf.queryExecution().executedPlan().toString()
        result = original(frame)
        collected.append((plan, len(result)))
        return result

    monkeypatch.setattr(_spark, "collect", probe)
    q = query()
    q.run(data, rng=0)
    assert len(collected) == 1 + 2  # per partition; buckets of the quantile and histogram
    for plan, rows in collected:
        assert "HashAggregate" in plan
        assert rows <= 3 * 50
    assert sum(rows for _, rows in collected) < 30_000 / 100
