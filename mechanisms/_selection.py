"""Shared machinery of the selection mechanisms: noisy argmax over candidate utilities.

All of them release ``argmax_i (u_i + Z_i)`` for independent noise ``Z_i`` of a given
``scale``; they differ in the law of ``Z`` and hence in their privacy:

===================  =================  ===========================================
noise                mechanism          privacy with ``scale = 2 Δ / eps``
===================  =================  ===========================================
Gumbel               exponential mech.  eps-DP and eps-bounded-range (eps^2/8 zCDP)
exponential (1-sided) permute-and-flip  eps-DP
Laplace              report noisy max   eps-DP
===================  =================  ===========================================

With ``monotone=True`` (every utility moves in the same direction between neighbours,
e.g. counts under ADD_REMOVE), ``scale = Δ / eps`` suffices for all three.

Outputs are candidate indices, so floating-point attacks on low-order bits do not
apply; the noise itself is drawn in double precision.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.guarantees import Guarantee, PureDP
from privkit.ledger import record
from privkit.mechanism import Mechanism, Size, as_size, as_value
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.rng import RNGLike, as_generator

from ._validators import positive_finite, sensitivity_in


def _check_bool(instance: Any, attribute: Any, value: Any) -> None:
    check.instance(check.field_name(attribute), value, bool, type(instance).__name__)


@attrs.frozen(kw_only=True)
class NoisyArgmax(Mechanism):
    """Base of the selection mechanisms (see the module docstring).

    Parameters
    ----------
    scale : float
        The noise scale, finite and > 0.
    sensitivity : Sensitivity
        Sensitivity of the utility vector in the L-infinity norm: no candidate's utility
        moves by more than this between neighbours.
    monotone : bool, default False
        Whether all utilities move in the same direction between any two neighbours.
    """

    kind: ClassVar[str]
    scale: float = attrs.field(validator=positive_finite)
    sensitivity: Sensitivity = attrs.field(validator=sensitivity_in(Norm.LINF))
    monotone: bool = attrs.field(default=False, validator=_check_bool)

    @classmethod
    def for_epsilon(cls, epsilon: float, *, sensitivity: float | Sensitivity,
                    relation: Neighbouring | None = None, monotone: bool = False) -> Any:
        """The mechanism with the smallest scale that is epsilon-DP:
        ``2 Δ / epsilon``, or ``Δ / epsilon`` for monotone utilities."""
        owner = f"{cls.__name__}.for_epsilon"
        eps = check.positive_finite("epsilon", epsilon, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.LINF, relation=relation, owner=owner)
        check.instance("monotone", monotone, bool, owner)
        factor = 1.0 if monotone else 2.0
        return cls(scale=factor * sens.value / eps, sensitivity=sens, monotone=monotone)

    @property
    def pure_epsilon(self) -> float:
        """``2 Δ / scale`` (``Δ / scale`` when monotone)."""
        return (1.0 if self.monotone else 2.0) * self.sensitivity.value / self.scale

    def guarantees(self) -> tuple[Guarantee, ...]:
        return (PureDP(epsilon=self.pure_epsilon),)

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
        raise NotImplementedError

    def release(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                ) -> NDArray[np.int64]:
        """The index of the selected candidate.

        ``value`` holds the utilities, candidates on the last axis; the output has shape
        ``(*size, *value.shape[:-1])``.
        """
        owner = f"{type(self).__name__}.release"
        u = as_value(value, owner)
        if u.ndim == 0 or u.shape[-1] == 0:
            raise check.fail("value", value, "an array of utilities with at least one "
                             "candidate on its last axis", owner)
        shape = as_size(size, owner)
        gen = as_generator(rng, owner=owner)
        out = self._select(u, gen, shape)
        record(self, math.prod(shape) * math.prod(u.shape[:-1]))
        return out

    def simulate(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                 ) -> NDArray[np.int64]:
        """The same draw, not recorded in ledgers (outputs are indices: already safe)."""
        owner = f"{type(self).__name__}.simulate"
        u = as_value(value, owner)
        return self._select(u, as_generator(rng, owner=owner), as_size(size, owner))

    def _select(self, u: NDArray[np.float64], rng: np.random.Generator,
                shape: tuple[int, ...]) -> NDArray[np.int64]:
        noisy = u / self.scale + self._noise(rng, shape + u.shape)
        chosen: NDArray[np.int64] = np.argmax(noisy, axis=-1)
        return chosen

    def to_spec(self) -> dict[str, Any]:
        return {self.kind: {"scale": self.scale, "linf_sensitivity": self.sensitivity.value,
                            "monotone": self.monotone}}

    def __str__(self) -> str:
        mono = ", monotone" if self.monotone else ""
        return (f"{type(self).__name__}(scale={self.scale:.6g}, "
                f"Δ∞={self.sensitivity.value:g}{mono}): {self.guarantee()}")
