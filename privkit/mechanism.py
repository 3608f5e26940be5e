"""The Mechanism abstraction: a block that releases values and knows its privacy.

A mechanism is declared once, as one frozen attrs class whose public fields are its
parameters (noise scale, declared sensitivity, ...). Its author writes *hooks*: methods
privkit calls and users do not (a caller calls ``release`` or ``simulate``):

* ``guarantees()``: every :class:`~privkit.guarantees.Guarantee` that holds for one run,
  most precise first, so each accountant takes the form that composes best for it;
* ``sample(value, rng, shape, **options)``: ``shape`` draws of the output with plain
  noise, for ``simulate``;
* optionally ``prepare(value, owner)``: the query answer as an array, mapped into the
  mechanism's public range (default :func:`as_value`), refusing what it cannot take by
  the rule below;
* optionally ``safe_sample(value, rng, shape, **options)``: the draws ``release``
  publishes. By default the output of ``sample`` when it holds integers (or indices,
  booleans), which have no low-order bits to leak; a float-valued mechanism must define
  it (additive noise derives from :class:`AdditiveMechanism`, whose ``safe_sample`` is
  the power-of-two grid), or ``release`` raises :class:`~privkit.errors.UnsafeReleaseError`
  before anything is recorded: plain floats off the safe path are refused loudly, never
  published with a warning that can be silenced (Mironov 2012);
* optionally the classmethod ``worst_case(epsilon, delta)``: the mechanism calibrated for
  an audit with its worst-case neighbouring inputs (:class:`WorstCase`).

The validators a hook needs are public in :mod:`privkit.validation`. The base class
derives everything else from the fields and the hooks:

* ``release(value, rng=..., size=...)``: validation, the floating-point-safe path and
  ledger recording;
* ``simulate(...)``: the same with plain floating-point noise, for experiments and
  audits; **not** for publication (Mironov 2012) and not recorded;
* the plan-file form (:meth:`~privkit.plan.Leaf.to_spec`, read by
  :func:`privkit.plan_from_spec`), derived from the fields (:mod:`privkit.spec`);
* registration by ``kind`` (:func:`registered_mechanisms`), so plan files, the shared
  tests and ``privkit audit`` cover a new mechanism with no other edit. A kind that is
  taken is refused unless the class says ``replace=True``
  (``class MyLaplace(Laplace, replace=True)``). An installed package's mechanisms are
  found through the entry-point group ``privkit.mechanisms`` (:mod:`privkit.plugins`).

**What counts as a run** (the ledger's one rule): a call to ``release`` is one run of the
mechanism on one query answer, whatever that answer's shape (a vector-valued query is
one query; its sensitivity covers every coordinate); ``size=s`` draws ``prod(s)``
independent runs.

**Query answers are private** (issue 22): whether ``release``/``simulate`` succeeds, and
every message it gives, depends on public things only, by one rule for every mechanism:

* *the form* of the answer, its dtype and, where the mechanism declares one, its shape
  (a vector of utilities with at least one candidate, a square matrix, ``n_classes``
  columns), is checked, and a refusal shows neither the value nor its shape
  (:func:`privkit._validation.private_fail`);
* *values beyond the range a mechanism represents*, infinities included, are clamped
  onto a public range the mechanism states (:meth:`AdditiveMechanism.clamp_bound` for
  additive noise, :data:`FLOAT_BOUND` for answers that are only compared or subtracted,
  the categories of randomized response, ``[0, 2^62]`` for counts). A clamp applied
  coordinate by coordinate is 1-Lipschitz in every coordinate, so the clamped query moves
  at most as far as the query in the L1, L2 and L-infinity norms (and utilities that move
  together still do): it is part of the query, at no cost in privacy;
* *NaN*, and a non-integer where the mechanism declares integer answers, are refused
  with a message that shows nothing of the value. No query that meets its declaration
  answers so (``|NaN - x| <= Δ`` holds for no ``x``; an integer-valued query answers
  integers on every dataset), so the refusal happens on no dataset for such a query: it
  does not depend on the data. Any value put in its place would be released under a
  guarantee privkit cannot prove. Non-finite *records* are mapped by estimators before
  the query is computed;
* an empty answer (no coordinates) releases an empty array; nothing loops on any input.

Adding a mechanism touches one file: the README's "Adding a mechanism" example defines
one in a dozen lines and plans, accounts, serialises, releases and audits it
(``tests/core/test_readme.py`` runs it).

.. versionadded:: 0.1.0
.. versionchanged:: 0.2.0
   One class per mechanism: ``release``/``simulate``, the plan-file form, registration
   and the ledger rule come from the base class.
.. versionchanged:: 0.3.0
   The hooks are public (``sample``, ``prepare``, ``safe_sample``, ``standard_noise``;
   formerly ``_sample``, ``_prepare``, ``_release``, ``_standard_noise``); a taken kind
   is refused without ``replace=True``; a float-valued mechanism with no safe path is
   refused by ``release``; plug-ins load from entry points.
"""

from __future__ import annotations

import abc
import math
import numbers
from collections.abc import Callable
from typing import Any, ClassVar, cast

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.errors import InvalidParameterError, UnsafeReleaseError
from privkit.ledger import record
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Leaf
from privkit.rng import RNGLike, as_generator
from privkit.spec import BLOCKS, from_spec

__all__ = [
    "FLOAT_BOUND",
    "AdditiveMechanism",
    "Mechanism",
    "Size",
    "WorstCase",
    "as_size",
    "as_value",
    "mechanism_from_spec",
    "noise_scale_field",
    "registered_mechanisms",
    "sensitivity_field",
]

#: The ``size`` argument of releases: ``None`` (one draw), an int, or a shape tuple.
Size = int | tuple[int, ...] | None

#: The public range ``[-FLOAT_BOUND, FLOAT_BOUND]`` onto which :func:`as_value` clamps real
#: answers (infinities included) by default: the range of the mechanisms that only compare
#: or subtract answers (selection, sparse vector). 2^1000 (about 1.07e301) is beyond any
#: answer a query in real units gives, and the difference of two such answers, 2^1001,
#: is still a finite double.
FLOAT_BOUND = 2.0**1000


def registered_mechanisms() -> dict[str, type[Mechanism]]:
    """Every mechanism class with a ``kind``, by kind: the built-in ones, those defined
    in this process and those of installed plug-ins (:mod:`privkit.plugins`)."""
    return {kind: cls for kind, cls in BLOCKS.all().items() if issubclass(cls, Mechanism)}


def sensitivity_field(norm: Norm | str) -> Any:
    """An attrs field for a :class:`Sensitivity` measured in ``norm`` (required).

    In plan files it is written as ``"<norm>_sensitivity": value`` (``l1_sensitivity``,
    ``l2_sensitivity``, ``linf_sensitivity``); the relation is the plan's.
    """
    norm = Norm.parse(norm, owner="sensitivity_field")

    def validate(instance: Any, attribute: Any, value: Any) -> None:
        owner = type(instance).__name__
        check.instance(check.field_name(attribute), value, Sensitivity, owner)
        if value.norm is not norm:
            raise check.fail(check.field_name(attribute), value,
                             f"a sensitivity in the {norm.value} norm", owner,
                             f"convert it with .in_norm(Norm.{norm.name}, dimension=...)")

    return attrs.field(validator=validate, metadata={"norm": norm})


def noise_scale_field() -> Any:
    """An attrs field for the absolute noise scale: finite and > 0."""
    return attrs.field(validator=check.attrs_validator(check.positive_finite))


@attrs.frozen
class WorstCase:
    """A mechanism calibrated for an audit, and the neighbouring inputs on which its
    privacy loss is largest (or as large as privkit knows how to make it).

    ``options`` are extra keyword arguments of ``simulate`` (e.g. a threshold).
    ``statistic`` maps a batch of outputs to what the auditor looks at (a post-processing,
    so any bound on it is valid for the mechanism), e.g. the one coordinate that moves.
    ``ceiling`` is the largest fraction of the claimed epsilon that this pair can
    certify, where the pair is known not to reach the claim (1.0: it can).
    """

    mechanism: Mechanism
    first: Any
    second: Any
    options: dict[str, Any] = attrs.field(factory=dict)
    statistic: Callable[[Any], Any] | None = attrs.field(default=None, eq=False)
    ceiling: float = 1.0


class Mechanism(Leaf):
    """Base class of mechanisms. Subclasses are frozen, keyword-only attrs classes.

    A subclass defines ``kind`` (its name in plan files, the registry and ``privkit
    audit``; a taken kind needs the class keyword ``replace=True``), its fields and the
    hooks ``guarantees()`` and ``sample()``; optionally the hooks ``prepare`` (the query
    answer into the mechanism's range), ``safe_sample`` (the publication path, required
    when draws are floats) and the classmethod ``worst_case``. Callers call ``release``
    and ``simulate``, never the hooks.
    """

    __slots__ = ()
    #: Extra keyword arguments that ``release``/``simulate`` accept (e.g. ``threshold``).
    release_options: ClassVar[tuple[str, ...]] = ()

    # -- the hooks ---------------------------------------------------------------------

    @abc.abstractmethod
    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[Any]:
        """Hook: draw ``shape`` independent outputs for the query answer ``value`` (the
        output of :meth:`prepare`) with plain noise; ``simulate`` returns them."""

    # -- derived -----------------------------------------------------------------------

    @property
    def relation(self) -> Neighbouring:
        """The neighbouring relation, taken from the declared sensitivity."""
        sensitivity: Sensitivity = getattr(self, "sensitivity")  # noqa: B009
        return sensitivity.relation

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[Any]:
        """Hook: the query answer as an array, mapped into this mechanism's public range;
        refuses what it cannot take by the module's rule, never showing the value (the
        validators are in :mod:`privkit.validation`). Default: :func:`as_value`."""
        return as_value(value, owner)

    def safe_sample(self, value: NDArray[Any], rng: np.random.Generator,
                    shape: tuple[int, ...], **options: Any) -> NDArray[Any]:
        """Hook: the draws ``release`` publishes. By default those of :meth:`sample` when
        they are integers, booleans or indices, which have no low-order bits to leak;
        float draws raise :class:`~privkit.errors.UnsafeReleaseError` (before anything is
        recorded): a float-valued mechanism defines its own safe path, or derives from
        :class:`AdditiveMechanism`."""
        out = self.sample(value, rng, shape, **options)
        if np.asarray(out).dtype.kind not in "biu":
            raise UnsafeReleaseError(
                f"{type(self).__name__}.release would publish plain floating-point draws, "
                "whose low-order bits can reveal the input (Mironov 2012): define "
                f"{type(self).__name__}.safe_sample (the floating-point-safe path), or "
                "derive additive noise from AdditiveMechanism; simulate() gives plain "
                "draws for experiments")
        return out

    def _options(self, options: dict[str, Any], owner: str) -> dict[str, Any]:
        unknown = set(options) - set(self.release_options)
        if unknown:
            allowed = ", ".join(self.release_options) or "none"
            raise InvalidParameterError(
                f"unknown keyword argument(s) {sorted(unknown)} for {owner}; allowed: {allowed}")
        return options

    def release(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None,
                **options: Any) -> NDArray[Any]:
        """Release ``value`` privately; safe for publication and recorded in the ledger.

        Parameters
        ----------
        value : float or array of float
            The exact query answer. Its sensitivity must be the declared one.
        rng : Generator, int, SeedSequence or None
            Randomness (see :mod:`privkit.rng`; use ``privkit.secure_generator()`` for
            published releases).
        size : int or tuple of int, optional
            Draw this many independent releases; the output has shape
            ``(*size, *output_shape)``. They count as ``prod(size)`` runs in the ledger.
        """
        owner = f"{type(self).__name__}.release"
        x = self.prepare(value, owner)
        shape = as_size(size, owner)
        opts = self._options(options, owner)
        out = self.safe_sample(x, as_generator(rng, owner=owner), shape, **opts)
        record(self, math.prod(shape))
        return out

    def simulate(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None,
                 **options: Any) -> NDArray[Any]:
        """Like :meth:`release` with plain floating-point noise: NOT for publication.

        The low-order bits of floating-point noise can reveal the input (Mironov 2012), so
        use this only for simulation, benchmarks and audits. It is not recorded in ledgers.
        """
        owner = f"{type(self).__name__}.simulate"
        x = self.prepare(value, owner)
        shape = as_size(size, owner)
        opts = self._options(options, owner)
        return self.sample(x, as_generator(rng, owner=owner), shape, **opts)

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase | None:
        """Hook: this mechanism calibrated to ``epsilon`` (and ``delta`` where it needs
        one) with its worst-case neighbouring inputs, for ``privkit audit``; ``None`` if
        none is known."""
        return None

    def __str__(self) -> str:
        parts = []
        for field in attrs.fields(_attrs_class(type(self))):
            value = getattr(self, field.name)
            if isinstance(value, Neighbouring):
                continue
            if isinstance(value, Sensitivity):
                parts.append(f"{value.norm.value}_sensitivity={value.value:.6g}")
                continue
            shown = f"{value:.6g}" if isinstance(value, float) else str(value)
            parts.append(f"{check.field_name(field)}={shown}")
        return f"{type(self).__name__}({', '.join(parts)}): {self.guarantee()}"


def mechanism_from_spec(kind: str, body: Any, relation: Neighbouring) -> Mechanism:
    """Build the mechanism ``{kind: body}`` of a plan file under ``relation``
    (:func:`privkit.spec.from_spec`: every field must be given, a sensitivity has no
    default, unknown keys are errors, the values go through the class's validators)."""
    if kind not in registered_mechanisms():
        raise check.fail("kind", kind, f"one of {', '.join(registered_mechanisms())}",
                         "mechanism_from_spec")
    mechanism: Mechanism = from_spec({kind: body}, BLOCKS, relation, kind)
    return mechanism


class AdditiveMechanism(Mechanism):
    """A mechanism that adds noise of scale ``noise_scale`` to a real-valued query.

    The publication path (:meth:`safe_sample`) snaps the answer to a power-of-two grid chosen
    from public values and adds the noise in grid units (``privkit/mechanisms/_grid.py``),
    at no cost in privacy. Subclasses supply ``standard_noise(query_ndim)`` (unit-scale
    noise of the right law, with exact tails) and fields ``noise_scale`` and
    ``sensitivity``; mechanisms with integer outputs override ``safe_sample``.
    """

    __slots__ = ()
    noise_scale: float
    sensitivity: Sensitivity
    #: ``release(value, integer_valued=True)`` declares (publicly) that every possible
    #: answer is an integer, such as a count: the grid step then divides 1 and snapping
    #: costs nothing, so long histograms release at small epsilon.
    release_options: ClassVar[tuple[str, ...]] = ("integer_valued",)

    @property
    def noise_multiplier(self) -> float:
        """``noise_scale / sensitivity`` (unitless)."""
        return self.noise_scale / self.sensitivity.value

    def standard_noise(self, query_ndim: int) -> Callable[[np.random.Generator, tuple[int, ...]],
                       NDArray[np.float64]]:
        """The unit-scale noise sampler, ``sampler(rng, shape)``, for a query with
        ``query_ndim`` axes (a vector noise such as the L2 Laplace's is drawn over those
        axes). It must have exact tails: use the samplers of ``privkit.mechanisms._noise``.

        Required unless the subclass overrides both ``sample`` and ``safe_sample`` (as the
        integer-valued mechanisms do)."""
        raise NotImplementedError(f"{type(self).__name__} defines no standard_noise")

    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[Any]:
        # Plain floats represent any answer up to FLOAT_BOUND: simulate clamps onto that
        # range only (release clamps onto the grid's, clamp_bound, which can be far
        # narrower when the noise is fine: algorithms simulate such noise on purpose).
        if options.get("integer_valued", False):
            _grid_module().check_integers(value, f"{type(self).__name__}.simulate")
        clamped: NDArray[np.float64] = np.clip(value, -FLOAT_BOUND, FLOAT_BOUND)
        noise = self.standard_noise(value.ndim)(rng, shape + value.shape)
        return clamped + self.noise_scale * noise

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[Any]:
        # No clamp here: release clamps on the grid, simulate in sample (clamp_bound).
        return as_value(value, owner, bound=math.inf)

    def clamp_bound(self, dimension: int = 1, *, integer_valued: bool = False) -> float:
        """The public range of this mechanism's releases: each coordinate of a
        ``dimension``-coordinate answer is clamped onto ``[-clamp_bound, clamp_bound]``
        (infinities included) before the noise is added by ``release``. (``simulate``,
        with plain floats, clamps onto ``[-FLOAT_BOUND, FLOAT_BOUND]`` only.)

        It is ``(2^52 - 1) g`` for the power-of-two grid step ``g`` of
        ``privkit/mechanisms/_grid.py``, a function of ``noise_scale``, the sensitivity,
        ``dimension`` and ``integer_valued`` only: the largest answer the grid's exact
        integer arithmetic holds (2^28, about 2.7e8, for a scalar Laplace of noise scale
        1 and sensitivity 1). The clamp costs no privacy (see the module docstring). Centre
        a query by a public offset to keep its answers inside; a smaller unit cannot help
        (the grid scales with it). Raises, naming ``noise_scale``, where no safe grid
        exists (``release`` refuses those parameters too).
        """
        owner = f"{type(self).__name__}.clamp_bound"
        given: Any = dimension
        if isinstance(given, bool) or not isinstance(given, numbers.Integral) or given < 0:
            raise check.fail("dimension", given, "an integer >= 0", owner)
        d = max(int(given), 1)  # as on the grid: an empty answer counts as one coordinate
        penalty = float(d) if self.sensitivity.norm is Norm.L1 else math.sqrt(d)
        bound: float = _grid_module().clamp_bound(self.noise_scale, self.sensitivity.value,
                                                  penalty, integer_valued, owner)
        return bound

    def release(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None,
                **options: Any) -> NDArray[Any]:
        # The common scalar call in a user's loop (a float and a Generator) skips the array
        # normalisation; everything else takes the general path of Mechanism.release.
        scalar: Any = value
        generator: Any = rng
        if (type(scalar) is float and size is None and not options
                and type(generator) is np.random.Generator and math.isfinite(scalar)
                and type(self).prepare is AdditiveMechanism.prepare):
            out = self.safe_sample(cast(Any, scalar), generator, ())
            record(self, 1)
            return out
        return super().release(value, rng=rng, size=size, **options)

    def safe_sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
                    **options: Any) -> NDArray[Any]:
        release_on_grid = _grid_module().release_on_grid
        ndim = value.ndim if isinstance(value, np.ndarray) else 0  # a float on the fast path
        penalty: Callable[[int], float] = (
            float if self.sensitivity.norm is Norm.L1 else math.sqrt)
        out: NDArray[Any] = release_on_grid(
            value, noise_scale=self.noise_scale, sensitivity=self.sensitivity.value,
            dimension_penalty=penalty, standard_noise=self.standard_noise(ndim),
            rng=rng, shape=shape, owner=f"{type(self).__name__}.release",
            integer_valued=bool(options.get("integer_valued", False)))
        return out


def _attrs_class(cls: type[Mechanism]) -> Any:
    """``cls`` for :func:`attrs.fields` (every concrete mechanism is an attrs class)."""
    return cls


_GRID: list[Any] = []


def _grid_module() -> Any:
    """``privkit.mechanisms._grid``, imported on first use (the core does not import the
    mechanisms package at import time)."""
    if not _GRID:
        from privkit.mechanisms import _grid

        _GRID.append(_grid)
    return _GRID[0]


def as_value(value: ArrayLike, owner: str, *, bound: float = FLOAT_BOUND
             ) -> NDArray[np.float64]:
    """The (private) query answer as a float array, clamped onto ``[-bound, bound]``.

    By the module's rule: a dtype that is not integer or float (bools, strings, objects,
    complex numbers, ragged nesting) and NaN are refused without showing the value
    (:func:`privkit._validation.private_fail`); entries beyond ``bound``, infinities
    included, are clamped onto it (``bound=math.inf``: no clamp, the caller clamps).
    The input is never modified; a float64 array is not copied unless clamped.
    """
    raw = check.private_array("value", value, owner)
    array: NDArray[np.float64] = np.asarray(raw, dtype=np.float64)
    if array.size and math.isnan(array.min()):  # min propagates NaN: one pass, no copy
        raise check.private_nan("value", owner)
    if bound < math.inf:
        array = np.clip(array, -bound, bound)
    return array


def as_size(size: Size, owner: str) -> tuple[int, ...]:
    """Normalise ``size`` to a shape tuple (``()`` for a single draw)."""
    if size is None:
        return ()
    if isinstance(size, tuple):
        return tuple(check.positive_int("size", s, owner) for s in size)
    return (check.positive_int("size", size, owner),)
