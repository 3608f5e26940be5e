"""The query layer's public face: validation, the plan and its guarantee, spending, the
released table's shape, and the transcript rules (nothing that leaves depends on the rows
except through the noise)."""

from __future__ import annotations

import math
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import polars as pl
import pytest

from privkit import (
    BudgetExceededError,
    BudgetFilter,
    InvalidParameterError,
    Ledger,
    Repeat,
    Sequential,
    tightest,
)
from privkit.algorithms.analytics import (
    SELECTION_SHARE,
    Count,
    Histogram,
    Mean,
    Quantile,
    Query,
    Sum,
    Variance,
)
from privkit.mechanisms import Exponential, Laplace, StabilityHistogram

SENTINEL = 987654.321


def table(n_units: int = 40, days: int = 3, seed: int = 0) -> pd.DataFrame:
    """Each unit has one row on each day (so bounding to 3 partitions and 1 row keeps
    everything) and a value in [0, 10]."""
    rng = np.random.default_rng(seed)
    units = np.repeat(np.arange(n_units), days)
    day = np.tile(np.arange(days), n_units)
    return pd.DataFrame({"user": units, "day": day, "x": rng.uniform(0, 10, len(units))})


def everything(**changes):
    params = dict(privacy_unit="user", by="day", epsilon=1.0, max_partitions=3,
                  max_rows=1, partitions=[0, 1, 2], aggregations={
                      "n": Count(), "s": Sum("x", lower=0, upper=10),
                      "m": Mean("x", lower=0, upper=10),
                      "v": Variance("x", lower=0, upper=10),
                      "q": Quantile("x", 0.5, lower=0, upper=10, bins=20),
                      "h": Histogram("x", lower=0, upper=10, bins=2)})
    params.update(changes)
    return Query(**params)


INVALID = [
    (dict(epsilon=0.0), "`epsilon` must be"),
    (dict(epsilon=math.inf), "`epsilon` must be"),
    (dict(delta=1.0), "`delta` must be"),
    (dict(max_partitions=0), "`max_partitions` must be"),
    (dict(max_rows=True), "`max_rows` must be"),
    (dict(by=[]), "`by` must be"),
    (dict(by=["day", "day"]), "`by` must be"),
    (dict(privacy_unit=3), "`privacy_unit` must be"),
    (dict(aggregations=[Count()]), "`aggregations` must be"),
    (dict(aggregations={"n": 3}), "`aggregations` must be"),
    (dict(aggregations={"day": Count()}), "`aggregations` must be"),
    (dict(aggregations={}), "`aggregations` must be"),
    (dict(partitions=None, delta=0.0), "`delta` must be > 0"),
    (dict(partitions=[]), "`partitions` must be"),
    (dict(epsilon=1e-7), "`epsilon` must be large enough"),
    (dict(by=["day", "user"], partitions=[1, 2]), "`partitions` must be tuples"),
]


@pytest.mark.parametrize(("changes", "message"), INVALID)
def test_invalid_query_parameters_are_refused_by_name(changes, message):
    """Each bad public parameter gets an InvalidParameterError naming it."""
    with pytest.raises(InvalidParameterError, match=message):
        everything(**changes)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Mean("x", lower=1, upper=1), "`upper` must be finite and greater"),
    (lambda: Sum("x", lower=0, upper=math.nan), "`upper` must be"),
    (lambda: Quantile("x", 1.0, lower=0, upper=1), "`quantile` must be in"),
    (lambda: Quantile("x", 0.5, lower=0, upper=1, bins=1), "`bins` must be"),
    (lambda: Histogram("", lower=0, upper=1), "`column` must be"),
])
def test_invalid_aggregations_are_refused_by_name(build, message):
    with pytest.raises(InvalidParameterError, match=message):
        build()


def test_plan_holds_the_exact_blocks_and_the_guarantee_is_the_tightest_accountants():
    """The plan is Sequential(selection, one block per release), calibrated from public
    parameters; the guarantee is tightest(plan) and spends epsilon exactly."""
    query = everything(partitions=None, delta=1e-6, aggregations={
        "n": Count(), "m": Mean("x", lower=0, upper=10),
        "q": Quantile("x", 0.5, lower=0, upper=10, bins=20)})
    plan = query.plan
    assert isinstance(plan, Sequential)
    selection, count, csum, quantiles = plan.children
    assert isinstance(selection, Repeat)
    assert selection.count == 3
    assert isinstance(selection.block, StabilityHistogram)
    assert selection.block.guarantee().epsilon == pytest.approx(SELECTION_SHARE / 3)
    assert selection.block.guarantee().delta == pytest.approx(1e-6 / 3)
    rest = 1.0 - SELECTION_SHARE  # count 1 : centred sum 2 : quantile 1
    assert isinstance(count, Laplace)
    assert count.guarantee().epsilon == pytest.approx(rest / 4)
    assert count.sensitivity.value == 3.0  # k m rows
    assert csum.guarantee().epsilon == pytest.approx(rest / 2)
    assert isinstance(quantiles, Repeat)
    assert isinstance(quantiles.block, Exponential)
    assert quantiles.block.pure_epsilon == pytest.approx(rest / 4 / 3)
    result = tightest(plan, delta=1e-6)
    assert query.accounting.epsilon == result.epsilon
    assert query.guarantee.epsilon_at(1e-6) == result.guarantee.epsilon_at(1e-6)
    assert query.accounting.epsilon == pytest.approx(1.0, rel=1e-9)


def test_pure_query_with_public_partitions_is_pure_epsilon():
    query = everything()
    assert query.selection_block is None
    assert query.accounting.epsilon == pytest.approx(1.0, rel=1e-12)
    assert query.accounting.delta == 0.0


def test_sum_units_keep_the_sensitivity_exact():
    """A sum is released in integer units q = row_bound 2^-b: each row moves it by at
    most 2^b units, and the Laplace block's sensitivity is k m 2^b."""
    query = everything()
    statistic = Sum("x", lower=0, upper=10).statistics()[0]
    measure = query.measure(statistic)
    bits = round(math.log2(10.0 / measure.unit))
    assert 10.0 / measure.unit == 2.0**bits
    assert query.blocks[statistic].sensitivity.value == 3 * 2.0**bits


def test_run_spends_the_plan_on_the_filter_first_and_refuses_before_reading():
    """A refused spend raises before the data is touched and changes nothing."""
    query = everything()
    budget = BudgetFilter(epsilon=1.5)
    query.run(table(), rng=0, budget_filter=budget)
    assert budget.spent.epsilon == pytest.approx(1.0)

    class Untouchable(pd.DataFrame):
        def __getitem__(self, key):
            raise AssertionError("the data was read")

    with pytest.raises(BudgetExceededError):
        query.run(Untouchable(table()), rng=0, budget_filter=budget)
    assert budget.spent.epsilon == pytest.approx(1.0)


def test_released_table_has_the_declared_partitions_and_columns():
    released = everything(partitions=[0, 1, 2, 7]).run(table(), rng=1)
    assert list(released["day"]) == [0, 1, 2, 7]
    assert list(released.columns) == ["day", "n", "s", "m", "v", "q", "h[0]", "h[1]"]
    assert released[["m", "q"]].apply(lambda c: c.between(0, 10).all()).all()
    assert (released["v"] >= 0).all()
    assert (released["v"] <= 25).all()
    assert set(released["q"]) <= set(np.linspace(0, 10, 21))


def test_same_seed_same_release_and_pandas_equals_polars_within_bounds():
    """With every unit inside the bounds, both engines keep every row: the exact tables
    are equal, so the same seed gives the same released table, bit for bit."""
    data = table()
    query = everything()
    first = query.run(data, rng=5)
    pd.testing.assert_frame_equal(first, query.run(data, rng=5))
    from_polars = query.run(pl.from_pandas(data), rng=5)
    assert isinstance(from_polars, pl.DataFrame)
    pd.testing.assert_frame_equal(from_polars.to_pandas(), first, check_dtype=False)


def test_private_selection_releases_big_partitions_and_drops_small_ones():
    big = table(n_units=400, days=2)
    small = pd.DataFrame({"user": [10_000, 10_001], "day": [9, 9], "x": [1.0, 2.0]})
    query = everything(partitions=None, delta=1e-6, max_partitions=2,
                       aggregations={"n": Count()})
    released = query.run(pd.concat([big, small]), rng=0)
    assert list(released["day"]) == [0, 1]
    assert np.allclose(released["n"], 400, atol=60)


def test_keys_only_query_releases_the_selected_keys():
    query = Query(privacy_unit="user", by="day", aggregations={}, epsilon=1.0,
                  delta=1e-6, max_partitions=2)
    released = query.run(table(n_units=400, days=2), rng=0)
    assert list(released.columns) == ["day"]
    assert list(released["day"]) == [0, 1]


def test_several_key_columns():
    data = table().assign(half=lambda d: d["x"] > 5)
    data["half"] = data["half"].astype(int)
    query = everything(by=["day", "half"], partitions=[(d, h) for d in range(3)
                                                        for h in range(2)], max_partitions=3)
    released = query.run(data, rng=0)
    assert list(zip(released["day"], released["half"], strict=True)) == [
        (d, h) for d in range(3) for h in range(2)]


def test_bad_rows_are_dropped_silently_and_never_refused():
    """R3: non-finite values, missing keys and units are dropped by a public per-row rule,
    with no warning and no error, and the answer is that of the clean rows."""
    clean = table()
    dirty = pd.concat([clean, pd.DataFrame({
        "user": [1.0, np.nan, 2.0, 3.0], "day": [0.0, 1.0, np.nan, 1.0],
        "x": [np.nan, 5.0, 5.0, np.inf]})], ignore_index=True)
    query = everything()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        released = query.run(dirty, rng=3)
    pd.testing.assert_frame_equal(released, query.run(clean, rng=3), check_dtype=False)


def test_polars_drops_the_same_bad_rows():
    clean = table()
    dirty = pd.concat([clean, pd.DataFrame({
        "user": [1.0, np.nan, 2.0], "day": [0.0, 1.0, np.nan], "x": [np.nan, 5.0, 5.0]})],
        ignore_index=True)
    query = everything()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        released = query.run(pl.from_pandas(dirty), rng=3).to_pandas()
    pd.testing.assert_frame_equal(released, query.run(clean, rng=3), check_dtype=False)


def test_keys_of_mixed_types_do_not_decide_whether_the_query_runs():
    """Keys that do not compare (an int and a str) are ordered by type, then value."""
    data = pd.DataFrame({"user": np.arange(4), "day": pd.Series([1, "b", 1, "a"],
                                                                 dtype=object),
                         "x": 1.0})
    query = everything(partitions=None, delta=1e-6, epsilon=1.0,
                       aggregations={"n": Count()})
    assert query.run(data, rng=0).empty  # four rows: nothing clears the threshold
    exact = query.exact(data, 0)
    assert list(exact.keys["day"]) == [1, "a", "b"]


def test_schema_errors_name_the_column_and_never_echo_the_rows():
    data = table()
    data.loc[0, "x"] = SENTINEL
    with pytest.raises(InvalidParameterError, match="'amount'") as missing:
        everything(aggregations={"s": Sum("amount", lower=0, upper=1)}).run(data)
    text = data.assign(x=data["x"].astype(str))
    with pytest.raises(InvalidParameterError, match="non-numeric") as typed:
        everything().run(text)
    with pytest.raises(InvalidParameterError, match="pandas, polars or Spark") as kind:
        everything().run(data.to_numpy())
    for error in (missing, typed, kind):
        assert str(SENTINEL) not in str(error.value)
        assert "987654" not in str(error.value)


def test_releases_are_recorded_in_the_ledger():
    """Each noisy statistic is one Laplace run; each quantile is one Exponential run per
    released partition (the plan counts the k a unit can reach)."""
    query = everything()
    with Ledger() as ledger:
        query.run(table(), rng=0)
    expected: Counter = Counter()
    for key, block in query.blocks.items():  # equal blocks (a count and a histogram) add
        expected[block] += 3 if isinstance(key, Quantile) else 1
    assert ledger.counts() == expected


def test_values_beyond_the_bounds_are_clamped():
    """A value far beyond the bound moves the sum as the bound does, no more."""
    query = everything(epsilon=50.0, partitions=[0], aggregations={
        "s": Sum("x", lower=0, upper=10)}, max_partitions=1)
    base = pd.DataFrame({"user": [0, 1], "day": [0, 0], "x": [10.0, 10.0]})
    far = base.assign(x=[10.0, 1e300])
    assert query.exact(base, 1).sums == query.exact(far, 1).sums


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_an_empty_table_runs_like_any_other(kind):
    """No rows at all (or none surviving the per-row rule): private selection releases
    nothing, declared partitions are released with noise on zeros; no error either way."""
    empty = table().iloc[:0]
    data = pl.from_pandas(empty) if kind == "polars" else empty
    released = everything(partitions=None, delta=1e-6).run(data, rng=0)
    assert len(released) == 0
    declared = everything().run(data, rng=0)
    assert len(declared) == 3
    frame = declared.to_pandas() if kind == "polars" else declared
    assert frame["m"].between(0, 10).all()
