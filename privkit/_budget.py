"""What a budget filter records, and the process it lives in: :class:`Budget`,
:class:`FilterEntry` and :func:`current_pid`, shared by :mod:`privkit.filter` and
:mod:`privkit.shared_filter` (which wraps a filter, so it may not import it).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import os
from typing import Any

import attrs

from privkit.plan import Block

__all__ = ["Budget", "FilterEntry", "current_pid"]

#: The current process id, kept by a fork hook rather than asked of the kernel on every
#: spend: a filter compares it with the id of the process that made it.
_PID = os.getpid()


def _after_fork_in_child() -> None:
    global _PID
    _PID = os.getpid()


os.register_at_fork(after_in_child=_after_fork_in_child)


def current_pid() -> int:
    """The id of the running process (kept up to date across ``fork``)."""
    return _PID


@attrs.frozen(kw_only=True)
class Budget:
    """An (epsilon, delta) amount: what a filter has spent or has left."""

    epsilon: float
    delta: float


@attrs.frozen(kw_only=True)
class FilterEntry:
    """One accepted spend: the block, what it cost under the filter's accountant (its
    native ``cost``), and that cost as (epsilon, delta) (and rho for zCDP)."""

    block: Block
    epsilon: float
    delta: float
    rho: float | None = None
    cost: Any = attrs.field(default=None, eq=False, repr=False)
