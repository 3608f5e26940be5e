"""The Mechanism abstraction: a block that releases values and knows its privacy.

A mechanism is a frozen value object holding its parameters (noise scale, declared
sensitivity and its norm, neighbouring relation). It knows

* its exact privacy characterisation, as every :class:`~privkit.guarantees.Guarantee`
  that applies (``guarantees()``, most precise first), so that each accountant can take
  the form that composes best for it;
* how to release a value: ``release(value, rng=..., size=...)``, vectorised over array
  values and over ``size`` independent draws, recorded in the active
  :class:`~privkit.ledger.Ledger`, and safe against floating-point attacks; and
* how to simulate one cheaply: ``simulate(...)`` uses plain floating-point noise, which
  is fine for experiments and audits and **not** for publication (Mironov 2012).

Mechanisms are calibrated through named constructors (``Laplace.for_epsilon``,
``Gaussian.for_approx_dp``, ...). Concrete mechanisms live in :mod:`privkit.mechanisms`.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.neighbouring import Neighbouring, Sensitivity
from privkit.plan import Leaf
from privkit.rng import RNGLike

__all__ = ["Mechanism", "Size", "as_size", "as_value"]

#: The ``size`` argument of releases: ``None`` (one draw), an int, or a shape tuple.
Size = int | tuple[int, ...] | None


class Mechanism(Leaf):
    """Base class of mechanisms. Subclasses are frozen attrs classes.

    Subclasses define ``kind`` (the name in plan files and the audit registry), the
    ``sensitivity`` field, ``guarantees()``, ``release()`` and ``simulate()``.
    """

    __slots__ = ()
    kind: ClassVar[str]
    sensitivity: Sensitivity

    @property
    def relation(self) -> Neighbouring:
        """The neighbouring relation, taken from the declared sensitivity."""
        return self.sensitivity.relation

    @abc.abstractmethod
    def release(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                ) -> NDArray[Any]:
        """Release ``value`` privately; safe for publication.

        Parameters
        ----------
        value : float or array of float
            The exact query answer. Its sensitivity must be the declared one.
        rng : Generator, int, SeedSequence or None
            Randomness (see :mod:`privkit.rng`; use ``privkit.secure_generator()`` for
            published releases).
        size : int or tuple of int, optional
            Draw this many independent releases; the output has shape
            ``(*size, *value.shape)``. Each counts as one run in the ledger.
        """

    @abc.abstractmethod
    def simulate(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                 ) -> NDArray[Any]:
        """Like :meth:`release` with plain floating-point noise: NOT for publication.

        The low-order bits of floating-point noise can reveal the input (Mironov 2012), so
        use this only for simulation, benchmarks and audits. It is not recorded in ledgers.
        """


def as_value(value: ArrayLike, owner: str) -> NDArray[np.float64]:
    """The query answer as a float array; refuses NaN, infinities and non-numbers."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise check.fail("value", value, "a real number or an array of real numbers",
                         owner) from exc
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
