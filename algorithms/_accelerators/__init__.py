"""The kernels behind the SVDD solver and the random Fourier features: the compiled
accelerators (``_hull``, ``_rff``, built when a C compiler works) if they import, else
their numpy paths (``_hull_numpy``, ``_rff_numpy``), which give the same results (the
random features bit for bit, the solver to rounding).

This folder holds all four, and this module chooses; they serve two families: ``_hull``
the SVDD dual of Park 2022 (:mod:`privkit.algorithms.svdd`), ``_rff`` the random features
(:mod:`privkit.algorithms.kernels`) and Park 2022's equilibrium-point descent. They import
no other part of privkit.

Set the environment variable ``PRIVKIT_PURE=1`` before importing privkit to use the numpy
paths even where the accelerators are built (the tests and CI run both).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["COMPILED", "hull", "pure_requested", "rff"]


def pure_requested() -> bool:
    """Whether ``PRIVKIT_PURE`` asks for the numpy paths (any value but empty or 0)."""
    return os.environ.get("PRIVKIT_PURE", "").strip() not in ("", "0")


def _choose(name: str) -> tuple[ModuleType, bool]:
    """The compiled module ``name`` unless it is absent, fails to load or the numpy path
    is requested; then ``name + "_numpy"``. With whether it is the compiled one."""
    if not pure_requested():
        try:
            return importlib.import_module(f"{__package__}.{name}"), True
        except ImportError:
            pass
    return importlib.import_module(f"{__package__}.{name}_numpy"), False


if TYPE_CHECKING:
    from . import _hull_numpy as hull
    from . import _rff_numpy as rff

    COMPILED: dict[str, bool]
else:
    hull, _hull_compiled = _choose("_hull")
    rff, _rff_compiled = _choose("_rff")
    #: which kernels are the compiled accelerators (False: the numpy path)
    COMPILED = {"hull": _hull_compiled, "rff": _rff_compiled}
