"""Argument checking shared by every privkit constructor and function.

Each checker takes the parameter's ``name`` and the ``owner`` (the class or function the
value is for) so that messages read like
"`delta` must be in [0, 1) for ApproxDP (got 1.5)".  The checkers reject ``bool`` (which
Python counts as an ``int``), strings, NaN and infinities unless the rule says otherwise,
and return the value as a Python ``float`` / ``int``.

Private values (the data, query answers, anything computed from them) are checked by
:func:`private_array` and refused with :func:`private_fail`, whose messages name the
parameter, what is allowed and the owner, and never the value, its shape or any part of
it (issue 22, rule R5): a message is part of what a caller receives.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from privkit.errors import InvalidParameterError

_T = TypeVar("_T")


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


#: The end of every message about a private value, in place of "(got ...)".
NOT_SHOWN = "(the value is not shown: it is private)"


def private_fail(name: str, allowed: str, owner: str, hint: str = "") -> InvalidParameterError:
    """The standard error for a private value: the parameter, what is allowed and the
    owner, never the value (nor its shape, entries or count).

    ``allowed`` and ``hint`` must be built from public parameters only. Raise it outside
    any ``except`` block that caught an error about the value (or ``from None`` and
    without ``__context__``), so that no chained exception carries the value either.
    """
    message = f"`{name}` must be {allowed} for {owner} {NOT_SHOWN}"
    if hint:
        message += f"; {hint}"
    return InvalidParameterError(message)


def private_array(name: str, value: Any, owner: str, *, kinds: str = "iuf",
                  allowed: str = "a real number or an array of real numbers") -> Any:
    """A private value as a numpy array (not copied when it already is one), whose dtype
    kind is one of ``kinds`` (numpy's codes: ``i`` signed, ``u`` unsigned, ``f`` float,
    ``b`` bool).

    Refuses, with :func:`private_fail`, what cannot be such an array (ragged nesting,
    strings, objects, complex numbers, bools unless ``b`` is in ``kinds``). The dtype is
    public (it is the query's declared form); entries are never looked at here, so
    nothing about them can be refused or shown. numpy's own error, which can quote the
    value, is dropped: the error raised has no ``__cause__`` and no ``__context__``.
    """
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, OverflowError):  # ragged, or a failing __array__
        array = None
    if array is None or array.dtype.kind not in kinds:
        raise private_fail(name, f"{allowed}, of {_kinds(kinds)} dtype", owner)
    return array


#: Parts of scikit-learn's messages that state public facts only (the dtype kind, the
#: container, the number of dimensions or of features: the schema); :func:`withheld`
#: keeps them.
_PUBLIC_PARTS = re.compile(
    r"Complex data not supported|Expected 2D array, got (1D|scalar) array instead"
    r"|Found array with dim \d+|X has \d+ features?, but \w+ is expecting \d+ features? "
    r"as input|Sparse data was passed( for \w+)?, but dense data is required"
    r"|Reshape your data either using array\.reshape\(-1, 1\) if your data has a single "
    r"feature or array\.reshape\(1, -1\) if it contains a single sample")


def withheld(call: Callable[[], _T], name: str, allowed: str, owner: str,
             hint: str = "") -> _T:
    """``call()``, a third-party reader of private data (numpy's conversion,
    scikit-learn's ``validate_data``, ``np.loadtxt``), with its refusal replaced.

    Their messages quote the data: numpy echoes a string it cannot convert ("could not
    convert string to float: '...'"), scikit-learn prints a 1-D array whole and the row
    counts of inputs whose lengths disagree, ``np.loadtxt`` the offending cell and its
    row. A ``TypeError``, ``ValueError`` or ``OverflowError`` from ``call`` is therefore
    replaced by :func:`private_fail` (``name``, ``allowed``, ``owner``, ``hint``: public
    text only), raised after the ``except`` block so that it has no ``__cause__`` and no
    ``__context__``; the parts of their message that state a public fact (a complex
    dtype, the number of dimensions or of features, ``_PUBLIC_PARTS``) are kept as hints.
    privkit's own :class:`InvalidParameterError` passes through.
    """
    public: list[str] = []
    try:
        return call()
    except InvalidParameterError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        public = [part.group(0) for part in _PUBLIC_PARTS.finditer(str(exc))]
    raise private_fail(name, allowed, owner, "; ".join(filter(None, (hint, *public))))


def private_nan(name: str, owner: str) -> InvalidParameterError:
    """The refusal of a private value that holds NaN (:func:`private_fail`'s form).

    A query with a declared sensitivity never answers NaN (``|NaN - x| <= Δ`` holds for no
    ``x``), so for a query that meets its declaration this refusal happens on no dataset:
    it does not depend on the data. Non-finite *records* are the estimator's to map to a
    neutral record before the query is computed (issue 22, rule R3).
    """
    return private_fail(name, "free of NaN", owner,
                        "a NaN answer cannot have the declared sensitivity; map records with "
                        "non-finite entries to a neutral record before computing the query")


def _kinds(kinds: str) -> str:
    names = {"i": "signed integer", "u": "unsigned integer", "f": "float", "b": "bool"}
    return " or ".join(names[k] for k in kinds)


def real(name: str, value: Any, owner: str) -> float:
    """A real number that is not a bool, a string, a complex or NaN (infinities allowed)."""
    if type(value) is not float and (  # floats skip the slow abstract-class checks
            isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real)):
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
