"""The L2 ("high-dimensional") Laplace mechanism of output and objective perturbation.

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

from ._grid import release_on_grid
from ._validators import positive_finite, sensitivity_in

__all__ = ["L2Laplace", "standard_l2_laplace"]


def standard_l2_laplace(rng: np.random.Generator, shape: tuple[int, ...],
                        vector_ndim: int) -> NDArray[np.float64]:
    """Unit-scale draws with density ∝ exp(-||b||_2) over the last ``vector_ndim`` axes.

    The norm of such a vector in R^d is Gamma(d, 1) and its direction is uniform on the
    sphere (normalised standard normal), independent of the norm.
    """
    axes = tuple(range(len(shape) - vector_ndim, len(shape)))
    d = math.prod(shape[len(shape) - vector_ndim:]) if vector_ndim else 1
    direction = rng.standard_normal(shape)
    if vector_ndim:
        norms = np.sqrt(np.sum(np.square(direction), axis=axes, keepdims=True))
        radius = rng.standard_gamma(d, size=shape[: len(shape) - vector_ndim] + (1,) * vector_ndim)
    else:  # d = 1: the ordinary Laplace distribution
        norms = np.abs(direction)
        radius = rng.standard_gamma(1.0, size=shape)
    noise: NDArray[np.float64] = direction / norms * radius
    return noise


@attrs.frozen(kw_only=True)
class L2Laplace(Mechanism):
    """Add noise with density ∝ exp(-||b||_2 / scale) to a vector query of L2 sensitivity Δ.

    Parameters
    ----------
    scale : float
        beta, finite and > 0 (the norm of the noise is Gamma(d, beta)).
    sensitivity : Sensitivity
        The query's L2 sensitivity and neighbouring relation.

    Notes
    -----
    Pure ``Δ_2 / beta``-DP: the density ratio at any point is at most
    ``exp(||v||_2 / beta)`` for a shift v, by the triangle inequality. This is the noise of
    output and objective perturbation (Chaudhuri, Monteleoni, Sarwate 2011, Algorithms 1-2;
    seed 003 Algorithms 1-2, seed 004 Algorithm 3). ``release`` is floating-point safe on
    the grid of ``privkit/mechanisms/_grid.py``, with the L2 snapping penalty ``sqrt(d)``.

    Examples
    --------
    >>> from privkit import Neighbouring
    >>> from privkit.mechanisms import L2Laplace
    >>> m = L2Laplace.for_epsilon(0.5, sensitivity=2.0, relation=Neighbouring.REPLACE_ONE)
    >>> m.scale
    4.0
    >>> m.release([1.0, 2.0, 3.0], rng=0, size=5).shape
    (5, 3)

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "l2_laplace"

    scale: float = attrs.field(validator=positive_finite)
    sensitivity: Sensitivity = attrs.field(validator=sensitivity_in(Norm.L2))

    @classmethod
    def for_epsilon(cls, epsilon: float, *, sensitivity: float | Sensitivity,
                    relation: Neighbouring | None = None) -> L2Laplace:
        """beta = Δ_2 / epsilon: exactly epsilon-DP."""
        owner = "L2Laplace.for_epsilon"
        eps = check.positive_finite("epsilon", epsilon, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L2, relation=relation, owner=owner)
        return cls(scale=sens.value / eps, sensitivity=sens)

    def guarantees(self) -> tuple[Guarantee, ...]:
        return (PureDP(epsilon=self.sensitivity.value / self.scale),)

    def release(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                ) -> NDArray[np.float64]:
        """The whole ``value`` array is one vector; ``size`` independent releases."""
        x = as_value(value, "L2Laplace.release")
        shape = as_size(size, "L2Laplace.release")
        gen = as_generator(rng, owner="L2Laplace.release")
        out = release_on_grid(
            x, noise_scale=self.scale, sensitivity=self.sensitivity.value,
            dimension_penalty=math.sqrt,
            standard_noise=lambda g, s: standard_l2_laplace(g, s, x.ndim),
            rng=gen, shape=shape, owner="L2Laplace.release",
        )
        record(self, math.prod(shape))
        return out

    def simulate(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                 ) -> NDArray[np.float64]:
        x = as_value(value, "L2Laplace.simulate")
        shape = as_size(size, "L2Laplace.simulate")
        gen = as_generator(rng, owner="L2Laplace.simulate")
        return x + self.scale * standard_l2_laplace(gen, shape + x.shape, x.ndim)

    def to_spec(self) -> dict[str, Any]:
        return {"l2_laplace": {"scale": self.scale, "l2_sensitivity": self.sensitivity.value}}

    def __str__(self) -> str:
        return (f"L2Laplace(scale={self.scale:.6g}, Δ₂={self.sensitivity.value:g}): "
                f"{self.guarantee()}")
