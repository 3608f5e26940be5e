"""Every mechanism constructor, calibration and release refuses bad input clearly."""

import math

import pytest

from privkit import (
    InvalidParameterError,
    Neighbouring,
    Norm,
    Sensitivity,
)
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE
L1 = Sensitivity(value=1.0, norm=Norm.L1, relation=A)
L2 = Sensitivity(value=1.0, norm=Norm.L2, relation=A)
LAP = Laplace(noise_scale=1.0, sensitivity=L1)
GAU = Gaussian(noise_scale=1.0, sensitivity=L2)

CASES = [
    (lambda: Laplace(noise_scale=0.0, sensitivity=L1),
     "`noise_scale` must be a finite number > 0 for Laplace"),
    (lambda: Laplace(noise_scale=math.inf, sensitivity=L1), "(got inf)"),
    (lambda: Laplace(noise_scale=1.0, sensitivity=1.0), "`sensitivity` must be a Sensitivity"),
    (lambda: Laplace.for_epsilon(0.0, sensitivity=1.0, relation=A),
     "`epsilon` must be a finite number > 0 for Laplace.for_epsilon (got 0.0)"),
    (lambda: Laplace.for_epsilon(1.0, sensitivity=1.0),
     "a bare number needs the neighbouring relation"),
    (lambda: Laplace.for_epsilon(1.0, sensitivity=-2.0, relation=A), "`sensitivity` must be"),
    (lambda: Laplace.for_epsilon(1.0, sensitivity=L1, relation=Neighbouring.REPLACE_ONE),
     "the sensitivity's own relation"),
    (lambda: LAP.release(math.nan), "`value` must be free of NaN for Laplace.release"),
    (lambda: LAP.release("ten"), "`value` must be a real number or an array"),
    (lambda: LAP.release(1.0, size=0), "`size` must be an integer >= 1 for Laplace.release"),
    (lambda: LAP.release(1.0, size=(3, -1)), "(got -1)"),
    (lambda: LAP.release(1.0, rng="seed"), "`rng` must be a numpy.random.Generator"),
    (lambda: Gaussian(noise_scale=-1.0, sensitivity=L2), "`noise_scale` must be"),
    (lambda: Gaussian.for_approx_dp(epsilon=1.0, delta=0.0, sensitivity=1.0, relation=A),
     "`delta` must be in (0, 1) for Gaussian.for_approx_dp (got 0.0)"),
    (lambda: Gaussian.for_approx_dp(epsilon=1.0, delta=1e-5, sensitivity=1.0, relation=A,
                                    method="fast"),
     "`method` must be 'analytic' or 'classic'"),
    (lambda: Gaussian.for_zcdp(0.0, sensitivity=1.0, relation=A), "`rho` must be"),
    (lambda: Gaussian.for_gdp(math.nan, sensitivity=1.0, relation=A), "`mu` must be"),
    (lambda: GAU.simulate([1.0, math.nan]), "free of NaN"),
]


@pytest.mark.parametrize(("call", "fragment"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_invalid_argument_raises_clear_error(call, fragment):
    """Each bad call raises InvalidParameterError whose message has the fragment."""
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert fragment in str(info.value)


@pytest.mark.parametrize(("call", "norm"), [
    (lambda: Laplace(noise_scale=1.0, sensitivity=L2), "L1"),
    (lambda: Gaussian(noise_scale=1.0, sensitivity=L1), "L2"),
    (lambda: Laplace.for_epsilon(1.0, sensitivity=L2), "L1"),
])
def test_wrong_norm_is_refused_with_the_fix(call, norm):
    """A sensitivity in the wrong norm is refused, suggesting in_norm."""
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert f"a sensitivity in the {norm.lower()} norm" in str(info.value)
    assert "in_norm" in str(info.value)


from privkit.mechanisms import (  # noqa: E402
    AnalyzeGauss,
    DiscreteGaussian,
    DiscreteLaplace,
    Exponential,
    L2Laplace,
    PermuteAndFlip,
    RandomizedResponse,
    SparseVector,
)

LINF = Sensitivity(value=1.0, norm=Norm.LINF, relation=A)

MORE_CASES = [
    (lambda: DiscreteLaplace(noise_scale=-1.0, sensitivity=L1), "`noise_scale` must be"),
    (lambda: DiscreteGaussian.for_zcdp(-0.1, sensitivity=1.0, relation=A), "`rho` must be"),
    (lambda: DiscreteGaussian.for_approx_dp(epsilon=1.0, delta=0.0, sensitivity=1.0, relation=A),
     "`delta` must be in (0, 1)"),
    (lambda: L2Laplace.for_epsilon(math.inf, sensitivity=1.0, relation=A), "`epsilon` must be"),
    (lambda: Exponential(noise_scale=1.0, sensitivity=LINF, monotone=1),
     "`monotone` must be a bool"),
    (lambda: Exponential(noise_scale=1.0, sensitivity=LINF).release([]),
     "1-d array of utilities"),
    (lambda: Exponential(noise_scale=1.0, sensitivity=LINF).release(5.0),
     "1-d array of utilities"),
    (lambda: PermuteAndFlip.for_epsilon(0.0, sensitivity=1.0, relation=A), "`epsilon` must be"),
    (lambda: RandomizedResponse(n_categories=1, keep_probability=0.9),
     "`n_categories` must be an integer >= 2 for RandomizedResponse (got 1)"),
    (lambda: RandomizedResponse.for_epsilon(1.0, n_categories=2.5), "`n_categories` must be"),
    (lambda: SparseVector.for_epsilon(1.0, sensitivity=1.0, relation=A, max_positives=0),
     "`max_positives` must be an integer >= 1"),
    (lambda: SparseVector.for_epsilon(1.0, sensitivity=1.0, relation=A, threshold_share=1.0),
     "`threshold_share` must be in (0, 1)"),
    (lambda: SparseVector(threshold_scale=1.0, query_scale=1.0, sensitivity=LINF).release(
        [1.0], threshold=math.nan), "`threshold` must be a real number"),
    (lambda: AnalyzeGauss(noise_scale=1.0, row_norm_bound=0.0, relation=A),
     "`row_norm_bound` must be"),
    (lambda: AnalyzeGauss(noise_scale=1.0, row_norm_bound=1.0, relation="both"),
     "`relation` must be Neighbouring.ADD_REMOVE or Neighbouring.REPLACE_ONE"),
]


@pytest.mark.parametrize(("call", "fragment"), MORE_CASES,
                         ids=[str(i) for i in range(len(MORE_CASES))])
def test_more_invalid_arguments(call, fragment):
    """The library's other blocks refuse bad input the same way."""
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert fragment in str(info.value)
