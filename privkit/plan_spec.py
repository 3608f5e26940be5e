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
``{"laplace": {...}}``                ``scale`` or ``epsilon``; ``l1_sensitivity`` (default 1)
``{"gaussian": {...}}``               ``noise_scale``, ``noise_multiplier``, ``mu``, ``rho``, or
                                      ``epsilon`` + ``delta`` (analytic); ``l2_sensitivity``
                                      (default 1)
``{"claimed": {"guarantee": G, "label": "..."}}``   a block known only by a guarantee
====================================  ====================================================

and a guarantee G is one of ``{"pure_dp": {"epsilon": e}}``, ``{"approx_dp": {"epsilon":
e, "delta": d}}``, ``{"zcdp": {"rho": r}}``, ``{"gdp": {"mu": m}}``, ``{"rdp": {"orders":
[...], "epsilons": [...]}}``, ``{"bounded_range": {"eta": h}}``,
``{"laplace_dp": {"epsilon": e}}``. Unknown keys are errors, so typos do not pass
silently.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import json
from collections.abc import Callable
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
    "register_leaf",
]

LeafFactory = Callable[[dict[str, Any], Neighbouring], Block]
_LEAVES: dict[str, LeafFactory] = {}


def register_leaf(kind: str, factory: LeafFactory) -> None:
    """Make ``{kind: {...}}`` readable in plan files; ``factory(args, relation)`` builds it."""
    _LEAVES[kind] = factory


def _single_key(spec: Any, where: str) -> tuple[str, Any]:
    if not isinstance(spec, dict) or len(spec) != 1:
        raise InvalidParameterError(
            f"{where} must be an object with exactly one key naming its kind "
            f"(got {json.dumps(spec)[:120]})"
        )
    ((kind, body),) = spec.items()
    return kind, body


def _fields(body: Any, kind: str, required: set[str], optional: set[str]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InvalidParameterError(f"'{kind}' must map to an object (got {body!r})")
    unknown = set(body) - required - optional
    if unknown:
        allowed = ", ".join(sorted(required | optional))
        raise InvalidParameterError(
            f"unknown key(s) {sorted(unknown)} in '{kind}'; allowed: {allowed}"
        )
    missing = required - set(body)
    if missing:
        raise InvalidParameterError(f"'{kind}' needs key(s) {sorted(missing)}")
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
    raise InvalidParameterError(
        f"unknown guarantee kind {kind!r}; expected pure_dp, approx_dp, zcdp, gdp, rdp, "
        "bounded_range or laplace_dp"
    )


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
    _ensure_builtin_leaves()
    return _node(spec, rel, "plan")


def _node(spec: Any, rel: Neighbouring, where: str) -> Block:
    kind, body = _single_key(spec, where)
    if kind in ("sequential", "parallel"):
        if not isinstance(body, list) or not body:
            raise InvalidParameterError(f"'{kind}' must map to a non-empty list of blocks")
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
    if kind in _LEAVES:
        return _LEAVES[kind](body, rel)
    known = sorted(["sequential", "parallel", "repeat", "post_process", "poisson_subsample",
                    "sample_without_replacement", *_LEAVES])
    raise InvalidParameterError(f"unknown block kind {kind!r} at {where}; known: {known}")


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
    text = Path(path).read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(f"{path} is not valid JSON: {exc}") from exc
    fields = _fields(doc, str(path), {"relation", "plan"}, {"delta", "description"})
    delta = fields.get("delta")
    if delta is not None:
        delta = check.delta("delta", delta, str(path))
    return PlanDocument(plan_from_spec(fields["plan"], relation=fields["relation"]), delta)


def _ensure_builtin_leaves() -> None:
    register_leaf("claimed", _claimed)
    if "laplace" not in _LEAVES:
        import privkit.mechanisms._specs  # noqa: F401  (registers the built-in mechanisms)


