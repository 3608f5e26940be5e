"""Hypothesis strategies and assertion helpers for testing privacy in any test suite.

Examples
--------
A user testing their own mechanism with pytest::

    import numpy as np
    from hypothesis import given
    from privkit import Neighbouring
    from privkit.audits.strategies import assert_dp, neighbouring_pairs
    from privkit.mechanisms import Laplace

    LAPLACE = Laplace.for_epsilon(1.0, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)

    def noisy_sum(data, rng, size):            # claims 1-DP for records in [0, 1]
        total = float(np.clip(data, 0.0, 1.0).sum())
        return LAPLACE.release(total, rng=rng, size=size)  # not data.sum() + rng.laplace:
        # plain floating-point noise leaks the sum through its low-order bits (Mironov 2012)

    @given(neighbouring_pairs(Neighbouring.ADD_REMOVE, record_low=0.0, record_high=1.0))
    def test_noisy_sum_is_private(pair):
        assert_dp(noisy_sum, pair, epsilon=1.0, trials=20_000)

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

from privkit.audits.attacks import audit
from privkit.audits.pairs import NeighbouringPair
from privkit.audits.result import AuditResult
from privkit.audits.sensitivity import SensitivityResult, check_sensitivity
from privkit.guarantees import GDP, ZCDP, ApproxDP, Guarantee, PureDP
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

__all__ = [
    "assert_dp",
    "assert_sensitivity",
    "datasets",
    "guarantees",
    "neighbouring_pairs",
    "sensitivities",
]


def datasets(*, record_low: Any, record_high: Any, min_size: int = 1,
             max_size: int = 20) -> st.SearchStrategy[Any]:
    """Arrays of ``min_size..max_size`` records, each in the box [record_low, record_high]."""
    low = np.asarray(record_low, dtype=float)
    high = np.asarray(record_high, dtype=float)
    unit = st.floats(min_value=0.0, max_value=1.0)
    size = int(low.size)
    record = st.lists(unit, min_size=size, max_size=size).map(
        lambda u: low + np.asarray(u).reshape(low.shape) * (high - low))
    return st.lists(record, min_size=min_size, max_size=max_size).map(np.array)


@st.composite
def neighbouring_pairs(draw: Any, relation: Neighbouring, *, record_low: Any,
                       record_high: Any, min_size: int = 1, max_size: int = 20
                       ) -> NeighbouringPair:
    """A dataset and a neighbour under ``relation``: a record added or removed, or one
    record replaced, each record in the box."""
    data = draw(datasets(record_low=record_low, record_high=record_high, min_size=min_size,
                         max_size=max_size))
    extra = draw(datasets(record_low=record_low, record_high=record_high, min_size=1,
                          max_size=1))
    index = draw(st.integers(0, len(data) - 1))
    if relation is Neighbouring.REPLACE_ONE:
        other = data.copy()
        other[index] = extra[0]
    elif draw(st.booleans()):
        other = np.concatenate([data, extra])
    else:
        other = np.delete(data, index, axis=0)
        if len(other) == 0:
            other = np.concatenate([data, extra])
    return NeighbouringPair(first=data, second=other, relation=relation)


def sensitivities(norm: Norm | None = None,
                  relation: Neighbouring | None = None) -> st.SearchStrategy[Sensitivity]:
    """Valid Sensitivity values (bounded explicitly: st.builds cannot see the bounds)."""
    return st.builds(
        Sensitivity,
        value=st.floats(min_value=1e-3, max_value=1e3),
        norm=st.just(norm) if norm else st.sampled_from(list(Norm)),
        relation=st.just(relation) if relation else st.sampled_from(list(Neighbouring)),
    )


def guarantees() -> st.SearchStrategy[Guarantee]:
    """Valid guarantees of every simple kind."""
    eps = st.floats(min_value=1e-3, max_value=20.0)
    return st.one_of(
        st.builds(PureDP, epsilon=eps),
        st.builds(ApproxDP, epsilon=eps, delta=st.floats(min_value=0.0, max_value=0.5)),
        st.builds(ZCDP, rho=st.floats(min_value=1e-4, max_value=10.0)),
        st.builds(GDP, mu=st.floats(min_value=1e-2, max_value=10.0)),
    )


def _of_kind(kind: type) -> Callable[[Guarantee], bool]:
    def keep(guarantee: Guarantee) -> bool:
        return isinstance(guarantee, kind)

    return keep


for _kind in (PureDP, ApproxDP, ZCDP, GDP):
    st.register_type_strategy(_kind, guarantees().filter(_of_kind(_kind)))
st.register_type_strategy(Sensitivity, sensitivities())


def assert_dp(system: Callable[..., Any], pair: NeighbouringPair, *, epsilon: float,
              delta: float = 0.0, trials: int = 100_000, confidence: float = 0.95,
              rng: Any = 0, **kwargs: Any) -> AuditResult:
    """Fail (AssertionError) if the audit shows ``system`` is not (epsilon, delta)-DP on
    ``pair``; return the result otherwise. Seeded by default, so deterministic."""
    result = audit(system, pair, epsilon=epsilon, delta=delta, trials=trials,
                   confidence=confidence, rng=rng, **kwargs)
    if result.verdict == "violation":
        raise AssertionError(f"privacy claim violated: {result} (rule {result.rule})")
    return result


def assert_sensitivity(function: Callable[..., Any], declared: Sensitivity,
                       **kwargs: Any) -> SensitivityResult:
    """Fail (AssertionError) if some neighbouring pair moves ``function`` further than
    ``declared``; see :func:`~privkit.audits.check_sensitivity` for the search."""
    result = check_sensitivity(function, declared, **kwargs)
    if result.violation:
        raise AssertionError(f"sensitivity exceeded: {result}")
    return result
