"""Check a declared sensitivity by searching for neighbouring pairs that move a function.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.audits.pairs import NeighbouringPair, validated_box
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.rng import RNGLike, as_generator

__all__ = ["SensitivityResult", "check_sensitivity"]

_ORD = {Norm.L1: 1, Norm.L2: 2, Norm.LINF: np.inf}


@attrs.frozen(kw_only=True)
class SensitivityResult:
    """The largest change found, the pair that produced it, and the verdict."""

    declared: Sensitivity
    largest: float
    worst_pair: NeighbouringPair | None = attrs.field(eq=False)
    pairs_tried: int

    @property
    def violation(self) -> bool:
        """True when some pair moved the function further than declared."""
        return self.largest > self.declared.value * (1 + 1e-9)

    def __str__(self) -> str:
        verdict = "VIOLATION" if self.violation else "consistent"
        return (f"largest change {self.largest:.6g} vs declared {self.declared.value:.6g} "
                f"({self.declared.norm.name}, {self.declared.relation.value}) over "
                f"{self.pairs_tried} pairs: {verdict}")


def _neighbour(data: Any, record: Any, index: int, relation: Neighbouring,
               add: bool) -> Any:
    if relation is Neighbouring.REPLACE_ONE:
        other = data.copy()
        other[index] = record
        return other
    if add:
        return np.concatenate([data, record[None]])
    return np.delete(data, index, axis=0)


def check_sensitivity(
    function: Callable[[Any], Any],
    declared: Sensitivity,
    *,
    record_low: Any = None,
    record_high: Any = None,
    n_records: int = 10,
    trials: int = 2000,
    search_examples: int = 300,
    rng: RNGLike = None,
    pairs: Sequence[NeighbouringPair] = (),
    record_sampler: Callable[[np.random.Generator, int], Any] | None = None,
) -> SensitivityResult:
    """Search neighbouring datasets for the largest change of ``function``.

    Datasets are ``(n, *record_shape)`` arrays with every record in the public box
    ``[record_low, record_high]``. Three searches run, each under ``declared.relation``
    (ADD_REMOVE: add or drop a record; REPLACE_ONE: replace one):

    * random datasets and records;
    * extreme values: datasets and records drawn from the box's corners, where
      sensitivities of sums, means and clipped statistics are attained;
    * a hypothesis search guided by ``hypothesis.target`` towards larger changes.

    Two more sources of pairs, for data that is not a float box (integers, categories,
    rows of mixed types): ``pairs``, known witness or candidate pairs, measured first; and
    ``record_sampler(rng, k)``, which returns ``k`` records (an array with one record per
    row, of any dtype): with it, random datasets and records come from the sampler and
    ``record_low``/``record_high`` are not needed (the box searches are then skipped).

    The change is measured in ``declared.norm``. A result can only show a violation
    (a lower bound on the true sensitivity), never prove a declaration correct. A
    function that returns NaN or an infinity on some dataset is refused (its
    sensitivity is undefined there), naming the dataset.
    """
    owner = "check_sensitivity"
    check.instance("declared", declared, Sensitivity, owner)
    if not callable(function):
        raise check.fail("function", function, "a callable f(dataset) -> number or array",
                         owner)
    for i, p in enumerate(pairs):
        check.instance(f"pairs[{i}]", p, NeighbouringPair, owner)
    if record_sampler is not None and not callable(record_sampler):
        raise check.fail("record_sampler", record_sampler, "a callable (rng, k) -> k records",
                         owner)
    box = record_low is not None or record_high is not None or record_sampler is None
    if box:
        low, high = validated_box(record_low, record_high, owner)
    n = check.positive_int("n_records", n_records, owner)
    k = check.positive_int("trials", trials, owner)
    gen = as_generator(rng, owner=owner)
    relation = declared.relation
    order = _ORD[declared.norm]
    best: tuple[float, NeighbouringPair | None] = (-1.0, None)
    tried = 0

    def value(data: Any) -> NDArray[np.float64]:
        out = np.asarray(function(data), dtype=float)
        if not np.all(np.isfinite(out)):
            raise check.fail("function", function, "a function with finite values on every "
                             "dataset", owner, f"it returned {out!r} on the dataset {data!r}")
        return out

    def measure(data: Any, other: Any) -> float:
        nonlocal best, tried
        tried += 1
        change = float(np.linalg.norm(np.ravel(value(data) - value(other)), ord=order))
        if change > best[0]:
            best = (change, NeighbouringPair(first=data, second=other, relation=relation,
                                             description="worst pair found"))
        return change

    for p in pairs:
        measure(p.first, p.second)

    if not box:
        assert record_sampler is not None
        for t in range(k):
            data = np.asarray(record_sampler(gen, n))
            record = np.asarray(record_sampler(gen, 1))[0]
            index = int(gen.integers(n))
            measure(data, _neighbour(data, record, index, relation, add=bool(t % 2)))
        change, pair = best
        return SensitivityResult(declared=declared, largest=change, worst_pair=pair,
                                 pairs_tried=tried)

    def draw(corners: bool, size: tuple[int, ...]) -> NDArray[np.float64]:
        u = gen.random(size + low.shape)
        return np.where(u < 0.5, low, high) if corners else low + u * (high - low)

    for t in range(k):
        corners = t % 2 == 1
        data = draw(corners, (n,))
        record = draw(corners, ())
        index = int(gen.integers(n))
        measure(data, _neighbour(data, record, index, relation, add=bool(t % 4 < 2)))

    if search_examples:
        _hypothesis_search(measure, low, high, n, relation, search_examples)
    change, pair = best
    return SensitivityResult(declared=declared, largest=change, worst_pair=pair,
                             pairs_tried=tried)


def _hypothesis_search(measure: Callable[[NDArray[np.float64], NDArray[np.float64]], float],
                       low: NDArray[np.float64], high: NDArray[np.float64], n: int,
                       relation: Neighbouring, examples: int) -> None:
    from hypothesis import HealthCheck, given, settings, target
    from hypothesis import strategies as st

    size = int(low.size)
    unit = st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=size, max_size=size)

    @settings(max_examples=examples, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(unit, min_size=n, max_size=n), unit, st.integers(0, n - 1), st.booleans())
    def search(rows: list[list[float]], new: list[float], index: int, add: bool) -> None:
        data = low + np.asarray(rows).reshape((n, *low.shape)) * (high - low)
        record = low + np.asarray(new).reshape(low.shape) * (high - low)
        target(measure(data, _neighbour(data, record, index, relation, add)))

    search()
