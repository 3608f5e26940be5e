"""Plug-ins across processes: mechanisms and accountants from installed packages.

A package adds mechanisms and accountants to privkit by declaring entry points (the way
pytest's ``pytest11`` and Hypothesis' ``hypothesis`` groups work) in its
``pyproject.toml``::

    [project.entry-points."privkit.mechanisms"]
    noisy_count = "mypackage.count:NoisyCount"        # name = the mechanism's kind

    [project.entry-points."privkit.accountants"]
    mine = "mypackage.accountant:MyAccountant"        # name = the accountant's name

Once the package is installed, its mechanism's kind is read from plan files by
``privkit account``, audited by ``privkit audit NAME`` and listed by
:func:`~privkit.registered_mechanisms`, and its accountant is used by
:func:`~privkit.tightest`, :func:`~privkit.get_accountant` and ``privkit account``, with
no flag and no import in the user's code. Code that is not installed is imported with
``privkit account --import MODULE`` (and ``privkit audit --import MODULE``).

The entry points are read lazily: ``import privkit`` reads none. A group is loaded, once
per process, the first time a registry is asked for a name it does not know or is asked
to list everything. A mechanism entry point must name a
:class:`~privkit.Mechanism` subclass whose ``kind`` is the entry point's name (importing
it registers it); an accountant entry point names a factory (usually the
:class:`~privkit.Accountant` subclass) registered under the entry point's name. A kind or
name that is taken (by privkit or by another plug-in) is refused, as in code: only a class
that says ``replace=True`` replaces one. A plug-in that fails to load raises
:class:`~privkit.errors.PluginError` naming the entry point and its package; nothing of a
failed group is marked loaded, so the error is raised again on the next use.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from privkit.errors import PluginError

__all__ = ["ACCOUNTANT_GROUP", "MECHANISM_GROUP", "import_modules", "load_group"]

#: The entry-point group of mechanisms (entry point name: the mechanism's ``kind``).
MECHANISM_GROUP = "privkit.mechanisms"
#: The entry-point group of accountants (entry point name: the accountant's ``name``).
ACCOUNTANT_GROUP = "privkit.accountants"

#: The groups loaded completely in this process.
_LOADED: set[str] = set()
#: The entry points (group, name, value) already accepted (a retry skips them).
_ACCEPTED: set[tuple[str, str, str]] = set()


def _package(entry_point: Any) -> str:
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return "an unknown distribution"
    return f"the package {dist.name} {dist.version}"


def load_group(group: str, accept: Callable[[str, Any], None]) -> None:
    """Load every entry point of ``group`` once per process, calling
    ``accept(name, loaded_object)`` for each (the registry's own check and registration,
    which raises :class:`~privkit.errors.PrivkitError` to refuse it)."""
    if group in _LOADED:
        return
    from importlib.metadata import entry_points

    _LOADED.add(group)  # a plug-in that lists the registry while it loads does not recurse
    try:
        for entry_point in sorted(entry_points(group=group), key=lambda e: e.name):
            key = (group, entry_point.name, entry_point.value)
            if key in _ACCEPTED:
                continue
            where = (f"the plug-in entry point {entry_point.name!r} = {entry_point.value!r} "
                     f"(group {group!r}) of {_package(entry_point)}")
            try:
                loaded = entry_point.load()
            except Exception as exc:
                raise PluginError(f"{where} failed to load: {type(exc).__name__}: "
                                  f"{exc}") from exc
            try:
                accept(entry_point.name, loaded)
            except PluginError:
                raise
            except Exception as exc:
                raise PluginError(f"{where} was refused: {exc}") from exc
            _ACCEPTED.add(key)
    except BaseException:
        _LOADED.discard(group)
        raise


def import_modules(modules: list[str] | None, owner: str) -> None:
    """Import each of ``modules`` (the ``--import`` option of the command line), with the
    current directory first on the path, as ``python -m`` has it; a module that fails
    raises :class:`~privkit.errors.PluginError` naming it."""
    import os
    import sys

    if not modules:
        return
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise PluginError(f"{owner}: --import {name}: the module failed to import: "
                              f"{type(exc).__name__}: {exc}") from exc
