"""The Laplace mechanism (Dwork, McSherry, Nissim, Smith 2006).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.guarantees import Guarantee, LaplaceDP, PureDP
from privkit.ledger import record
from privkit.mechanism import Mechanism, Size, as_size, as_value
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.rng import RNGLike, as_generator

from ._grid import release_on_grid
from ._validators import sensitivity_in

__all__ = ["Laplace", "standard_laplace"]


@attrs.frozen(kw_only=True)
class Laplace(Mechanism):
    """Add Laplace noise of scale ``b`` to a query of L1 sensitivity Δ: pure (Δ/b)-DP.

    The density of the noise on each coordinate is ``exp(-|z| / b) / (2 b)``.

    Parameters
    ----------
    scale : float
        The noise scale b (absolute, in the query's units), finite and > 0.
    sensitivity : Sensitivity
        The query's declared L1 sensitivity and neighbouring relation.

    Notes
    -----
    Privacy: ``epsilon = Δ_1 / b`` (Dwork, Roth 2014, Theorem 3.6). The exact
    characterisation is :class:`~privkit.LaplaceDP` (its whole (epsilon, delta) profile,
    exact RDP curve and privacy loss distribution). ``release`` is floating-point safe (see
    ``privkit/mechanisms/_grid.py``) at no cost in privacy.

    Examples
    --------
    >>> from privkit.mechanisms import Laplace
    >>> from privkit import Neighbouring
    >>> m = Laplace.for_epsilon(0.5, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    >>> m.scale
    2.0
    >>> m.guarantees()
    (LaplaceDP(epsilon=0.5), PureDP(epsilon=0.5))
    >>> m.release([10.0, 20.0], rng=1, size=3).shape
    (3, 2)

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "laplace"

    scale: float = attrs.field(validator=check.attrs_validator(check.positive_finite))
    sensitivity: Sensitivity = attrs.field(validator=sensitivity_in(Norm.L1))

    @classmethod
    def for_epsilon(
        cls,
        epsilon: float,
        *,
        sensitivity: float | Sensitivity,
        relation: Neighbouring | None = None,
    ) -> Laplace:
        """The Laplace mechanism with scale ``Δ / epsilon``: exactly epsilon-DP.

        ``sensitivity`` is a :class:`~privkit.Sensitivity` (L1), or a number together with
        ``relation``.
        """
        eps = check.positive_finite("epsilon", epsilon, "Laplace.for_epsilon")
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L1, relation=relation,
                                  owner="Laplace.for_epsilon")
        return cls(scale=sens.value / eps, sensitivity=sens)

    @property
    def noise_multiplier(self) -> float:
        """Scale over sensitivity (unitless)."""
        return self.scale / self.sensitivity.value

    @classmethod
    def for_approx_dp(cls, epsilon: float, delta: float, *, sensitivity: float | Sensitivity,
                      relation: Neighbouring | None = None) -> Laplace:
        """The least noise whose exact profile meets (epsilon, delta).

        From :class:`~privkit.LaplaceDP`: ``epsilon(delta) = eps0 + 2 log(1 - delta)``, so
        ``eps0 = epsilon - 2 log(1 - delta)`` and ``scale = Δ / eps0``.
        """
        owner = "Laplace.for_approx_dp"
        eps = check.positive_finite("epsilon", epsilon, owner)
        d = check.delta("delta", delta, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L1, relation=relation, owner=owner)
        return cls(scale=sens.value / (eps - 2.0 * math.log1p(-d)), sensitivity=sens)

    @classmethod
    def for_histogram(cls, epsilon: float, *, relation: Neighbouring) -> Laplace:
        """Noisy counts of a histogram: L1 sensitivity 1 (ADD_REMOVE) or 2 (REPLACE_ONE),
        see :func:`privkit.mechanisms.histogram_sensitivity`."""
        from .histogram import histogram_sensitivity

        return cls.for_epsilon(epsilon, sensitivity=histogram_sensitivity(Norm.L1, relation))

    def guarantees(self) -> tuple[Guarantee, ...]:
        eps = self.sensitivity.value / self.scale
        return (LaplaceDP(epsilon=eps), PureDP(epsilon=eps))

    def release(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                ) -> NDArray[np.float64]:
        x = as_value(value, "Laplace.release")
        shape = as_size(size, "Laplace.release")
        gen = as_generator(rng, owner="Laplace.release")
        out = release_on_grid(
            x, noise_scale=self.scale, sensitivity=self.sensitivity.value,
            dimension_penalty=float, standard_noise=standard_laplace, rng=gen, shape=shape,
            owner="Laplace.release",
        )
        record(self, math.prod(shape))
        return out

    def simulate(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                 ) -> NDArray[np.float64]:
        x = as_value(value, "Laplace.simulate")
        shape = as_size(size, "Laplace.simulate")
        gen = as_generator(rng, owner="Laplace.simulate")
        return x + self.scale * standard_laplace(gen, shape + x.shape)

    def to_spec(self) -> dict[str, Any]:
        return {"laplace": {"scale": self.scale, "l1_sensitivity": self.sensitivity.value}}

    def __str__(self) -> str:
        return f"Laplace(scale={self.scale:.6g}, Δ₁={self.sensitivity.value:g}): {self.guarantee()}"


def standard_laplace(rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """Unit Laplace noise as the difference of two unit exponentials (exact in law)."""
    return rng.standard_exponential(shape) - rng.standard_exponential(shape)
