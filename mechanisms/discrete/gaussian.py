"""The discrete Gaussian mechanism for integer-valued queries.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.conversions import zcdp_rho_for_approx_dp
from privkit.guarantees import ZCDP, Guarantee
from privkit.ledger import record
from privkit.mechanism import Mechanism, Size, as_size
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.rng import RNGLike, as_generator

from .._validators import positive_finite, sensitivity_in
from .laplace import as_integers
from .samplers import at_least, discrete_gaussian

__all__ = ["DiscreteGaussian"]


@attrs.frozen(kw_only=True)
class DiscreteGaussian(Mechanism):
    """Add discrete Gaussian noise, ``P(z) ∝ exp(-z^2 / (2 sigma^2))`` on the integers.

    Parameters
    ----------
    noise_scale : float
        The parameter sigma, finite and > 0.
    sensitivity : Sensitivity
        L2 sensitivity of the integer-valued (vector) query.

    Notes
    -----
    ``Δ_2^2 / (2 sigma^2)``-zCDP, also for vector queries with independent coordinates
    (Canonne, Kamath, Steinke 2020, Theorem 14), hence RDP ``a Δ^2 / (2 sigma^2)``. Draws
    are exact (CKS 2020 Alg. 3) with ``sigma^2`` rounded *up* to a dyadic rational within a
    relative 2^-20. Outputs are integers.

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "discrete_gaussian"

    noise_scale: float = attrs.field(validator=positive_finite)
    sensitivity: Sensitivity = attrs.field(validator=sensitivity_in(Norm.L2))

    @classmethod
    def for_zcdp(cls, rho: float, *, sensitivity: float | Sensitivity,
                 relation: Neighbouring | None = None) -> DiscreteGaussian:
        """sigma = Δ / sqrt(2 rho): exactly rho-zCDP (CKS 2020, Theorem 14)."""
        owner = "DiscreteGaussian.for_zcdp"
        r = check.positive_finite("rho", rho, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L2, relation=relation, owner=owner)
        return cls(noise_scale=sens.value / math.sqrt(2.0 * r), sensitivity=sens)

    @classmethod
    def for_approx_dp(cls, epsilon: float, delta: float, *, sensitivity: float | Sensitivity,
                      relation: Neighbouring | None = None) -> DiscreteGaussian:
        """The least noise whose zCDP guarantee converts to (epsilon, delta): rho from
        :func:`privkit.conversions.zcdp_rho_for_approx_dp` (Canonne, Kamath, Steinke 2020,
        Corollary 13), then :meth:`for_zcdp`."""
        owner = "DiscreteGaussian.for_approx_dp"
        eps = check.positive_finite("epsilon", epsilon, owner)
        dlt = check.open_unit("delta", delta, owner)
        return cls.for_zcdp(zcdp_rho_for_approx_dp(eps, dlt), sensitivity=sensitivity,
                            relation=relation)

    def guarantees(self) -> tuple[Guarantee, ...]:
        return (ZCDP(rho=self.sensitivity.value**2 / (2.0 * self.noise_scale**2)),)

    def release(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                ) -> NDArray[np.int64]:
        """Integer value plus exact discrete Gaussian noise (int64 output)."""
        x = as_integers(value, "DiscreteGaussian.release")
        shape = as_size(size, "DiscreteGaussian.release") + x.shape
        gen = as_generator(rng, owner="DiscreteGaussian.release")
        # 20 bits of relative precision keep the sampler's exact integer arithmetic in int64
        # for sigma up to ~40,000 (beyond, it switches to Python integers, still exact).
        sigma2 = at_least(self.noise_scale**2, relative_precision_bits=20)
        noise = discrete_gaussian(gen, sigma2, math.prod(shape)).reshape(shape)
        record(self, math.prod(shape[: len(shape) - x.ndim]))
        return x + noise

    def simulate(self, value: ArrayLike, *, rng: RNGLike = None, size: Size = None
                 ) -> NDArray[np.int64]:
        """Rounded continuous Gaussian noise: fast, close in law for large sigma, not exact."""
        x = as_integers(value, "DiscreteGaussian.simulate")
        shape = as_size(size, "DiscreteGaussian.simulate") + x.shape
        gen = as_generator(rng, owner="DiscreteGaussian.simulate")
        return x + np.rint(gen.standard_normal(shape) * self.noise_scale).astype(np.int64)

    def to_spec(self) -> dict[str, Any]:
        return {"discrete_gaussian": {"noise_scale": self.noise_scale,
                                      "l2_sensitivity": self.sensitivity.value}}

    def __str__(self) -> str:
        return (f"DiscreteGaussian(σ={self.noise_scale:.6g}, Δ₂={self.sensitivity.value:g}): "
                f"{self.guarantee()}")
