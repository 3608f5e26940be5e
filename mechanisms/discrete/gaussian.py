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
from privkit.mechanism import AdditiveMechanism, WorstCase, noise_scale_field, sensitivity_field
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from .._validators import add_integer_noise
from .laplace import DiscreteLaplace, as_integers
from .samplers import at_least, discrete_gaussian

__all__ = ["DiscreteGaussian"]


@attrs.frozen(kw_only=True)
class DiscreteGaussian(AdditiveMechanism):
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
    relative 2^-20. Outputs are integers. ``simulate`` rounds continuous Gaussian noise:
    fast, close in law for large sigma, not exact.

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "discrete_gaussian"

    release_options: ClassVar[tuple[str, ...]] = ()  # outputs are integers already
    noise_scale: float = noise_scale_field()
    sensitivity: Sensitivity = sensitivity_field(Norm.L2)

    @classmethod
    def for_zcdp(cls, rho: float, *, sensitivity: float | Sensitivity,
                 relation: Neighbouring | str | None = None) -> DiscreteGaussian:
        """sigma = Δ / sqrt(2 rho): exactly rho-zCDP (CKS 2020, Theorem 14)."""
        owner = "DiscreteGaussian.for_zcdp"
        r = check.positive_finite("rho", rho, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L2, relation=relation, owner=owner)
        return cls(noise_scale=sens.value / math.sqrt(2.0 * r), sensitivity=sens)

    @classmethod
    def for_approx_dp(cls, *, epsilon: float, delta: float, sensitivity: float | Sensitivity,
                      relation: Neighbouring | str | None = None) -> DiscreteGaussian:
        """The least noise whose zCDP guarantee converts to (epsilon, delta): rho from
        :func:`privkit.conversions.zcdp_rho_for_approx_dp` (Canonne, Kamath, Steinke 2020,
        Corollary 13), then :meth:`for_zcdp`."""
        owner = "DiscreteGaussian.for_approx_dp"
        eps = check.positive_finite("epsilon", epsilon, owner)
        dlt = check.open_unit("delta", delta, owner)
        return cls.for_zcdp(zcdp_rho_for_approx_dp(epsilon=eps, delta=dlt), sensitivity=sensitivity,
                            relation=relation)

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
        """Counts 0 and 1 under ADD_REMOVE."""
        mech = cls.for_approx_dp(epsilon=epsilon, delta=delta, sensitivity=1.0,
                                 relation=Neighbouring.ADD_REMOVE)
        return WorstCase(mech, 0, 1)

    def guarantees(self) -> tuple[Guarantee, ...]:
        return (ZCDP(rho=self.sensitivity.value**2 / (2.0 * self.noise_scale**2)),)

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[np.int64]:
        return as_integers(value, owner)

    clamp_bound = DiscreteLaplace.clamp_bound

    def safe_sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
                    **options: Any) -> NDArray[np.int64]:
        full = shape + value.shape
        # 20 bits of relative precision keep the sampler's exact integer arithmetic in int64
        # for sigma up to ~40,000 (beyond, it switches to Python integers, still exact).
        sigma2 = at_least(self.noise_scale**2, relative_precision_bits=20)
        noise = discrete_gaussian(rng, sigma2, math.prod(full)).reshape(full)
        return add_integer_noise(value, noise, f"{type(self).__name__}.release")

    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[np.int64]:
        full = shape + value.shape
        noise = np.rint(rng.standard_normal(full) * self.noise_scale)
        return add_integer_noise(value, noise, f"{type(self).__name__}.simulate")
