"""Neighbouring pairs of datasets (or of query answers) to attack.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from privkit import _validation as check
from privkit.neighbouring import Neighbouring

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "NeighbouringPair",
    "canary_pairs",
    "extreme_pairs",
    "random_pairs",
]


def _relation(value: Any) -> Neighbouring:
    """A relation, or its string ("add_remove", "replace_one")."""
    return Neighbouring.parse(value, owner="NeighbouringPair")


@attrs.frozen(kw_only=True)
class NeighbouringPair:
    """Two inputs that differ in one record under ``relation``.

    ``first`` and ``second`` are whatever the system under test takes: datasets for an
    algorithm, or the exact query answers on the two datasets for a mechanism.
    privkit does not check that they are neighbours; the sensitivity checks of
    :mod:`privkit.audits.sensitivity` test such declarations.
    """

    first: Any = attrs.field(eq=False)
    second: Any = attrs.field(eq=False)
    relation: Neighbouring = attrs.field(converter=_relation)
    description: str = ""


def validated_box(record_low: Any, record_high: Any, owner: str
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(low, high)`` as float arrays of one shape with ``low <= high``, all finite;
    otherwise an error naming the bound at fault, for ``owner``."""
    import numpy as np

    try:
        low = np.asarray(record_low, dtype=float)
        high = np.asarray(record_high, dtype=float)
    except (TypeError, ValueError) as exc:
        raise check.fail("record_low", record_low, "real numbers (a record's lower bounds)",
                         owner) from exc
    if not np.all(np.isfinite(low)):
        raise check.fail("record_low", record_low, "finite (no NaN or infinity)", owner)
    if not np.all(np.isfinite(high)):
        raise check.fail("record_high", record_high, "finite (no NaN or infinity)", owner)
    if low.shape != high.shape or np.any(low > high):
        raise check.fail("record_high", record_high, "the same shape as record_low and >= it",
                         owner)
    return low, high


def random_pairs(record_low: Any, record_high: Any, *, n_records: int,
                 relation: Neighbouring, count: int, rng: Any = None
                 ) -> list[NeighbouringPair]:
    """``count`` random datasets of ``n_records`` records in the box, each with a random
    neighbour (a record added or removed, or replaced, per ``relation``)."""
    return _pairs(record_low, record_high, n_records, relation, count, rng, corners=False)


def extreme_pairs(record_low: Any, record_high: Any, *, n_records: int,
                  relation: Neighbouring, count: int, rng: Any = None
                  ) -> list[NeighbouringPair]:
    """Like :func:`random_pairs` with every value at the box's bounds, where clipped sums,
    means and counts move the most."""
    return _pairs(record_low, record_high, n_records, relation, count, rng, corners=True)


def canary_pairs(dataset: Any, canary: Any, relation: Neighbouring) -> NeighbouringPair:
    """``dataset`` against ``dataset`` with the ``canary`` record inserted (ADD_REMOVE) or
    in place of its first record (REPLACE_ONE): the membership-inference pair."""
    import numpy as np

    owner = "canary_pairs"
    data = np.asarray(dataset, dtype=float)
    record = np.asarray(canary, dtype=float)[None]
    rel = Neighbouring.parse(relation, owner=owner)
    if data.ndim < 1 or record.shape[1:] != data.shape[1:]:
        raise check.fail("canary", canary, f"one record of the dataset's shape "
                         f"{data.shape[1:]} (the dataset has shape {data.shape})", owner)
    if rel is Neighbouring.REPLACE_ONE and len(data) == 0:
        raise check.fail("dataset", dataset, "a non-empty dataset under REPLACE_ONE", owner)
    other = (np.concatenate([data, record]) if rel is Neighbouring.ADD_REMOVE
             else np.concatenate([record, data[1:]]))
    return NeighbouringPair(first=data, second=other, relation=rel, description="canary")


def _pairs(record_low: Any, record_high: Any, n: int, relation: Neighbouring, count: int,
           rng: Any, corners: bool) -> list[NeighbouringPair]:
    import numpy as np

    from privkit.rng import as_generator

    owner = "extreme_pairs" if corners else "random_pairs"
    low, high = validated_box(record_low, record_high, owner)
    n = check.positive_int("n_records", n, owner)
    k = check.positive_int("count", count, owner)
    rel = Neighbouring.parse(relation, owner=owner)
    gen = as_generator(rng, owner=owner)

    def records(size: tuple[int, ...]) -> Any:
        u = gen.random(size + low.shape)
        return np.where(u < 0.5, low, high) if corners else low + u * (high - low)

    out = []
    for i in range(k):
        data = records((n,))
        record = records(())
        if rel is Neighbouring.REPLACE_ONE:
            other = data.copy()
            other[int(gen.integers(n))] = record
        elif i % 2:
            other = np.concatenate([data, record[None]])
        else:
            other = np.delete(data, int(gen.integers(n)), axis=0)
        kind = "extreme" if corners else "random"
        out.append(NeighbouringPair(first=data, second=other, relation=rel, description=kind))
    return out
