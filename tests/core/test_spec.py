"""The plan-file form derived from fields (issue 24, "declared once, finished"): plan
files written by 0.2.0 still load and are written back the same, every guarantee kind has
its documented form, and the core's modules import one another in no circle."""

import ast
import json
from pathlib import Path
from typing import ClassVar

import attrs
import pytest

from privkit import (
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    BoundedRange,
    Guarantee,
    InvalidParameterError,
    LaplaceDP,
    PureDP,
    load_plan,
    plan_from_spec,
    plan_to_spec,
)
from privkit.plan_spec import guarantee_from_spec, guarantee_to_spec
from privkit.spec import GUARANTEES

ROOT = Path(__file__).resolve().parents[2]
#: Every plan file in the repository, the 0.2.0 files of tests/fixtures/plans_0_2_0
#: included (the plug-in fixture's plan names a kind only its package defines).
PLAN_FILES = sorted(p for p in [*ROOT.glob("examples/**/*.json"), *ROOT.glob("tests/**/*.json")]
                    if "privkit_plugin_demo" not in p.parts)


def test_there_are_plan_files():
    assert len(PLAN_FILES) >= 3


@pytest.mark.parametrize("path", PLAN_FILES, ids=lambda p: p.name)
def test_every_plan_file_loads_and_is_written_back_as_it_was(path):
    """Read, then written by today's derivation: the same JSON as the file (0.2.0's
    hand-written ladders wrote these), and read back equal."""
    raw = json.loads(path.read_text())
    doc = load_plan(path)
    written = plan_to_spec(doc.plan)
    assert written["plan"] == raw["plan"]
    assert written["relation"] == raw["relation"]
    assert plan_from_spec(written["plan"], relation=written["relation"]) == doc.plan


#: 0.2.0's documented form of each guarantee (privkit/plan_spec.py's docstring).
FORMS = [
    (PureDP(epsilon=0.5), {"pure_dp": {"epsilon": 0.5}}),
    (ApproxDP(epsilon=0.5, delta=1e-6), {"approx_dp": {"epsilon": 0.5, "delta": 1e-6}}),
    (ZCDP(rho=0.1), {"zcdp": {"rho": 0.1}}),
    (GDP(mu=0.3), {"gdp": {"mu": 0.3}}),
    (RDP(orders=[2, 4], epsilons=[0.1, 0.2]), {"rdp": {"orders": [2.0, 4.0],
                                                        "epsilons": [0.1, 0.2]}}),
    (BoundedRange(eta=0.7), {"bounded_range": {"eta": 0.7}}),
    (LaplaceDP(epsilon=0.4), {"laplace_dp": {"epsilon": 0.4}}),
]


@pytest.mark.parametrize(("guarantee", "form"), FORMS, ids=lambda g: type(g).__name__)
def test_every_guarantee_has_its_documented_form(guarantee, form):
    assert guarantee_to_spec(guarantee) == form
    assert guarantee_from_spec(form) == guarantee


def test_every_guarantee_kind_is_covered():
    assert {next(iter(form)) for _, form in FORMS} == set(GUARANTEES.all())


@pytest.mark.parametrize(("spec", "fragment"), [
    ({"pure_dp": {"epsilon": 0.5, "delta": 0.1}}, r"unknown key\(s\) \['delta'\]"),
    ({"approx_dp": {"epsilon": 0.5}}, r"the key\(s\) \['delta'\]"),
    ({"pure": {"epsilon": 0.5}}, "guarantee kind"),
    ({"pure_dp": [0.5]}, "an object of its fields"),
    ({"pure_dp": {"epsilon": -1.0}}, "`epsilon` must be a finite number > 0"),
])
def test_a_bad_guarantee_is_refused_with_a_clear_error(spec, fragment):
    with pytest.raises(InvalidParameterError, match=fragment):
        guarantee_from_spec(spec)


def test_a_guarantee_kind_defined_outside_privkit_is_written_and_read():
    """Declared once: a new kind needs no edit of the plan format."""

    @attrs.frozen(kw_only=True)
    class Capped(PureDP):
        kind: ClassVar[str] = "test_capped_dp"
        cap: float = 1.0

    claim = {"claimed": {"guarantee": {"test_capped_dp": {"epsilon": 0.2, "cap": 3.0}},
                         "label": "capped"}}
    block = plan_from_spec(claim, relation="add_remove")
    assert block.guarantee() == Capped(epsilon=0.2, cap=3.0)
    assert block.to_spec() == claim
    assert isinstance(block.guarantee(), Guarantee)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The privkit modules ``path`` imports, anywhere in it (inside functions too), but
    not under ``if TYPE_CHECKING:`` (annotations only)."""
    found = set()
    tree = ast.parse(path.read_text())
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules
            found |= subs
            if node.module in modules and len(subs) < len(node.names):
                found.add(node.module)
    return found


#: Circles allowed in privkit/: none (the last, filter <-> shared_filter, went when what
#: both need moved to ``privkit._budget``).
KNOWN: set[frozenset[str]] = set()


def test_the_core_has_no_import_circle():
    """Tarjan's strongly connected components of the import graph of privkit/ (every
    import, function-level ones too: they are the structure, deferred): none but KNOWN.
    The 4-module circle plan, plan_spec, mechanism, ledger is gone."""
    files = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
             for p in (ROOT / "privkit").rglob("*.py")}
    graph = {m: _imports(p, set(files)) - {m} for m, p in files.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(frozenset(component))

    for module in graph:
        if module not in index:
            visit(module)
    assert set(circles) <= KNOWN, circles
    assert "privkit.plan_spec" not in _imports(files["privkit.plan"], set(files))


def test_epsilon_and_delta_are_keyword_only_at_public_sites():
    """No public function or method of privkit/ takes epsilon or delta positionally
    (they are easy to swap), except the one-argument verbs whose name says which it is
    (``epsilon_at(delta)``, ``delta_at(epsilon)``, opacus' ``get_epsilon(delta)``). The
    audit-case builders are keyword-only too (``tests/audits/test_row_discovery.py``
    checks the private ones, which this walk skips)."""
    found = set()
    for path in sorted(p for top in ("privkit", "mechanisms", "algorithms", "audits")
                       for p in (ROOT / top).rglob("*.py")):
        rel = path.relative_to(ROOT)
        if any(part.startswith("_") and part != "__init__.py" for part in rel.parts):
            continue

        def visit(node: ast.AST, public: bool, where: Path = rel) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    visit(child, public and not child.name.startswith("_"))
                elif isinstance(child, ast.FunctionDef) and public and (
                        not child.name.startswith("_") or child.name == "__init__"):
                    args = child.args
                    positional = [a.arg for a in args.posonlyargs + args.args
                                  if a.arg not in ("self", "cls")]
                    verb = len(positional) == 1 and (child.name.endswith("_at")
                                                     or child.name in ("get_epsilon",
                                                                       "for_epsilon"))
                    if {"epsilon", "delta"} & set(positional) and not verb:
                        found.add(f"{where}:{child.name}")

        visit(ast.parse(path.read_text()), True)
    assert found == set()
