"""The Laplace mechanism (Dwork, McSherry, Nissim, Smith 2006).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs

from privkit import _validation as check
from privkit.guarantees import Guarantee, LaplaceDP, PureDP
from privkit.mechanism import AdditiveMechanism, WorstCase, noise_scale_field, sensitivity_field
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from ._noise import StandardNoise, standard_laplace

__all__ = ["Laplace"]


@attrs.frozen(kw_only=True)
class Laplace(AdditiveMechanism):
    """Add Laplace noise of scale ``b`` to a query of L1 sensitivity Δ: pure (Δ/b)-DP.

    The density of the noise on each coordinate is ``exp(-|z| / b) / (2 b)``.

    Parameters
    ----------
    noise_scale : float
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
    >>> m = Laplace.for_epsilon(0.5, sensitivity=1.0, relation="add_remove")
    >>> m.noise_scale
    2.0
    >>> m.guarantees()
    (LaplaceDP(epsilon=0.5), PureDP(epsilon=0.5))
    >>> m.release([10.0, 20.0], rng=1, size=3).shape
    (3, 2)

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       ``scale`` is now ``noise_scale``, as on every additive mechanism.
    """

    kind: ClassVar[str] = "laplace"

    noise_scale: float = noise_scale_field()
    sensitivity: Sensitivity = sensitivity_field(Norm.L1)

    @classmethod
    def for_epsilon(
        cls,
        epsilon: float,
        *,
        sensitivity: float | Sensitivity,
        relation: Neighbouring | str | None = None,
    ) -> Laplace:
        """The Laplace mechanism with scale ``Δ / epsilon``: exactly epsilon-DP.

        ``sensitivity`` is a :class:`~privkit.Sensitivity` (L1), or a number together with
        ``relation``.
        """
        eps = check.positive_finite("epsilon", epsilon, "Laplace.for_epsilon")
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L1, relation=relation,
                                  owner="Laplace.for_epsilon")
        return cls(noise_scale=sens.value / eps, sensitivity=sens)

    @classmethod
    def for_approx_dp(cls, *, epsilon: float, delta: float,
                      sensitivity: float | Sensitivity,
                      relation: Neighbouring | str | None = None) -> Laplace:
        """The least noise whose exact profile meets (epsilon, delta).

        From :class:`~privkit.LaplaceDP`: ``epsilon(delta) = eps0 + 2 log(1 - delta)``, so
        ``eps0 = epsilon - 2 log(1 - delta)`` and ``scale = Δ / eps0``.
        """
        owner = "Laplace.for_approx_dp"
        eps = check.positive_finite("epsilon", epsilon, owner)
        d = check.delta("delta", delta, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L1, relation=relation, owner=owner)
        return cls(noise_scale=sens.value / (eps - 2.0 * math.log1p(-d)), sensitivity=sens)

    @classmethod
    def for_histogram(cls, *, epsilon: float, relation: Neighbouring | str) -> Laplace:
        """Noisy counts of a histogram: L1 sensitivity 1 (ADD_REMOVE) or 2 (REPLACE_ONE),
        see :func:`privkit.mechanisms.histogram_sensitivity`."""
        from .histogram import histogram_sensitivity

        return cls.for_epsilon(epsilon, sensitivity=histogram_sensitivity(Norm.L1, relation))

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
        """Counts 0 and 1 under ADD_REMOVE: the privacy loss reaches epsilon."""
        mech = cls.for_epsilon(epsilon, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
        return WorstCase(mech, 0.0, 1.0)

    def guarantees(self) -> tuple[Guarantee, ...]:
        eps = self.sensitivity.value / self.noise_scale
        return (LaplaceDP(epsilon=eps), PureDP(epsilon=eps))

    def standard_noise(self, query_ndim: int) -> StandardNoise:
        return standard_laplace

