"""What accountants read from a plan's leaves, computed once per leaf per accounting.

A leaf's guarantees (``Leaf.guarantees()``) are built afresh on every call, and every
accountant reads them, several times (to check support, then to fold). Inside
:func:`shared` (which :meth:`privkit.accountant.Accountant.cost` and
:func:`privkit.tightest` open) each leaf object's guarantees are built once and reused;
outside it, the functions here simply call the leaf. A leaf class that overrides one of
``Leaf``'s readers (``epsilon_at``, ``rdp``, ``zcdp_rho``) is always asked directly.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit.guarantees import Guarantee
from privkit.plan import Leaf

__all__ = ["guarantees", "pure_epsilon", "rdp", "rho", "shared"]

_MEMO: contextvars.ContextVar[dict[tuple[int, str], tuple[Leaf, Any]] | None] = (
    contextvars.ContextVar("privkit_leaf_guarantees", default=None))


@contextlib.contextmanager
def shared() -> Iterator[None]:
    """Within this block, each leaf's guarantees are built once (nested blocks share),
    and the cyclic garbage collector is paused: a wide plan's accounting allocates a few
    objects per leaf, none in reference cycles, and each of the collections those
    allocations trigger would walk every live object (the plan's leaves, their
    guarantees) again: a third of the time of a 100,000-leaf plan."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
        _MEMO.reset(token)


def _memo(leaf: Leaf, what: str, compute: Callable[[], Any]) -> Any:
    memo = _MEMO.get()
    if memo is None:
        return compute()
    hit = memo.get((id(leaf), what))
    if hit is not None and hit[0] is leaf:
        return hit[1]
    found = compute()
    memo[(id(leaf), what)] = (leaf, found)  # the leaf is kept alive: its id stays its own
    return found


def guarantees(leaf: Leaf) -> tuple[Guarantee, ...]:
    """``leaf.guarantees()``, built once per leaf object inside :func:`shared`."""
    found: tuple[Guarantee, ...] = _memo(leaf, "guarantees", leaf.guarantees)
    return found


def pure_epsilon(leaf: Leaf) -> float:
    """``leaf.epsilon_at(0.0)``: the smallest pure epsilon over its guarantees."""
    if type(leaf).epsilon_at is not Leaf.epsilon_at:
        return leaf.epsilon_at(0.0)
    found: float = _memo(leaf, "pure", lambda: min(g.epsilon_at(0.0) for g in guarantees(leaf)))
    return found


def rdp(leaf: Leaf, orders: NDArray[np.float64]) -> NDArray[np.float64]:
    """``leaf.rdp(orders)``: the smallest RDP bound at each order."""
    if type(leaf).rdp is not Leaf.rdp:
        return leaf.rdp(orders)
    result: NDArray[np.float64] = np.minimum.reduce([g.rdp(orders) for g in guarantees(leaf)])
    return result


def rho(leaf: Leaf) -> float:
    """``leaf.zcdp_rho()``: the smallest zCDP rho."""
    if type(leaf).zcdp_rho is not Leaf.zcdp_rho:
        return leaf.zcdp_rho()
    found: float = _memo(leaf, "rho", lambda: min(g.zcdp_rho() for g in guarantees(leaf)))
    return found
