"""Imports from a source checkout: ``privkit.mechanisms``, ``.algorithms`` and ``.audits``.

The repository keeps the core in ``privkit/`` and the three plug-in packages at the root
(``mechanisms/``, ``algorithms/``, ``audits/``); the installed distribution maps them into
the ``privkit`` namespace. When Python runs from the repository root, ``./privkit`` (the
core alone) shadows the installed package, and ``privkit.mechanisms`` would not be found.
This finder, appended to ``sys.meta_path`` only when ``privkit`` itself was imported from a
privkit source checkout, resolves exactly those three names to the root folders; every
other import, and every installed copy, is left to Python's own finders (which run first).

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

_MAPPED = ("mechanisms", "algorithms", "audits")


class _SourceTreeFinder(importlib.abc.MetaPathFinder):
    """Find ``privkit.<name>`` for the mapped names in a checkout's root folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.partition(".")
        if package != "privkit" or name not in _MAPPED:
            return None
        folder = self.root / name
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)])


def install(package_file: str) -> None:
    """Add the finder if ``package_file`` (privkit's ``__init__.py``) is in a checkout."""
    root = Path(package_file).resolve().parent.parent
    project = root / "pyproject.toml"
    if not all((root / name / "__init__.py").is_file() for name in _MAPPED):
        return
    if not project.is_file() or 'name = "privkit"' not in project.read_text(encoding="utf-8"):
        return
    if not any(isinstance(f, _SourceTreeFinder) for f in sys.meta_path):
        sys.meta_path.append(_SourceTreeFinder(root))
