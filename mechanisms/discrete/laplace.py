"""The discrete Laplace (two-sided geometric) mechanism for integer-valued queries.

.. versionadded:: 0.1.0
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

from .._validators import positive_finite, sensitivity_in
from .samplers import at_least, discrete_laplace

__all__ = ["DiscreteLaplace", "as_integers"]


def as_integers(value: ArrayLike, owner: str) -> NDArray[np.int64]:
    """The query answer as int64; refuses non-integer values (say, 2.5)."""
    x = as_value(value, owner)
    if not np.all(x == np.rint(x)) or np.any(np.abs(x) >= 2.0**62):
        raise check.fail("value", value, "integer-valued (and below 2^62 in magnitude)", owner,
                         "round the query to integers first, or use the continuous mechanism")
    return x.astype(np.int64)


@attrs.frozen(kw_only=True)
class DiscreteLaplace(Mechanism):
    """Add two-sided geometric noise, ``P(z) ∝ exp(-|z| / scale)`` on the integers.

    Parameters
    ----------
    scale : float
        The noise scale t, finite and > 0.
    sensitivity : Sensitivity
        L1 sensitivity of the integer-valued query.

    Notes
    -----
    Pure ``Δ_1 / t``-DP (Ghosh, Roughgarden, Sundararajan 2009; Canonne, Kamath, Steinke
    2020, Section 2). Draws are exact (CKS 2020 Alg. 2, see
    :mod:`privkit.mechanisms.discrete.samplers`) with the scale rounded *up* to a dyadic
    rational within a relative 2^-28: more noise than declared, never less. Outputs are
    integers, so floating-point attacks do not apply.

    Examples
    --------
    >>> from privkit import Neighbouring
    >>> from privkit.mechanisms import DiscreteLaplace
    >>> m = DiscreteLaplace.for_epsilon(1.0, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    >>> m.release([10, 20], rng=0).dtype
    dtype('int64')

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "discrete_laplace"

    scale: float = attrs.field(validator=positive_finite)
    sensitivity: Sensitivity = attrs.field(validator=sensitivity_in(Norm.L1))

    @classmethod
    def for_epsilon(cls, epsilon: float, *, sensitivity: float | Sensitivity,
                    relation: Neighbouring | None = None) -> DiscreteLaplace:
        """Scale ``Δ / epsilon``: exactly epsilon-DP."""
        owner = "DiscreteLaplace.for_epsilon"
        eps = check.positive_finite("epsilon", epsilon, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L1, relation=relation, owner=owner)
        return cls(scale=sens.value / eps, sensitivity=sens)

    @classmethod
    def for_histogram(cls, epsilon: float, *, relation: Neighbouring) -> DiscreteLaplace:
        """Noisy counts of a histogram: L1 sensitivity 1 (ADD_REMOVE) or 2 (REPLACE_ONE),
        see :func:`privkit.mechanisms.histogram_sensitivity`."""
        from ..histogram import histogram_sensitivity

        return cls.for_epsilon(epsilon, sensitivity=histogram_sensitivity(Norm.L1, relation))

    def guarantees(self) -> tuple[Guarantee, ...]:
        return (PureDP(epsilon=self.sensitivity.value / self.scale),)

    def release(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                ) -> NDArray[np.int64]:
        """Integer value plus exact discrete Laplace noise (int64 output)."""
        x = as_integers(value, "DiscreteLaplace.release")
        shape = as_size(size, "DiscreteLaplace.release") + x.shape
        gen = as_generator(rng, owner="DiscreteLaplace.release")
        noise = discrete_laplace(gen, at_least(self.scale), math.prod(shape)).reshape(shape)
        record(self, math.prod(shape[: len(shape) - x.ndim]))
        return x + noise

    def simulate(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                 ) -> NDArray[np.int64]:
        """Like release, with numpy's float geometric sampler: faster, not exact."""
        x = as_integers(value, "DiscreteLaplace.simulate")
        shape = as_size(size, "DiscreteLaplace.simulate") + x.shape
        gen = as_generator(rng, owner="DiscreteLaplace.simulate")
        p = -math.expm1(-1.0 / self.scale)
        return x + gen.geometric(p, shape) - gen.geometric(p, shape)

    def to_spec(self) -> dict[str, Any]:
        return {"discrete_laplace": {"scale": self.scale,
                                     "l1_sensitivity": self.sensitivity.value}}

    def __str__(self) -> str:
        return (f"DiscreteLaplace(scale={self.scale:.6g}, Δ₁={self.sensitivity.value:g}): "
                f"{self.guarantee()}")
