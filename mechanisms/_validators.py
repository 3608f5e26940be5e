"""attrs validators shared by the mechanism classes."""

from __future__ import annotations

from typing import Any

from privkit import _validation as check
from privkit.neighbouring import Norm, Sensitivity


def sensitivity_in(norm: Norm) -> Any:
    """An attrs validator: the field is a Sensitivity measured in ``norm``."""

    def validate(instance: Any, attribute: Any, value: Any) -> None:
        check.instance(check.field_name(attribute), value, Sensitivity, type(instance).__name__)
        value.require(norm=norm, owner=type(instance).__name__)

    return validate


positive_finite = check.attrs_validator(check.positive_finite)
