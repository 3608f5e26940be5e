"""The random number of runs of a private selection and its cost (Papernot, Steinke 2022,
arXiv:2110.03620v2): the truncated negative binomial's mean and sampler, Theorem 2's RDP
bound pinned to a peer library, and the pure-DP bound checked by exact enumeration."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privkit.algorithms.tuning._repeat_select import (
    draw_runs,
    repeat_and_select_pure,
    repeat_and_select_rdp,
    runs_gamma,
    runs_mean,
)
from privkit.errors import InvalidParameterError


def pmf(gamma, shape, k_max):
    """P[K = k] for k = 1..k_max from Definition 1: the product
    prod_(l < k) (l + eta) / (l + 1) built up term by term."""
    out, product = [], 1.0
    for k in range(1, k_max + 1):
        product *= (k - 1 + shape) / k
        if shape == 0.0:
            out.append((1 - gamma) ** k / (k * math.log(1 / gamma)))
        else:
            out.append((1 - gamma) ** k / (gamma ** (-shape) - 1) * product)
    return np.array(out)


@pytest.mark.parametrize("shape", [-0.5, 0.0, 0.5, 1.0, 3.0])
def test_mean_is_the_sum_of_the_distribution(shape):
    """runs_mean's closed form equals sum k P[K = k] of Definition 1 (summed to 4000
    terms, where the tail is below 1e-40), and the pmf sums to 1; runs_gamma inverts it."""
    gamma = 0.05
    p = pmf(gamma, shape, 4000)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert runs_mean(gamma, shape) == pytest.approx(float(np.sum(np.arange(1, 4001) * p)),
                                                    rel=1e-10)
    assert runs_gamma(shape, runs_mean(gamma, shape)) == pytest.approx(gamma, rel=1e-9)
    assert runs_mean(0.1, 1.0) == pytest.approx(10.0)  # geometric: 1 / gamma


@pytest.mark.parametrize("shape", [-0.5, 0.0, 1.0])
def test_sampler_follows_the_distribution(shape):
    """20,000 seeded draws: the frequencies of K = 1..5 and of K > 5 pass a chi-square
    test at level 1e-4 (so a correct sampler fails with probability 1e-4 per seed; the
    seed is fixed, so the test is deterministic)."""
    from scipy import stats

    gamma = runs_gamma(shape, 4.0)
    rng = np.random.default_rng(27)
    draws = np.array([draw_runs(gamma, shape, rng) for _ in range(20_000)])
    p = pmf(gamma, shape, 5)
    expected = np.append(p, 1 - p.sum()) * draws.size
    observed = np.append([np.sum(draws == k) for k in range(1, 6)], np.sum(draws > 5))
    assert stats.chisquare(observed, expected).pvalue > 1e-4


#: Google's dp_accounting 0.6.0, ``rdp_privacy_accountant._compute_rdp_repeat_and_select``
#: on these orders and this curve with mean 10 (computed in a separate environment: it
#: pins attrs below 24, so it is not a privkit dependency).
ORDERS = [1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
CURVE = [0.05, 0.1, 0.25, 0.6, 1.3, 2.8, 6.0]
DP_ACCOUNTING = {
    0.0: [1.9058095310107515] * 4 + [2.4303744763064437, 3.8511457419238524,
                                     7.013417773170238],
    0.5: [2.236301113060386] * 4 + [2.7608660583560782, 4.1816373239734865,
                                    7.343909355219872],
    1.0: [2.4552332740676004] * 4 + [2.9797982193632926, 4.400569484980702,
                                     7.562841516227087],
    2.0: [2.8167976824232976] * 4 + [3.34136262771899, 4.762133893336399,
                                     7.924405924582784],
}


@pytest.mark.parametrize("shape", sorted(DP_ACCOUNTING))
def test_theorem_2_matches_dp_accounting(shape):
    """Theorem 2's RDP bound, with monotonicity in the order, equals dp_accounting's to
    1e-9 relative (its gamma comes from a bisection to 1e-9, privkit's to 1e-12)."""
    np.testing.assert_allclose(repeat_and_select_rdp(ORDERS, CURVE, shape=shape,
                                                     expected_runs=10.0),
                               DP_ACCOUNTING[shape], rtol=1e-9)


@pytest.mark.parametrize("shape", [-0.5, 0.0, 1.0])
def test_pure_bound_is_the_limit_of_theorem_2(shape):
    """For a 0.3-DP run (RDP 0.3 at every order) Theorem 2 at growing orders approaches
    (2 + eta) 0.3 from above; Liu-Talwar's 3 epsilon at eta = 1."""
    orders = np.geomspace(2.0, 1e9, 60)
    bound = repeat_and_select_rdp(orders, np.full(60, 0.3), shape=shape, expected_runs=8.0)
    assert np.all(bound >= repeat_and_select_pure(0.3, shape) - 1e-12)
    assert bound[-1] == pytest.approx(repeat_and_select_pure(0.3, shape), abs=1e-6)
    assert repeat_and_select_pure(0.3, 1.0) == pytest.approx(0.9)


@settings(max_examples=40, deadline=None)
@given(epsilon=st.floats(0.05, 2.0), shape=st.sampled_from([-0.5, 0.0, 0.5, 1.0]),
       mean=st.floats(1.5, 50.0))
def test_pure_bound_holds_for_randomized_response_by_enumeration(epsilon, shape, mean):
    """The worst epsilon-DP candidate, randomized response on a bit scored by its
    output: the selection outputs 1 unless all K runs say 0, so P[0] = E[q^K] with
    q = P[run says 0]. The exact log-ratio of both outputs over neighbours (q = 1/(1+e^eps)
    against e^eps/(1+e^eps)), summed over K to 10^5 terms, is within (2 + eta) epsilon."""
    gamma = runs_gamma(shape, mean)
    p = pmf(gamma, shape, 3000)
    k = np.arange(1, 3001)
    q_low, q_high = 1 / (1 + math.exp(epsilon)), math.exp(epsilon) / (1 + math.exp(epsilon))
    zero = [float(np.sum(p * q ** k)) for q in (q_low, q_high)]
    one = [1 - z for z in zero]
    loss = max(abs(math.log(zero[0] / zero[1])), abs(math.log(one[0] / one[1])))
    assert loss <= repeat_and_select_pure(epsilon, shape) * (1 + 1e-9)


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda: runs_mean(1.0, 0.0), "`gamma`"),
    (lambda: runs_mean(0.5, -1.0), "`shape` must be a number > -1"),
    (lambda: runs_gamma(0.0, 1.0), "`expected_runs` must be a number > 1"),
    (lambda: repeat_and_select_rdp([1.0, 2.0], [0.1, 0.2], shape=0.0, expected_runs=3.0),
     "`orders`"),
    (lambda: repeat_and_select_pure(-1.0, 0.0), "`epsilon`"),
])
def test_bad_parameters_are_refused_by_name(call, fragment):
    with pytest.raises(InvalidParameterError, match=fragment):
        call()
