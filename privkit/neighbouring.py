"""Neighbouring relations, norms and declared sensitivities.

A differential-privacy guarantee is a statement about pairs of *neighbouring* datasets,
so the relation is part of every mechanism, plan and accountant in privkit and is never
guessed:

* ``ADD_REMOVE``: D' is D with one record added or removed (unbounded DP).
* ``REPLACE_ONE``: D' is D with one record replaced by another (bounded DP).

A :class:`Sensitivity` is a *declared* bound on how much a function's output can move
between neighbours, in a stated norm and under a stated relation. Declared values are
public parameters chosen by the user (clipping norms, value ranges): privkit never derives
them from the private data. The audits module checks declarations empirically.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from privkit import _validation as check

__all__ = ["AddRemove", "Neighbouring", "Norm", "ReplaceOne", "Sensitivity"]


class Neighbouring(enum.Enum):
    """Which pairs of datasets are neighbours."""

    ADD_REMOVE = "add_remove"
    REPLACE_ONE = "replace_one"

    def __repr__(self) -> str:
        return f"Neighbouring.{self.name}"

    @classmethod
    def parse(cls, value: Any, *, owner: str = "Neighbouring") -> Neighbouring:
        """Accept a member or its string value (``"add_remove"``, ``"replace_one"``)."""
        if isinstance(value, Neighbouring):
            return value
        if isinstance(value, str):
            for member in cls:
                if value.lower() in (member.value, member.name.lower()):
                    return member
        raise check.fail(
            "relation", value, "Neighbouring.ADD_REMOVE or Neighbouring.REPLACE_ONE "
            "(or the strings 'add_remove', 'replace_one')", owner,
        )


#: Unbounded DP: neighbours differ by adding or removing one record.
AddRemove = Neighbouring.ADD_REMOVE
#: Bounded DP: neighbours differ by replacing one record.
ReplaceOne = Neighbouring.REPLACE_ONE


class Norm(enum.Enum):
    """The norm in which a sensitivity is measured."""

    L1 = "l1"
    L2 = "l2"
    LINF = "linf"

    def __repr__(self) -> str:
        return f"Norm.{self.name}"

    @classmethod
    def parse(cls, value: Any, *, owner: str = "Norm") -> Norm:
        """Accept a member or its string value (``"l1"``, ``"l2"``, ``"linf"``)."""
        if isinstance(value, Norm):
            return value
        if isinstance(value, str):
            for member in cls:
                if value.lower() in (member.value, member.name.lower()):
                    return member
        raise check.fail("norm", value, "Norm.L1, Norm.L2 or Norm.LINF", owner)


def _relation(value: Any) -> Neighbouring:
    return Neighbouring.parse(value, owner="Sensitivity")


def _norm(value: Any) -> Norm:
    return Norm.parse(value, owner="Sensitivity")


@attrs.frozen(kw_only=True)
class Sensitivity:
    """A declared bound on how far a function moves between neighbouring datasets.

    ``Sensitivity(value=v, norm=Norm.L2, relation=Neighbouring.REPLACE_ONE)`` declares
    ``||f(D) - f(D')||_2 <= v`` for every pair of datasets that differ by one replaced
    record.

    Parameters
    ----------
    value : float
        The bound, a finite number > 0.
    norm : Norm or str
        The norm it is measured in (``"l1"``, ``"l2"``, ``"linf"`` are accepted).
    relation : Neighbouring or str
        The neighbouring relation it holds for (``"add_remove"``, ``"replace_one"``).

    Examples
    --------
    >>> from privkit import Sensitivity, Norm, Neighbouring
    >>> s = Sensitivity(value=1.0, norm=Norm.L1, relation=Neighbouring.ADD_REMOVE)
    >>> s.as_replace_one().value
    2.0
    >>> Sensitivity(value=1.0, norm=Norm.LINF, relation=Neighbouring.ADD_REMOVE).in_norm(
    ...     Norm.L2, dimension=4).value
    2.0

    .. versionadded:: 0.1.0
    """

    value: float = attrs.field(validator=check.attrs_validator(check.positive_finite))
    norm: Norm = attrs.field(converter=_norm)
    relation: Neighbouring = attrs.field(converter=_relation)

    def in_norm(self, norm: Norm, *, dimension: int | None = None) -> Sensitivity:
        """The same bound expressed in another norm, using the norm inequalities.

        ``||v||_inf <= ||v||_2 <= ||v||_1`` needs no dimension; going the other way,
        ``||v||_1 <= sqrt(d) ||v||_2 <= d ||v||_inf`` needs the output ``dimension`` d.
        """
        norm = Norm.parse(norm, owner="Sensitivity.in_norm")
        order = {Norm.LINF: 0, Norm.L2: 1, Norm.L1: 2}
        if order[norm] <= order[self.norm]:
            return attrs.evolve(self, norm=norm)
        if dimension is None:
            raise check.fail(
                "dimension", dimension, "an integer >= 1", "Sensitivity.in_norm",
                f"converting an {self.norm.name} bound to {norm.name} grows with the "
                "dimension of the output",
            )
        d = check.positive_int("dimension", dimension, "Sensitivity.in_norm")
        exponent = {(Norm.LINF, Norm.L2): 0.5, (Norm.L2, Norm.L1): 0.5, (Norm.LINF, Norm.L1): 1.0}
        return attrs.evolve(self, value=self.value * d ** exponent[(self.norm, norm)], norm=norm)

    def as_replace_one(self) -> Sensitivity:
        """The bound under REPLACE_ONE implied by this ADD_REMOVE bound.

        Replacing a record is removing it and adding another, so by the triangle
        inequality the replace-one sensitivity is at most twice the add/remove one. The
        converse does not hold in general, so there is no ``as_add_remove``.
        """
        if self.relation is Neighbouring.REPLACE_ONE:
            return self
        return attrs.evolve(self, value=2.0 * self.value, relation=Neighbouring.REPLACE_ONE)

    def require(self, *, norm: Norm, owner: str) -> None:
        """Raise unless this sensitivity is measured in ``norm``."""
        if self.norm is not norm:
            raise check.fail("sensitivity", self, f"a sensitivity in the {norm.value} norm",
                             owner, f"convert it with .in_norm(Norm.{norm.name}, "
                             "dimension=...) if the bound allows")

    def __str__(self) -> str:
        return f"{self.value:g} ({self.norm.name}, {self.relation.value})"

    @classmethod
    def coerce(
        cls, value: float | Sensitivity, *, norm: Norm, relation: Neighbouring | str | None,
        owner: str,
    ) -> Sensitivity:
        """A Sensitivity from an existing one (checked against ``norm`` and ``relation``)
        or from a bare number plus ``relation``. Used by named constructors."""
        if isinstance(value, Sensitivity):
            if relation is not None and Neighbouring.parse(relation, owner=owner
                                                           ) is not value.relation:
                raise check.fail("relation", relation, f"{value.relation!r} (the "
                                 "sensitivity's own relation) or omitted", owner)
            value.require(norm=norm, owner=owner)
            return value
        if relation is None:
            raise check.fail(
                "relation", relation, "Neighbouring.ADD_REMOVE or Neighbouring.REPLACE_ONE",
                owner, "a bare number needs the neighbouring relation it holds for",
            )
        rel = Neighbouring.parse(relation, owner=owner)
        bound = check.positive_finite("sensitivity", value, owner)
        return cls(value=bound, norm=norm, relation=rel)
