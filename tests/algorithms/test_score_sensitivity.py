"""The DMW quality scores' sensitivities (:func:`privkit.algorithms.lp.private_lp.
score_sensitivity`) against exact enumeration: every small instance's largest score change
under a replaced row is at most the declared bound, and some instance attains it (so the
declared bound is tight, and the thesis's eq. 12 and 14 are not)."""

import itertools

import numpy as np
import pytest

from privkit.algorithms.lp.private_lp import dense_projection, score_sensitivity

N_ROWS, N_VERTICES = 3, 2
DENSITIES = (1.0, 1.5, 2.0, 3.0)
#: Raw log-weights of the rows (the replaced row's may differ between the neighbours:
#: its losses in the history differ), from uniform to one row far below (or, after the
#: projection, capped above) the others.
LOG_WEIGHTS = (0.0, -0.5, -1.0, -3.0)


def weight_states(s):
    """Every (p, p') pair of projected weights for raw weights on the grid, the replaced
    row 0's raw weight free on both sides and the others' shared."""
    for others in itertools.product(LOG_WEIGHTS, repeat=N_ROWS - 1):
        for mine, theirs in itertools.product(LOG_WEIGHTS, repeat=2):
            z = np.exp(np.array((mine, *others)))
            z2 = np.exp(np.array((theirs, *others)))
            yield dense_projection(z, s), dense_projection(z2, s)


@pytest.mark.parametrize("s", DENSITIES)
def test_count_score_change_is_at_most_one_over_s_and_attained(s):
    """All 2^6 indicator patterns (row, vertex) of 3 rows and 2 vertices, all 4 patterns of
    the replacing row, all weight states of the grid: ``max |Delta u| <= 1/s``, with
    equality at s = n (uniform projection). The count score depends on the rows only
    through these indicators, so the enumeration covers every LP of that size."""
    patterns = np.array(list(itertools.product((0.0, 1.0), repeat=N_ROWS * N_VERTICES)))
    ind = patterns.reshape(-1, N_ROWS, N_VERTICES)
    rows = np.array(list(itertools.product((0.0, 1.0), repeat=N_VERTICES)))
    worst = 0.0
    for p, q in weight_states(s):
        u = np.einsum("k,mkj->mj", p, ind)  # (patterns, vertices)
        others = np.einsum("k,mkj->mj", q[1:], ind[:, 1:, :])
        v = others[:, None, :] + q[0] * rows[None, :, :]  # (patterns, new row, vertices)
        worst = max(worst, float(np.abs(u[:, None, :] - v).max()))
    declared = score_sensitivity("count", density=s)
    assert declared == pytest.approx(1.0 / s)
    assert worst <= declared * (1 + 1e-12)
    if s == N_ROWS:
        assert worst == pytest.approx(declared, rel=1e-12)
        assert worst < 2.0 / s  # thesis eq. 14 is not attained


@pytest.mark.parametrize("s", DENSITIES)
def test_slack_score_change_is_at_most_two_opt_a_over_s_c_min_and_attained(s):
    """All 3^6 constraint matrices with entries in {-1, 0, 1} (a = 1), every replacing row
    in {-1, 0, 1}^2, all weight states; costs c = (1, 2) and OPT = 1.5: the vertex score
    ``-(OPT / c_j) p . A_j`` moves by at most ``2 OPT a / (s c_min)``, attained at s = n."""
    opt, cost = 1.5, np.array([1.0, 2.0])
    grid = (-1.0, 0.0, 1.0)
    A = np.array(list(itertools.product(grid, repeat=N_ROWS * N_VERTICES)))
    A = A.reshape(-1, N_ROWS, N_VERTICES)
    rows = np.array(list(itertools.product(grid, repeat=N_VERTICES)))
    scale = opt / cost
    worst = 0.0
    for p, q in weight_states(s):
        u = -np.einsum("k,mkj->mj", p, A) * scale
        others = np.einsum("k,mkj->mj", q[1:], A[:, 1:, :])
        v = -(others[:, None, :] + q[0] * rows[None, :, :]) * scale
        worst = max(worst, float(np.abs(u[:, None, :] - v).max()))
    declared = score_sensitivity("slack", density=s, optimum=opt, min_cost=1.0)
    assert declared == pytest.approx(2.0 * opt / s)
    assert worst <= declared * (1 + 1e-12)
    if s == N_ROWS:
        assert worst == pytest.approx(declared, rel=1e-12)
        assert worst < 3.0 * opt / s  # thesis eq. 12 is not attained
