"""Small blocks shared by the accountant tests: a Laplace block of a given epsilon and a
Gaussian block of a given mu (mu-GDP), both of sensitivity 1 under ADD_REMOVE."""

from __future__ import annotations

from privkit import Neighbouring
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE


def lap(eps: float) -> Laplace:
    """A Laplace block that is ``eps``-DP."""
    return Laplace.for_epsilon(eps, sensitivity=1.0, relation=A)


def gau(mu: float) -> Gaussian:
    """A Gaussian block that is ``mu``-GDP."""
    return Gaussian.for_gdp(mu, sensitivity=1.0, relation=A)
