"""One fit's transcript: everything an estimator hands its caller, split into a discrete
and a continuous half.

:func:`record_transcript` fits an estimator once and records, as named :class:`Part`\\ s,

* every public fitted attribute (a name ending in one underscore, not a dunder, not
  starting with one): its type, shape, dtype and value, and the exception if reading it
  raises;
* the output of every query method the estimator has (``predict``, ``predict_proba``,
  ``predict_log_proba``, ``decision_function``, ``score_samples``, ``transform``, and any
  the case names) on the probe points, or the exception it raises;
* the exception ``fit`` raised, if any (type and message, with its chained causes);
* the warnings emitted (category and message) and the log records that reached the root
  logger (logger, level and message), in order, and the text printed to standard output
  and standard error.

Each part has a discrete token (names, types, shapes, dtypes, labels, integers, booleans,
strings, exception and warning texts: a hashable value compared for equality) and a
vector of its floating-point values. Memory addresses in texts (``at 0x7f...``) are
masked, so are integers equal to the fit's own ``random_state`` and the ``random_state``
of nested objects (a sub-estimator seeded from the fit's generator), and random
generators are recorded by type only: they differ from fit to fit whatever the data.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import enum
import io
import logging
import re
import types
import warnings
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

__all__ = ["PROBE_METHODS", "Part", "Transcript", "record_transcript"]

#: The query methods called on the probe points, when the estimator has them.
PROBE_METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function",
                 "score_samples", "transform")
#: How deep nested objects (a plan inside a guarantee inside a sub-estimator) are read.
_MAX_DEPTH = 8
#: Exceptions chained by ``raise ... from`` (or during handling) that are recorded.
_MAX_CHAIN = 5
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
_EMPTY: NDArray[np.float64] = np.zeros(0)


def _scrub(text: str) -> str:
    """``text`` with memory addresses masked (they differ between any two fits)."""
    return _ADDRESS.sub("0x?", text)


@attrs.frozen
class Part:
    """One named piece of a transcript: ``token`` is its discrete half (hashable, compared
    for equality), ``values`` its floating-point values, flattened in a fixed order."""

    name: str
    token: Hashable
    values: NDArray[np.float64] = attrs.field(eq=False, repr=False)


@attrs.frozen
class Transcript:
    """Everything one fit handed its caller, as :class:`Part`\\ s in a fixed order."""

    parts: tuple[Part, ...]

    def __getitem__(self, name: str) -> Part:
        for part in self.parts:
            if part.name == name:
                return part
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parts)

    @property
    def discrete(self) -> tuple[tuple[str, Hashable], ...]:
        """The discrete half: every part's name and token."""
        return tuple((p.name, p.token) for p in self.parts)

    @property
    def continuous(self) -> NDArray[np.float64]:
        """The continuous half: every part's floating-point values, concatenated."""
        if not self.parts:
            return _EMPTY
        return np.concatenate([p.values for p in self.parts])


def _qualname(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


class _Encoder:
    """Turns a value into a discrete token, appending its floats to ``floats``."""

    def __init__(self, random_state: Any) -> None:
        self.seed = random_state if isinstance(random_state, int) else None
        self.floats: list[NDArray[np.float64]] = []
        self.active: set[int] = set()

    def values(self) -> NDArray[np.float64]:
        return np.concatenate(self.floats) if self.floats else _EMPTY

    def token(self, value: Any, depth: int = 0, *, labels: bool = False) -> Hashable:
        if value is None or isinstance(value, bool | np.bool_):
            return None if value is None else ("bool", bool(value))
        if isinstance(value, int | np.integer):
            number = int(value)
            return "random_state" if self.seed is not None and number == self.seed else (
                "int", number)
        if isinstance(value, float | np.floating) and not labels:
            self.floats.append(np.array([float(value)]))
            return ("float", type(value).__name__)
        if isinstance(value, complex | np.complexfloating) and not labels:
            self.floats.append(np.array([value.real, value.imag], dtype=float))
            return ("complex", type(value).__name__)
        if isinstance(value, float | np.floating | complex | np.complexfloating):
            return ("label", type(value).__name__, repr(value.item() if hasattr(
                value, "item") else value))
        if isinstance(value, str):
            return ("str", _scrub(value))
        if isinstance(value, bytes):
            return ("bytes", value)
        if isinstance(value, np.ndarray):
            return self._array(value, depth, labels)
        return self._object(value, depth, labels)

    def _array(self, value: NDArray[Any], depth: int, labels: bool) -> Hashable:
        head = ("ndarray", value.dtype.str, value.shape)
        kind = value.dtype.kind
        if kind == "f" and not labels:
            self.floats.append(value.astype(np.float64).ravel())
            return head
        if kind == "c" and not labels:
            flat = value.ravel()
            self.floats.append(np.concatenate([flat.real, flat.imag]).astype(np.float64))
            return head
        if kind in "biufcmM":
            return (*head, np.ascontiguousarray(value).tobytes())
        if kind in "US":
            return (*head, tuple(value.ravel().tolist()))
        return (*head, tuple(self.token(v, depth + 1, labels=labels) for v in value.ravel()))

    def _object(self, value: Any, depth: int, labels: bool) -> Hashable:
        kind = type(value)
        name = _qualname(kind)
        if isinstance(value, np.random.Generator | np.random.RandomState
                      | np.random.BitGenerator | np.random.SeedSequence):
            return ("rng", name)  # drawn from the fit's own random_state
        if isinstance(value, enum.Enum):
            return ("enum", name, value.name)
        if isinstance(value, type):
            return ("type", _qualname(value))
        if isinstance(value, types.FunctionType | types.BuiltinFunctionType | types.MethodType
                      | types.ModuleType):
            return ("callable", getattr(value, "__qualname__", getattr(value, "__name__", "")))
        if id(value) in self.active:
            return ("cycle", name)
        if depth >= _MAX_DEPTH:
            return ("deep", name)
        self.active.add(id(value))
        try:
            return self._contents(value, name, depth, labels)
        finally:
            self.active.discard(id(value))

    def _contents(self, value: Any, name: str, depth: int, labels: bool) -> Hashable:
        down = depth + 1
        if isinstance(value, list | tuple):
            return (name, tuple(self.token(v, down, labels=labels) for v in value))
        if isinstance(value, dict):
            return (name, tuple((self.token(k, down, labels=True), self.token(v, down))
                                for k, v in value.items()))
        if isinstance(value, set | frozenset):
            keys = [self.token(v, down, labels=True) for v in value]
            return (name, tuple(sorted(keys, key=repr)))
        if attrs.has(type(value)):
            return (name, tuple((f.name, self._field(f.name, getattr(value, f.name), down))
                                for f in attrs.fields(type(value))))
        if hasattr(value, "__array__"):  # torch tensors, array-likes
            try:
                array = np.asarray(value)
            except Exception:  # an unreadable array-like: its repr below
                array = None
            if array is not None and array.dtype != object:
                return ("array-like", name, self._array(array, down, labels))
        fields = getattr(value, "__dict__", None)
        if isinstance(fields, dict):
            return (name, tuple((k, self._field(k, v, down)) for k, v in fields.items()))
        return ("repr", name, _scrub(repr(value))[:500])

    def _field(self, name: str, value: Any, depth: int) -> Hashable:
        """A nested object's field; a nested estimator's ``random_state`` (a seed drawn
        from the fit's own generator) is masked like the fit's."""
        return "random_state" if name == "random_state" else self.token(value, depth)


def _exception_token(exc: BaseException) -> Hashable:
    """The exception's type and message, with the causes and contexts chained to it."""
    chain: list[tuple[str, str]] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < _MAX_CHAIN:
        chain.append((_qualname(type(current)), _scrub(str(current))))
        current = current.__cause__ or (None if current.__suppress_context__
                                        else current.__context__)
    return ("raised", tuple(chain))


def public_attributes(estimator: Any) -> list[str]:
    """The names of ``estimator``'s public fitted attributes: ending in one underscore,
    not a dunder, not starting with an underscore (scikit-learn's convention)."""
    return [name for name in dir(estimator)
            if name.endswith("_") and not name.endswith("__") and not name.startswith("_")]


class _LogLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self.lines: list[tuple[str, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.name, record.levelname, _scrub(record.getMessage())))


@contextmanager
def _captured_logs() -> Iterator[_LogLines]:
    """Route what reaches the root logger to a list (and nowhere else) while recording;
    restore the logging configuration afterwards."""
    root = logging.getLogger()
    handler = _LogLines()
    saved = (root.handlers[:], logging.root.manager.disable, logging.lastResort)
    root.handlers[:] = [handler]
    logging.disable(logging.NOTSET)
    logging.lastResort = None
    try:
        yield handler
    finally:
        root.handlers[:] = saved[0]
        logging.disable(saved[1])
        logging.lastResort = saved[2]


def _part(name: str, value: Any, random_state: Any, *, labels: bool = False) -> Part:
    encoder = _Encoder(random_state)
    token = encoder.token(value, labels=labels)
    return Part(name=name, token=token, values=encoder.values())


def record_transcript(estimator: Any, X: Any, y: Any = None, *, probes: Any = None,
                      fit_params: dict[str, Any] | None = None,
                      methods: Sequence[str] = (), random_state: Any = None) -> Transcript:
    """Fit ``estimator`` on ``(X, y)`` (``fit(X)`` when ``y`` is None) and record its
    transcript (see the module docstring).

    ``estimator`` is fitted in place (pass a fresh one); ``random_state`` is the seed it
    was given, masked wherever it reappears as an integer. ``probes`` are the query points
    (none: no query method is called); ``methods`` names query methods beyond
    :data:`PROBE_METHODS`. ``fit`` may raise any :class:`Exception`: that is recorded,
    and the attributes it left behind and the query methods are still read, as a caller
    catching the exception could.
    """
    parts: list[Part] = []
    printed = io.StringIO()
    with (warnings.catch_warnings(record=True) as caught, _captured_logs() as logs,
          redirect_stdout(printed), redirect_stderr(printed)):
        warnings.simplefilter("always")
        try:
            if y is None:
                estimator.fit(X, **(fit_params or {}))
            else:
                estimator.fit(X, y, **(fit_params or {}))
        except Exception as exc:  # every failure is part of the transcript
            parts.append(Part(name="fit", token=_exception_token(exc), values=_EMPTY))
        classifier = _has(estimator, "classes_")
        for name in public_attributes(estimator):
            try:
                value = getattr(estimator, name)
            except Exception as exc:
                parts.append(Part(name=name, token=_exception_token(exc), values=_EMPTY))
                continue
            parts.append(_part(name, value, random_state, labels=name == "classes_"))
        if probes is not None:
            for method in (*PROBE_METHODS, *(m for m in methods if m not in PROBE_METHODS)):
                if not _has(estimator, method):
                    continue
                try:
                    out = getattr(estimator, method)(probes)
                except Exception as exc:
                    parts.append(Part(name=f"{method}(probes)", token=_exception_token(exc),
                                      values=_EMPTY))
                    continue
                parts.append(_part(f"{method}(probes)", out, random_state,
                                   labels=method == "predict" and classifier))
    parts.append(Part(name="warnings", values=_EMPTY, token=tuple(
        (_qualname(w.category), _scrub(str(w.message))) for w in caught)))
    parts.append(Part(name="log", token=tuple(logs.lines), values=_EMPTY))
    parts.append(Part(name="printed", token=_scrub(printed.getvalue()), values=_EMPTY))
    return Transcript(parts=tuple(parts))


def _has(estimator: Any, name: str) -> bool:
    """``hasattr`` that treats any exception (not only AttributeError) as absent."""
    try:
        getattr(estimator, name)
    except Exception:
        return False
    return True
