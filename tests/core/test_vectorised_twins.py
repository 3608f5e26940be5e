"""Vectorised paths against their scalar twins, on random inputs (hypothesis; issue 25).

- The profile families of :mod:`privkit._profiles` (a column of parameters against a row
  of losses, as the PLD accountant discretises many blocks at once) against the scalar
  conversions of :mod:`privkit.conversions`, element by element.
- :meth:`PrivacyLossDistribution.profile` (suffix sums, vectorised) against the curve
  summed directly from its definition, ``delta(e) = sum_l p_l (1 - e^(e - l))_+ + p_inf``.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privkit import conversions
from privkit._profiles import BOUNDED_RANGE, GAUSSIAN, LAPLACE, RANDOMIZED_RESPONSE
from privkit.pld import PrivacyLossDistribution

positive = st.floats(min_value=1e-3, max_value=20.0, allow_nan=False)
losses = st.lists(st.floats(min_value=0.0, max_value=30.0, allow_nan=False), min_size=1,
                  max_size=8)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-13)


@settings(max_examples=60, deadline=None)
@given(params=st.lists(positive, min_size=1, max_size=5), ts=losses)
def test_laplace_family_is_its_scalar_conversion(params, ts):
    grid = LAPLACE((np.array(params)[:, None],), np.array(ts)[None, :])
    for i, e in enumerate(params):
        for j, t in enumerate(ts):
            assert _close(float(grid[i, j]), conversions.laplace_delta(epsilon=e, target_epsilon=t))


@settings(max_examples=60, deadline=None)
@given(params=st.lists(positive, min_size=1, max_size=5), ts=losses)
def test_bounded_range_family_is_its_scalar_conversion(params, ts):
    grid = BOUNDED_RANGE((np.array(params)[:, None],), np.array(ts)[None, :])
    for i, eta in enumerate(params):
        for j, t in enumerate(ts):
            assert _close(float(grid[i, j]), conversions.bounded_range_delta(eta, t))


@settings(max_examples=60, deadline=None)
@given(params=st.lists(st.floats(min_value=0.05, max_value=8.0), min_size=1, max_size=5),
       ts=losses)
def test_gaussian_family_is_its_scalar_conversion(params, ts):
    grid = GAUSSIAN((np.array(params)[:, None],), np.array(ts)[None, :])
    for i, mu in enumerate(params):
        for j, t in enumerate(ts):
            assert _close(float(grid[i, j]), conversions.gdp_delta(mu, epsilon=t))


@settings(max_examples=60, deadline=None)
@given(params=st.lists(st.tuples(positive, st.floats(min_value=0.0, max_value=0.5)),
                       min_size=1, max_size=5), ts=losses)
def test_randomized_response_family_is_its_scalar_conversion(params, ts):
    eps = np.array([p[0] for p in params])[:, None]
    delta = np.array([p[1] for p in params])[:, None]
    grid = RANDOMIZED_RESPONSE((eps, delta), np.array(ts)[None, :])
    for i, (e, d) in enumerate(params):
        for j, t in enumerate(ts):
            assert _close(float(grid[i, j]), conversions.approx_dp_delta(epsilon=e, delta=d,
                                                                         target_epsilon=t))


@settings(max_examples=80, deadline=None)
@given(masses=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40),
       offset=st.integers(min_value=-50, max_value=200),
       step=st.sampled_from([1e-3, 0.01, 0.1, 0.5]),
       infinity=st.floats(min_value=0.0, max_value=0.1),
       queries=st.lists(st.floats(min_value=-5.0, max_value=60.0), min_size=1, max_size=10))
def test_pld_profile_is_its_direct_sum(masses, offset, step, infinity, queries):
    pmf = np.array(masses)
    total = pmf.sum()
    if total > 0:
        pmf = pmf / total * (1.0 - infinity)
    pld = PrivacyLossDistribution(step=step, offset=offset, pmf=pmf, infinity_mass=infinity)
    ell = (offset + np.arange(pmf.size)) * step
    vector = pld.profile(np.array(queries))
    for e, got in zip(queries, vector, strict=True):
        direct = float(np.sum(pmf * np.maximum(-np.expm1(e - ell), 0.0))) + infinity
        assert math.isclose(float(got), min(max(direct, 0.0), 1.0), rel_tol=1e-9,
                            abs_tol=1e-12)
        if e >= 0:
            assert math.isclose(pld.delta_at(e), float(got), rel_tol=1e-9, abs_tol=1e-12)
