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
readable as soon as its class is imported.

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
from privkit.guarantees import (
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    BoundedRange,
    Guarantee,
    LaplaceDP,
    PureDP,
)
from privkit.mechanism import mechanism_from_spec, registered_mechanisms
from privkit.neighbouring import Neighbouring
from privkit.plan import (
    Block,
    Claimed,
    Parallel,
    PoissonSubsample,
    PostProcess,
    Repeat,
    SampleWithoutReplacement,
    Sequential,
)

__all__ = [
    "PlanDocument",
    "guarantee_from_spec",
    "guarantee_to_spec",
    "load_plan",
    "plan_from_spec",
    "plan_to_spec",
]

_NODES = ("sequential", "parallel", "repeat", "post_process", "poisson_subsample",
          "sample_without_replacement", "claimed")


def _single_key(spec: Any, where: str) -> tuple[str, Any]:
    if not isinstance(spec, dict) or len(spec) != 1:
        raise check.fail(where, _short(spec), "an object with exactly one key naming its kind",
                         "a plan file")
    ((kind, body),) = spec.items()
    return kind, body


def _short(value: Any) -> str:
    """What a plan file holds where a node or its fields should be: its JSON type, and an
    object's keys; never a value (a file that fails may hold data under a key that is
    not a parameter, and the message goes to whoever reads the log)."""
    if isinstance(value, dict):
        return f"an object with the keys {sorted(map(str, value))}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else f"a {type(value).__name__}"


def _fields(body: Any, kind: str, required: set[str], optional: set[str]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise check.fail(kind, _short(body), "an object", "a plan file")
    unknown = set(body) - required - optional
    if unknown:
        allowed = ", ".join(sorted(required | optional))
        raise check.fail(kind, _short(body), f"an object with keys among: {allowed}",
                         "a plan file", f"unknown key(s) {sorted(unknown)}")
    missing = required - set(body)
    if missing:
        raise check.fail(kind, _short(body), f"an object with the key(s) {sorted(missing)}",
                         "a plan file")
    return body


def guarantee_from_spec(spec: Any) -> Guarantee:
    """Read a guarantee G (see the module docstring)."""
    kind, body = _single_key(spec, "a guarantee")
    if kind == "pure_dp":
        return PureDP(**_fields(body, kind, {"epsilon"}, set()))
    if kind == "approx_dp":
        return ApproxDP(**_fields(body, kind, {"epsilon", "delta"}, set()))
    if kind == "zcdp":
        return ZCDP(**_fields(body, kind, {"rho"}, set()))
    if kind == "gdp":
        return GDP(**_fields(body, kind, {"mu"}, set()))
    if kind == "rdp":
        return RDP(**_fields(body, kind, {"orders", "epsilons"}, set()))
    if kind == "bounded_range":
        return BoundedRange(**_fields(body, kind, {"eta"}, set()))
    if kind == "laplace_dp":
        return LaplaceDP(**_fields(body, kind, {"epsilon"}, set()))
    raise check.fail("guarantee kind", kind, "one of pure_dp, approx_dp, zcdp, gdp, rdp, "
                     "bounded_range, laplace_dp", "a plan file")


def guarantee_to_spec(guarantee: Guarantee) -> dict[str, Any]:
    """Write a guarantee G."""
    if isinstance(guarantee, PureDP):
        return {"pure_dp": {"epsilon": guarantee.epsilon}}
    if isinstance(guarantee, ApproxDP):
        return {"approx_dp": {"epsilon": guarantee.epsilon, "delta": guarantee.delta}}
    if isinstance(guarantee, ZCDP):
        return {"zcdp": {"rho": guarantee.rho}}
    if isinstance(guarantee, GDP):
        return {"gdp": {"mu": guarantee.mu}}
    if isinstance(guarantee, LaplaceDP):
        return {"laplace_dp": {"epsilon": guarantee.epsilon}}
    if isinstance(guarantee, BoundedRange):
        return {"bounded_range": {"eta": guarantee.eta}}
    if isinstance(guarantee, RDP):
        return {"rdp": {"orders": list(guarantee.orders), "epsilons": list(guarantee.epsilons)}}
    raise check.fail("guarantee", guarantee, "a privkit guarantee", "guarantee_to_spec")


def _claimed(body: Any, relation: Neighbouring) -> Block:
    fields = _fields(body, "claimed", {"guarantee"}, {"label"})
    return Claimed(guarantee_from_spec(fields["guarantee"]), relation=relation,
                   label=fields.get("label", "claimed"))


def plan_from_spec(spec: Any, *, relation: Neighbouring | str) -> Block:
    """Build a plan from a NODE (see the module docstring) under ``relation``."""
    rel = Neighbouring.parse(relation, owner="plan_from_spec")
    return _node(spec, rel, "plan")


def _node(spec: Any, rel: Neighbouring, where: str) -> Block:
    kind, body = _single_key(spec, where)
    if kind in ("sequential", "parallel"):
        if not isinstance(body, list) or not body:
            raise check.fail(kind, _short(body), "a non-empty list of blocks", "a plan file")
        blocks = [_node(b, rel, f"{kind}[{i}]") for i, b in enumerate(body)]
        return Sequential(*blocks) if kind == "sequential" else Parallel(*blocks)
    if kind == "repeat":
        f = _fields(body, kind, {"count", "block"}, set())
        return Repeat(_node(f["block"], rel, "repeat.block"), f["count"])
    if kind == "post_process":
        f = _fields(body, kind, {"block"}, {"description"})
        return PostProcess(_node(f["block"], rel, "post_process.block"),
                           f.get("description", "post-processing"))
    if kind == "poisson_subsample":
        f = _fields(body, kind, {"sampling_rate", "block"}, set())
        return PoissonSubsample(_node(f["block"], rel, "poisson_subsample.block"),
                                f["sampling_rate"])
    if kind == "sample_without_replacement":
        f = _fields(body, kind, {"sample_size", "population_size", "block"}, set())
        return SampleWithoutReplacement(_node(f["block"], rel, f"{kind}.block"),
                                        f["sample_size"], f["population_size"])
    if kind == "claimed":
        return _claimed(body, rel)
    mechanisms = registered_mechanisms()
    if kind in mechanisms:
        return mechanism_from_spec(kind, body, rel)
    known = ", ".join(sorted([*_NODES, *mechanisms]))
    raise check.fail(f"block kind at {where}", kind, f"one of: {known}", "a plan file")


def plan_to_spec(plan: Block) -> dict[str, Any]:
    """Write a plan as a plan document (with its relation)."""
    return {"relation": plan.relation.value, "plan": plan.to_spec()}


class PlanDocument:
    """A plan file read from disk: the plan and the optional delta it names."""

    def __init__(self, plan: Block, delta: float | None) -> None:
        self.plan = plan
        self.delta = delta


def load_plan(path: str | Path) -> PlanDocument:
    """Read a plan file (JSON; see the module docstring)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(f"{path} is not a plan file: it is not UTF-8 text "
                                    f"({exc.reason} at byte {exc.start})") from exc
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InvalidParameterError(f"{path} is not a readable plan file: {exc}") from exc
    fields = _fields(doc, str(path), {"relation", "plan"}, {"delta", "description"})
    delta = fields.get("delta")
    if delta is not None:
        delta = check.delta("delta", delta, str(path))
    return PlanDocument(plan_from_spec(fields["plan"], relation=fields["relation"]), delta)
