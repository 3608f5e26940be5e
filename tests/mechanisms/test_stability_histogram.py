"""The stability-based histogram: exact release probabilities, its delta and epsilon
against closed forms, and the calibration."""

import math

import numpy as np
import pytest
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

    case = StabilityHistogram.worst_case(epsilon, 1e-5)
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
