"""The Gaussian mechanism, with classic and analytic calibration.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from typing import ClassVar, Literal

import attrs

from privkit import _validation as check
from privkit import conversions
from privkit.guarantees import GDP, ZCDP, Guarantee
from privkit.mechanism import AdditiveMechanism, WorstCase, noise_scale_field, sensitivity_field
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from ._noise import StandardNoise, standard_normal

__all__ = ["Gaussian", "analytic_gaussian_sigma", "classic_gaussian_sigma"]


def analytic_gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP.

    Notes
    -----
    Balle and Wang 2018 (arXiv:1805.06530v2), Algorithm 1, through the exact GDP profile
    (:func:`privkit.conversions.gdp_mu_for_approx_dp`). ``sensitivity / (sensitivity /
    mu)`` may round above mu, so sigma is stepped up by ulps until the mechanism's own
    exact profile meets the target. No Gaussian mechanism is (epsilon, 0)-DP, so delta
    must be in (0, 1).
    """
    owner = "analytic_gaussian_sigma"
    eps = check.positive_finite("epsilon", epsilon, owner)
    dlt = check.open_unit("delta", delta, owner)
    sens = check.positive_finite("sensitivity", sensitivity, owner)
    mu = conversions.gdp_mu_for_approx_dp(epsilon=eps, delta=dlt)
    sigma = sens / mu
    if not (math.isfinite(mu) and sigma > 0.0):
        raise check.fail("epsilon", epsilon, "small enough that the calibrated noise scale is "
                         "a positive double", owner, f"it gives sigma = {sigma!r}")
    while conversions.gdp_delta(sens / sigma, epsilon=eps) > dlt:
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def classic_gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float) -> float:
    """The classic calibration ``sigma = Δ sqrt(2 ln(1.25 / delta)) / epsilon``.

    Notes
    -----
    Dwork and Roth 2014, Theorem A.1. The proof needs ``epsilon < 1``; for larger
    epsilon this sigma does not guarantee (epsilon, delta)-DP, so privkit refuses it.
    The analytic calibration (:meth:`Gaussian.for_approx_dp`) is valid for every epsilon
    and always gives a smaller sigma.
    """
    owner = "classic_gaussian_sigma"
    eps = check.positive_finite("epsilon", epsilon, owner)
    if eps >= 1.0:
        raise check.fail("epsilon", epsilon, "< 1 for the classic Gaussian calibration",
                         owner, "use method='analytic', which is valid for every epsilon")
    d = check.open_unit("delta", delta, owner)
    s = check.positive_finite("sensitivity", sensitivity, owner)
    return s * math.sqrt(2.0 * math.log(1.25 / d)) / eps


@attrs.frozen(kw_only=True)
class Gaussian(AdditiveMechanism):
    """Add N(0, sigma^2) noise to each coordinate of a query of L2 sensitivity Δ.

    Parameters
    ----------
    noise_scale : float
        The standard deviation sigma (absolute, in the query's units), finite and > 0.
    sensitivity : Sensitivity
        The query's declared L2 sensitivity and neighbouring relation.

    Notes
    -----
    The mechanism is exactly ``mu``-GDP with ``mu = Δ / sigma`` (Dong, Roth, Su 2019,
    Theorem 2.7), which gives its exact (epsilon, delta) profile (Balle and Wang 2018,
    Theorem 8), its RDP curve ``a mu^2 / 2`` (Mironov 2017, Prop. 7) and its zCDP
    ``rho = mu^2 / 2`` (Bun, Steinke 2016, Prop. 1.6). ``release`` is floating-point safe
    (see ``privkit/mechanisms/_grid.py``) at no cost in privacy.

    Examples
    --------
    >>> from privkit.mechanisms import Gaussian
    >>> from privkit import Neighbouring
    >>> m = Gaussian.for_approx_dp(epsilon=1.0, delta=1e-5, sensitivity=1.0,
    ...                            relation=Neighbouring.REPLACE_ONE)
    >>> round(m.noise_scale, 4)
    3.7306
    >>> m.epsilon_at(1e-5) <= 1.0
    True

    .. versionadded:: 0.1.0
    """

    kind: ClassVar[str] = "gaussian"

    noise_scale: float = noise_scale_field()
    sensitivity: Sensitivity = sensitivity_field(Norm.L2)

    @classmethod
    def for_approx_dp(
        cls,
        *,
        epsilon: float,
        delta: float,
        sensitivity: float | Sensitivity,
        relation: Neighbouring | str | None = None,
        method: Literal["analytic", "classic"] = "analytic",
    ) -> Gaussian:
        """The Gaussian mechanism calibrated to (epsilon, delta)-DP.

        ``method="analytic"`` (default) gives the smallest sigma for which the exact
        profile meets the target (Balle and Wang 2018, Algorithm 1); ``"classic"`` uses
        Dwork and Roth's formula, valid only for ``epsilon < 1`` (refused otherwise).
        """
        owner = "Gaussian.for_approx_dp"
        eps = check.positive_finite("epsilon", epsilon, owner)
        d = check.open_unit("delta", delta, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L2, relation=relation, owner=owner)
        if method == "analytic":
            sigma = analytic_gaussian_sigma(epsilon=eps, delta=d, sensitivity=sens.value)
        elif method == "classic":
            sigma = classic_gaussian_sigma(epsilon=eps, delta=d, sensitivity=sens.value)
        else:
            raise check.fail("method", method, "'analytic' or 'classic'", owner)
        return cls(noise_scale=sigma, sensitivity=sens)

    @classmethod
    def for_zcdp(cls, rho: float, *, sensitivity: float | Sensitivity,
                 relation: Neighbouring | str | None = None) -> Gaussian:
        """sigma = Δ / sqrt(2 rho): exactly rho-zCDP (Bun, Steinke 2016, Prop. 1.6)."""
        owner = "Gaussian.for_zcdp"
        r = check.positive_finite("rho", rho, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L2, relation=relation, owner=owner)
        return cls(noise_scale=sens.value / math.sqrt(2.0 * r), sensitivity=sens)

    @classmethod
    def for_gdp(cls, mu: float, *, sensitivity: float | Sensitivity,
                relation: Neighbouring | str | None = None) -> Gaussian:
        """sigma = Δ / mu: exactly mu-GDP (Dong, Roth, Su 2019, Theorem 2.7)."""
        owner = "Gaussian.for_gdp"
        m = check.positive_finite("mu", mu, owner)
        sens = Sensitivity.coerce(sensitivity, norm=Norm.L2, relation=relation, owner=owner)
        return cls(noise_scale=sens.value / m, sensitivity=sens)

    @classmethod
    def for_histogram(cls, *, epsilon: float, delta: float, relation: Neighbouring | str
                      ) -> Gaussian:
        """Noisy counts of a histogram: L2 sensitivity 1 (ADD_REMOVE) or sqrt(2)
        (REPLACE_ONE), see :func:`privkit.mechanisms.histogram_sensitivity`."""
        from .histogram import histogram_sensitivity

        sens = histogram_sensitivity(Norm.L2, relation)
        return cls.for_approx_dp(epsilon=epsilon, delta=delta, sensitivity=sens)

    @classmethod
    def worst_case(cls, *, epsilon: float, delta: float) -> WorstCase:
        """Answers 0 and 1 under ADD_REMOVE (the GDP trade-off is that of this pair)."""
        mech = cls.for_approx_dp(epsilon=epsilon, delta=delta, sensitivity=1.0,
                                 relation=Neighbouring.ADD_REMOVE)
        return WorstCase(mech, 0.0, 1.0)

    def guarantees(self) -> tuple[Guarantee, ...]:
        mu = self.sensitivity.value / self.noise_scale
        return (GDP(mu=mu), ZCDP(rho=mu * mu / 2.0))

    def standard_noise(self, query_ndim: int) -> StandardNoise:
        return standard_normal

