"""Progress bars for long runs: shown on a terminal, silent when piped or asked to be.

One helper for every long-running path (`privkit audit`, `privkit reproduce`, sequential
audits, long fits), so that `--quiet` and "nothing is drawn when stderr is not a
terminal" mean the same everywhere. Bars go to stderr (stdout keeps the plain result
lines a pipe reads) and use tqdm, an optional dependency (the ``audits`` extra); without
it, no bar is drawn.

A bar shows only public quantities: counts of finished work units fixed by parameters
(rows of a report, chunks of draws, grid cells), never anything computed from data.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Progress(Protocol):
    """What a caller may do with a bar: advance it."""

    def update(self, n: int = 1) -> Any: ...


class _Silent:
    def update(self, n: int = 1) -> None:
        return None


#: How many bars are open in this process (lines printed meanwhile go through tqdm).
_open = 0


def wanted(enabled: bool | None = None) -> bool:
    """Whether to draw a bar: ``enabled`` when given, else iff stderr is a terminal and
    tqdm is installed."""
    if enabled is not None:
        return enabled and importlib.util.find_spec("tqdm") is not None
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty()) and importlib.util.find_spec("tqdm") is not None


@contextmanager
def progress(total: int | None, desc: str, *, unit: str = "it",
             enabled: bool | None = None) -> Iterator[Progress]:
    """A bar of ``total`` units labelled ``desc``, or a silent stand-in.

    ``enabled=None`` draws the bar only on a terminal (see `wanted`); ``False`` never
    draws (``--quiet``); ``True`` draws whenever tqdm is installed. The bar is closed
    on exit, also when the body raises (Ctrl-C included), and leaves no line behind.
    """
    if not wanted(enabled):
        yield _Silent()
        return
    from tqdm import tqdm

    global _open
    bar = tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr,
               dynamic_ncols=True)
    _open += 1
    try:
        yield bar
    finally:
        _open -= 1
        bar.close()


def note(line: str) -> None:
    """Print ``line`` to stderr above any open bar (a plain ``print`` would tear it)."""
    if _open:
        from tqdm import tqdm

        tqdm.write(line, file=sys.stderr)
        sys.stderr.flush()
    else:
        print(line, file=sys.stderr, flush=True)
