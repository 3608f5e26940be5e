"""The Mechanism abstraction: a block that releases values and knows its privacy.

A mechanism is declared once, as one frozen attrs class whose public fields are its
parameters (noise scale, declared sensitivity, ...). It supplies two hooks:

* ``guarantees()``: every :class:`~privkit.guarantees.Guarantee` that holds for one run,
  most precise first, so each accountant takes the form that composes best for it;
* ``_sample(value, rng, shape)``: one or more draws of the output, with plain noise.

The base class derives everything else from the fields and the two hooks:

* ``release(value, rng=..., size=...)``: validation, the floating-point-safe path
  (``_release``; additive mechanisms release on a power-of-two grid, see
  :class:`AdditiveMechanism`) and ledger recording;
* ``simulate(...)``: the same with plain floating-point noise, for experiments and
  audits; **not** for publication (Mironov 2012) and not recorded;
* the plan-file form (:meth:`to_spec` / :func:`mechanism_from_spec`), written and read
  from the fields and checked by the same validators;
* registration by ``kind`` (:func:`registered_mechanisms`), so plan files, the shared
  tests and ``privkit audit`` cover a new mechanism with no other edit;
* the audit pair, where the mechanism has a known worst case: :meth:`worst_case`.

**What counts as a run** (the ledger's one rule): a call to ``release`` is one run of the
mechanism on one query answer, whatever that answer's shape (a vector-valued query is
one query; its sensitivity covers every coordinate); ``size=s`` draws ``prod(s)``
independent runs.

Adding a mechanism touches one file: the README's "Adding a mechanism" example defines
one in a dozen lines and plans, accounts, serialises, releases and audits it
(``tests/core/test_readme.py`` runs it).

.. versionadded:: 0.1.0
.. versionchanged:: 0.2.0
   One class per mechanism: ``release``/``simulate``, the plan-file form, registration
   and the ledger rule come from the base class.
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
from privkit.errors import InvalidParameterError
from privkit.ledger import record
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan import Leaf
from privkit.rng import RNGLike, as_generator

__all__ = [
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

_REGISTRY: dict[str, type[Mechanism]] = {}


def registered_mechanisms() -> dict[str, type[Mechanism]]:
    """Every mechanism class with a ``kind``, by kind (built-in ones are imported first)."""
    import privkit.mechanisms  # noqa: F401  (registers the built-in mechanisms)

    return dict(sorted(_REGISTRY.items()))


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
    audit``), its fields, ``guarantees()`` and ``_sample()``; optionally ``_prepare``
    (validation of the query answer), ``_release`` (a publication path other than
    ``_sample``) and the classmethod ``worst_case``.
    """

    __slots__ = ()
    kind: ClassVar[str]
    #: Extra keyword arguments that ``release``/``simulate`` accept (e.g. ``threshold``).
    release_options: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if isinstance(kind, str):
            # attrs re-creates slotted classes: the last definition of a kind wins.
            _REGISTRY[kind] = cls

    # -- the two hooks -----------------------------------------------------------------

    @abc.abstractmethod
    def _sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
                **options: Any) -> NDArray[Any]:
        """Draw ``shape`` independent outputs for the query answer ``value`` (plain noise)."""

    # -- derived -----------------------------------------------------------------------

    @property
    def relation(self) -> Neighbouring:
        """The neighbouring relation, taken from the declared sensitivity."""
        sensitivity: Sensitivity = getattr(self, "sensitivity")  # noqa: B009
        return sensitivity.relation

    def _prepare(self, value: ArrayLike, owner: str) -> NDArray[Any]:
        """The query answer as an array; refuses what this mechanism cannot take."""
        return as_value(value, owner)

    def _release(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
                 **options: Any) -> NDArray[Any]:
        """The publication path; by default the sample itself (right for mechanisms whose
        outputs are integers or indices, which have no low-order bits to leak)."""
        return self._sample(value, rng, shape, **options)

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
        x = self._prepare(value, owner)
        shape = as_size(size, owner)
        opts = self._options(options, owner)
        out = self._release(x, as_generator(rng, owner=owner), shape, **opts)
        record(self, math.prod(shape))
        return out

    def simulate(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None,
                 **options: Any) -> NDArray[Any]:
        """Like :meth:`release` with plain floating-point noise: NOT for publication.

        The low-order bits of floating-point noise can reveal the input (Mironov 2012), so
        use this only for simulation, benchmarks and audits. It is not recorded in ledgers.
        """
        owner = f"{type(self).__name__}.simulate"
        x = self._prepare(value, owner)
        shape = as_size(size, owner)
        opts = self._options(options, owner)
        return self._sample(x, as_generator(rng, owner=owner), shape, **opts)

    @classmethod
    def worst_case(cls, epsilon: float, delta: float) -> WorstCase | None:
        """This mechanism calibrated to ``epsilon`` (and ``delta`` where it needs one)
        with its worst-case neighbouring inputs, for ``privkit audit``; ``None`` if none
        is known."""
        return None

    # -- plan files --------------------------------------------------------------------

    def to_spec(self) -> dict[str, Any]:
        """This mechanism in privkit's JSON plan format: ``{kind: {field: value}}``."""
        body: dict[str, Any] = {}
        for field in attrs.fields(_attrs_class(type(self))):
            if not field.init:
                continue
            value = getattr(self, field.name)
            name = check.field_name(field)
            if isinstance(value, Sensitivity):
                body[f"{value.norm.value}_sensitivity"] = value.value
            elif isinstance(value, Neighbouring):
                continue  # the plan document's relation
            elif isinstance(value, bool | numbers.Integral | numbers.Real | str):
                body[name] = value
            else:
                raise check.fail(name, value, "a number, a string, a bool, a Sensitivity "
                                 "or a relation to be written to a plan file", type(self).__name__)
        return {self.kind: body}

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
    """Build the mechanism ``{kind: body}`` of a plan file under ``relation``.

    Every field must be given (a sensitivity has no default); unknown keys are errors,
    and the values go through the class's own validators.
    """
    cls = registered_mechanisms()[kind]
    if not isinstance(body, dict):
        raise check.fail(kind, body, "an object of the mechanism's fields", "a plan file")
    kwargs: dict[str, Any] = {}
    expected: dict[str, bool] = {}
    for field in attrs.fields(_attrs_class(cls)):
        if not field.init:
            continue
        name = check.field_name(field)
        norm = field.metadata.get("norm")
        if norm is not None:
            key = f"{norm.value}_sensitivity"
            expected[key] = True
            if key in body:
                value = check.positive_finite(key, body[key], kind)
                kwargs[name] = Sensitivity(value=value, norm=norm, relation=relation)
        elif field.type in ("Neighbouring", Neighbouring) or name == "relation":
            kwargs[name] = relation
        else:
            expected[name] = field.default is attrs.NOTHING
            if name in body:
                kwargs[name] = body[name]
    unknown = sorted(set(body) - set(expected))
    if unknown:
        raise check.fail(kind, body, f"an object with keys among {sorted(expected)}",
                         "a plan file", f"unknown key(s) {unknown}")
    missing = sorted(k for k, required in expected.items() if required and k not in body)
    if missing:
        raise check.fail(kind, body, f"an object with the key(s) {missing}", "a plan file",
                         "a sensitivity is never assumed: write it")
    mechanism = cls(**kwargs)
    if mechanism.relation is not relation:
        raise check.fail("relation", relation.value, f"'{mechanism.relation.value}' for a "
                         f"{kind} block", "a plan file",
                         "this mechanism's analysis holds under that relation only")
    return mechanism


class AdditiveMechanism(Mechanism):
    """A mechanism that adds noise of scale ``noise_scale`` to a real-valued query.

    The publication path (:meth:`_release`) snaps the answer to a power-of-two grid chosen
    from public values and adds the noise in grid units (``privkit/mechanisms/_grid.py``),
    at no cost in privacy. Subclasses supply ``_standard_noise(rng, shape)`` (unit-scale
    noise of the right law, with exact tails) and fields ``noise_scale`` and
    ``sensitivity``; mechanisms with integer outputs override ``_release``.
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

    def _standard_noise(self, query_ndim: int) -> Callable[[np.random.Generator, tuple[int, ...]],
                                                           NDArray[np.float64]]:
        """The unit-scale noise sampler, ``sampler(rng, shape)``, for a query with
        ``query_ndim`` axes (a vector noise such as the L2 Laplace's is drawn over those
        axes). It must have exact tails: use the samplers of ``privkit.mechanisms._noise``.

        Required unless the subclass overrides both ``_sample`` and ``_release`` (as the
        integer-valued mechanisms do)."""
        raise NotImplementedError(f"{type(self).__name__} defines no _standard_noise")

    def _sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
                **options: Any) -> NDArray[Any]:
        noise = self._standard_noise(value.ndim)(rng, shape + value.shape)
        return value + self.noise_scale * noise

    def release(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None,
                **options: Any) -> NDArray[Any]:
        # The common scalar call in a user's loop (a float and a Generator) skips the array
        # normalisation; everything else takes the general path of Mechanism.release.
        scalar: Any = value
        generator: Any = rng
        if (type(scalar) is float and size is None and not options
                and type(generator) is np.random.Generator and math.isfinite(scalar)
                and type(self)._prepare is Mechanism._prepare):
            out = self._release(cast(Any, scalar), generator, ())
            record(self, 1)
            return out
        return super().release(value, rng=rng, size=size, **options)

    def _release(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
                 **options: Any) -> NDArray[Any]:
        release_on_grid = _grid_release()
        ndim = value.ndim if isinstance(value, np.ndarray) else 0  # a float on the fast path
        penalty: Callable[[int], float] = (
            float if self.sensitivity.norm is Norm.L1 else math.sqrt)
        out: NDArray[Any] = release_on_grid(
            value, noise_scale=self.noise_scale, sensitivity=self.sensitivity.value,
            dimension_penalty=penalty, standard_noise=self._standard_noise(ndim),
            rng=rng, shape=shape, owner=f"{type(self).__name__}.release",
            integer_valued=bool(options.get("integer_valued", False)))
        return out


def _attrs_class(cls: type[Mechanism]) -> Any:
    """``cls`` for :func:`attrs.fields` (every concrete mechanism is an attrs class)."""
    return cls


_GRID_RELEASE: list[Callable[..., Any]] = []


def _grid_release() -> Callable[..., Any]:
    """``privkit.mechanisms._grid.release_on_grid``, imported on first use (the core does
    not import the mechanisms package at import time)."""
    if not _GRID_RELEASE:
        from privkit.mechanisms._grid import release_on_grid

        _GRID_RELEASE.append(release_on_grid)
    return _GRID_RELEASE[0]


def as_value(value: ArrayLike, owner: str) -> NDArray[np.float64]:
    """The query answer as a float array; refuses NaN, infinities, bools and non-numbers."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise check.fail("value", value, "a real number or an array of real numbers",
                         owner) from exc
    if raw.dtype.kind not in "iuf":
        raise check.fail("value", value, "a real number or an array of real numbers "
                         "(not bools, strings or objects)", owner)
    array = raw.astype(float)
    if not np.all(np.isfinite(array)):
        raise check.fail("value", value, "finite (no NaN or infinity)", owner)
    return array


def as_size(size: Size, owner: str) -> tuple[int, ...]:
    """Normalise ``size`` to a shape tuple (``()`` for a single draw)."""
    if size is None:
        return ()
    if isinstance(size, tuple):
        return tuple(check.positive_int("size", s, owner) for s in size)
    return (check.positive_int("size", size, owner),)
