"""Test helpers: run a call and capture everything it says besides its return value.

``capture(call)`` runs ``call()`` under a deadline and returns a :class:`Said`: the
exception it raised (with its whole chain), the warnings and logging records it emitted
(every logger enabled at every level, so a debug line counts too) and what it wrote to
``sys.stdout`` / ``sys.stderr``. ``leaks(said)`` lists where the planted sentinels of
:data:`SENTINELS` appear in that text. Used by ``tests/core/test_sentinel.py`` and the
mechanism tests (issue 22: no exception, warning or log line contains a private value).
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import signal
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import attrs

#: A distinctive float planted in private data, and its usual printed forms.
SENTINEL_FLOAT = 123456.789
#: A distinctive label planted among private labels.
SENTINEL_LABEL = "SENTINEL-7f3a"
#: A distinctive integer count: an integer answer, a number of rows, of cells.
SENTINEL_COUNT = 1187

#: Where a sentinel shows, by its name. The float's forms: repr and str (123456.789),
#: %g (123457), %.3g-%.8g (1.23e+05 ... 123456.79), %e, and 1e300 times it
#: (1.23456789e+305); hex digits before "123456" are an address, not the value. The
#: label: its prefix (an address can hold "7f3a"). The count: not inside a longer
#: number or after a decimal point.
SENTINELS = {
    "float": re.compile(r"(?<![0-9a-fA-Fx.])12345[67]|(?<![0-9])1\.2345[67]|"
                        r"(?<![0-9])1\.23[45]?e\+?0*5\b|(?<![0-9])1\.2346e"),
    "label": re.compile(r"SENTINEL"),
    "count": re.compile(r"(?<![0-9.])1187(?![0-9])|(?<![0-9])1\.187e\+?0*3"),
}


class HangError(Exception):
    """A call ran past its deadline (a loop that would never end)."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`HangError` in the main thread after ``seconds`` (POSIX timers)."""
    def stop(signum: int, frame: Any) -> None:
        raise HangError(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


@attrs.define
class Said:
    """What a call said besides its return value."""

    result: Any = None
    error: BaseException | None = None
    warnings: list[str] = attrs.field(factory=list)
    logs: list[str] = attrs.field(factory=list)
    stdout: str = ""
    stderr: str = ""

    @property
    def error_text(self) -> str:
        return "\n".join(exception_texts(self.error)) if self.error is not None else ""

    def texts(self) -> dict[str, str]:
        return {"exception": self.error_text, "warnings": "\n".join(self.warnings),
                "logs": "\n".join(self.logs), "stdout": self.stdout, "stderr": self.stderr}


def exception_texts(error: BaseException) -> list[str]:
    """str, repr, args, notes and the formatted traceback of ``error`` and of every
    exception chained to it (``__cause__``, ``__context__``, exception groups)."""
    out: list[str] = []
    seen: set[int] = set()
    todo = [error]
    while todo:
        exc = todo.pop()
        if id(exc) in seen:
            continue
        seen.add(id(exc))
        out += [type(exc).__name__, _safe(str, exc), _safe(repr, exc), _safe(repr, exc.args)]
        out += [str(note) for note in getattr(exc, "__notes__", ())]
        out.append("".join(traceback.format_exception_only(type(exc), exc)))
        todo += [e for e in (exc.__cause__, exc.__context__) if e is not None]
        todo += list(getattr(exc, "exceptions", ()))
    return out


def _safe(show: Callable[[Any], str], value: Any) -> str:
    try:
        return show(value)
    except Exception as exc:
        return f"<unprintable: {type(exc).__name__}>"


def capture(call: Callable[[], Any], *, seconds: float = 30.0) -> Said:
    """Run ``call()``; record its result or exception, its warnings (every one, always
    shown), every logging record of every logger at every level, and its output."""
    said = Said()
    records: list[logging.LogRecord] = []
    original_handle = logging.Logger.handle

    def handle(self: logging.Logger, record: logging.LogRecord) -> None:
        records.append(record)
        original_handle(self, record)

    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        caught = stack.enter_context(warnings.catch_warnings(record=True))
        warnings.simplefilter("always")
        stack.enter_context(mock.patch.object(logging.Logger, "handle", handle))
        stack.enter_context(mock.patch.object(logging.Logger, "isEnabledFor",
                                              return_value=True))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        try:
            with deadline(seconds):
                said.result = call()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            said.error = exc
    said.warnings = [f"{w.category.__name__}: {_safe(str, w.message)} "
                     f"{_safe(repr, getattr(w.message, 'args', ()))}" for w in caught]
    said.logs = [f"{r.levelname} {r.name}: {_safe(logging.LogRecord.getMessage, r)} "
                 f"{_safe(repr, r.args)}" for r in records]
    said.stdout, said.stderr = out.getvalue(), err.getvalue()
    return said


def leaks(said: Said) -> list[str]:
    """Each ``"<channel> shows the <sentinel>: <excerpt>"`` found in what was said."""
    found = []
    for channel, text in said.texts().items():
        for name, pattern in SENTINELS.items():
            match = pattern.search(text)
            if match:
                lo, hi = max(match.start() - 60, 0), match.end() + 60
                excerpt = text[lo:hi].replace("\n", " ")
                found.append(f"{channel} shows the {name} sentinel: ...{excerpt}...")
    return found
