"""Issue 24: an estimator declares its ``privkit audit`` rows next to itself, in its family
folder's ``audit_cases`` module, with one decorator (``audit_row``); the registry finds
every such module on the package's path, with no list of modules or rows."""

import ast
import importlib
import sys
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

import privkit.algorithms
from privkit.audits import registry
from privkit.audits.registry import CASES, ROWS_MODULE, discover_algorithm_rows


def _declared_in_source():
    """Every ``@audit_row("NAME", ...)`` in a family folder's audit_cases.py, read from the
    files (not imported): {NAME: dotted module}."""
    found = {}
    for root in privkit.algorithms.__path__:
        for path in sorted(Path(root).glob(f"*/{ROWS_MODULE}.py")):
            module = f"privkit.algorithms.{path.parent.name}.{ROWS_MODULE}"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef):
                    for deco in node.decorator_list:
                        if (isinstance(deco, ast.Call) and getattr(deco.func, "id", "")
                                == "audit_row"):
                            found[deco.args[0].value] = module
    return found


def test_every_declared_row_is_found_and_runs_under_its_name():
    """The rows declared in the source are exactly the algorithm rows ``privkit audit``
    knows, each registered from the module that declares it."""
    declared = _declared_in_source()
    assert len(declared) >= 7
    algorithm_rows = {name for name in CASES if name in registry._ALGORITHMS}
    assert algorithm_rows == set(declared)
    for name, module in declared.items():
        assert registry._DECLARED_IN[name] == module, name
        assert callable(CASES[name]), name


def test_each_row_sits_next_to_the_estimator_it_audits():
    """A row's estimator is a class its family package exports, defined in that family
    folder (the row's module is its sibling)."""
    CASES["laplace"]
    for name, module in registry._DECLARED_IN.items():
        family = module.rsplit(".", 1)[0]
        cls = getattr(importlib.import_module(family), registry.row_estimator(name))
        assert cls.__module__.startswith(family + "."), (name, cls.__module__)


def test_a_row_declared_in_a_new_family_module_is_picked_up(tmp_path, monkeypatch):
    """A new family folder with an audit_cases module is found by the next read of
    ``CASES``, with nothing else to edit."""
    family = tmp_path / "zz_new_family"
    family.mkdir()
    (family / "__init__.py").write_text(
        '"""A new family."""\n\n\nclass Estimator:\n    """A stand-in."""\n')
    (family / f"{ROWS_MODULE}.py").write_text(
        '"""Its rows."""\n\nfrom privkit.audits.registry import audit_row\n\n\n'
        '@audit_row("zz_new_row", estimator="Estimator")\n'
        "def build(*, epsilon, delta=0.0):\n    return (epsilon, delta)\n")
    monkeypatch.setattr(privkit.algorithms, "__path__",
                        [*privkit.algorithms.__path__, str(tmp_path)])
    try:
        assert "zz_new_row" not in registry._ALGORITHMS
        assert f"privkit.algorithms.zz_new_family.{ROWS_MODULE}" in discover_algorithm_rows()
        assert "zz_new_row" in CASES
        assert CASES["zz_new_row"](epsilon=2.0, delta=0.1) == (2.0, 0.1)
        assert registry.row_estimator("zz_new_row") == "Estimator"
    finally:
        for table in (registry._ALGORITHMS, registry._DECLARED_IN, registry._ESTIMATOR):
            table.pop("zz_new_row", None)
        for module in ("privkit.algorithms.zz_new_family",
                       f"privkit.algorithms.zz_new_family.{ROWS_MODULE}"):
            sys.modules.pop(module, None)


@pytest.mark.parametrize(("missing", "skipped"), [("zz_not_installed", True),
                                                   ("privkit.zz_not_there", False)])
def test_a_family_whose_optional_dependency_is_missing_is_skipped(tmp_path, monkeypatch,
                                                                   missing, skipped):
    """A family module that needs a package which is not installed (as the analytics need
    pandas) has no rows, and the others still load (``privkit audit laplace`` in an
    environment without pandas); a missing privkit module is a bug and is raised."""
    family = tmp_path / "zz_optional_family"
    family.mkdir()
    (family / "__init__.py").write_text('"""A family with an optional dependency."""\n')
    (family / f"{ROWS_MODULE}.py").write_text(f'"""Its rows."""\n\nimport {missing}\n')
    monkeypatch.setattr(privkit.algorithms, "__path__",
                        [*privkit.algorithms.__path__, str(tmp_path)])
    name = f"privkit.algorithms.zz_optional_family.{ROWS_MODULE}"
    try:
        if skipped:
            found = discover_algorithm_rows()
            assert name not in found
            assert "privkit.algorithms.linear.audit_cases" in found
            assert "laplace" in CASES
        else:
            with pytest.raises(ModuleNotFoundError, match=r"privkit\.zz_not_there"):
                discover_algorithm_rows()
    finally:
        for module in ("privkit.algorithms.zz_optional_family", name):
            sys.modules.pop(module, None)


def test_every_case_builder_takes_epsilon_and_delta_by_keyword_only():
    """``CASES[name](epsilon=..., delta=...)`` is the one protocol (issue 24): every
    builder, the mechanisms' and the private ``_row`` functions that the public-site walk
    of ``tests/core/test_spec.py`` skips, declares both keyword-only, so a positional
    call fails instead of swapping them."""
    import inspect

    assert len(CASES) >= 40
    for name, build in CASES.items():
        parameters = inspect.signature(build).parameters
        for keyword in ("epsilon", "delta"):
            assert parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY, (name, keyword)
    with pytest.raises(TypeError):
        CASES["laplace"](1.0)


def test_register_refuses_a_builder_that_cannot_take_the_keywords():
    """0.2.0 called ``build(epsilon, delta)`` positionally; a builder whose parameters
    are named otherwise is refused when it is registered, with a message that says how to
    declare it, not by a TypeError in the middle of ``privkit audit``; nothing is
    registered."""
    from privkit.errors import InvalidParameterError

    def build(eps, delta=0.0):
        return (eps, delta)

    with pytest.raises(InvalidParameterError,
                       match=r"`build` must be callable as build\(epsilon=\.\.\., "
                             r"delta=\.\.\.\) for register\('zz_positional'\).*"
                             r"def build\(\*, epsilon, delta=\.\.\.\)"):
        registry.register("zz_positional", build)
    assert "zz_positional" not in CASES


def test_a_builder_declared_as_in_0_2_0_still_runs():
    """A builder written to 0.2.0's documented ``build(epsilon, delta)`` (positional or
    keyword) is registered and called with keywords."""

    def build(epsilon, delta=1e-5):
        return (epsilon, delta)

    registry.register("zz_0_2_0", build)
    try:
        assert CASES["zz_0_2_0"](epsilon=2.0, delta=0.1) == (2.0, 0.1)
    finally:
        registry._ALGORITHMS.pop("zz_0_2_0")


def test_estimator_modules_hold_estimators_only():
    """Audit cases are built in the family folders' ``audit_cases`` modules only: no
    other module of ``privkit.algorithms`` imports ``privkit.audits`` (anywhere in it,
    function-level imports included), which building an ``AuditCase`` needs. The white-box
    builders of kmeans_nystrom, kernel_mean, dpksvmel_paper and private_svdd moved out of
    the estimators' modules."""
    importers = []
    for root in privkit.algorithms.__path__:
        for path in sorted(Path(root).rglob("*.py")):
            if path.stem == ROWS_MODULE:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom)
                         and node.level == 0 else [])
                if any(n == "privkit.audits" or n.startswith("privkit.audits.")
                       for n in names):
                    importers.append(str(path.relative_to(root)))
    assert importers == []
