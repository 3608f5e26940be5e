"""The noise block of objective perturbation (Chaudhuri, Monteleoni, Sarwate 2011).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
import numbers
from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from privkit import _validation as check
from privkit.guarantees import Guarantee, PureDP
from privkit.mechanism import Mechanism
from privkit.neighbouring import Neighbouring, Norm, Sensitivity

from ._noise import standard_l2_laplace
from ._validators import positive_finite

__all__ = ["ObjectivePerturbation"]


def _nonnegative(instance: Any, attribute: Any, value: Any) -> None:
    check.nonnegative_finite(check.field_name(attribute), value, type(instance).__name__)


@attrs.frozen(kw_only=True)
class ObjectivePerturbation(Mechanism):
    """Noise ``b`` with density ∝ exp(-||b|| / noise_scale) added to a regularised ERM
    objective as ``b.w / n``, with extra regularisation ``extra_regularization / 2 ||w||^2``.

    Parameters
    ----------
    noise_scale : float
        ``2 / eps'`` in the paper's notation (``beta = eps' / 2``).
    curvature : float
        c, a bound on the loss's second derivative (Huber: ``1 / (2h)``; logistic: 1/4).
    n_samples : int
        n, the number of training rows.
    regularization, extra_regularization : float
        Lambda > 0 and the added Delta >= 0.

    Notes
    -----
    Chaudhuri, Monteleoni, Sarwate 2011 (JMLR 12), Algorithm 2 and Theorem 9, for a
    convex, twice-differentiable loss with ``|l'| <= 1`` and ``|l''| <= c`` and rows of norm
    at most 1, under REPLACE_ONE: the minimiser is eps-DP with
    ``eps = eps' + log(1 + 2c / (n (Lambda + Delta)) + c^2 / (n^2 (Lambda + Delta)^2))``.
    ``release(dimension)`` draws ``b``; the estimator minimises the perturbed objective.
    """

    kind: ClassVar[str] = "objective_perturbation"

    noise_scale: float = attrs.field(validator=positive_finite)
    curvature: float = attrs.field(validator=positive_finite)
    n_samples: int = attrs.field(validator=check.attrs_validator(check.positive_int))
    regularization: float = attrs.field(validator=positive_finite)
    extra_regularization: float = attrs.field(default=0.0, validator=_nonnegative)

    @classmethod
    def for_epsilon(cls, epsilon: float, *, curvature: float, n_samples: int,
                    regularization: float) -> ObjectivePerturbation:
        """The paper's calibration (van der Reijden 2019 Algorithm 2, lines 1-6): spend
        ``eps' = eps - log(1 + 2c/(n Lambda) + c^2/(n Lambda)^2)`` on the noise if positive;
        otherwise add ``Delta = c / (n (e^(eps/4) - 1)) - Lambda`` and use ``eps' = eps / 2``."""
        owner = "ObjectivePerturbation.for_epsilon"
        eps = check.positive_finite("epsilon", epsilon, owner)
        c = check.positive_finite("curvature", curvature, owner)
        n = check.positive_int("n_samples", n_samples, owner)
        lam = check.positive_finite("regularization", regularization, owner)
        x = c / (n * lam)
        eps_prime = eps - 2.0 * math.log1p(x)
        delta = 0.0
        if eps_prime <= 0.0:
            delta = c / (n * math.expm1(eps / 4.0)) - lam
            eps_prime = eps / 2.0
        return cls(noise_scale=2.0 / eps_prime, curvature=c, n_samples=n,
                   regularization=lam, extra_regularization=max(delta, 0.0))

    @property
    def relation(self) -> Neighbouring:
        """REPLACE_ONE, as in Chaudhuri et al.'s analysis."""
        return Neighbouring.REPLACE_ONE

    @property
    def sensitivity(self) -> Sensitivity:
        """Rows are assumed to have L2 norm at most 1 (a public bound)."""
        return Sensitivity(value=1.0, norm=Norm.L2, relation=Neighbouring.REPLACE_ONE)

    def guarantees(self) -> tuple[Guarantee, ...]:
        eps_prime = 2.0 / self.noise_scale
        x = self.curvature / (self.n_samples * (self.regularization + self.extra_regularization))
        return (PureDP(epsilon=eps_prime + 2.0 * math.log1p(x)),)

    def prepare(self, value: ArrayLike, owner: str) -> NDArray[np.int64]:
        # The dimension is public, but ``value`` is private by the Mechanism contract, and
        # a message about it never shows it.
        if (isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral)
                or int(value) < 1):
            raise check.private_fail("value", "the dimension of the noise, an integer >= 1",
                                     owner)
        return np.asarray(int(value))

    def sample(self, value: NDArray[Any], rng: np.random.Generator, shape: tuple[int, ...],
               **options: Any) -> NDArray[np.float64]:
        """The noise vector ``b`` of dimension ``value`` (an int), shape ``(*size, value)``.

        ``b`` is an input to a solver, not a published value: the minimiser the estimator
        publishes is computed in floating point by an optimiser, which no grid makes safe
        against floating-point attacks (Mironov 2012). Treat the published weights of
        objective perturbation as simulation-grade in that respect.
        """
        noise: NDArray[np.float64] = self.noise_scale * standard_l2_laplace(
            rng, (*shape, int(value)), 1)
        return noise

    def safe_sample(self, value: NDArray[Any], rng: np.random.Generator,
                    shape: tuple[int, ...], **options: Any) -> NDArray[np.float64]:
        """``release`` returns the plain draw of :meth:`sample`, on purpose: ``b`` goes
        into the solver and is never published itself (see :meth:`sample`)."""
        return self.sample(value, rng, shape)
