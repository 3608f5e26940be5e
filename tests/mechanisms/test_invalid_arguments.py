"""Every mechanism constructor, calibration and release refuses bad input clearly."""

import math

import pytest

from privkit import (
    IncompatibleCompositionError,
    InvalidParameterError,
    Neighbouring,
    Norm,
    Sensitivity,
)
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE
L1 = Sensitivity(value=1.0, norm=Norm.L1, relation=A)
L2 = Sensitivity(value=1.0, norm=Norm.L2, relation=A)
LAP = Laplace(scale=1.0, sensitivity=L1)
GAU = Gaussian(noise_scale=1.0, sensitivity=L2)

CASES = [
    (lambda: Laplace(scale=0.0, sensitivity=L1), "`scale` must be a finite number > 0 for Laplace"),
    (lambda: Laplace(scale=math.inf, sensitivity=L1), "(got inf)"),
    (lambda: Laplace(scale=1.0, sensitivity=1.0), "`sensitivity` must be a Sensitivity"),
    (lambda: Laplace.for_epsilon(0.0, sensitivity=1.0, relation=A),
     "`epsilon` must be a finite number > 0 for Laplace.for_epsilon (got 0.0)"),
    (lambda: Laplace.for_epsilon(1.0, sensitivity=1.0),
     "a bare number needs the neighbouring relation"),
    (lambda: Laplace.for_epsilon(1.0, sensitivity=-2.0, relation=A), "`sensitivity` must be"),
    (lambda: Laplace.for_epsilon(1.0, sensitivity=L1, relation=Neighbouring.REPLACE_ONE),
     "the sensitivity's own relation"),
    (lambda: LAP.release(math.nan), "`value` must be finite (no NaN or infinity)"),
    (lambda: LAP.release("ten"), "`value` must be a real number or an array"),
    (lambda: LAP.release(1.0, size=0), "`size` must be an integer >= 1 for Laplace.release"),
    (lambda: LAP.release(1.0, size=(3, -1)), "(got -1)"),
    (lambda: LAP.release(1.0, rng="seed"), "`rng` must be a numpy.random.Generator"),
    (lambda: Gaussian(noise_scale=-1.0, sensitivity=L2), "`noise_scale` must be"),
    (lambda: Gaussian.for_approx_dp(1.0, 0.0, sensitivity=1.0, relation=A),
     "`delta` must be in (0, 1) for Gaussian.for_approx_dp (got 0.0)"),
    (lambda: Gaussian.for_approx_dp(1.0, 1e-5, sensitivity=1.0, relation=A, method="fast"),
     "`method` must be 'analytic' or 'classic'"),
    (lambda: Gaussian.for_zcdp(0.0, sensitivity=1.0, relation=A), "`rho` must be"),
    (lambda: Gaussian.for_gdp(math.nan, sensitivity=1.0, relation=A), "`mu` must be"),
    (lambda: GAU.simulate([1.0, math.inf]), "finite"),
]


@pytest.mark.parametrize(("call", "fragment"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_invalid_argument_raises_clear_error(call, fragment):
    """Each bad call raises InvalidParameterError whose message has the fragment."""
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert fragment in str(info.value)


@pytest.mark.parametrize(("call", "norm"), [
    (lambda: Laplace(scale=1.0, sensitivity=L2), "L1"),
    (lambda: Gaussian(noise_scale=1.0, sensitivity=L1), "L2"),
    (lambda: Laplace.for_epsilon(1.0, sensitivity=L2), "L1"),
])
def test_wrong_norm_is_refused_with_the_fix(call, norm):
    """A sensitivity in the wrong norm is refused, suggesting in_norm."""
    with pytest.raises(IncompatibleCompositionError) as info:
        call()
    assert f"needs an {norm} sensitivity" in str(info.value)
    assert "in_norm" in str(info.value)
