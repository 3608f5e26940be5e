"""The compiled accelerators and their numpy paths (issue 24): the import's choice, and the
two paths against each other on random inputs (random features bit for bit, the
Lawson-Hanson solver to rounding). The comparisons are skipped where the accelerators
are not built; the numpy paths' own properties are tested in test_equilibrium.py and
test_svdd.py, which run on whichever path the import chose (both, in CI)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privkit.algorithms._accelerators import _hull_numpy, _rff_numpy


def _compiled(name):
    try:
        return __import__(f"privkit.algorithms._accelerators.{name}", fromlist=["_"])
    except ImportError:
        pytest.skip(f"the accelerator privkit.algorithms._accelerators.{name} is not built here")


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint32 if a.dtype == np.float32 else np.uint64)


@pytest.mark.parametrize(("value", "pure"), [("1", True), ("0", False), ("", False)])
def test_privkit_pure_chooses_the_numpy_path(value, pure):
    """PRIVKIT_PURE=1 makes the import take the numpy paths; unset or 0, the compiled
    modules where they are built."""
    code = ("from privkit.algorithms import _accelerators as k; "
            "print(k.COMPILED['hull'], k.COMPILED['rff'], k.hull.__name__, k.rff.__name__)")
    env = {**os.environ, "PRIVKIT_PURE": value}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    for name, chosen, flag in (("_hull", out[2], out[0]), ("_rff", out[3], out[1])):
        try:
            __import__(f"privkit.algorithms._accelerators.{name}")
            built = True
        except ImportError:  # this accelerator was not built here
            built = False
        compiled = built and not pure
        assert flag == str(compiled)
        assert chosen.endswith(name if compiled else f"{name}_numpy")


def _descent_problem(seed, d, chunks, n_blocks, scale):
    rng = np.random.default_rng(seed)
    h = chunks * _rff_numpy.lanes
    phase = rng.normal(size=(d + 1, h)).astype(np.float32)
    phase[d] *= np.float32(np.pi)
    steps = (scale * rng.normal(size=(2, d, h))).astype(np.float32)
    x = rng.normal(size=(n_blocks * _rff_numpy.rows, d)).astype(np.float32)
    return phase, steps, x


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 12), chunks=st.integers(1, 5),
       n_blocks=st.integers(1, 6), n_iter=st.integers(0, 12), decay_from=st.integers(0, 12),
       scale=st.sampled_from([1e-3, 0.1, 10.0]))
def test_the_descent_is_the_compiled_ones_bit_for_bit(seed, d, chunks, n_blocks, n_iter,
                                                       decay_from, scale):
    """The numpy descent's end points equal the compiled kernel's in every bit (the
    private mode's cubes must not depend on the install), for step sizes small and
    large enough that a sine's last bit moves the end point."""
    compiled = _compiled("_rff")
    phase, steps, x = _descent_problem(seed, d, chunks, n_blocks, scale)
    ours, theirs = x.copy(), x.copy()
    _rff_numpy.descend_rows(phase, steps, ours, n_iter, decay_from)
    compiled.descend_rows(phase, steps, theirs, n_iter, decay_from)
    assert np.array_equal(_bits(ours), _bits(theirs))


def test_a_descent_row_beyond_the_polynomials_range_matches_to_an_ulp():
    """A row whose phases leave [-1e5, 1e5] takes the platform's sine (libm's in the
    kernel, numpy's here): the two agree to float32 rounding, the other rows bit for
    bit."""
    compiled = _compiled("_rff")
    phase, steps, x = _descent_problem(5, 3, 2, 2, 1e-3)
    x[1] *= np.float32(1e6)
    ours, theirs = x.copy(), x.copy()
    _rff_numpy.descend_rows(phase, steps, ours, 3, 2)
    compiled.descend_rows(phase, steps, theirs, 3, 2)
    others = np.arange(x.shape[0]) != 1
    assert np.array_equal(_bits(ours[others]), _bits(theirs[others]))
    assert np.allclose(ours[1], theirs[1], rtol=1e-6, atol=0.0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 30), h=st.integers(1, 70),
       scale=st.sampled_from([1.0, 100.0, 1e4]))
def test_the_feature_map_is_the_compiled_ones_bit_for_bit(seed, n, h, scale):
    """The numpy feature map equals the compiled kernel's in every bit, for any number
    of frequencies (a partial last vector included) and projections far beyond
    [-pi, pi]."""
    compiled = _compiled("_rff")
    P = scale * np.random.default_rng(seed).normal(size=(n, h))
    ours, theirs = np.empty((n, 2 * h)), np.empty((n, 2 * h))
    _rff_numpy.features(P, ours)
    compiled.features(P, theirs)
    assert np.array_equal(_bits(ours), _bits(theirs))


def test_feature_rows_beyond_two_to_the_fifty_or_not_finite_match_to_rounding():
    """Rows the kernel hands to libm's double cosine and sine (a projection beyond 2^50,
    an infinity, a NaN) agree with numpy's to float64 rounding (NaN where NaN)."""
    compiled = _compiled("_rff")
    P = np.random.default_rng(2).normal(size=(4, 5))
    P[1, 2] = 3e15
    P[2, 0] = np.inf
    P[3, 4] = np.nan
    ours, theirs = np.empty((4, 10)), np.empty((4, 10))
    with np.errstate(all="ignore"):
        _rff_numpy.features(P, ours)
    compiled.features(P, theirs)
    assert np.array_equal(_bits(ours[0]), _bits(theirs[0]))
    assert np.allclose(ours, theirs, rtol=1e-15, atol=1e-15, equal_nan=True)
    assert np.isnan(ours[2:]).all()
    assert np.isnan(theirs[2:]).all()


def _gram_problem(seed, m, f):
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(m, f))
    E = np.vstack([Q.T, np.ones(m)])
    return np.ascontiguousarray(E.T @ E), f + 2


def _solve(module, H, ld, excluded, max_iter):
    m = H.shape[0]
    u, order, R = np.zeros(m), np.zeros(m, dtype=np.intc), np.zeros((ld, ld))
    k, iterations, converged = module.nnls_gram(H, u, order, R, excluded, 0, 0, max_iter,
                                                1e-13, 1e-12)
    return u, set(order[:k].tolist()), iterations, converged


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 40), f=st.integers(1, 20),
       n_excluded=st.integers(0, 5))
def test_the_solver_is_the_compiled_ones_to_rounding(seed, m, f, n_excluded):
    """The numpy Lawson-Hanson solver takes the compiled one's steps: the same passive
    set, iteration count and verdict, and the solution to 1e-9 relative (dot products
    are summed in another order than BLAS's; the Gram matrices here have condition
    numbers well below 1e4, so rounding moves the solution by far less)."""
    compiled = _compiled("_hull")
    H, ld = _gram_problem(seed, m, f)
    excluded = np.zeros(m, dtype=np.uint8)
    excluded[np.random.default_rng(seed).permutation(m)[:min(n_excluded, m - 1)]] = 1
    ours = _solve(_hull_numpy, H, ld, excluded, 10 * m + 100)
    theirs = _solve(compiled, H, ld, excluded, 10 * m + 100)
    assert ours[1:] == theirs[1:]
    assert np.allclose(ours[0], theirs[0], rtol=1e-9, atol=1e-12)


def test_gather_gram_is_the_compiled_ones_and_checks_indices():
    """The kept rows' Gram matrix is copied exactly; an index outside the matrix is
    refused with the same message on both paths."""
    compiled = _compiled("_hull")
    G = np.random.default_rng(0).normal(size=(9, 9))
    keep = np.array([4, 0, 8, 3], dtype=np.intp)
    ours, theirs = np.zeros((6, 6)), np.zeros((6, 6))
    _hull_numpy.gather_gram(G, keep, ours)
    compiled.gather_gram(G, keep, theirs)
    assert np.array_equal(ours, theirs)
    assert np.array_equal(ours[:4, :4], G[np.ix_(keep, keep)])
    bad = np.array([1, 9], dtype=np.intp)
    for module in (_hull_numpy, compiled):
        with pytest.raises(ValueError, match=r"keep\[1\] = 9 is outside \[0, 9\)"):
            module.gather_gram(G, bad, ours)
