"""Plan-file readers for the built-in mechanisms (see :mod:`privkit.plan_spec`)."""

from __future__ import annotations

from typing import Any

from privkit import _validation as check
from privkit.errors import InvalidParameterError
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan_spec import register_leaf

from .analyze_gauss import AnalyzeGauss
from .discrete import DiscreteGaussian, DiscreteLaplace
from .exponential import Exponential
from .gaussian import Gaussian
from .l2_laplace import L2Laplace
from .laplace import Laplace
from .noisy_max import PermuteAndFlip, ReportNoisyMax
from .randomized_response import RandomizedResponse
from .sparse_vector import SparseVector


def _check_keys(kind: str, body: Any, allowed: set[str], exactly_one_of: list[set[str]]) -> None:
    if not isinstance(body, dict):
        raise InvalidParameterError(f"'{kind}' must map to an object (got {body!r})")
    unknown = set(body) - allowed
    if unknown:
        raise InvalidParameterError(
            f"unknown key(s) {sorted(unknown)} in '{kind}'; allowed: {sorted(allowed)}"
        )
    present = [group for group in exactly_one_of if group <= set(body)]
    if len(present) != 1 or any(set(body) & g and not g <= set(body) for g in exactly_one_of):
        options = " or ".join("+".join(sorted(g)) for g in exactly_one_of)
        raise InvalidParameterError(f"'{kind}' needs exactly one of: {options} (got {body})")


def _gaussian(body: Any, relation: Neighbouring) -> Gaussian:
    groups = [{"noise_scale"}, {"noise_multiplier"}, {"mu"}, {"rho"}, {"epsilon", "delta"}]
    _check_keys("gaussian", body, set().union(*groups, {"l2_sensitivity"}), groups)
    sens = Sensitivity(value=body.get("l2_sensitivity", 1.0), norm=Norm.L2, relation=relation)
    if "noise_scale" in body:
        return Gaussian(noise_scale=body["noise_scale"], sensitivity=sens)
    if "noise_multiplier" in body:
        multiplier = check.positive_finite("noise_multiplier", body["noise_multiplier"],
                                           "gaussian")
        return Gaussian(noise_scale=multiplier * sens.value, sensitivity=sens)
    if "mu" in body:
        return Gaussian.for_gdp(body["mu"], sensitivity=sens)
    if "rho" in body:
        return Gaussian.for_zcdp(body["rho"], sensitivity=sens)
    return Gaussian.for_approx_dp(body["epsilon"], body["delta"], sensitivity=sens)


def _scaled(cls: Any, norm: Norm, key: str) -> Any:
    """Reader for mechanisms given by ``scale`` or ``epsilon`` and one sensitivity key."""

    def read(body: Any, relation: Neighbouring) -> Any:
        _check_keys(cls.kind, body, {"scale", "epsilon", key}, [{"scale"}, {"epsilon"}])
        sens = Sensitivity(value=body.get(key, 1.0), norm=norm, relation=relation)
        if "epsilon" in body:
            return cls.for_epsilon(body["epsilon"], sensitivity=sens)
        return cls(scale=body["scale"], sensitivity=sens)

    return read


def _selection(cls: Any) -> Any:
    def read(body: Any, relation: Neighbouring) -> Any:
        _check_keys(cls.kind, body, {"scale", "epsilon", "linf_sensitivity", "monotone"},
                    [{"scale"}, {"epsilon"}])
        sens = Sensitivity(value=body.get("linf_sensitivity", 1.0), norm=Norm.LINF,
                           relation=relation)
        monotone = body.get("monotone", False)
        if "epsilon" in body:
            return cls.for_epsilon(body["epsilon"], sensitivity=sens, monotone=monotone)
        return cls(scale=body["scale"], sensitivity=sens, monotone=monotone)

    return read


def _discrete_gaussian(body: Any, relation: Neighbouring) -> DiscreteGaussian:
    _check_keys("discrete_gaussian", body, {"noise_scale", "rho", "l2_sensitivity"},
                [{"noise_scale"}, {"rho"}])
    sens = Sensitivity(value=body.get("l2_sensitivity", 1.0), norm=Norm.L2, relation=relation)
    if "rho" in body:
        return DiscreteGaussian.for_zcdp(body["rho"], sensitivity=sens)
    return DiscreteGaussian(noise_scale=body["noise_scale"], sensitivity=sens)


def _randomized_response(body: Any, relation: Neighbouring) -> RandomizedResponse:
    _check_keys("randomized_response", body, {"keep_probability", "epsilon", "n_categories"},
                [{"keep_probability"}, {"epsilon"}])
    if relation is not Neighbouring.REPLACE_ONE:
        raise InvalidParameterError(
            "randomized_response is a local randomizer under REPLACE_ONE; use it in a "
            "plan whose relation is 'replace_one'"
        )
    k = body.get("n_categories", 2)
    if "epsilon" in body:
        return RandomizedResponse.for_epsilon(body["epsilon"], n_categories=k)
    return RandomizedResponse(n_categories=k, keep_probability=body["keep_probability"])


def _sparse_vector(body: Any, relation: Neighbouring) -> SparseVector:
    scales = {"threshold_scale", "query_scale"}
    _check_keys("sparse_vector", body,
                scales | {"epsilon", "linf_sensitivity", "max_positives", "monotone"},
                [scales, {"epsilon"}])
    sens = Sensitivity(value=body.get("linf_sensitivity", 1.0), norm=Norm.LINF,
                       relation=relation)
    c = body.get("max_positives", 1)
    monotone = body.get("monotone", False)
    if "epsilon" in body:
        return SparseVector.for_epsilon(body["epsilon"], sensitivity=sens, max_positives=c,
                                        monotone=monotone)
    return SparseVector(threshold_scale=body["threshold_scale"],
                        query_scale=body["query_scale"], sensitivity=sens,
                        max_positives=c, monotone=monotone)


def _analyze_gauss(body: Any, relation: Neighbouring) -> AnalyzeGauss:
    _check_keys("analyze_gauss", body, {"noise_scale", "epsilon", "delta", "row_norm_bound"},
                [{"noise_scale"}, {"epsilon", "delta"}])
    bound = body.get("row_norm_bound", 1.0)
    if "noise_scale" in body:
        return AnalyzeGauss(noise_scale=body["noise_scale"], row_norm_bound=bound,
                            relation=relation)
    return AnalyzeGauss.for_approx_dp(body["epsilon"], body["delta"], row_norm_bound=bound,
                                      relation=relation)


register_leaf("laplace", _scaled(Laplace, Norm.L1, "l1_sensitivity"))
register_leaf("gaussian", _gaussian)
register_leaf("l2_laplace", _scaled(L2Laplace, Norm.L2, "l2_sensitivity"))
register_leaf("discrete_laplace", _scaled(DiscreteLaplace, Norm.L1, "l1_sensitivity"))
register_leaf("discrete_gaussian", _discrete_gaussian)
register_leaf("exponential", _selection(Exponential))
register_leaf("report_noisy_max", _selection(ReportNoisyMax))
register_leaf("permute_and_flip", _selection(PermuteAndFlip))
register_leaf("randomized_response", _randomized_response)
register_leaf("sparse_vector", _sparse_vector)
register_leaf("analyze_gauss", _analyze_gauss)
