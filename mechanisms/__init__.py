"""privkit.mechanisms: noise and selection blocks with exact privacy characterisations.

Every mechanism is a frozen value object with named calibration constructors, a
``release`` that is safe for publication (floating-point safe where it outputs reals,
recorded in the active ledger) and a ``simulate`` for experiments.

===========================  ==========================================================
mechanism                    privacy
===========================  ==========================================================
Laplace                      pure (L1), exact RDP
L2Laplace                    pure (L2): output / objective perturbation
Gaussian                     exact GDP (analytic or classic calibration), zCDP, RDP
DiscreteLaplace              pure, exact sampler, integer outputs
DiscreteGaussian             zCDP (CKS 2020), exact sampler, integer outputs
Exponential                  pure and bounded range (zCDP eps^2/8)
ReportNoisyMax               pure (Laplace noise)
PermuteAndFlip               pure
RandomizedResponse           pure, exact RDP (binary and k-ary, local)
SparseVector                 pure (Lyu, Su, Li 2017 Algorithm 1)
AnalyzeGauss                 exact GDP on a symmetric second-moment matrix
ObjectivePerturbation        pure (Chaudhuri et al. 2011, Theorem 9)
StabilityHistogram           (eps, delta): labels of data-dependent cells (Vadhan 2017)
===========================  ==========================================================

``standard_laplace``, ``standard_normal`` and ``standard_exponential`` are the unit-scale
samplers with exact, unbounded tails that the floating-point-safe release path needs; a
mechanism defined outside privkit returns one of them from ``standard_noise``.

.. versionadded:: 0.1.0
"""

from privkit.conversions import laplace_rdp
from privkit.mechanisms._noise import standard_exponential, standard_laplace, standard_normal
from privkit.mechanisms.analyze_gauss import AnalyzeGauss, second_moment_sensitivity
from privkit.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from privkit.mechanisms.exponential import Exponential
from privkit.mechanisms.gaussian import Gaussian, analytic_gaussian_sigma, classic_gaussian_sigma
from privkit.mechanisms.histogram import counts, histogram_sensitivity
from privkit.mechanisms.l2_laplace import L2Laplace
from privkit.mechanisms.laplace import Laplace
from privkit.mechanisms.noisy_max import PermuteAndFlip, ReportNoisyMax
from privkit.mechanisms.objective_perturbation import ObjectivePerturbation
from privkit.mechanisms.randomized_response import RandomizedResponse, randomized_response_rdp
from privkit.mechanisms.sparse_vector import ABOVE, BELOW, NOT_ANSWERED, SparseVector
from privkit.mechanisms.stability_histogram import StabilityHistogram

__all__ = [
    "ABOVE",
    "BELOW",
    "NOT_ANSWERED",
    "AnalyzeGauss",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Exponential",
    "Gaussian",
    "L2Laplace",
    "Laplace",
    "ObjectivePerturbation",
    "PermuteAndFlip",
    "RandomizedResponse",
    "ReportNoisyMax",
    "SparseVector",
    "StabilityHistogram",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "counts",
    "histogram_sensitivity",
    "laplace_rdp",
    "randomized_response_rdp",
    "second_moment_sensitivity",
    "standard_exponential",
    "standard_laplace",
    "standard_normal",
]
