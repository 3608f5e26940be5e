"""The stability-based histogram: exact release probabilities, its delta and epsilon
against closed forms, and the calibration."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from privkit import ApproxDP
from privkit.mechanisms import StabilityHistogram


def release_probability(counts, b, tau):
    """P(max_k (counts_k + Lap(b)) > tau), from the Laplace CDF (independent of the
    sampler)."""
    return 1.0 - math.prod(stats.laplace.cdf(tau - k, scale=b) for k in counts)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
@pytest.mark.parametrize("n_classes", [2, 5])
def test_calibration_spends_exactly_the_target(relation, n_classes):
    """for_approx_dp gives exactly (epsilon, delta) by the class's formula."""
    m = StabilityHistogram.for_approx_dp(epsilon=0.7, delta=1e-6, n_classes=n_classes,
                                         relation=relation)
    (g,) = m.guarantees()
    assert isinstance(g, ApproxDP)
    assert g.epsilon == pytest.approx(0.7, rel=1e-12)
    assert g.delta == pytest.approx(1e-6, rel=1e-9)
    assert g.delta <= 1e-6  # never above the target, so epsilon_at(1e-6) is finite
    assert m.epsilon_at(1e-6) == pytest.approx(0.7, rel=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3, 10])
def test_cell_delta_bounds_the_exact_release_probability_of_one_record(n_classes):
    """A cell holding one record (count 1 in one class) is released with probability at
    most cell_delta, and the bound is nearly tight (it is a union bound)."""
    m = StabilityHistogram.for_approx_dp(epsilon=1.0, delta=1e-5, n_classes=n_classes,
                                         relation="add_remove")
    exact = release_probability([1] + [0] * (n_classes - 1), m.noise_scale, m.threshold)
    assert exact <= m.cell_delta
    assert exact >= 0.999 * m.cell_delta


def test_epsilon_part_holds_for_a_cell_occupied_on_both_sides():
    """Counts k and k+1 around the threshold: both the release and the suppression
    probabilities stay within a factor e^(1/b), and the worst ratio nearly reaches it."""
    m = StabilityHistogram.for_approx_dp(epsilon=1.0, delta=1e-5, n_classes=2,
                                         relation="add_remove")
    worst = 0.0
    for k in range(1, int(m.threshold) + 5):
        p, q = (release_probability([j, 0], m.noise_scale, m.threshold) for j in (k, k + 1))
        for a, c in ((p, q), (1 - p, 1 - q)):
            worst = max(worst, abs(math.log(a / c)))
    assert worst <= 1.0 / m.noise_scale + 1e-12
    assert worst >= 0.99 / m.noise_scale


@pytest.mark.statistical
def test_release_frequency_matches_the_closed_form():
    """Seeded: the released fraction for counts (k, 0) matches the closed form (binomial
    test at alpha 1e-3: the false-failure rate over seeds is 1e-3; this seed is fixed)."""
    m = StabilityHistogram(noise_scale=2.0, threshold=5.0, n_classes=2, relation="add_remove")
    out = m.release(np.array([[4, 0]]), rng=11, size=200_000)[:, 0]
    p = release_probability([4, 0], 2.0, 5.0)
    assert stats.binomtest(int(np.sum(out >= 0)), out.size, p).pvalue > 1e-3
    labels = out[out >= 0]
    assert np.mean(labels == 0) > 0.8  # the noisy argmax favours the occupied class


def test_empty_cells_are_never_released_and_bad_counts_are_refused():
    """An all-zero row stands for an empty cell; negative or fractional counts fail."""
    m = StabilityHistogram(noise_scale=0.5, threshold=1.0, n_classes=2, relation="add_remove")
    out = m.release(np.array([[0, 0], [100, 0]]), rng=0, size=1000)
    assert np.all(out[:, 0] == -1)
    assert np.all(out[:, 1] == 0)
    with pytest.raises(ValueError, match="non-negative integer counts"):
        m.release(np.array([[0.5, 0]]), rng=0)
    with pytest.raises(ValueError, match="threshold"):
        StabilityHistogram(noise_scale=1.0, threshold=0.5, n_classes=2, relation="add_remove")


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_worst_case_pair_reaches_the_claim_exactly(epsilon):
    """The audit pair's exact epsilon at the claim's delta, from its three output
    probabilities (not released, label 0, label 1; by quadrature), is within 1e-3 of the
    claim, and never above it."""
    from scipy import integrate, optimize

    case = StabilityHistogram.worst_case(epsilon=epsilon, delta=1e-5)
    mech, claim = case.mechanism, case.mechanism.guarantees()[0]
    noise = stats.laplace(scale=mech.noise_scale)
    tau = mech.threshold

    def law(count):
        none = noise.cdf(tau - count) * noise.cdf(tau)
        one = integrate.quad(lambda z: noise.pdf(z) * noise.cdf(z - count), tau, np.inf,
                             epsabs=1e-17, epsrel=1e-12)[0]
        return np.array([none, 1.0 - none - one, one])

    first, second = law(case.first[0, 0]), law(case.second[0, 0])

    def exact(a, b):
        excess = lambda e: np.maximum(0.0, a - math.exp(e) * b).sum() - claim.delta  # noqa: E731
        return 0.0 if excess(0.0) <= 0 else optimize.brentq(excess, 0.0, 50.0, xtol=1e-12)

    pair = max(exact(first, second), exact(second, first))
    assert pair <= claim.epsilon * (1 + 1e-9)
    assert pair >= claim.epsilon * (1 - 1e-3)


def exact_delta(mech, mpmath):
    """The class notes' delta at 60 digits (mpmath, independent of privkit's log-space
    floats): ``1/2 e^(-(tau-1)/b) (1 + (c-1) e^(-1/b))``, times ``1 + e^(1/b)`` under
    REPLACE_ONE."""
    b, tau, c = (mpmath.mpf(v) for v in (mech.noise_scale, mech.threshold, mech.n_classes))
    cell = mpmath.e ** (-(tau - 1) / b) * (1 + (c - 1) * mpmath.e ** (-1 / b)) / 2
    return cell * (1 + mpmath.e ** (1 / b)) if mech.relation.value == "replace_one" else cell


EDGES = [  # (epsilon, delta, n_classes, relation): the calibration's edges
    (0.097, 1e-12, 1, "replace_one"),  # hung: 2/(2/eps) > eps, stepping tau by ulps
    (0.097, 1e-12, 1, "add_remove"),
    (1e-6, 1e-12, 3, "replace_one"),  # tau ~ 6e7
    (1e-6, 0.49, 1, "add_remove"),
    (709.0, 1e-5, 2, "add_remove"),
    (750.0, 1e-5, 2, "replace_one"),  # raised OverflowError: exp(1/b) in the delta
    (5000.0, 1e-300, 1000, "replace_one"),
    (3.0, 0.4, 1, "add_remove"),  # tau = 1 suffices: the floor of the threshold
]


@pytest.mark.parametrize(("epsilon", "delta", "n_classes", "relation"), EDGES)
def test_calibration_at_the_edges_is_the_smallest_threshold(epsilon, delta, n_classes,
                                                             relation):
    """The exact condition at the edges: the guarantee is within (epsilon, delta), the
    next smaller float threshold is not (unless the threshold is already 1), and the delta
    is the 60-digit value of the class notes' formula to 1e-12 (the bisection ends on the
    float where the rounded delta crosses the target, so it is the target to ~1e-13 or
    it is the formula's value at tau = 1)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    m = StabilityHistogram.for_approx_dp(epsilon=epsilon, delta=delta, n_classes=n_classes,
                                         relation=relation)
    (g,) = m.guarantees()
    assert g.epsilon <= epsilon
    assert g.epsilon == pytest.approx(epsilon, rel=1e-15)
    assert g.delta <= delta
    assert m.epsilon_at(delta) <= epsilon
    assert float(exact_delta(m, mpmath)) == pytest.approx(g.delta, rel=1e-12)
    if m.threshold > 1.0:
        below = StabilityHistogram(noise_scale=m.noise_scale,
                                   threshold=math.nextafter(m.threshold, 0.0),
                                   n_classes=n_classes, relation=relation)
        assert below.guarantees()[0].delta > delta
        assert g.delta == pytest.approx(delta, rel=1e-12)
    else:
        assert exact_delta(m, mpmath) <= delta


@given(st.floats(1e-6, 2000.0), st.floats(1e-300, 0.5), st.integers(1, 10**6),
       st.sampled_from(["add_remove", "replace_one"]))
def test_calibration_always_meets_the_target(epsilon, delta, n_classes, relation):
    """For every epsilon, delta and class count: a threshold in at most 64 bisection
    steps (no loop on ulps), finite, >= 1, and the guarantee within the target."""
    m = StabilityHistogram.for_approx_dp(epsilon=epsilon, delta=delta, n_classes=n_classes,
                                         relation=relation)
    (g,) = m.guarantees()
    assert 1.0 <= m.threshold < math.inf
    assert g.epsilon <= epsilon
    assert g.delta <= delta


def test_calibration_refuses_an_epsilon_without_a_finite_noise_scale():
    """An epsilon so small that 1/epsilon overflows is named, not an OverflowError."""
    with pytest.raises(ValueError, match="epsilon"):
        StabilityHistogram.for_approx_dp(epsilon=1e-310, delta=1e-5, n_classes=2,
                                         relation="add_remove")
