"""Docstring examples run, and every public name is documented.

Doctests are collected here, through the installed package, rather than by pytest's
``--doctest-modules`` on the source folders: collecting by path would import a second
copy of each module under another name (two ``Neighbouring`` enums that never compare
equal).
"""

import doctest
import importlib
import pkgutil

import pytest

import privkit

MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(privkit.__path__, "privkit.")
    if name != "privkit.__main__"
)


@pytest.mark.parametrize("name", ["privkit", *MODULES])
def test_docstring_examples_run(name):
    """Every example in the module's docstrings gives the output it shows."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_there_are_doctests():
    """The doctest run above is not vacuous."""
    finder = doctest.DocTestFinder()
    examples = sum(len(t.examples) for name in MODULES
                   for t in finder.find(importlib.import_module(name)))
    assert examples >= 20


@pytest.mark.parametrize("name", privkit.__all__)
def test_public_names_are_documented(name):
    """Every name privkit exports has a docstring (values excepted)."""
    obj = getattr(privkit, name)
    if isinstance(obj, str | type(privkit.AddRemove)) or name in ("Block",):
        return
    assert (obj.__doc__ or "").strip(), name
