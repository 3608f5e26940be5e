"""DP K-means (DPLloyd, Su et al. 2017): sensitivities, plan, accounting, dask."""

import math

import numpy as np
import pytest

from privkit import GDP, Neighbouring, Norm, tightest
from privkit.algorithms.kernels.kmeans import (
    DPKMeans,
    block_statistics,
    clip_to_ball,
    kmeans_sensitivities,
    row_block_sums,
)
from privkit.audits.sensitivity import check_sensitivity
from privkit.conversions import gdp_mu_for_approx_dp
from privkit.errors import InvalidParameterError

CENTROIDS = np.array([[0.5, 0.0], [-0.5, 0.0], [0.0, 0.6]])


def _stats(relation_radius):
    def f(data):
        return block_statistics(data, CENTROIDS, relation_radius)
    return f


@pytest.mark.parametrize("relation", [Neighbouring.REPLACE_ONE, Neighbouring.ADD_REMOVE])
def test_declared_sensitivities_pass_the_search(relation):
    """Both declared L2 sensitivities (sums 2r / r, counts sqrt 2 / 1) survive the audits'
    search, and the search reaches them (so the declarations are tight)."""
    r = 1.0
    s_sum, s_count = kmeans_sensitivities(r, 2, relation, Norm.L2)
    sums = check_sensitivity(lambda D: _stats(r)(D)[:, :-1], s_sum, record_low=[-1, -1],
                             record_high=[1, 1], n_records=6, trials=800,
                             search_examples=80, rng=0)
    counts = check_sensitivity(lambda D: _stats(r)(D)[:, -1], s_count, record_low=[-1, -1],
                               record_high=[1, 1], n_records=6, trials=800,
                               search_examples=80, rng=1)
    assert not sums.violation
    assert not counts.violation
    assert counts.largest == pytest.approx(s_count.value)
    assert sums.largest > 0.8 * s_sum.value


def test_l1_sensitivities_pass_the_search():
    """The Laplace variant's L1 sensitivities (2 sqrt(d) r and 2) hold."""
    s_sum, _s_count = kmeans_sensitivities(1.0, 2, Neighbouring.REPLACE_ONE, Norm.L1)
    assert s_sum.value == pytest.approx(2 * math.sqrt(2))
    res = check_sensitivity(lambda D: _stats(1.0)(D)[:, :-1], s_sum, record_low=[-1, -1],
                            record_high=[1, 1], n_records=6, trials=800, search_examples=50,
                            rng=2)
    assert not res.violation


def test_block_statistics_against_enumeration():
    """Sums and counts equal a direct loop over records (clipping included)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    stats = block_statistics(X, CENTROIDS, 1.0)
    Z = clip_to_ball(X, 1.0)
    expect = np.zeros((3, 3))
    for z in Z:
        j = int(np.argmin([np.sum((z - c) ** 2) for c in CENTROIDS]))
        expect[j, :2] += z
        expect[j, 2] += 1
    np.testing.assert_allclose(stats, expect, atol=1e-12)
    assert np.all(np.linalg.norm(Z, axis=1) <= 1.0 + 1e-12)


def test_chunked_sums_do_not_depend_on_chunking_beyond_rounding():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1000, 2))
    f = _stats(2.0)
    np.testing.assert_allclose(row_block_sums(X, f, 100), row_block_sums(X, f, 1000),
                               rtol=1e-12)


def test_plan_is_calibrated_to_the_budget_exactly():
    """T iterations of (sum, count) compose to mu-GDP with the mu that meets (eps, delta)
    (Dong-Roth-Su composition: mu^2 adds)."""
    km = DPKMeans(4, epsilon=1.0, delta=1e-6, n_iter=7)
    plan = km.plan(n_samples=100, n_features=3)
    result = tightest(plan, delta=1e-6)
    assert result.epsilon == pytest.approx(1.0, rel=1e-6)
    s, c = km.iteration_blocks(3)
    mu_total = math.sqrt(7 * ((s.sensitivity.value / s.noise_scale) ** 2
                              + (c.sensitivity.value / c.noise_scale) ** 2))
    assert mu_total == pytest.approx(gdp_mu_for_approx_dp(epsilon=1.0, delta=1e-6), rel=1e-9)
    assert isinstance(result.guarantee, GDP)


def test_fit_recovers_separated_clusters_and_ledger_matches_plan():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-0.5, 0.05, (4000, 2)), rng.normal(0.5, 0.05, (4000, 2))])
    km = DPKMeans(2, epsilon=1.0, delta=1e-6, n_iter=4, random_state=0).fit(X)
    centres = np.sort(km.cluster_centers_[:, 0])
    np.testing.assert_allclose(centres, [-0.5, 0.5], atol=0.05)
    assert km.ledger_.compare(km.plan_).matches
    assert km.guarantee_.epsilon_at(1e-6) <= 1.0 + 1e-9
    assert km.paper_claim_ is None


def test_laplace_variant_is_pure():
    X = np.random.default_rng(0).normal(size=(500, 2)) / 3
    km = DPKMeans(3, epsilon=2.0, delta=0.0, noise="laplace", n_iter=2, random_state=0).fit(X)
    assert km.guarantee_.epsilon_at(0.0) == pytest.approx(2.0)
    assert km.paper_claim_.epsilon == 2.0


@pytest.mark.parametrize(("params", "fragment"), [
    ({"epsilon": -1.0}, "epsilon"),
    ({"n_iter": 0}, "n_iter"),
    ({"data_radius": 0.0}, "data_radius"),
    ({"noise": "cauchy"}, "noise"),
    ({"noise": "laplace", "delta": 1e-5}, "delta"),
    ({"relation": "swap"}, "relation"),
    ({"count_share": 1.0}, "count_share"),
])
def test_invalid_parameters_are_named(params, fragment):
    with pytest.raises(InvalidParameterError, match=fragment):
        DPKMeans(2, **params).fit(np.zeros((10, 2)))


def test_dask_local_cluster_gives_the_same_model():
    """The same seed gives bit-identical centroids on numpy and on a dask LocalCluster."""
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 4)) / 2
    local = DPKMeans(5, epsilon=2.0, n_iter=3, chunk_size=700, random_state=11).fit(X)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        remote = DPKMeans(5, epsilon=2.0, n_iter=3, chunk_size=700, random_state=11).fit(
            da.from_array(X, chunks=(1000, 4)))
    np.testing.assert_array_equal(local.cluster_centers_, remote.cluster_centers_)


def test_block_statistics_over_several_score_blocks_match_direct_distances():
    """More rows than one score sub-block (SUB_BLOCK): labels from the full squared
    distances of the clipped rows, sums of the clipped rows (computed independently)."""
    from privkit.algorithms.kernels.kmeans import SUB_BLOCK

    rng = np.random.default_rng(3)
    X = rng.normal(size=(2 * SUB_BLOCK + 17, 2)) * 0.8
    stats = block_statistics(X, CENTROIDS, 1.0)
    Z = clip_to_ball(X, 1.0)
    d2 = ((Z[:, None, :] - CENTROIDS[None, :, :]) ** 2).sum(-1)
    labels = np.argmin(d2, axis=1)
    for j in range(3):
        np.testing.assert_allclose(stats[j, :2], Z[labels == j].sum(0), atol=1e-9)
        assert stats[j, 2] == np.sum(labels == j)


# -- the transcript (issue 22) ------------------------------------------------------------------


def _blobs(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return clip_to_ball(np.concatenate([rng.normal(-0.4, 0.1, (n // 2, 2)),
                                        rng.normal(0.4, 0.1, (n - n // 2, 2))]), 0.95)


def test_non_finite_rows_are_the_null_record_in_the_statistics():
    """A row with a NaN or an infinite entry adds nothing to any sum or count: the
    statistics equal those of the data without it (an independent computation)."""
    X = _blobs()
    bad = np.array([[np.nan, 0.2], [np.inf, 0.0], [-np.inf, np.inf]])
    with_bad = block_statistics(np.concatenate([X[:5], bad, X[5:]]), CENTROIDS, 1.0)
    np.testing.assert_array_equal(with_bad, block_statistics(X, CENTROIDS, 1.0))
    np.testing.assert_array_equal(clip_to_ball(bad, 1.0), np.zeros((3, 2)))


def test_overflowing_rows_are_clipped_onto_the_ball():
    """A finite row whose squared norm overflows is clipped like any other (onto
    r x / ||x||), not dropped."""
    X = np.array([[1e200, 1e200], [-3e307, 4e307]])
    np.testing.assert_allclose(clip_to_ball(X, 2.0),
                               [[math.sqrt(2), math.sqrt(2)], [-1.2, 1.6]], rtol=1e-12)
    stats = block_statistics(X, CENTROIDS, 2.0)
    assert stats[:, -1].sum() == 2
    np.testing.assert_allclose(stats[:, :-1].sum(axis=0), [math.sqrt(2) - 1.2,
                                                           math.sqrt(2) + 1.6])


@pytest.mark.parametrize("bad", [[np.nan, 0.0], [np.inf, -np.inf], [0.3, -np.inf]])
def test_a_non_finite_row_changes_nothing_under_add_remove(bad):
    """Under add-remove the null record is the removed record: with the same seed, the
    data with an extra non-finite row give bit-identical centroids and counts (this was
    an error whose message held the noiseless cluster sums)."""
    X = _blobs()
    kw = dict(epsilon=1.0, delta=1e-5, n_iter=3, relation="add_remove", random_state=5)
    plain = DPKMeans(2, **kw).fit(X)
    extra = DPKMeans(2, **kw).fit(np.concatenate([X, [bad]]))
    np.testing.assert_array_equal(plain.cluster_centers_, extra.cluster_centers_)
    np.testing.assert_array_equal(plain.noisy_counts_, extra.noisy_counts_)


def test_a_row_beyond_the_bound_is_clipped_silently():
    """No warning of any kind when a row lies beyond data_radius (a warning that fires
    only then would reveal that such a row exists), and the row counts as its clipped
    image: same seed, same centroids as the data holding the clipped row."""
    import warnings

    X = _blobs()
    kw = dict(epsilon=1.0, delta=1e-5, n_iter=2, random_state=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        far = DPKMeans(2, **kw).fit(np.concatenate([X, [[0.0, 50.0]]]))
    assert caught == []
    near = DPKMeans(2, **kw).fit(np.concatenate([X, [[0.0, 1.0]]]))
    np.testing.assert_allclose(far.cluster_centers_, near.cluster_centers_, rtol=1e-12)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_fit_succeeds_on_no_rows_with_the_same_attributes(relation):
    """The number of rows never decides whether fit succeeds (it is private under
    add-remove): zero rows give a model of the same form (noise only)."""
    empty = DPKMeans(3, relation=relation, n_iter=2, random_state=0).fit(np.zeros((0, 2)))
    full = DPKMeans(3, relation=relation, n_iter=2, random_state=0).fit(_blobs())
    assert empty.cluster_centers_.shape == full.cluster_centers_.shape == (3, 2)
    assert empty.noisy_counts_.shape == (3,)
    assert sorted(vars(empty)) == sorted(vars(full))
    assert empty.ledger_.compare(empty.plan_).matches


def test_structure_errors_name_no_private_value_nor_the_row_count():
    """A malformed X is refused for its structure; the message holds neither the entries
    nor the number of rows (private under add-remove)."""
    for X in ([123456.789, 2.5, 3.5], [["123456.789", "abc"]], np.zeros((7, 0))):
        with pytest.raises(InvalidParameterError) as info:
            DPKMeans(2, relation="add_remove").fit(X)
        text = str(info.value)
        assert "123456" not in text
        assert "abc" not in text
        assert "(7" not in text
        assert info.value.__cause__ is None
        assert info.value.__context__ is None or info.value.__suppress_context__


@pytest.mark.parametrize(("noise", "delta"), [("laplace", 0.0), ("gaussian", 1e-5)])
def test_fit_spends_its_plan_on_a_budget_filter_before_any_noise(noise, delta):
    """The plan is spent once per fit, at the estimator's delta when it is not pure (the
    filter's accountant prices it: basic composition of the Gaussian blocks costs more
    than the tight 1.0); a fit that does not fit the filter is refused with nothing
    recorded and no attribute set."""
    from privkit import BudgetFilter
    from privkit.errors import BudgetExceededError

    kw = dict(epsilon=1.0, delta=delta, noise=noise, n_iter=2, random_state=0)
    plan = DPKMeans(2, **kw).plan(n_samples=40, n_features=2)
    price = BudgetFilter(epsilon=10.0, delta=1e-4).cost(plan, delta=delta or None).epsilon
    budget = BudgetFilter(epsilon=1.5 * price, delta=1e-4)
    DPKMeans(2, **kw).fit(_blobs(), budget_filter=budget)
    assert budget.spent.epsilon == pytest.approx(price)
    assert price >= 1.0 - 1e-9
    again = DPKMeans(2, **kw)
    with pytest.raises(BudgetExceededError):
        again.fit(_blobs(), budget_filter=budget)
    assert not hasattr(again, "cluster_centers_")
    assert budget.spent.epsilon == pytest.approx(price)


@pytest.mark.parametrize("query", [[[np.nan, 0.0]], [[0.0, np.inf]], [[0.0, 0.0, 0.0]]])
def test_predict_refuses_bad_query_rows(query):
    """Queries are not private: a non-finite row or the wrong number of columns is a
    clear error, never a cluster."""
    km = DPKMeans(2, n_iter=1, random_state=0).fit(_blobs())
    with pytest.raises(ValueError, match=r"NaN|infinity|features"):
        km.predict(np.array(query))


def test_predict_refuses_a_non_finite_dask_query_row():
    da = pytest.importorskip("dask.array")
    km = DPKMeans(2, n_iter=1, random_state=0).fit(_blobs())
    Q = da.from_array(np.array([[0.1, 0.2], [np.nan, 0.0]]), chunks=(1, 2))
    lazy = km.predict(Q)  # a lazy dask array: the rows are checked when computed
    with pytest.raises(InvalidParameterError, match="non-finite"):
        lazy.compute()
    np.testing.assert_array_equal(
        km.predict(da.from_array(_blobs(6), chunks=(3, 2))).compute(), km.predict(_blobs(6)))


def test_transcript_case_is_small_and_private():
    """The declared case is a few dozen rows, under the relation its claim is made for,
    and its claim is the guarantee_ a fit reports."""
    case = DPKMeans.transcript_case()
    assert case.relation is Neighbouring.ADD_REMOVE
    assert len(case.X) <= 40
    fitted = case.estimator.fit(case.X)
    assert fitted.guarantee_.epsilon_at(case.delta) == pytest.approx(case.epsilon, rel=1e-6)
    assert np.linalg.norm(case.beyond_bound) > fitted.data_radius
    assert np.linalg.norm(case.at_bound) == pytest.approx(fitted.data_radius)


def test_certified_is_the_tightest_accountants_guarantee_memoised():
    """certified(plan, delta=delta) is tightest(plan, delta).guarantee, computed once per plan."""
    from privkit.algorithms._certified import certified

    plan = DPKMeans(3, epsilon=0.9, delta=1e-6, n_iter=3).plan(n_samples=10, n_features=4)
    before = certified.cache_info().hits
    assert certified(plan, delta=1e-6) == tightest(plan, delta=1e-6).guarantee
    assert certified(plan, delta=1e-6) is certified(plan, delta=1e-6)
    assert certified.cache_info().hits >= before + 2
