"""Kinds: the registries of named classes, and their plan-file form derived from fields.

Guarantees, plan nodes and mechanisms are frozen attrs classes that name themselves with a
class attribute ``kind`` (``"pure_dp"``, ``"repeat"``, ``"laplace"``). Defining such a
class registers it under its kind in its family (:data:`GUARANTEES`, :data:`BLOCKS`: plan
nodes, :class:`~privkit.Claimed` and mechanisms share one namespace, as they share the
plan file's). A kind that is taken is refused unless the class says ``replace=True`` (a
class keyword: ``class MyLaplace(Laplace, replace=True)``); the same class defined again
(its module reloaded, a notebook cell run twice) replaces its earlier self.

The plan-file form is derived from the fields, as dp_accounting's ``DpEvent`` is
(Google's differential privacy library): ``{kind: {field: value, ...}}``, where a field
holding a guarantee or a block is written in its own form, a :class:`Sensitivity` as
``"<norm>_sensitivity": value`` (its relation is the plan's), a relation not at all (the
plan document has one), a tuple as a list, and a field marked ``{"spec": "blocks"}`` (the
children of ``Sequential`` and ``Parallel``) as the body itself, a list. Reading inverts
it: every field without a default must be given, unknown keys are errors, and the values
go through the class's own validators. A message names keys, never the values under them
(a key that is not a field may hold anything, data pasted by mistake included).

.. versionadded:: 0.3.0
   Replaces the hand-written type ladders of :mod:`privkit.plan_spec`.
"""

from __future__ import annotations

import importlib
import numbers
from typing import Any, ClassVar

import attrs

from privkit import _validation as check
from privkit import plugins
from privkit.neighbouring import Neighbouring, Sensitivity

__all__ = ["BLOCKS", "GUARANTEES", "Kinded", "Kinds", "from_spec", "short", "single_key",
           "to_spec"]


class Kinds:
    """The classes of one family by kind.

    ``builtins`` is a module imported (and ``group`` an entry-point group loaded, see
    :mod:`privkit.plugins`) the first time a kind is missing or everything is listed.
    """

    def __init__(self, family: str, *, builtins: str | None = None,
                 group: str | None = None) -> None:
        self.family = family
        self._builtins = builtins
        self._group = group
        self._classes: dict[str, type] = {}

    def add(self, cls: type, kind: str, *, replace: bool = False) -> None:
        """Register ``cls`` under ``kind``; refuses a taken kind unless ``replace``."""
        current = self._classes.get(kind)
        same = current is not None and (current.__module__, current.__qualname__) == (
            cls.__module__, cls.__qualname__)
        if current is not None and not replace and not same:
            raise check.fail("kind", kind, f"a {self.family} kind not registered yet",
                             cls.__qualname__,
                             f"it is {current.__module__}.{current.__qualname__}'s; a class "
                             f"that replaces it says so: class {cls.__name__}(..., "
                             "replace=True)")
        self._classes[kind] = cls

    def _load(self, kind: str | None = None) -> None:
        """Import the built-in classes, then (for everything, or for a ``kind`` they do
        not have) load the plug-ins."""
        if self._builtins is not None:
            importlib.import_module(self._builtins)
        if self._group is not None and (kind is None or kind not in self._classes):
            plugins.load_group(self._group, self._accept)

    def _accept(self, name: str, loaded: Any) -> None:
        if self._classes.get(name) is not loaded:
            raise check.fail("entry point", name, f"the name of the {self.family} class it "
                             "points to, registered under that kind", "a privkit plug-in",
                             f"it points to {loaded!r}")

    def find(self, kind: str) -> type | None:
        """The class of ``kind`` (plug-ins are loaded if it is not known yet), or None."""
        if kind not in self._classes:
            self._load(kind)
        return self._classes.get(kind)

    def all(self) -> dict[str, type]:
        """Every class of the family, by kind, sorted (plug-ins included)."""
        self._load()
        return dict(sorted(self._classes.items()))


#: Guarantee kinds (``pure_dp``, ``approx_dp``, ...).
GUARANTEES = Kinds("guarantee", builtins="privkit.guarantees")
#: Block kinds: plan nodes, ``claimed`` and mechanisms (with the mechanism plug-ins).
BLOCKS = Kinds("block", builtins="privkit.mechanisms", group=plugins.MECHANISM_GROUP)


class Kinded:
    """A base whose subclasses register under their ``kind`` in ``family`` and are
    written to plan files from their fields (guarantees, plan nodes, leaves).

    A subclass that names its own ``kind`` is registered when defined; one that says
    ``replace=True`` (a class keyword) may take a kind that is taken, and without a
    ``kind`` of its own replaces the kind it inherits.
    """

    __slots__ = ()
    #: The class's name in plan files (``{kind: ...}``).
    kind: ClassVar[str]
    #: The registry the subclasses go to.
    family: ClassVar[Kinds]

    def __init_subclass__(cls, *, replace: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind is None and replace:
            kind = getattr(cls, "kind", None)
            if isinstance(kind, str):
                cls.kind = kind  # kept when attrs re-creates the class
        if isinstance(kind, str):
            cls.family.add(cls, kind, replace=replace)

    def to_spec(self) -> dict[str, Any]:
        """This object in privkit's JSON plan format: ``{kind: {field: value}}``
        (:mod:`privkit.plan_spec`)."""
        return to_spec(self)


def _role(field: Any) -> str:
    """How a field is written: its ``spec`` metadata, else guessed from its type."""
    if "norm" in field.metadata:
        return "sensitivity"
    role = field.metadata.get("spec")
    if role is not None:
        return str(role)
    kind = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", "")
    if kind == "Neighbouring" or check.field_name(field) == "relation":
        return "relation"
    return {"Block": "block", "Guarantee": "guarantee"}.get(kind, "value")


def _init_fields(cls: type) -> list[Any]:
    return [f for f in attrs.fields(cls) if f.init or f.metadata.get("spec") == "blocks"]


def to_spec(obj: Any) -> dict[str, Any]:
    """``obj`` (a guarantee, plan node or mechanism) in the plan-file form."""
    cls = type(obj)
    kind = getattr(cls, "kind", None)
    if not isinstance(kind, str) or not attrs.has(cls):
        raise check.fail(type(obj).__name__, obj, "a class with a registered kind to be "
                         "written to a plan file", "to_spec")
    body: dict[str, Any] = {}
    for field in _init_fields(cls):
        value = getattr(obj, field.name)
        name = check.field_name(field)
        role = _role(field)
        if role == "blocks":
            return {kind: [to_spec(b) for b in value]}
        if role == "relation" or isinstance(value, Neighbouring):
            continue
        if isinstance(value, Sensitivity):
            body[f"{value.norm.value}_sensitivity"] = value.value
        elif role in ("block", "guarantee"):
            body[name] = to_spec(value)
        elif isinstance(value, tuple | list):
            body[name] = list(value)
        elif isinstance(value, bool | numbers.Real | str):
            body[name] = value
        else:
            raise check.fail(name, value, "a number, a string, a bool, a tuple, a "
                             "Sensitivity, a guarantee or a block to be written to a plan "
                             "file", cls.__name__)
    return {kind: body}


def single_key(spec: Any, where: str) -> tuple[str, Any]:
    """The kind and body of ``{kind: body}``."""
    if not isinstance(spec, dict) or len(spec) != 1:
        raise check.fail(where, short(spec), "an object with exactly one key naming its kind",
                         "a plan file")
    ((kind, body),) = spec.items()
    return str(kind), body


def short(value: Any) -> str:
    """What a misplaced part of a plan file is, never what it holds: a plan file may carry
    data under keys that are not parameters, and an error must not echo it."""
    if isinstance(value, dict):
        return f"an object with keys {sorted(map(str, value))}"[:200]
    if isinstance(value, list):
        return "a list"
    return {str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def from_spec(spec: Any, family: Kinds, relation: Neighbouring | None = None,
              where: str = "plan") -> Any:
    """Read ``{kind: body}`` of ``family`` (blocks under ``relation``)."""
    kind, body = single_key(spec, where if family is BLOCKS else f"a {family.family}")
    cls = family.find(kind)
    if cls is None:
        known = ", ".join(family.all())
        label = f"block kind at {where}" if family is BLOCKS else f"{family.family} kind"
        raise check.fail(label, kind, f"one of: {known}", "a plan file")
    fields = _init_fields(cls)
    if [_role(f) for f in fields] == ["blocks"]:
        if not isinstance(body, list) or not body:
            raise check.fail(kind, short(body), "a non-empty list of blocks", "a plan file")
        return cls(*(from_spec(b, BLOCKS, relation, f"{kind}[{i}]")
                     for i, b in enumerate(body)))
    if not isinstance(body, dict):
        raise check.fail(kind, short(body), "an object of its fields", "a plan file")
    kwargs: dict[str, Any] = {}
    expected: dict[str, bool] = {}
    for field in fields:
        name = check.field_name(field)
        role = _role(field)
        if role == "relation":
            kwargs[name] = relation
            continue
        key = f"{field.metadata['norm'].value}_sensitivity" if role == "sensitivity" else name
        expected[key] = role == "sensitivity" or field.default is attrs.NOTHING
        if key not in body:
            continue
        if role == "sensitivity":
            value = check.positive_finite(key, body[key], kind)
            kwargs[name] = Sensitivity(value=value, norm=field.metadata["norm"],
                                       relation=relation)
        elif role in ("block", "guarantee"):
            kwargs[name] = from_spec(body[key], BLOCKS if role == "block" else GUARANTEES,
                                     relation, f"{kind}.{key}")
        else:
            kwargs[name] = body[key]
    unknown = sorted(map(str, set(body) - set(expected)))
    if unknown:
        raise check.fail(kind, short(body), f"an object with keys among {sorted(expected)}",
                         "a plan file", f"unknown key(s) {unknown}")
    missing = sorted(k for k, required in expected.items() if required and k not in body)
    if missing:
        hint = ("a sensitivity is never assumed: write it"
                if any(k.endswith("_sensitivity") for k in missing) else "")
        raise check.fail(kind, short(body), f"an object with the key(s) {missing}",
                         "a plan file", hint)
    obj = cls(**kwargs)
    made: Any = getattr(obj, "relation", relation)
    if relation is not None and made is not relation:
        raise check.fail("relation", relation.value, f"'{made.value}' for a {kind} block",
                         "a plan file", "this block's analysis holds under that relation only")
    return obj
