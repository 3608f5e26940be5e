"""Argument checking shared by every privkit constructor and function.

Each checker takes the parameter's ``name`` and the ``owner`` (the class or function the
value is for) so that messages read like
"`delta` must be in [0, 1) for ApproxDP (got 1.5)".  The checkers reject ``bool`` (which
Python counts as an ``int``), strings, NaN and infinities unless the rule says otherwise,
and return the value as a Python ``float`` / ``int``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from privkit.errors import InvalidParameterError


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    return f"{value!r}"


def fail(name: str, value: Any, allowed: str, owner: str, hint: str = "") -> InvalidParameterError:
    """Build the standard error: the parameter, what is allowed, the owner, the value."""
    message = f"`{name}` must be {allowed} for {owner} (got {_describe(value)})"
    if hint:
        message += f"; {hint}"
    return InvalidParameterError(message)


def real(name: str, value: Any, owner: str) -> float:
    """A real number that is not a bool, a string, a complex or NaN (infinities allowed)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise fail(name, value, "a real number", owner)
    result = float(value)
    if math.isnan(result):
        raise fail(name, value, "a real number, not NaN", owner)
    return result


def positive_finite(name: str, value: Any, owner: str) -> float:
    """A real number in (0, inf)."""
    result = real(name, value, owner)
    if not (0.0 < result < math.inf):
        raise fail(name, value, "a finite number > 0", owner)
    return result


def nonnegative_finite(name: str, value: Any, owner: str) -> float:
    """A real number in [0, inf)."""
    result = real(name, value, owner)
    if not (0.0 <= result < math.inf):
        raise fail(name, value, "a finite number >= 0", owner)
    return result


def nonnegative(name: str, value: Any, owner: str) -> float:
    """A real number in [0, inf]."""
    result = real(name, value, owner)
    if result < 0.0:
        raise fail(name, value, "a number >= 0", owner)
    return result


def delta(name: str, value: Any, owner: str) -> float:
    """A probability in [0, 1): the delta of an (epsilon, delta) guarantee."""
    result = real(name, value, owner)
    if not (0.0 <= result < 1.0):
        raise fail(name, value, "in [0, 1)", owner)
    return result


def open_unit(name: str, value: Any, owner: str) -> float:
    """A probability in (0, 1)."""
    result = real(name, value, owner)
    if not (0.0 < result < 1.0):
        raise fail(name, value, "in (0, 1)", owner)
    return result


def rate(name: str, value: Any, owner: str) -> float:
    """A sampling rate in (0, 1]."""
    result = real(name, value, owner)
    if not (0.0 < result <= 1.0):
        raise fail(name, value, "in (0, 1]", owner)
    return result


def positive_int(name: str, value: Any, owner: str) -> int:
    """An integer >= 1 (bools and floats refused)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise fail(name, value, "an integer >= 1", owner)
    if int(value) < 1:
        raise fail(name, value, "an integer >= 1", owner)
    return int(value)


def instance(name: str, value: Any, kinds: type | tuple[type, ...], owner: str) -> Any:
    """``value`` is an instance of ``kinds``."""
    if not isinstance(value, kinds):
        names = (
            kinds.__name__
            if isinstance(kinds, type)
            else " or ".join(k.__name__ for k in kinds)
        )
        raise fail(name, value, f"a {names}", owner)
    return value


def attrs_validator(check: Callable[[str, Any, str], Any]) -> Callable[[Any, Any, Any], None]:
    """Turn one of the checkers above into an attrs validator for a class field."""

    def validate(instance_: Any, attribute: Any, value: Any) -> None:
        check(field_name(attribute), value, type(instance_).__name__)

    validate.__name__ = check.__name__
    return validate


def field_name(attribute: Any) -> str:
    """The name a user writes for an attrs field (its alias: ``epsilon``, not ``_epsilon``)."""
    return str(getattr(attribute, "alias", None) or attribute.name)
