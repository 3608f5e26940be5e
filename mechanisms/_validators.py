"""Validators shared by the mechanism classes: attrs field validators, and the mapping of
private integer answers into a public range."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

positive_finite = check.attrs_validator(check.positive_finite)

#: The largest magnitude of an integer answer (counts, discrete mechanisms): answers are
#: clamped onto it, so an answer plus noise below 2^62 in magnitude stays in int64.
INTEGER_BOUND = 2**62


def boolean(instance: Any, attribute: Any, value: Any) -> None:
    """An attrs validator: the field is a bool (not 0/1, not a string)."""
    check.instance(check.field_name(attribute), value, bool, type(instance).__name__)


def integer_answers(value: Any, owner: str, *, low: int, high: int, allowed: str,
                    kinds: str = "iuf") -> NDArray[np.int64]:
    """A private integer-valued answer as a new int64 array, clamped onto the public range
    ``[low, high]`` (``|low|, |high| <= 2^62``), by ``privkit.mechanism``'s rule.

    A dtype outside ``kinds``, NaN and a finite non-integer are refused without showing
    the value (an integer-valued query answers integers on every dataset); entries
    beyond the range, infinities included, are clamped onto it (no privacy cost: a
    coordinatewise clamp moves no two answers further apart).
    """
    x = check.private_array("value", value, owner, kinds=kinds, allowed=allowed)
    if x.dtype.kind == "f":
        if x.size and math.isnan(x.min()):
            raise check.private_nan("value", owner)
        if not np.array_equal(np.rint(x), x):  # infinities pass: rint(inf) == inf
            raise check.private_fail("value", f"integer-valued ({allowed})", owner,
                                     "round the query to integers first, or use a "
                                     "continuous mechanism")
        out: NDArray[np.int64] = np.clip(x, low, high).astype(np.int64)
        return out
    if x.dtype.kind == "u":  # compare as unsigned: a uint64 above 2^63 must not wrap
        x = np.minimum(x.astype(np.uint64), np.uint64(max(high, 0)))
    clamped: NDArray[np.int64] = np.clip(x.astype(np.int64), low, high)
    return clamped


def add_integer_noise(value: NDArray[np.int64], noise: NDArray[Any], owner: str
                      ) -> NDArray[np.int64]:
    """``value + noise`` in int64, for ``|value| <= 2^62``; refuses a noise draw of
    magnitude ``2^62`` or more (an event that does not depend on the data, below
    ``exp(-2^62 / scale)``) instead of wrapping around."""
    if noise.size and not (noise.min() > -INTEGER_BOUND and noise.max() < INTEGER_BOUND):
        raise FloatingPointError(
            f"{owner}: a noise draw reached 2^62 in magnitude (an event that does not depend "
            "on the data); nothing was released, and a new call is safe")
    out: NDArray[np.int64] = value + noise.astype(np.int64)
    return out
