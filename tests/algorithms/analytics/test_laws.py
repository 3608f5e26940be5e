"""Each aggregation's error follows its mechanism's law: the release stage of a fixed
exact table, drawn 200,000 times at once, against the law computed independently (scipy's
Laplace, the exponential mechanism's softmax, the stability threshold's Laplace tail, and
for the mean and variance a direct simulation of their post-processing from numpy
Laplace draws).

Kolmogorov-Smirnov tests use ``_stats.assert_law`` (alpha = 1e-3 for the true law, and a
5% scale error must be rejected: see that module); two-sample KS and chi-square tests
use alpha = 1e-3, so a correct implementation fails with probability 1e-3 for a random
seed and never for the fixed seeds here, while a noise scale off by 5%, a wrong
utility or a wrong threshold is detected (checked by the wrong-law arms)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from _stats import N_DRAWS, assert_law
from privkit.algorithms.analytics import Count, Histogram, Mean, Quantile, Query, Sum, Variance
from privkit.algorithms.analytics._release import release_columns

pytestmark = pytest.mark.statistical

ALPHA = 1e-3


def data(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 300
    return pd.DataFrame({"user": np.arange(n), "part": rng.integers(0, 3, n),
                         "x": rng.uniform(-2.0, 12.0, n)})


def draws(aggregations, *, epsilon=1.0, seed=1, **changes):
    params = dict(privacy_unit="user", by="part", epsilon=epsilon, max_partitions=2,
                  max_rows=2, partitions=[0, 1, 2], aggregations=aggregations)
    params.update(changes)
    query = Query(**params)
    exact = query.exact(data(), 7)
    selected, columns = release_columns(query, exact, np.random.default_rng(seed),
                                        (N_DRAWS,))
    return query, exact, selected, columns


def test_count_error_is_laplace_with_the_blocks_scale():
    query, exact, _, cols = draws({"n": Count()}, seed=2)
    (block,) = query.blocks.values()
    assert block.noise_scale == pytest.approx(4.0)  # k m / epsilon
    assert_law(cols["n"][:, 1] - exact.sums["__count"][1], stats.laplace,
               scale=block.noise_scale)


def test_sum_error_is_laplace_in_the_values_units():
    aggregation = Sum("x", lower=0, upper=10)
    query, exact, _, cols = draws({"s": aggregation})
    (statistic,) = aggregation.statistics()
    unit = query.measure(statistic).unit
    exact_sum = exact.sums[statistic.name][0] * unit
    scale = query.blocks[statistic].noise_scale * unit
    assert scale == pytest.approx(40.0)  # k m max(|lower|, |upper|) / epsilon
    assert_law(cols["s"][:, 0] - exact_sum, stats.laplace, scale=scale)
    clean = data()
    truth = clean[clean["part"] == 0]["x"].clip(0, 10).sum()
    assert abs(exact_sum - truth) <= len(clean) * unit  # rounding to units only


def test_histogram_error_is_laplace_in_every_bucket():
    query, exact, _, cols = draws({"h": Histogram("x", lower=0, upper=10, bins=4)})
    (block,) = query.blocks.values()
    matrix = exact.buckets[next(iter(exact.buckets))]
    for j in range(4):
        assert_law(cols[f"h[{j}]"][:, 2] - matrix[2, j], stats.laplace,
                   scale=block.noise_scale)


def _laplace(scale, rng, size):
    return rng.laplace(0.0, scale, size)


def _two_sample(released, simulated, wrong):
    assert stats.ks_2samp(released, simulated).pvalue > ALPHA
    assert stats.ks_2samp(released, wrong).pvalue < ALPHA


def test_mean_follows_its_post_processing_of_two_laplace_releases():
    """mean = clip(mid + (S + Z_s) / max(C + Z_c, 1)) with the blocks' scales."""
    aggregation = Mean("x", lower=0, upper=10)
    query, exact, _, cols = draws({"m": aggregation}, epsilon=4.0)
    count, csum = aggregation.statistics()
    unit = query.measure(csum).unit
    c, s = exact.sums[count.name][0], exact.sums[csum.name][0] * unit
    rng = np.random.default_rng(99)

    def simulate(factor):
        noisy_c = c + _laplace(factor * query.blocks[count].noise_scale, rng, N_DRAWS)
        noisy_s = s + _laplace(factor * query.blocks[csum].noise_scale * unit, rng, N_DRAWS)
        return np.clip(5.0 + noisy_s / np.maximum(noisy_c, 1.0), 0.0, 10.0)

    _two_sample(cols["m"][:, 0], simulate(1.0), simulate(1.1))


def test_variance_follows_its_post_processing_of_three_laplace_releases():
    aggregation = Variance("x", lower=0, upper=10)
    query, exact, _, cols = draws({"v": aggregation}, epsilon=4.0)
    count, csum, csumsq = aggregation.statistics()
    units = [query.measure(s).unit for s in (count, csum, csumsq)]
    exacts = [exact.sums[s.name][1] * u for s, u in zip((count, csum, csumsq), units,
                                                         strict=True)]
    rng = np.random.default_rng(98)

    def simulate(factor):
        c, s, q = (e + _laplace(factor * query.blocks[st].noise_scale * u, rng, N_DRAWS)
                   for e, st, u in zip(exacts, (count, csum, csumsq), units, strict=True))
        c = np.maximum(c, 1.0)
        return np.clip(q / c - (s / c) ** 2, 0.0, 25.0)

    _two_sample(cols["v"][:, 1], simulate(1.0), simulate(1.1))


def test_quantile_frequencies_are_the_exponential_mechanisms_softmax():
    """P(candidate j) = softmax(u_j / scale) over the 21 candidates (chi-square), and not
    the softmax at a 5% smaller scale."""
    aggregation = Quantile("x", 0.3, lower=0, upper=10, bins=20)
    query, exact, _, cols = draws({"q": aggregation}, epsilon=0.5)
    block = query.blocks[aggregation]
    utilities = aggregation.utilities(exact.buckets[next(iter(exact.buckets))])[0]
    index = np.rint(cols["q"][:, 0] / 0.5).astype(np.int64)
    observed = np.bincount(index, minlength=21)

    def expected(scale):
        p = special.softmax(utilities / scale)
        return p * N_DRAWS

    keep = expected(block.noise_scale) >= 5
    assert keep.sum() >= 10

    def pvalue(scale):
        e = expected(scale)
        if keep.all():
            return stats.chisquare(observed, e).pvalue
        return stats.chisquare(np.r_[observed[keep], observed[~keep].sum()],
                               np.r_[e[keep], e[~keep].sum()]).pvalue

    assert pvalue(block.noise_scale) > ALPHA
    assert pvalue(0.95 * block.noise_scale) < ALPHA


def test_selection_releases_with_the_stability_thresholds_probability():
    """Partition 1 holds the exact table's unit count u: it is released with probability
    P(u + Laplace(b) > threshold) (binomial test), at the block's parameters."""
    query, exact, selected, _ = draws({"n": Count()}, partitions=None, delta=1e-3,
                                      epsilon=0.3)
    block = query.selection_block
    frequencies = selected.mean(axis=0)
    for i, units in enumerate(exact.units):
        p = stats.laplace.sf(block.threshold - units, scale=block.noise_scale)
        test = stats.binomtest(int(selected[:, i].sum()), N_DRAWS, p)
        assert test.pvalue > ALPHA, (i, frequencies[i], p)
    assert frequencies.min() > 0.01
    assert frequencies.max() < 0.99
