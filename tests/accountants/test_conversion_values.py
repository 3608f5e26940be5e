"""privkit.conversions against independent values, and its argument checks (issue 25:
every formula pinned; the helpers validate their arguments).

Independent values: the hockey-stick divergence of the Laplace pair by quadrature, and
of the worst bounded-range pair (Dong, Durfee, Rogers 2020, Section 4: randomized
response RR(eta, t), maximised over t in [0, 1]) by enumeration of its two outcomes and a
bounded scalar search over t.
"""

import inspect
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from privkit import conversions as c
from privkit.errors import InvalidParameterError


def _laplace_hockey(eps: float, t: float) -> float:
    """H_(e^t)(Lap(1, 1/eps) || Lap(0, 1/eps)) by quadrature, split at the kinks 0, 1."""
    b = 1.0 / eps

    def f(x: float) -> float:
        return max(stats.laplace.pdf(x, 1.0, b) - math.exp(t) * stats.laplace.pdf(x, 0.0, b),
                   0.0)

    return sum(integrate.quad(f, lo, hi, epsabs=1e-15, epsrel=1e-12, limit=200)[0]
               for lo, hi in ((-math.inf, 0.0), (0.0, 1.0), (1.0, math.inf)))


def _rr_hockey(eta: float, t: float, e: float) -> float:
    """H_(e^e)(P || Q) of RR(eta, t): two outcomes with log-ratios t eta and (t - 1) eta."""
    up, down = math.exp(t * eta), math.exp((t - 1.0) * eta)
    q = (1.0 - down) / (up - down)
    p = q * up
    return max(p - math.exp(e) * q, 0.0) + max((1 - p) - math.exp(e) * (1 - q), 0.0)


def _bounded_range_hockey(eta: float, e: float) -> float:
    grid = np.linspace(1e-6, 1 - 1e-6, 2001)
    values = [_rr_hockey(eta, t, e) for t in grid]
    i = int(np.argmax(values))
    found = optimize.minimize_scalar(lambda t: -_rr_hockey(eta, t, e),
                                     bounds=(grid[max(i - 1, 0)], grid[min(i + 1, 2000)]),
                                     method="bounded", options={"xatol": 1e-12})
    return max(values[i], -float(found.fun))


@pytest.mark.parametrize("eps", [0.03, 0.1, 1.0, 3.0])
@pytest.mark.parametrize("share", [0.0, 0.3, 0.9])
def test_laplace_delta_is_the_quadrature(eps, share):
    """laplace_delta equals the quadrature of the pair's hockey-stick divergence."""
    t = share * eps
    assert c.laplace_delta(epsilon=eps, target_epsilon=t) == pytest.approx(
        _laplace_hockey(eps, t), rel=1e-8, abs=1e-14)


@pytest.mark.parametrize(("eps", "delta"), [(0.03, 1e-5), (0.1, 1e-3), (1.0, 0.05),
                                            (3.0, 1e-6)])
def test_laplace_epsilon_inverts_the_quadrature(eps, delta):
    """laplace_epsilon is the epsilon at which the quadrature equals delta (small
    epsilons included, where a wrong clip at 0 would show)."""
    exact = optimize.brentq(lambda t: _laplace_hockey(eps, t) - delta, 0.0, eps,
                            xtol=1e-14)
    assert c.laplace_epsilon(epsilon=eps, target_delta=delta) == pytest.approx(exact, rel=1e-7)


@pytest.mark.parametrize("eta", [0.2, 1.0, 3.0])
@pytest.mark.parametrize("share", [0.0, 1 / 3, 0.8])
def test_bounded_range_delta_is_the_worst_randomized_response(eta, share):
    """bounded_range_delta equals the largest hockey-stick divergence over RR(eta, t)."""
    e = share * eta
    assert c.bounded_range_delta(eta, e) == pytest.approx(_bounded_range_hockey(eta, e),
                                                          rel=1e-7, abs=1e-15)


@pytest.mark.parametrize(("eta", "delta"), [(0.2, 1e-3), (1.0, 1e-5), (3.0, 0.01)])
def test_bounded_range_epsilon_inverts_it(eta, delta):
    """bounded_range_epsilon is where the worst divergence equals delta."""
    exact = optimize.brentq(lambda e: _bounded_range_hockey(eta, e) - delta, 0.0, eta,
                            xtol=1e-13)
    assert c.bounded_range_epsilon(eta, delta) == pytest.approx(exact, rel=1e-6)


BAD = [
    (c.pure_dp_delta, (-1.0, 0.5), "epsilon"),
    (c.pure_dp_epsilon, (1.0, 1.5), "target_delta"),
    (c.approx_dp_delta, (1.0, 1.0, 0.5), "delta"),
    (c.approx_dp_epsilon, (1.0, 2.0, 1e-5), "delta"),
    (c.approx_dp_epsilon, (1.0, 1e-6, -1e-5), "target_delta"),
    (c.pure_dp_rdp, (1.0, [1.0, 2.0]), "orders"),
    (c.bounded_range_delta, (0.0, 0.5), "eta"),
    (c.bounded_range_epsilon, (-1.0, 1e-5), "eta"),
    (c.laplace_delta, (1.0, -0.5), "target_epsilon"),
    (c.laplace_epsilon, (-1.0, 1e-5), "epsilon"),
    (c.laplace_rdp, (1.0, [float("nan")]), "orders"),
    (c.gdp_profile, (-1.0, [0.0]), "mu"),
    (c.rdp_to_epsilon, ([2.0, 3.0], [1.0], 1e-5), "rdp"),
    (c.rdp_to_epsilon, ([2.0], [float("nan")], 1e-5), "rdp"),
    (c.rdp_to_epsilon, ([2.0], [1.0], 1.0), "delta"),
    (c.rdp_to_delta, ([0.5], [1.0], 1.0), "orders"),
    (c.rdp_to_delta, ([2.0], [1.0], -1.0), "epsilon"),
    (c.zcdp_to_epsilon, (-1.0, 1e-5), "rho"),
    (c.zcdp_to_delta, (1.0, -1.0), "epsilon"),
    (c.zcdp_rho_for_approx_dp, (1.0, 0.0), "delta"),
    (c.gdp_delta, (float("inf"), 1.0), "mu"),
    (c.gdp_epsilon, (1.0, float("nan")), "delta"),
    (c.gdp_mu_for_approx_dp, (0.0, 1e-5), "epsilon"),
]


@pytest.mark.parametrize(("function", "args", "name"), BAD,
                         ids=[f"{f.__name__}-{n}" for f, _, n in BAD])
def test_arguments_outside_the_domain_are_refused(function, args, name):
    """Every helper refuses arguments outside its domain, naming the parameter (it used
    to return a number: zcdp_to_epsilon(-1, 1e-5) was 0, laplace_epsilon(-1, 1e-5) 0,
    bounded_range_epsilon(-1, 1e-5) a raw math domain error)."""
    names = list(inspect.signature(function).parameters)  # several are keyword-only
    with pytest.raises(InvalidParameterError, match=f"`{name}`"):
        function(**dict(zip(names, args, strict=False)))
