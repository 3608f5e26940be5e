"""The quantile's sensitivity claim: the m rows one unit adds move each utility
``u_j = -|L_j - alpha n|`` by at most ``max(alpha, 1 - alpha) m`` (the L-infinity
sensitivity the exponential mechanism is calibrated with), and the bound is attained.
Checked exhaustively on small cases and by hypothesis beyond them. (The spread of the
change can reach twice that: base rows in bucket 1, a row added in bucket 0, alpha 1/3
give a spread of 4/3, so the "range 1" shortcut does not hold.)"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from privkit.algorithms.analytics import Quantile

ALPHAS = (0.01, 0.1, 0.25, 1 / 3, 0.5, 0.75, 0.9, 0.99)


def utilities(buckets: list[int], bins: int, alpha: float) -> np.ndarray:
    counts = np.bincount(np.asarray(buckets, dtype=np.int64), minlength=bins)[None, :]
    return Quantile("x", alpha, lower=0.0, upper=1.0, bins=bins).utilities(counts)[0]


def largest_move(base: list[int], added: list[int], bins: int, alpha: float) -> float:
    change = utilities(base + added, bins, alpha) - utilities(base, bins, alpha)
    return float(np.abs(change).max())


def test_each_utility_moves_by_at_most_the_sensitivity_exhaustively():
    """Every multiset of up to 4 base rows over 4 buckets, every addition of 1 or 2 rows,
    every alpha above: no utility moves by more than max(alpha, 1 - alpha) m, and for
    every alpha some case reaches it (the bound is tight)."""
    bins = 4
    for alpha in ALPHAS:
        bound = max(alpha, 1 - alpha)
        worst = 0.0
        for n in range(5):
            for base in itertools.combinations_with_replacement(range(bins), n):
                for m in (1, 2):
                    for added in itertools.combinations_with_replacement(range(bins), m):
                        move = largest_move(list(base), list(added), bins, alpha)
                        assert move <= bound * m + 1e-9, (base, added, alpha, move)
                        worst = max(worst, move / (bound * m))
        assert worst > 1 - 1e-9


@given(base=st.lists(st.integers(0, 9), max_size=30),
       added=st.lists(st.integers(0, 9), min_size=1, max_size=4),
       alpha=st.floats(0.001, 0.999))
def test_each_utility_moves_by_at_most_the_sensitivity(base, added, alpha):
    assert largest_move(base, added, 10, alpha) <= max(alpha, 1 - alpha) * len(added) + 1e-9


def test_the_exponential_block_uses_that_sensitivity():
    from privkit.algorithms.analytics import Query

    for alpha in (0.1, 0.5, 0.9):
        q = Quantile("x", alpha, lower=0, upper=1, bins=10)
        query = Query(privacy_unit="u", by="p", partitions=[0], epsilon=1.0,
                      max_partitions=2, max_rows=3, aggregations={"q": q})
        block = query.blocks[q]
        assert block.sensitivity.value == 3 * max(alpha, 1 - alpha)
        assert block.pure_epsilon == 0.5
