"""Plan-file readers for the built-in mechanisms (see :mod:`privkit.plan_spec`)."""

from __future__ import annotations

from typing import Any

from privkit import _validation as check
from privkit.errors import InvalidParameterError
from privkit.neighbouring import Neighbouring, Norm, Sensitivity
from privkit.plan_spec import register_leaf

from .gaussian import Gaussian
from .laplace import Laplace


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


def _laplace(body: Any, relation: Neighbouring) -> Laplace:
    _check_keys("laplace", body, {"scale", "epsilon", "l1_sensitivity"},
                [{"scale"}, {"epsilon"}])
    sens = Sensitivity(value=body.get("l1_sensitivity", 1.0), norm=Norm.L1, relation=relation)
    if "epsilon" in body:
        return Laplace.for_epsilon(body["epsilon"], sensitivity=sens)
    return Laplace(scale=body["scale"], sensitivity=sens)


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


register_leaf("laplace", _laplace)
register_leaf("gaussian", _gaussian)
