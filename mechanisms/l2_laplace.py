"""The L2 ("high-dimensional") Laplace mechanism of output and objective perturbation.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.guarantees import Guarantee, PureDP
from privkit.mechanism import AdditiveMechanism, WorstCase, noise_scale_field, sensitivity_field
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from ._noise import StandardNoise, l2_laplace_noise

__all__ = ["L2Laplace"]


@attrs.frozen(kw_only=True)
class L2Laplace(AdditiveMechanism):
    """Add noise with density ∝ exp(-||b||_2 / beta) to a vector query of L2 sensitivity Δ.

    Parameters
    ----------
    noise_scale : float
        beta, finite and > 0 (the norm of the noise is Gamma(d, beta)).
    sensitivity : Sensitivity
        The query's L2 sensitivity and neighbouring relation.

    Notes
    -----
    Pure ``Δ_2 / beta``-DP: the density ratio at any point is at most
    ``exp(||v||_2 / beta)`` for a shift v, by the triangle inequality. This is the noise of
    output and objective perturbation (Chaudhuri, Monteleoni, Sarwate 2011, "Differentially
    private empirical risk minimization", Algorithms 1-2). The whole query answer is one
    vector. ``release`` is floating-point safe on the grid of
    ``privkit/mechanisms/_grid.py``, with the L2 snapping penalty ``sqrt(d)``.

    Examples
    --------
    >>> from privkit.mechanisms import L2Laplace
    >>> m = L2Laplace.for_epsilon(0.5, sensitivity=2.0, relation="replace_one")
    >>> m.noise_scale
    4.0
    >>> m.release([1.0, 2.0, 3.0], rng=0, size=5).shape
    (5, 3)

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       ``scale`` is now ``noise_scale``, as on every additive mechanism.
    """

    kind: ClassVar[str] = "l2_laplace"

    noise_scale: float = noise_scale_field()
    sensitivity: Sensitivity = sensitivity_field(Norm.L2)

    @classmethod
    def for_epsilon(cls, epsilon: float, *, sensitivity: float | Sensitivity,
                    relation: Neighbouring | str | None = None) -> L2Laplace:
        """beta = Δ_2 / epsilon: exactly epsilon-DP."""
        owner = "L2Laplace.for_epsilon"
        eps = check.positive_finite("epsilon", epsilon, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L2, relation=relation, owner=owner)
        return cls(noise_scale=sens.value / eps, sensitivity=sens)

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
        """Vectors 0 and e_1 in R^3 under ADD_REMOVE: the loss reaches epsilon along e_1."""
        mech = cls.for_epsilon(epsilon, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
        return WorstCase(mech, np.zeros(3), np.array([1.0, 0.0, 0.0]),
                         statistic=_log_likelihood_ratio)

    def guarantees(self) -> tuple[Guarantee, ...]:
        return (PureDP(epsilon=self.sensitivity.value / self.noise_scale),)

    def standard_noise(self, query_ndim: int) -> StandardNoise:
        return l2_laplace_noise(query_ndim)


def _log_likelihood_ratio(outputs: NDArray[np.float64]) -> NDArray[np.float64]:
    """``||y - e_1|| - ||y||``, the privacy loss of the worst-case pair up to the factor
    1/beta (a post-processing; rounded so equal losses compare equal)."""
    shifted = np.linalg.norm(outputs - np.array([1.0, 0.0, 0.0]), axis=-1)
    out: NDArray[np.float64] = np.round(shifted - np.linalg.norm(outputs, axis=-1), 9)
    return out
