"""privkit's JSON plan format: read and write plans as plain data.

A plan file is a JSON object::

    {
      "relation": "add_remove",              # or "replace_one"; applies to every leaf
      "delta": 1e-5,                         # optional: the delta to report epsilon at
      "plan": NODE
    }

where each NODE is an object with exactly one key naming its kind:

====================================  ====================================================
``{"sequential": [NODE, ...]}``       all on the same data
``{"parallel": [NODE, ...]}``         on disjoint parts of the data
``{"repeat": {"count": k, "block": NODE}}``
``{"post_process": {"block": NODE, "description": "..."}}``
``{"poisson_subsample": {"sampling_rate": q, "block": NODE}}``
``{"sample_without_replacement": {"sample_size": m, "population_size": n, "block": NODE}}``
``{KIND: {FIELD: value, ...}}``        a mechanism: its registered ``kind`` and its fields,
                                      e.g. ``{"laplace": {"noise_scale": 2.0,
                                      "l1_sensitivity": 1.0}}``; a sensitivity is written
                                      ``<norm>_sensitivity`` and is always required
``{"claimed": {"guarantee": G, "label": "..."}}``   a block known only by a guarantee
====================================  ====================================================

The mechanism kinds and their fields are those of
:func:`privkit.mechanism.registered_mechanisms`; a mechanism defined outside privkit is
readable as soon as its class is imported, or, from an installed package, through the
entry-point group ``privkit.mechanisms`` (:mod:`privkit.plugins`). Every form is derived
from the classes' fields (:mod:`privkit.spec`): a guarantee, node or mechanism kind
defined outside privkit is written and read the same way.

and a guarantee G is one of ``{"pure_dp": {"epsilon": e}}``, ``{"approx_dp": {"epsilon":
e, "delta": d}}``, ``{"zcdp": {"rho": r}}``, ``{"gdp": {"mu": m}}``, ``{"rdp": {"orders":
[...], "epsilons": [...]}}``, ``{"bounded_range": {"eta": h}}``,
``{"laplace_dp": {"epsilon": e}}``. Unknown keys are errors, so typos do not pass
silently.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from privkit import _validation as check
from privkit.errors import InvalidParameterError
from privkit.guarantee import Guarantee
from privkit.neighbouring import Neighbouring
from privkit.plan import Block
from privkit.spec import BLOCKS, GUARANTEES, from_spec, short, to_spec

__all__ = [
    "PlanDocument",
    "guarantee_from_spec",
    "guarantee_to_spec",
    "load_plan",
    "plan_from_spec",
    "plan_to_spec",
]


def guarantee_from_spec(spec: Any) -> Guarantee:
    """Read a guarantee G (see the module docstring)."""
    guarantee: Guarantee = from_spec(spec, GUARANTEES)
    return guarantee


def guarantee_to_spec(guarantee: Guarantee) -> dict[str, Any]:
    """Write a guarantee G."""
    check.instance("guarantee", guarantee, Guarantee, "guarantee_to_spec")
    return to_spec(guarantee)


def plan_from_spec(spec: Any, *, relation: Neighbouring | str) -> Block:
    """Build a plan from a NODE (see the module docstring) under ``relation``."""
    rel = Neighbouring.parse(relation, owner="plan_from_spec")
    block: Block = from_spec(spec, BLOCKS, rel, "plan")
    return block


def plan_to_spec(plan: Block) -> dict[str, Any]:
    """Write a plan as a plan document (with its relation)."""
    return {"relation": plan.relation.value, "plan": plan.to_spec()}


class PlanDocument:
    """A plan file read from disk: the plan and the optional delta it names."""

    def __init__(self, plan: Block, *, delta: float | None) -> None:
        self.plan = plan
        self.delta = delta


#: The largest plan file read (bytes): a plan is a description, not data.
MAX_PLAN_BYTES = 16 * 2**20


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's keys, refusing repeats (json keeps the last one silently)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise InvalidParameterError(f"a plan file must not repeat a key in one object "
                                        f"(got {key!r} twice)")
        seen[key] = value
    return seen


def _number(text: str) -> float:
    """A JSON number as a float, refusing those beyond any float (1e400, 5,000 digits)."""
    if len(text) > 400:
        raise InvalidParameterError(f"a plan file's numbers must be floats (got a number "
                                    f"of {len(text)} characters)")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise InvalidParameterError(f"a plan file's numbers must be finite floats (got "
                                    f"{text[:40]})")
    return value


def _integer(text: str) -> int:
    if len(text) > 400:
        raise InvalidParameterError(f"a plan file's integers must have at most 400 digits "
                                    f"(got {len(text)})")
    return int(text)


def _document_fields(doc: Any, where: str) -> dict[str, Any]:
    """The plan document's keys: ``relation`` and ``plan``, optionally ``delta`` and
    ``description``."""
    if not isinstance(doc, dict):
        raise check.fail(where, short(doc), "an object", "a plan file")
    allowed = {"relation", "plan", "delta", "description"}
    unknown = sorted(map(str, set(doc) - allowed))
    if unknown:
        raise check.fail(where, short(doc), f"an object with keys among {sorted(allowed)}",
                         "a plan file", f"unknown key(s) {unknown}")
    missing = sorted({"relation", "plan"} - set(doc))
    if missing:
        raise check.fail(where, short(doc), f"an object with the key(s) {missing}",
                         "a plan file")
    return doc


def load_plan(path: str | Path) -> PlanDocument:
    """Read a plan file (JSON; see the module docstring).

    Hostile files are refused with a clear error: more than :data:`MAX_PLAN_BYTES`
    bytes (read no further, so ``/dev/zero`` costs nothing), a key repeated in one object,
    numbers beyond any float, integers of more than 400 digits.
    """
    try:
        with Path(path).open("rb") as handle:
            raw = handle.read(MAX_PLAN_BYTES + 1)
    except IsADirectoryError as exc:
        raise InvalidParameterError(f"{path} is not a plan file: it is a directory") from exc
    if len(raw) > MAX_PLAN_BYTES:
        raise InvalidParameterError(f"{path} is not a plan file: it is larger than "
                                    f"{MAX_PLAN_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(f"{path} is not a plan file: it is not UTF-8 text "
                                    f"({exc.reason} at byte {exc.start})") from exc
    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicates, parse_float=_number,
                         parse_int=_integer)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        if isinstance(exc, InvalidParameterError):
            raise
        raise InvalidParameterError(f"{path} is not a readable plan file: {exc}") from exc
    fields = _document_fields(doc, str(path))
    delta = fields.get("delta")
    if delta is not None:
        delta = check.delta("delta", delta, str(path))
    return PlanDocument(plan_from_spec(fields["plan"], relation=fields["relation"]), delta=delta)
