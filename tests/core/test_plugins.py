"""Plug-ins across processes (issue 24): an installed package's mechanism and accountant
are used by ``privkit account`` and ``privkit audit`` with no other step; ``--import`` for
code that is not installed; a taken kind is refused unless the class says
``replace=True``; a plug-in that fails names its entry point and package; a float-valued
mechanism with no safe path is refused by ``release``."""

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

import attrs
import numpy as np
import pytest

from privkit import (
    InvalidParameterError,
    Ledger,
    Mechanism,
    PureDP,
    Sensitivity,
    registered_mechanisms,
)
from privkit.errors import UnsafeReleaseError
from privkit.mechanisms import Laplace
from privkit.spec import BLOCKS

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "privkit_plugin_demo"
PRIVKIT = [sys.executable, "-m", "privkit.cli"]


def _run(args, cwd, pythonpath=None):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(pythonpath or "")}
    return subprocess.run([*PRIVKIT, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_an_installed_package_is_used_with_no_other_step(tmp_path):
    """pip installs the fixture package (entry points only, nothing imported by hand);
    ``privkit account`` reads a plan naming its mechanism's kind and accounts it with its
    accountant, and ``privkit audit NAME`` audits the mechanism. Four runs of a 0.25-DP
    Laplace count compose to exactly 1 (basic composition, pure DP); the audit of a
    correct 1-DP mechanism must not be a violation (false-failure rate at most 5%, the
    confidence of the Clopper-Pearson bound; the seed fixes the outcome)."""
    source = tmp_path / "src"
    shutil.copytree(FIXTURE, source)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(source)],
                   check=True, capture_output=True, timeout=300)
    done = _run(["account", str(source / "plan.json"), "--accountant", "demo_sum",
                 "--json"], tmp_path, target)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["accountant"] == "demo_sum"
    assert result["epsilon"] == pytest.approx(1.0, rel=1e-12)
    done = _run(["account", str(source / "plan.json")], tmp_path, target)
    assert done.returncode == 0, done.stderr
    assert "DemoCount(noise_scale=4, l1_sensitivity=1): PureDP(ε=0.25)" in done.stdout
    assert "demo_sum" in done.stdout  # listed with the built-in accountants
    done = _run(["audit", "demo_count", "--trials", "20000", "--seed", "3"], tmp_path, target)
    assert done.returncode == 0, done.stderr
    assert "demo_count: claim (1, 0)" in done.stderr
    assert "consistent" in done.stdout


def _distribution(site: Path, name: str, entry_points: str, modules: dict[str, str]) -> None:
    """A distribution as pip leaves it (dist-info with entry points), written by hand."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for module, code in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(code))


PLAN = {"relation": "add_remove", "plan": {"laplace": {"noise_scale": 1.0,
                                                        "l1_sensitivity": 1.0}}}


def mine(kind: str) -> str:
    """The fixture package's module, its mechanism's kind replaced by ``kind``."""
    source = (FIXTURE / "privkit_plugin_demo" / "__init__.py").read_text()
    return source.replace('"demo_count"', f'"{kind}"')


def test_a_plugin_that_fails_to_load_names_its_entry_point_and_package(tmp_path):
    """A missing module behind an entry point: exit code 2 and a message naming the
    entry point, its group and its package, not a traceback."""
    _distribution(tmp_path, "broken_plugin", """
        [privkit.mechanisms]
        gone = no_such_module:Gone
    """, {})
    (tmp_path / "plan.json").write_text(json.dumps(
        {"relation": "add_remove", "plan": {"gone": {}}}))
    done = _run(["account", "plan.json"], tmp_path, tmp_path)
    assert done.returncode == 2
    assert "'gone' = 'no_such_module:Gone'" in done.stderr
    assert "the package broken_plugin 0.1" in done.stderr
    assert "ModuleNotFoundError" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_plugin_cannot_take_a_built_in_kind(tmp_path):
    """A plug-in whose class claims the kind "laplace" without ``replace=True`` is
    refused when loaded (and the plan's built-in kind is untouched by the refusal)."""
    _distribution(tmp_path, "greedy_plugin", """
        [privkit.mechanisms]
        laplace = greedy:DemoCount
    """, {"greedy": mine("laplace")})
    (tmp_path / "plan.json").write_text(json.dumps(
        {"relation": "add_remove", "plan": {"nope": {}}}))
    done = _run(["account", "plan.json"], tmp_path, tmp_path)
    assert done.returncode == 2
    assert "'laplace' = 'greedy:DemoCount'" in done.stderr
    assert "the package greedy_plugin 0.1" in done.stderr
    assert "replace=True" in done.stderr
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    done = _run(["account", "plan.json"], tmp_path, tmp_path)
    assert done.returncode == 0, done.stderr  # a known kind loads no plug-in


def test_import_option_makes_code_that_is_not_installed_known(tmp_path):
    """``--import MODULE`` (the current directory on the path) before the plan is read;
    without it the kind is unknown; a module that fails to import is named."""
    (tmp_path / "mine.py").write_text(mine("mine_count"))
    (tmp_path / "plan.json").write_text(json.dumps(
        {"relation": "add_remove", "delta": 0.0,
         "plan": {"mine_count": {"noise_scale": 2.0, "l1_sensitivity": 1.0}}}))
    done = _run(["account", "plan.json"], tmp_path)
    assert done.returncode == 2
    assert "block kind at plan" in done.stderr
    assert "mine_count" in done.stderr
    done = _run(["account", "--import", "mine", "plan.json", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["epsilon"] == pytest.approx(0.5)
    done = _run(["audit", "--import", "nothing_here", "laplace"], tmp_path)
    assert done.returncode == 2
    assert "--import nothing_here: the module failed to import" in done.stderr


def test_import_privkit_reads_no_entry_point():
    """Entry points are read lazily: importing privkit, reading a plan of built-in
    kinds and getting a built-in accountant by name read none."""
    code = textwrap.dedent("""
        import importlib.metadata as md
        def refuse(*args, **kwargs):
            raise SystemExit("entry points were read")
        md.entry_points = refuse
        import privkit
        privkit.plan_from_spec({"laplace": {"noise_scale": 1.0, "l1_sensitivity": 1.0}},
                               relation="add_remove")
        privkit.get_accountant("basic")
        print("lazy")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd="/")
    assert out.stdout.strip() == "lazy"


def test_a_taken_kind_is_refused_unless_the_class_says_replace():
    """``kind = "laplace"`` in a user class is an error naming the kind and the way out;
    ``replace=True`` replaces the built-in (restored here); a class inheriting the kind
    with ``replace=True`` and no ``kind`` of its own takes the inherited one."""
    with pytest.raises(InvalidParameterError, match=r"`kind` must be a block kind not "
                       r"registered yet .*'laplace'.*replace=True"):
        @attrs.frozen(kw_only=True)
        class Shadow(Laplace):
            kind: ClassVar[str] = "laplace"
    assert registered_mechanisms()["laplace"] is Laplace
    try:
        @attrs.frozen(kw_only=True)
        class MyLaplace(Laplace, replace=True):
            pass

        assert registered_mechanisms()["laplace"] is MyLaplace
        assert MyLaplace.kind == "laplace"
    finally:
        BLOCKS.add(Laplace, "laplace", replace=True)
    assert registered_mechanisms()["laplace"] is Laplace
    with pytest.raises(InvalidParameterError, match="block kind not registered yet"):
        class Sequentially(Laplace):  # plan nodes and mechanisms share one namespace
            kind: ClassVar[str] = "sequential"


def test_the_same_class_defined_again_replaces_itself():
    """A module run twice (a notebook cell, a reload) defines the same class again: the
    second definition is registered, with no error."""
    code = mine("test_twice")
    first: dict = {"__name__": "cell"}
    second: dict = {"__name__": "cell"}
    exec(code, first)
    exec(code, second)
    assert registered_mechanisms()["test_twice"] is second["DemoCount"]


@attrs.frozen(kw_only=True)
class FloatNoise(Mechanism):
    """Plain float noise on the bare base: no safe path."""

    kind: ClassVar[str] = "test_float_noise"
    sensitivity: Sensitivity = attrs.field()

    def guarantees(self):
        return (PureDP(epsilon=1.0),)

    def sample(self, value, rng, shape, **options):
        return value + rng.laplace(size=shape + value.shape)


@attrs.frozen(kw_only=True)
class CoinFlip(Mechanism):
    """Integer draws on the bare base: the default safe path publishes them."""

    kind: ClassVar[str] = "test_coin_flip"
    sensitivity: Sensitivity = attrs.field()

    def guarantees(self):
        return (PureDP(epsilon=1.0),)

    def sample(self, value, rng, shape, **options):
        return rng.integers(0, 2, size=shape)


ONE = Sensitivity(value=1.0, norm="l1", relation="add_remove")


def test_float_draws_on_the_bare_base_are_refused_by_release():
    """``release`` refuses plain float draws with UnsafeReleaseError (whatever the
    value: the dtype is the code's, not the data's), records nothing; ``simulate``
    still draws; integer draws are released as they are."""
    mechanism = FloatNoise(sensitivity=ONE)
    with Ledger() as ledger, pytest.raises(UnsafeReleaseError, match=r"FloatNoise\.safe"):
        mechanism.release(3.0, rng=0)
    assert ledger.entries == ()
    assert np.shape(mechanism.simulate([1.0, 2.0], rng=0, size=4)) == (4, 2)
    with Ledger() as ledger:
        out = CoinFlip(sensitivity=ONE).release(0.0, rng=0, size=5)
    assert out.dtype.kind == "i"
    assert len(ledger.entries) == 1
