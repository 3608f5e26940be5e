"""Neighbouring pairs of datasets (or of query answers) to attack.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from typing import Any

import attrs

from privkit import _validation as check
from privkit.neighbouring import Neighbouring

__all__ = ["NeighbouringPair"]


def _check_relation(instance: Any, attribute: Any, value: Any) -> None:
    check.instance(check.field_name(attribute), value, Neighbouring, type(instance).__name__)


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
    relation: Neighbouring = attrs.field(validator=_check_relation)
    description: str = ""
