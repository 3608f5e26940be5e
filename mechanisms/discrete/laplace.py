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
from privkit.mechanism import AdditiveMechanism, WorstCase, noise_scale_field, sensitivity_field
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from .._validators import INTEGER_BOUND, add_integer_noise, integer_answers
from .samplers import at_least, discrete_laplace

__all__ = ["DiscreteLaplace", "as_integers"]


def as_integers(value: ArrayLike, owner: str) -> NDArray[np.int64]:
    """The (private) query answer as int64, clamped onto ``[-2^62, 2^62]`` (infinities
    included; the public range of the discrete mechanisms, see ``clamp_bound``); refuses
    NaN and non-integer values (say, 2.5) without showing them."""
    return integer_answers(value, owner, low=-INTEGER_BOUND, high=INTEGER_BOUND,
                           allowed="an integer or an array of integers")


@attrs.frozen(kw_only=True)
class DiscreteLaplace(AdditiveMechanism):
    """Add two-sided geometric noise, ``P(z) ∝ exp(-|z| / t)`` on the integers.

    Parameters
    ----------
    noise_scale : float
        The noise scale t, finite and > 0.
    sensitivity : Sensitivity
        L1 sensitivity of the integer-valued query.

    Notes
    -----
    Pure ``Δ_1 / t``-DP (Ghosh, Roughgarden, Sundararajan 2009; Canonne, Kamath, Steinke
    2020, Section 2). Draws are exact (CKS 2020 Alg. 2, see
    :mod:`privkit.mechanisms.discrete.samplers`) with the scale rounded *up* to a dyadic
    rational within a relative 2^-28: more noise than declared, never less. Outputs are
    integers, so floating-point attacks do not apply. ``simulate`` uses numpy's float
    geometric sampler: faster, not exact.

    Examples
    --------
    >>> from privkit.mechanisms import DiscreteLaplace
    >>> m = DiscreteLaplace.for_epsilon(1.0, sensitivity=1.0, relation="add_remove")
    >>> m.release([10, 20], rng=0).dtype
    dtype('int64')

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       ``scale`` is now ``noise_scale``, as on every additive mechanism.
    """

    kind: ClassVar[str] = "discrete_laplace"

    release_options: ClassVar[tuple[str, ...]] = ()  # outputs are integers already
    noise_scale: float = noise_scale_field()
    sensitivity: Sensitivity = sensitivity_field(Norm.L1)

    @classmethod
    def for_epsilon(cls, epsilon: float, *, sensitivity: float | Sensitivity,
                    relation: Neighbouring | str | None = None) -> DiscreteLaplace:
        """Scale ``Δ / epsilon``: exactly epsilon-DP."""
        owner = "DiscreteLaplace.for_epsilon"
        eps = check.positive_finite("epsilon", epsilon, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L1, relation=relation, owner=owner)
        return cls(noise_scale=sens.value / eps, sensitivity=sens)

    @classmethod
    def for_histogram(cls, *, epsilon: float, relation: Neighbouring | str
                      ) -> DiscreteLaplace:
        """Noisy counts of a histogram: L1 sensitivity 1 (ADD_REMOVE) or 2 (REPLACE_ONE),
        see :func:`privkit.mechanisms.histogram_sensitivity`."""
        from ..histogram import histogram_sensitivity

        return cls.for_epsilon(epsilon, sensitivity=histogram_sensitivity(Norm.L1, relation))

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
        """Counts 0 and 1 under ADD_REMOVE."""
        mech = cls.for_epsilon(epsilon, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
        return WorstCase(mech, 0, 1)

    def guarantees(self) -> tuple[Guarantee, ...]:
        return (PureDP(epsilon=self.sensitivity.value / self.noise_scale),)

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[np.int64]:
        return as_integers(value, owner)

    def clamp_bound(self, dimension: int = 1, *, integer_valued: bool = False) -> float:
        """2^62 whatever the dimension: answers are clamped onto ``[-2^62, 2^62]``, so
        that an answer plus noise stays in int64 (no privacy cost, see
        ``privkit.mechanism``)."""
        return float(INTEGER_BOUND)

    def safe_sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
                    **options: Any) -> NDArray[np.int64]:
        full = shape + value.shape
        noise = discrete_laplace(rng, at_least(self.noise_scale), math.prod(full))
        return add_integer_noise(value, noise.reshape(full), f"{type(self).__name__}.release")

    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[np.int64]:
        full = shape + value.shape
        p = -math.expm1(-1.0 / self.noise_scale)
        return add_integer_noise(value, rng.geometric(p, full) - rng.geometric(p, full),
                                 f"{type(self).__name__}.simulate")
