"""The distribution's layout, public face and import cost."""

import subprocess
import sys
import tomllib
from pathlib import Path

import privkit

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "opacus", "cvxpy", "matplotlib", "sklearn", "scipy")


def test_every_subpackage_is_listed_in_pyproject():
    """A folder with an __init__.py left out of [tool.setuptools] packages would be
    silently dropped from the wheel, though it imports under an editable install."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    roots = {"privkit": "privkit", **config["package-dir"]}
    found = set()
    for package, folder in roots.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            found.add(".".join([package, *relative.parts]))
    assert found == listed


def test_version_matches_pyproject():
    """``privkit.__version__`` is the distribution's version."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert privkit.__version__ == project["version"]


def test_all_names_exist():
    """Every name in ``__all__`` of each public package is importable."""
    import privkit.accountants
    import privkit.algorithms
    import privkit.audits
    import privkit.mechanisms

    for module in (privkit, privkit.accountants, privkit.mechanisms, privkit.algorithms,
                   privkit.audits):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], module.__name__


def test_import_privkit_imports_no_heavy_dependency():
    """``import privkit`` loads none of torch, opacus, cvxpy, matplotlib, scikit-learn
    or scipy (checked in a fresh interpreter)."""
    code = f"import sys, privkit; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd="/")
    assert out.stdout.strip() == ""


def test_core_imports_no_plugin_package():
    """The core never imports privkit.mechanisms, .algorithms or .audits at import time."""
    code = ("import sys, privkit; print(','.join(m for m in sys.modules if m.startswith("
            "('privkit.mechanisms', 'privkit.algorithms', 'privkit.audits'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd="/")
    assert out.stdout.strip() == ""


def test_mapped_packages_import_from_the_repository_root():
    """From the root, ``./privkit`` shadows the installed package; the checkout finder
    still resolves ``privkit.mechanisms`` (and the other mapped folders) to the root."""
    root = Path(__file__).resolve().parents[2]
    code = ("from privkit.mechanisms import Laplace; import privkit.algorithms, privkit.audits; "
            "import privkit; print(privkit.mechanisms.__file__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip().endswith(str(Path("mechanisms") / "__init__.py"))
