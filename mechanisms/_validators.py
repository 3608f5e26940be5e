"""attrs validators shared by the mechanism classes."""

from __future__ import annotations

from typing import Any

from privkit import _validation as check

positive_finite = check.attrs_validator(check.positive_finite)


def boolean(instance: Any, attribute: Any, value: Any) -> None:
    """An attrs validator: the field is a bool (not 0/1, not a string)."""
    check.instance(check.field_name(attribute), value, bool, type(instance).__name__)
