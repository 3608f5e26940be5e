"""The row blocks privkit reads a dask array in (issue 27): one per worker thread, each a
whole number of ``chunk_size`` pieces, spread over the workers; results bit-identical to
numpy's whatever the blocks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privkit.algorithms import DPKMeans, PrivateKernelMean
from privkit.algorithms._dask_blocks import block_rows, dask_row_blocks


@given(n=st.integers(0, 10**7), chunk=st.integers(1, 10**5), threads=st.integers(1, 64))
def test_block_rows_is_the_smallest_whole_number_of_pieces_with_a_block_per_thread(
        n, chunk, threads):
    rows = block_rows(n, chunk, threads)
    pieces = max(1, math.ceil(n / chunk))
    per_block = rows // chunk
    assert rows % chunk == 0
    assert per_block >= 1
    assert math.ceil(pieces / per_block) <= threads  # no more blocks than threads
    if per_block > 1:  # one piece fewer per block would need more blocks than threads
        assert math.ceil(pieces / (per_block - 1)) > threads


def test_block_rows_for_a_million_rows_on_two_threads():
    """Closed form: 10^6 rows are 16 pieces of 65,536 (the last short): 8 per block."""
    assert block_rows(10**6, 65536, 2) == 8 * 65536
    assert block_rows(10**6, 65536, 1) == 16 * 65536
    assert block_rows(1000, 65536, 2) == 65536  # fewer pieces than threads: one block


@pytest.fixture
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as local, \
            distributed.Client(local) as client:
        yield client


def test_one_dask_block_is_cut_into_one_block_per_worker_on_different_workers(cluster):
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(0).normal(size=(5000, 3))
    one = cluster.persist(da.from_array(X, chunks=(5000, 3)))  # dask's "auto": one block
    blocks = dask_row_blocks(one, 700, persist=True)
    assert blocks.chunks[0] == (2800, 2200)  # 8 pieces of 700 rows: 4 per block
    from distributed import futures_of, wait

    futures = futures_of(blocks)
    wait(futures)
    holders = cluster.who_has(futures)
    assert len(futures) == 2
    assert len({w for key in holders for w in holders[key]}) == 2  # one block each
    np.testing.assert_array_equal(blocks.compute(), X)


def test_a_lazy_array_is_rechunked_but_not_persisted(cluster):
    """Data not held by the cluster may not fit in its memory: no copy is kept."""
    da = pytest.importorskip("dask.array")
    from distributed import futures_of

    lazy = da.from_array(np.zeros((5000, 3)), chunks=(5000, 3))
    blocks = dask_row_blocks(lazy, 700, persist=True)
    assert blocks.chunks[0] == (2800, 2200)
    assert futures_of(blocks) == []


def test_aligned_blocks_are_read_where_they_are(cluster):
    da = pytest.importorskip("dask.array")
    X = da.from_array(np.zeros((5000, 3)), chunks=(1400, 3))  # 2 pieces of 700 per block
    assert dask_row_blocks(X, 700) is X
    assert dask_row_blocks(X, 600) is not X  # 1400 is not a multiple of 600


def test_unaligned_blocks_on_two_workers_give_numpys_model_bit_for_bit(cluster):
    """DP k-means and the kernel mean: the same seed, the same bits (numpy, dask)."""
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(1).uniform(-1, 1, size=(4000, 3))
    remote = cluster.persist(da.from_array(X, chunks=(1500, 3)))
    km = dict(epsilon=2.0, n_iter=3, chunk_size=300, random_state=5)
    np.testing.assert_array_equal(DPKMeans(4, **km).fit(X).cluster_centers_,
                                  DPKMeans(4, **km).fit(remote).cluster_centers_)
    kme = dict(epsilon=1.0, feature_map="kmeans_nystrom", n_iter=2, chunk_size=300,
               random_state=5, relation="add_remove")
    np.testing.assert_array_equal(PrivateKernelMean(8, **kme).fit(X).embedding_,
                                  PrivateKernelMean(8, **kme).fit(remote).embedding_)
