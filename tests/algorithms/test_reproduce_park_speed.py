"""`_memo.one_solve_per_problem`: Park's runner solves each non-private baseline SVM once per
cell and reuses it across epsilons; the accuracies are those of solving every time."""

import pytest

pytest.importorskip("sklearn")

from privkit.algorithms.reproduce import park2022 as runner
from privkit.algorithms.reproduce._memo import one_solve_per_problem
from privkit.algorithms.svdd import park2022 as p


def test_reusing_the_solutions_changes_no_accuracy():
    """Three moons (generated, no data folder), every row of Table 7.3 at three epsilons
    and no noise: the same numbers with and without the memo (liblinear is
    deterministic, so equality is exact)."""
    X, y = p.load_dataset("three_moons", "", seed=1)
    eps = (0.1, 1.0, None)
    plain = runner._accuracies("three_moons", X, y, 1, eps)
    with one_solve_per_problem():
        shared = runner._accuracies("three_moons", X, y, 1, eps)
    assert shared == plain
    assert len(plain) == len(runner.ROWS_73) * len(eps)


def test_the_memo_is_undone_after_the_block():
    from privkit.algorithms.svdd._hinge_ovr import OneVsRestSVM

    before = OneVsRestSVM._weights
    with one_solve_per_problem():
        assert OneVsRestSVM._weights is not before
    assert OneVsRestSVM._weights is before
