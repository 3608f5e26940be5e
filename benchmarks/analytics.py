"""The query layer (privkit.algorithms.analytics) against its peers, in one run.

Parts (``--part``, default all), written to ``benchmarks/results/analytics_<part>.md``
with the commit and the machine's load:

* ``correctness``: each aggregation's error against its mechanism's law (KS or
  chi-square p-values on 200,000 draws of the release stage), the guarantee against
  ``tightest(plan)``, and the same seed giving the same table on pandas and polars;
* ``audits``: the ``privkit audit`` cases (lower bound over claim) and the planted bug;
* ``utility``: median and 90th-percentile absolute error of a grouped mean and a grouped
  median at the same epsilon, privkit against PipelineDP (local) and OpenDP (polars),
  public partitions, many repetitions;
* ``quantile_law``: privkit's and OpenDP's median on one partition, drawn many times:
  the same mechanism, tested to give the same law;
* ``scale``: 10^7 rows, 10^5 partitions (Zipf-like sizes), 10^6 privacy units: the same
  query (count and mean, private partition selection) on PipelineDP on Spark, privkit on
  Spark (local mode, 2 cores), and privkit on pandas and polars in memory; rounds are
  interleaved and the ratios taken from medians within this run (the machine's 2 cores
  are shared with other work: absolute times are inflated, ratios hold). The Spark run
  also counts the rows its collects bring to the driver, and checks that pandas and
  Spark give the same table for the same seed on data within the bounds.

Run: ``.venv/bin/python benchmarks/analytics.py [--part NAME ...] [--rows N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).parent / "results"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _header(title: str) -> list[str]:
    load = os.getloadavg()[0]
    stamp = (f"commit {_commit()}, {time.strftime('%Y-%m-%d')}, load average {load:.1f} on "
             f"{os.cpu_count()} cores (shared: absolute times are inflated, ratios are taken "
             "within this run)")
    return [f"# {title}", "", stamp, ""]


def _write(part: str, lines: list[str]) -> None:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"analytics_{part}.md"
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)
    print(f"wrote {path}", flush=True)


# -- correctness ----------------------------------------------------------------------

def correctness() -> None:
    import polars as pl
    from scipy import special, stats

    from privkit import tightest
    from privkit.algorithms.analytics import (
        Count,
        Histogram,
        Mean,
        Quantile,
        Query,
        Sum,
        Variance,
    )
    from privkit.algorithms.analytics._release import release_columns

    n_draws = 200_000
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"user": np.arange(300), "part": rng.integers(0, 3, 300),
                         "x": rng.uniform(-2.0, 12.0, 300)})
    aggregations = {"n": Count(), "s": Sum("x", lower=0, upper=10),
                    "m": Mean("x", lower=0, upper=10), "v": Variance("x", lower=0, upper=10),
                    "q": Quantile("x", 0.3, lower=0, upper=10, bins=20),
                    "h": Histogram("x", lower=0, upper=10, bins=2)}
    query = Query(privacy_unit="user", by="part", epsilon=4.0, max_partitions=2,
                  max_rows=2, partitions=[0, 1, 2], aggregations=aggregations)
    exact = query.exact(data, 7)
    _, cols = release_columns(query, exact, np.random.default_rng(2), (n_draws,))
    sim = np.random.default_rng(3)

    def noisy(statistic, i):
        unit = query.measure(statistic).unit
        scale = query.blocks[statistic].noise_scale * unit
        return exact.sums[statistic.name][i] * unit + sim.laplace(0, scale, n_draws)

    rows = []
    for name, agg in aggregations.items():
        if name in ("n", "s"):
            (st,) = agg.statistics()
            unit = query.measure(st).unit
            err = cols[name][:, 0] - exact.sums[st.name][0] * unit
            p = stats.kstest(err, stats.laplace(
                scale=query.blocks[st].noise_scale * unit).cdf).pvalue
            law = "Laplace (KS)"
        elif name == "h":
            (st,) = agg.statistics()
            err = cols["h[0]"][:, 0] - exact.buckets[st.name][0, 0]
            p = stats.kstest(err, stats.laplace(scale=query.blocks[st].noise_scale).cdf).pvalue
            law = "Laplace per bucket (KS)"
        elif name == "m":
            c, s = (noisy(st, 0) for st in agg.statistics())
            ref = np.clip(5.0 + s / np.maximum(c, 1.0), 0, 10)
            p = stats.ks_2samp(cols["m"][:, 0], ref).pvalue
            law = "mid + S/max(C,1), clamped (two-sample KS)"
        elif name == "v":
            c, s, q = (noisy(st, 0) for st in agg.statistics())
            c = np.maximum(c, 1.0)
            ref = np.clip(q / c - (s / c) ** 2, 0, 25)
            p = stats.ks_2samp(cols["v"][:, 0], ref).pvalue
            law = "Q/C - (S/C)^2, clamped (two-sample KS)"
        else:
            (st,) = agg.statistics()
            u = agg.utilities(exact.buckets[st.name])[0]
            probs = special.softmax(u / query.blocks[agg].noise_scale)
            observed = np.bincount(np.rint(cols["q"][:, 0] / 0.5).astype(int), minlength=21)
            keep = probs * n_draws >= 5
            obs, exp = observed[keep], probs[keep] * n_draws
            if not keep.all():  # pool the rare candidates into one cell
                obs, exp = np.r_[obs, observed[~keep].sum()], np.r_[exp, probs[~keep].sum()
                                                                   * n_draws]
            p = stats.chisquare(obs, exp).pvalue
            law = "exponential mechanism softmax (chi-square)"
        rows.append(f"| {type(agg).__name__} | {law} | {p:.3f} |")
    selection = Query(privacy_unit="user", by="part", epsilon=0.3, delta=1e-3,
                      max_partitions=2, max_rows=2, aggregations={"n": Count()})
    sel_exact = selection.exact(data, 7)
    chosen, _ = release_columns(selection, sel_exact, np.random.default_rng(4), (n_draws,))
    block = selection.selection_block
    p_sel = stats.laplace.sf(block.threshold - sel_exact.units[0], scale=block.noise_scale)
    p = stats.binomtest(int(chosen[:, 0].sum()), n_draws, p_sel).pvalue
    rows.append(f"| partition selection | P(units + Laplace > threshold) (binomial) | {p:.3f} |")
    plans = [f"| {q.epsilon} | {q.delta:g} | {q.accounting.epsilon:.12g} | "
             f"{tightest(q.plan, delta=q.delta).epsilon:.12g} | {q.accounting.accountant} |"
             for q in (query, selection)]
    same = query.run(data, rng=9).equals(query.run(pl.from_pandas(data), rng=9).to_pandas())
    intro = (f"Release stage drawn {n_draws:,} times on a fixed exact table (epsilon 4, "
             "k = m = 2; selection at epsilon 0.3, delta 1e-3); p-value of the error against "
             "the law (a correct law gives a uniform p; a wrong scale gives p < 1e-3).")
    lines = [
        *_header("analytics: correctness"), intro, "",
        "| aggregation | law | p-value |", "| --- | --- | --- |", *rows, "",
        "Guarantee against the plan: `query.accounting` is `tightest(query.plan)`.", "",
        "| epsilon asked | delta | query guarantee | tightest(plan) | accountant |",
        "| --- | --- | --- | --- | --- |", *plans, "",
        f"Same seed, pandas and polars, rows within the bounds: identical table: {same}."]
    _write("correctness", lines)


# -- audits ---------------------------------------------------------------------------

def audits() -> None:
    from privkit.algorithms.analytics import _pandas
    from privkit.algorithms.analytics.audit_cases import CASE_BUILDERS
    from privkit.audits.registry import CASES, run_case

    rows = []
    for name in CASE_BUILDERS:
        case = CASES[name](epsilon=1.0)
        start = time.perf_counter()
        result = run_case(case, name=name, rng=2026)
        took = time.perf_counter() - start
        rows.append(f"| {name} | {case.epsilon:.4g} | {case.delta:g} | "
                    f"{result.lower_bound:.4f} | {result.lower_bound / case.epsilon:.3f} | "
                    f"{case.ceiling:.3f} | {result.verdict} | {took:.1f} |")
    original = _pandas.keep_rows

    def unbounded(units, parts, n_parts, k, m, salt):  # the planted bug
        return original(units, parts, n_parts, k, 10**9, salt)

    _pandas.keep_rows = unbounded
    try:
        case = CASES["analytics_count"](epsilon=1.0)
        bug = run_case(case, name="analytics_count (rows not bounded)", rng=2026)
    finally:
        _pandas.keep_rows = original
    intro = ("Each case: a pandas query on D and D' = D plus one unit with 3 rows in each "
             "of 2 partitions (max_rows 1, max_partitions 2), audited end to end on the "
             "released table (see `algorithms/analytics/audit_cases.py`).")
    planted = (f"Planted bug (the engine keeps every row of a unit in a partition): lower "
               f"bound {bug.lower_bound:.3f} against the claim {case.epsilon:.3g}: "
               f"{bug.verdict}.")
    lines = [
        *_header("analytics: audit cases (privkit audit, seed 2026, epsilon 1)"), intro, "",
        "| case | claim epsilon | delta | lower bound | bound / claim | ceiling | verdict | s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |", *rows, "", planted]
    _write("audits", lines)


# -- utility --------------------------------------------------------------------------

def _utility_data(seed: int, n_parts: int = 50) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(100, 2000, n_parts)
    part = np.repeat(np.arange(n_parts), sizes)
    x = rng.lognormal(3.5, 0.6, len(part))
    return pd.DataFrame({"user": np.arange(len(part)), "part": part, "x": x})


def _privkit_utility(data, epsilon, what, seed):
    from privkit.algorithms.analytics import Mean, Quantile, Query

    agg = Mean("x", lower=0, upper=100) if what == "mean" else \
        Quantile("x", 0.5, lower=0, upper=100, bins=1000)
    query = Query(privacy_unit="user", by="part", epsilon=epsilon, max_partitions=1,
                  max_rows=1, partitions=sorted(data["part"].unique()),
                  aggregations={"a": agg})
    out = query.run(data, rng=seed)
    return dict(zip(out["part"], out["a"], strict=True))


def _pipeline_dp_utility(data, epsilon, what, seed):
    import pipeline_dp

    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=0.0)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    metric = pipeline_dp.Metrics.MEAN if what == "mean" else \
        pipeline_dp.Metrics.PERCENTILE(50)
    params = pipeline_dp.AggregateParams(
        noise_kind=pipeline_dp.NoiseKind.LAPLACE, metrics=[metric],
        max_partitions_contributed=1, max_contributions_per_partition=1,
        min_value=0.0, max_value=100.0)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0],
                                            partition_extractor=lambda r: r[1],
                                            value_extractor=lambda r: r[2])
    rows = list(data.itertuples(index=False, name=None))
    result = engine.aggregate(rows, params, extractors,
                              public_partitions=sorted(data["part"].unique()))
    accountant.compute_budgets()
    out = {}
    for part, metrics in result:
        out[part] = metrics.mean if what == "mean" else metrics.percentile_50
    return out


def _opendp_utility(data, epsilon, what, seed):
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    frame = pl.from_pandas(data)
    keys = pl.DataFrame({"part": sorted(data["part"].unique())})
    context = dp.Context.compositor(
        data=frame.lazy(), privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=epsilon), split_evenly_over=1,
        margins=[dp.polars.Margin(by=["part"], invariant="keys", max_length=10_000)])
    x = pl.col("x").fill_null(0.0)
    expr = x.dp.mean((0.0, 100.0)) if what == "mean" else \
        x.dp.quantile(0.5, list(np.linspace(0, 100, 1001)))
    out = context.query().group_by("part").agg(expr).with_keys(keys).release().collect()
    return dict(zip(out["part"].to_list(), out["x"].to_list(), strict=True))


def utility(repetitions: int = 20, epsilon: float = 1.0) -> None:
    peers = {"privkit": _privkit_utility, "PipelineDP": _pipeline_dp_utility,
             "OpenDP": _opendp_utility}
    errors: dict[tuple[str, str], list[float]] = {}
    for rep in range(repetitions):
        data = _utility_data(rep)
        clamped = data.assign(x=data["x"].clip(0, 100))
        truth = {"mean": clamped.groupby("part")["x"].mean().to_dict(),
                 "median": clamped.groupby("part")["x"].median().to_dict()}
        for what in ("mean", "median"):
            for name, run in peers.items():
                answer = run(data, epsilon, what, 1000 + rep)
                errors.setdefault((what, name), []).extend(
                    abs(answer[p] - t) for p, t in truth[what].items())
    rows = []
    for (what, name), errs in errors.items():
        e = np.asarray(errs)
        rows.append(f"| {what} | {name} | {np.median(e):.4f} | {np.quantile(e, 0.9):.4f} |")
    intro = (f"{repetitions} datasets of 50 public partitions (100-2,000 rows each, one row "
             "per privacy unit, values lognormal(3.5, 0.6) clamped to [0, 100]); absolute "
             "error of each partition's released grouped mean and median against the exact "
             "one, pooled over partitions and datasets. Same bounds, contribution bounds "
             "(1, 1), Laplace noise, public keys; the median over 1,001 candidates for "
             "privkit and OpenDP (PipelineDP's quantile tree has its own).")
    lines = [
        *_header(f"analytics: utility at epsilon {epsilon}"), intro, "",
        "| statistic | library | median error | 90th percentile |", "| --- | --- | --- | --- |",
        *rows]
    _write("utility", lines)


def quantile_law(privkit_draws: int = 4000, opendp_draws: int = 300) -> None:
    """privkit's grouped median and OpenDP's on one partition: the same mechanism (the
    exponential mechanism over the same 1,001 candidates with the same scale), so the
    same law of outputs (two-sample KS), whatever the pooled error statistics show."""
    import opendp.prelude as dp
    from scipy import stats

    from privkit.algorithms.analytics import Quantile, Query
    from privkit.algorithms.analytics._release import release_columns

    dp.enable_features("contrib")
    data = _utility_data(5, n_parts=1)
    truth = float(np.median(data["x"].clip(0, 100)))
    aggregation = Quantile("x", 0.5, lower=0, upper=100, bins=1000)
    query = Query(privacy_unit="user", by="part", epsilon=1.0, partitions=[0],
                  aggregations={"a": aggregation})
    _, cols = release_columns(query, query.exact(data, 1), np.random.default_rng(0),
                              (privkit_draws,))
    ours = cols["a"][:, 0]
    theirs = np.array([_opendp_utility(data, 1.0, "median", i)[0]
                       for i in range(opendp_draws)])
    rows = [f"| {name} | {len(v)} | {np.median(np.abs(v - truth)):.4f} | "
            f"{np.quantile(np.abs(v - truth), 0.9):.4f} | {v.mean():.4f} | {v.std():.4f} |"
            for name, v in (("privkit", ours), ("OpenDP", theirs))]
    test = stats.ks_2samp(ours, theirs)
    lines = [
        *_header("analytics: privkit's and OpenDP's median, one partition"),
        (f"{len(data)} rows, exact median {truth:.4f}, epsilon 1, 1,001 candidates on "
         "[0, 100]. privkit's scale on |L - n/2|: "
         f"{query.blocks[aggregation].noise_scale:g}; OpenDP's on |L - G| (twice that "
         "score): 2, the same law."), "",
        "| library | draws | median error | 90th percentile | mean | sd |",
        "| --- | --- | --- | --- | --- | --- |", *rows, "",
        (f"Two-sample KS between the outputs: statistic {test.statistic:.4f}, "
        f"p-value {test.pvalue:.3f}.")]
    _write("quantile_law", lines)


# -- scale ----------------------------------------------------------------------------

def _scale_data(rows: int, parts: int, units: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    weights = 1.0 / (np.arange(parts) + 10.0) ** 1.1
    part = rng.choice(parts, size=rows, p=weights / weights.sum())
    return pd.DataFrame({"user": rng.integers(0, units, rows), "part": part,
                         "x": rng.uniform(0.0, 100.0, rows)})


def _scale_query():
    from privkit.algorithms.analytics import Count, Mean, Query

    return Query(privacy_unit="user", by="part", epsilon=1.0, delta=1e-6, max_partitions=4,
                 max_rows=1, aggregations={"n": Count(), "m": Mean("x", lower=0, upper=100)})


def _pipeline_dp_spark(spark, path):
    import pipeline_dp

    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1.0, total_delta=1e-6)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.SparkRDDBackend(spark.sparkContext))
    params = pipeline_dp.AggregateParams(
        noise_kind=pipeline_dp.NoiseKind.LAPLACE,
        metrics=[pipeline_dp.Metrics.COUNT, pipeline_dp.Metrics.MEAN],
        max_partitions_contributed=4, max_contributions_per_partition=1,
        min_value=0.0, max_value=100.0)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0],
                                            partition_extractor=lambda r: r[1],
                                            value_extractor=lambda r: r[2])
    rdd = spark.read.parquet(path).rdd.map(tuple)
    result = engine.aggregate(rdd, params, extractors)
    accountant.compute_budgets()
    return len(result.collect())


def scale(rows: int, rounds: int, peer_rounds: int) -> None:
    import polars as pl
    from pyspark.sql import SparkSession

    from privkit.algorithms.analytics import _spark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # PipelineDP's workers
    parts, units = 100_000, 1_000_000
    data = _scale_data(rows, parts, units)
    query = _scale_query()
    spark = (SparkSession.builder.master("local[2]").appName("privkit-bench")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "8g")
             .config("spark.sql.shuffle.partitions", "8").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "table.parquet")
        data.to_parquet(path, index=False)
        remote = spark.read.parquet(path)
        frame = pl.from_pandas(data)
        collected: list[int] = []
        original = _spark.collect

        def probe(f):
            out = original(f)
            collected.append(len(out))
            return out

        times: dict[str, list[float]] = {k: [] for k in
                                         ("privkit pandas", "privkit polars", "privkit Spark",
                                          "PipelineDP Spark")}
        released: dict[str, int] = {}
        for r in range(rounds):
            runs = (("privkit pandas", lambda r=r: query.run(data, rng=r)),
                    ("privkit polars", lambda r=r: query.run(frame, rng=r)),
                    ("privkit Spark", lambda r=r: query.run(remote, rng=r)),
                    ("PipelineDP Spark", lambda: _pipeline_dp_spark(spark, path)))
            for name, run in runs:
                if name == "PipelineDP Spark" and r >= peer_rounds:
                    continue
                _spark.collect = probe
                start = time.perf_counter()
                out = run()
                times[name].append(time.perf_counter() - start)
                _spark.collect = original
                released[name] = out if isinstance(out, int) else len(out)
                print(name, r, f"{times[name][-1]:.1f}s", released[name], flush=True)
        small = _scale_data(30_000, 20, 30_000, seed=1)
        small["user"] = np.arange(len(small))  # one row per unit: within the bounds
        local = query.run(small, rng=3)
        try:
            pd.testing.assert_frame_equal(query.run(spark.createDataFrame(small), rng=3),
                                          local, check_dtype=False)
            same = f"True ({len(local)} partitions released)"
        except AssertionError as exc:
            same = f"False: {exc}"
    spark.stop()
    med = {k: statistics.median(v) for k, v in times.items() if v}
    peer = med["PipelineDP Spark"]
    rows_out = [f"| {k} | {len(times[k])} | {med[k]:.1f} | {peer / med[k]:.2f} | "
                f"{released[k]} |" for k in med]
    intro = ("Query: count and mean of x in [0, 100] per partition, private partition "
             "selection, epsilon 1, delta 1e-6, max_partitions 4, max_rows 1, Laplace noise. "
             "Partition sizes Zipf-like (weight 1 / (i + 10)^1.1). Spark: local[2], data "
             "read from one parquet file; pandas and polars: the table in memory. Seconds "
             "are medians over interleaved rounds; 'speed-up' is PipelineDP's median over "
             "the row's.")
    probe_line = (f"Rows the privkit Spark runs brought to the driver, per collect: at most "
                  f"{max(collected):,}, one per occupied partition (input: {rows:,} rows).")
    same_line = f"Same seed, pandas and Spark, 30,000 rows within the bounds: identical: {same}."
    lines = [
        *_header(f"analytics: scale ({rows:,} rows, {parts:,} partitions, {units:,} "
                 "privacy units)"), intro, "",
        "| run | rounds | median s | speed-up over PipelineDP Spark | partitions released |",
        "| --- | --- | --- | --- | --- |", *rows_out, "", probe_line, same_line]
    _write("scale", lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", nargs="*", default=["correctness", "audits", "utility",
                                                      "quantile_law", "scale"])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peer-rounds", type=int, default=3)
    parser.add_argument("--repetitions", type=int, default=20)
    args = parser.parse_args(argv)
    for part in args.part:
        if part == "correctness":
            correctness()
        elif part == "audits":
            audits()
        elif part == "utility":
            utility(args.repetitions)
        elif part == "quantile_law":
            quantile_law()
        elif part == "scale":
            scale(args.rows, args.rounds, args.peer_rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
