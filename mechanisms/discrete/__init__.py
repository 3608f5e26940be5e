"""privkit.mechanisms.discrete: integer-valued mechanisms with exact samplers.

.. versionadded:: 0.1.0
"""

from privkit.mechanisms.discrete.gaussian import DiscreteGaussian
from privkit.mechanisms.discrete.laplace import DiscreteLaplace
from privkit.mechanisms.discrete.samplers import (
    at_least,
    bernoulli_exp,
    bernoulli_exp_minus_one,
    bernoulli_rational,
    discrete_gaussian,
    discrete_laplace,
)

__all__ = [
    "DiscreteGaussian",
    "DiscreteLaplace",
    "at_least",
    "bernoulli_exp",
    "bernoulli_exp_minus_one",
    "bernoulli_rational",
    "discrete_gaussian",
    "discrete_laplace",
]
