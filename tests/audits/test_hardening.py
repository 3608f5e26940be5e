"""The auditor's hardening: clear errors, non-finite and missing outputs as events, the
floating-point reachability test, sequential testing, and tests aimed at the formulas of
the statistical bounds (each fails when its formula is changed by hand)."""

import math
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from scipy import stats

from privkit import InvalidParameterError, Neighbouring, Norm, Sensitivity
from privkit.audits import (
    Distinguisher,
    NeighbouringPair,
    Reachability,
    Rule,
    audit,
    canary_pairs,
    check_sensitivity,
    clopper_pearson,
    epsilon_lower_bound,
    gdp_mu_lower_bound,
    random_pairs,
    sequential_audit,
)
from privkit.audits.distinguishers import Threshold

A = Neighbouring.ADD_REMOVE
PAIR = NeighbouringPair(first=0.0, second=1.0, relation=A)


def laplace(value, rng, size):
    return value + rng.laplace(0.0, 1.0, size)


def laplace_snapped(value, rng, size):
    return np.round((value + rng.laplace(0.0, 1.0, size)) * 2**30) / 2**30


def laplace_one(value, rng):
    return value + rng.laplace(0.0, 1.0)


# -- bad input: an error naming the parameter ------------------------------------------------

@pytest.mark.parametrize("trials", [1, 3, 9])
def test_too_few_trials_are_refused(trials):
    """Fewer than 10 draws per side cannot choose and measure a set (was an IndexError)."""
    with pytest.raises(InvalidParameterError, match="`trials` must be an integer >= 10"):
        audit(laplace, PAIR, epsilon=1.0, trials=trials)


@pytest.mark.parametrize("rng", [-1, "x", 1.5, True, [1, -2]])
def test_bad_rng_is_refused(rng):
    with pytest.raises(InvalidParameterError, match="`rng` must be"):
        audit(laplace, PAIR, epsilon=1.0, trials=100, rng=rng)


def test_non_callable_system_is_refused():
    with pytest.raises(InvalidParameterError, match="`system` must be a callable"):
        audit(3.0, PAIR, epsilon=1.0, trials=100)


def test_batched_mismatch_says_which_to_set():
    """A one-output function with batched=True (the default) and a batched one with
    batched=False name the setting to use (was a raw TypeError)."""
    with pytest.raises(InvalidParameterError, match="`batched` must be False"):
        audit(laplace_one, PAIR, epsilon=1.0, trials=100)
    with pytest.raises(InvalidParameterError, match="`batched` must be True"):
        audit(laplace, PAIR, epsilon=1.0, trials=100, batched=False)


def test_strings_and_none_are_refused():
    """Strings are not outputs; a system that always returns None returns nothing."""
    with pytest.raises(InvalidParameterError, match="returning numbers"):
        audit(lambda v, r, n: np.array(["a"] * n), PAIR, epsilon=1.0, trials=100)
    with pytest.raises(InvalidParameterError, match="returned None"):
        audit(lambda v, r, n: None, PAIR, epsilon=1.0, trials=100)
    with pytest.raises(InvalidParameterError, match="every draw on both inputs returned None"):
        audit(lambda v, r: None, PAIR, epsilon=1.0, trials=100, batched=False)


def test_closure_with_a_process_pool_says_picklable():
    """A closure cannot be sent to another process: the error says so and how to fix it."""
    scale = 1.0

    def closure(value, rng):
        return value + rng.laplace(0.0, scale)

    with ProcessPoolExecutor(max_workers=1) as pool, \
            pytest.raises(InvalidParameterError, match="picklable"):
        audit(closure, PAIR, epsilon=1.0, trials=100, batched=False, executor=pool)


def test_bound_helpers_refuse_impossible_counts():
    """hits > trials returned NaN or 0; now each names the parameter."""
    with pytest.raises(InvalidParameterError, match="`successes` must be integer counts"):
        clopper_pearson(5, 3, 0.05)
    with pytest.raises(InvalidParameterError, match="`hits` must be integer counts"):
        epsilon_lower_bound(11, 10, 1, 10, delta=0.0, confidence=0.95)
    with pytest.raises(InvalidParameterError, match="`hits_other` must be"):
        epsilon_lower_bound(1, 10, 2.5, 10, delta=0.0, confidence=0.95)
    with pytest.raises(InvalidParameterError, match="`alpha` must be in"):
        clopper_pearson(1, 3, 1.5)
    with pytest.raises(InvalidParameterError, match="`hits` must be"):
        gdp_mu_lower_bound(-1, 10, 1, 10, confidence=0.95)


def test_pair_helpers_refuse_bad_boxes_and_shapes():
    with pytest.raises(InvalidParameterError, match="`record_low` must be finite"):
        random_pairs(float("nan"), 1.0, n_records=3, relation=A, count=2)
    with pytest.raises(InvalidParameterError, match="`record_high` must be finite"):
        random_pairs(0.0, float("inf"), n_records=3, relation=A, count=2)
    with pytest.raises(InvalidParameterError, match="`canary` must be one record"):
        canary_pairs(np.zeros((3, 2)), [1.0, 2.0, 3.0], A)


def test_pair_takes_relation_strings():
    assert NeighbouringPair(first=0, second=1, relation="replace_one").relation is \
        Neighbouring.REPLACE_ONE
    with pytest.raises(InvalidParameterError, match="`relation` must be"):
        NeighbouringPair(first=0, second=1, relation="sideways")


def test_check_sensitivity_refuses_nan_values():
    """A function that is NaN on some dataset has no sensitivity there: refused, naming it."""
    declared = Sensitivity(value=1.0, norm=Norm.L1, relation=A)
    with pytest.raises(InvalidParameterError, match="finite values on every dataset"):
        check_sensitivity(lambda d: np.nan, declared, record_low=0.0, record_high=1.0,
                          trials=5, search_examples=0, rng=0)


def test_check_sensitivity_takes_pairs_and_a_record_sampler():
    """A known witness pair is measured; integer/categorical records come from a sampler
    (a count of category 2 has add/remove sensitivity 1, declared 0.5: caught)."""
    declared = Sensitivity(value=0.5, norm=Norm.L1, relation=A)
    witness = NeighbouringPair(first=np.array([1, 2]), second=np.array([1, 2, 2]), relation=A)

    def count(d):
        return float(np.sum(np.asarray(d) == 2))

    found = check_sensitivity(count, declared, pairs=[witness], trials=1, search_examples=0,
                              record_sampler=lambda g, k: g.integers(0, 3, k), rng=0)
    assert found.largest == 1.0
    assert found.violation
    sampled = check_sensitivity(count, declared, trials=200, search_examples=0,
                                record_sampler=lambda g, k: g.integers(0, 3, k), rng=0)
    assert sampled.largest == 1.0


# -- non-finite and missing outputs are events -----------------------------------------------

def _nan_on_second(value, rng, size):
    out = rng.laplace(0.0, 1.0, size)
    return out if value == 0.0 else np.full(size, np.nan)


def _nan_half_on_second(value, rng, size):
    out = rng.laplace(0.0, 1.0, size)
    if value == 1.0:
        out[rng.random(size) < 0.5] = np.nan
    return out


def _nan_coordinate(value, rng, size):
    out = rng.laplace(0.0, 1.0, (size, 3))
    if value == 1.0:
        out[:, 1] = np.inf
    return out


def _none_on_second(value, rng):
    return None if value == 1.0 else rng.laplace(0.0, 1.0)


@pytest.mark.parametrize("system", [_nan_on_second, _nan_half_on_second, _nan_coordinate])
def test_non_finite_outputs_are_caught(system):
    """NaN on one input, NaN half the time, or +inf in one coordinate: a violation of
    any claim (was "lower bound 0, inconclusive"). Each is a perfect or near-perfect
    distinguisher, so with 2000 draws the bound exceeds 1 unless the Clopper-Pearson
    bounds fail (probability < 5%; seeded)."""
    result = audit(system, PAIR, epsilon=1.0, trials=2000, rng=1)
    assert result.verdict == "violation", str(result)
    assert result.rule.startswith("one of:")  # an event set over the outputs' patterns


def test_missing_outputs_are_an_event():
    """A one-output system returning None on one input only is caught (seeded, 5%)."""
    result = audit(_none_on_second, PAIR, epsilon=1.0, trials=2000, batched=False, rng=2)
    assert result.verdict == "violation"
    assert result.rule.startswith("one of:")


# -- floating-point leaks (Mironov 2012) -----------------------------------------------------

def _naive_laplace(value, rng, size):
    return value + rng.laplace(0.0, 10.0, size)  # claimed 0.1-DP for sensitivity 1


def test_naive_float_laplace_is_flagged_and_the_safe_release_is_not():
    """``x + numpy Laplace`` claimed at 0.1 is a violation within 10^5 draws per side (the
    reachability test certifies far more than 0.1; a threshold alone cannot see it);
    privkit's own floating-point-safe ``release`` of the same mechanism is not (false
    failure rate at most 5%, seeded)."""
    from privkit.mechanisms import Laplace

    naive = audit(_naive_laplace, PAIR, epsilon=0.1, trials=100_000, rng=3)
    assert naive.verdict == "violation", str(naive)
    assert naive.lower_bound > 5.0
    assert "reachable" in naive.rule
    mech = Laplace.for_epsilon(0.1, sensitivity=1.0, relation=A)
    safe = audit(lambda v, r, n: mech.release(v, rng=r, size=n), PAIR, epsilon=0.1,
                 trials=100_000, rng=3)
    assert safe.verdict != "violation", str(safe)
    assert safe.lower_bound <= 0.1


def test_reachability_test_itself():
    """fl(c + z) is reachable from c; 2^-60 is not reachable from 1 (no double added to
    1 gives it), and is from 0."""
    from privkit.audits.floating import reachable

    z = np.random.default_rng(0).laplace(0.0, 1.0, 1000)
    assert reachable((1.0 + z)[:, None], 1.0).all()
    assert not reachable(np.array([2.0**-60]), 1.0)[0]
    assert reachable(np.array([2.0**-60]), 0.0)[0]
    unbound = Reachability().fit(np.zeros(10), np.ones(10), delta=0.0, confidence=0.95)
    assert "not query answers" in unbound.description  # issue 23: never a silent empty rule


# -- sequential testing ----------------------------------------------------------------------

def _laplace_half_scale(value, rng, size):
    return np.round((value + rng.laplace(0.0, 0.5, size)) * 2**30) / 2**30


def _laplace_half_scale_one(value, rng):
    return float(np.round((value + rng.laplace(0.0, 0.5)) * 2**30) / 2**30)


def test_sequential_audit_stops_early_on_a_too_small_scale():
    """Laplace noise of half the scale (true epsilon 2, claimed 1) is flagged within
    2 x 10^4 draws per side in all; stage k spends (1 - confidence) / 2^k, so the verdict
    holds at 95% (false failure: the violation is real, so a miss has probability well
    under 5%; seeded)."""
    result = sequential_audit(_laplace_half_scale, PAIR, epsilon=1.0, rng=4)
    assert result.verdict == "violation"
    assert result.draws_per_side <= 20_000
    assert result.confidence == 0.95


def test_sequential_audit_on_a_correct_mechanism_runs_to_the_cap():
    """A correct Laplace (snapped to a 2^-30 grid, so without a floating-point leak) is
    not flagged (false failure at most 5%, seeded); every stage runs up to max_trials."""
    result = sequential_audit(laplace_snapped, PAIR, epsilon=1.0, max_trials=32_000, rng=5)
    assert result.verdict != "violation"
    assert result.stages == 3
    assert result.trials == 32_000


@pytest.mark.slow
def test_sequential_audit_same_verdict_on_dask():
    """The same stages on a dask LocalCluster give the same result (child seeds)."""
    from dask.distributed import Client, LocalCluster

    local = sequential_audit(_laplace_half_scale_one, PAIR, epsilon=1.0, rng=6, batched=False)
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        remote = sequential_audit(_laplace_half_scale_one, PAIR, epsilon=1.0, rng=6,
                                  batched=False, executor=client)
    assert remote == local
    assert remote.verdict == "violation"


# -- tests aimed at the bounds' formulas (issue 10, item 8) ----------------------------------

@pytest.mark.parametrize(("hits", "other", "n"), [(400, 150, 1000), (20_000, 7000, 100_000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_epsilon_bound_splits_the_confidence_over_both_proportions(hits, other, n,
                                                                   confidence):
    """Independent value: each proportion gets a one-sided exact bound at level
    (1 - confidence) / 2, i.e. the end of scipy's exact two-sided interval at
    1 - (1 - confidence). Fails if the Clopper-Pearson split (the factor 2) changes."""
    level = 1.0 - (1.0 - confidence)  # two-sided level whose ends are one-sided at alpha/2
    p_low = stats.binomtest(hits, n).proportion_ci(level, method="exact").low
    q_high = stats.binomtest(other, n).proportion_ci(level, method="exact").high
    expected = math.log(p_low / q_high)
    got = float(epsilon_lower_bound(hits, n, other, n, delta=0.0, confidence=confidence))
    assert got == pytest.approx(expected, rel=1e-9)


def test_clopper_pearson_edges():
    """k = 0 has lower bound 0 and k = n upper bound 1; in between, the lower bound at
    alpha solves P[Binomial(n, p) >= k] = alpha (the definition)."""
    lower, upper = clopper_pearson([0, 7, 20], 20, 0.05)
    assert lower[0] == 0.0
    assert upper[2] == 1.0
    assert stats.binom.sf(6, 20, lower[1]) == pytest.approx(0.05, rel=1e-8)


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_gdp_mu_bound_splits_the_confidence_over_both_rates(confidence):
    """Independent value: mu >= Phi^-1(1 - FPR_high) - Phi^-1(FNR_high), each rate's exact
    bound at level (1 - confidence) / 2 (scipy's exact interval). Fails if the f-DP
    bound's confidence split changes."""
    hits, other, n = 30_000, 5000, 100_000
    level = confidence
    tpr_low = stats.binomtest(hits, n).proportion_ci(level, method="exact").low
    fpr_high = stats.binomtest(other, n).proportion_ci(level, method="exact").high
    expected = stats.norm.isf(fpr_high) - stats.norm.ppf(1.0 - tpr_low)
    got = gdp_mu_lower_bound(hits, n, other, n, confidence=confidence)
    assert got == pytest.approx(expected, rel=1e-9)


class _Spy(Distinguisher):
    """Records the draws it is fitted on; its rule records the draws it measures."""

    name = "spy"

    def __init__(self):
        self.fitted = []
        self.measured = []

    def fit(self, first, second, *, delta, confidence):
        self.fitted += [np.asarray(first).ravel(), np.asarray(second).ravel()]

        def contains(x):
            self.measured.append(np.asarray(x).ravel())
            return np.asarray(x).ravel() > 0.5

        return Rule(contains=contains, description="x > 0.5")


def _unique_draws(value, rng, size):
    return value + rng.random(size)  # every draw distinct (with probability 1)


def test_rejection_set_is_chosen_on_draws_it_is_not_measured_on():
    """The selection and measurement draws are disjoint, of the documented sizes: fails
    if the rule is chosen on (or measured on) the other split."""
    spy = _Spy()
    result = audit(_unique_draws, PAIR, epsilon=1.0, trials=1000, distinguisher=spy, rng=7)
    fitted = np.concatenate(spy.fitted)
    measured = np.concatenate(spy.measured)
    assert fitted.size == 2 * 200
    assert measured.size == 2 * 1000
    assert np.intersect1d(fitted, measured).size == 0
    assert result.selection_trials == 200
    assert result.draws_per_side == 1200


@pytest.mark.statistical
def test_no_leak_no_bound_under_a_flexible_distinguisher():
    """Identical laws on both sides with a histogram over 1000 values (which overfits its
    selection draws badly): over 40 seeded audits the bound is positive at most 6 times.
    With a valid split each audit is positive with probability <= 5%, so P[>= 7 of 40]
    <= 0.014 (binomial tail): the false-failure rate. Choosing the set on the measured
    draws makes nearly every audit positive."""
    from privkit.audits import Histogram

    def uniform(value, rng, size):
        return rng.integers(0, 1000, size)

    positive = sum(audit(uniform, PAIR, epsilon=1.0, trials=5000, distinguisher=Histogram(),
                         rng=[8, s]).lower_bound > 0 for s in range(40))
    assert positive <= 6
    assert stats.binom.sf(6, 40, 0.05) < 0.015


@pytest.mark.statistical
def test_coverage_at_the_claim_small():
    """Coverage (the auditor proving its own validity, small version of
    benchmarks/audit_coverage.py): randomized response at epsilon 1, with the rejection
    set {1} fixed, is exactly tight, so the bound exceeds epsilon only when the bound
    fails. Over 100 seeded audits of 20,000 draws it does so at most 5 times: with a valid
    95% bound the count is Binomial(100, p <= 0.05), and P[> 10] < 0.012 for p = 0.05; the
    test allows 10 (false-failure rate < 1.2%)."""
    p = math.e / (1 + math.e)

    def rr(value, rng, size):
        keep = rng.random(size) < p
        return np.where(keep, value, 1 - value)

    class One(Distinguisher):
        name = "fixed {1}"

        def fit(self, first, second, *, delta, confidence):
            return Rule(contains=lambda x: np.asarray(x) == 1, description="x == 1",
                        swapped=True)

    pair = NeighbouringPair(first=0, second=1, relation=A)
    over = sum(audit(rr, pair, epsilon=1.0, trials=20_000, distinguisher=One(),
                     rng=[9, s]).lower_bound > 1.0 for s in range(100))
    assert over <= 10
    assert stats.binom.sf(10, 100, 0.05) < 0.012


def test_threshold_picks_a_one_sided_set():
    """The threshold distinguisher on separated draws picks the separating cut."""
    rule = Threshold().fit(np.zeros(100), np.ones(100), delta=0.0, confidence=0.95)
    assert rule.contains(np.array([1.0])).all() != rule.contains(np.array([0.0])).all()


# -- bands and answer patterns ---------------------------------------------------------------

def _svt_with_value(eps_svt=0.5, eps_value=0.5):
    """AboveThreshold (Lyu, Su, Li 2017) at eps_svt that also releases the first positive
    query's answer with fresh Laplace noise of scale 1 / eps_value (Dwork, Roth 2014,
    NumericSparse): (eps_svt + eps_value)-DP. Its pair is SparseVector's worst case."""
    from privkit.mechanisms import SparseVector

    worst = SparseVector.worst_case(epsilon=eps_svt, delta=0.0)
    svt, scale = worst.mechanism, 1.0 / eps_value

    def system(q, rng, size):
        codes = svt.simulate(q, rng=rng, size=size, threshold=0.0)
        above = codes == 1
        first = np.argmax(above, axis=1)
        value = np.where(above.any(axis=1), q[first] + rng.laplace(0.0, scale, size), 0.0)
        return np.column_stack([codes, np.round(value * 2**30) / 2**30])

    return worst, svt, scale, system


def _svt_value_true_epsilon(svt, scale, m):
    """The pair's exact epsilon: for the output "first ABOVE at position p" the pattern's
    privacy loss l_p (an integral over the threshold noise) plus at most 1 / scale from
    the released value (attained in a tail of its Laplace noise); "no ABOVE" has l_none
    and no value. D answers 0 everywhere; D' answers -1 on queries 0..m-1 and +1 on m."""
    from scipy import integrate

    ts, qs = svt.threshold_scale, svt.query_scale

    def law(shifts, p):
        def density(r):
            below = np.prod([stats.laplace.cdf(r - s, scale=qs) for s in shifts[:p]])
            last = stats.laplace.sf(r - shifts[p], scale=qs) if p < len(shifts) else 1.0
            return stats.laplace.pdf(r, scale=ts) * below * last

        bound = 60 * max(ts, qs)
        return integrate.quad(density, -bound, bound, limit=500, points=[-1, 0, 1])[0]

    zero, moved = [0.0] * (m + 1), [-1.0] * m + [1.0]
    losses = [abs(math.log(law(moved, p) / law(zero, p))) for p in range(m + 2)]
    return max(max(losses[: m + 1]) + 1.0 / scale, losses[m + 1])


@pytest.mark.slow
@pytest.mark.statistical
def test_sparse_vector_with_noisy_value_reaches_its_true_epsilon():
    """Issue 11: the answer pattern together with a band of the released value is the
    event; the default distinguisher (patterns and bands, chosen on the selection split)
    reaches at least 0.85 of the pair's exact epsilon at 10^6 draws per side (about 0.94
    measured), and never exceeds it (valid with probability 95%; seeded)."""
    worst, svt, scale, system = _svt_with_value()
    true = _svt_value_true_epsilon(svt, scale, len(worst.first) - 1)
    assert true <= 1.0 + 1e-9
    pair = NeighbouringPair(first=worst.first, second=worst.second, relation=A)
    result = audit(system, pair, epsilon=1.0, trials=1_000_000, rng=12)
    assert 0.85 * true <= result.lower_bound <= true, (str(result), true)


def test_patterns_separate_cells_a_projection_cannot():
    """Two coordinates whose sum is the same on both inputs but whose pattern differs
    (D: (0, 1) or (1, 0); D': (0, 0) or (1, 1)): no linear projection separates them,
    the pattern cells do (perfectly)."""
    from privkit.audits import Patterns

    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, 4000)
    first = np.column_stack([bits, 1 - bits])
    second = np.column_stack([bits, bits])
    rule = Patterns().fit(first[:2000], second[:2000], delta=0.0, confidence=0.95)
    inside = rule.contains(first[2000:]).mean(), rule.contains(second[2000:]).mean()
    assert sorted(inside) == [0.0, 1.0]


def _centre_or_sides(value, rng, size):
    """D: Laplace(0, 1); D': an even mixture of Laplace(-2, 1) and Laplace(2, 1). The
    largest privacy loss is 2, at the centre (a band); one-sided sets reach only
    log(e^2 / 2) ~ 1.31 in the tails (the densities' ratio there)."""
    centre = 0.0 if value == 0.0 else np.where(rng.random(size) < 0.5, -2.0, 2.0)
    return np.round((centre + rng.laplace(0.0, 1.0, size)) * 2**30) / 2**30


def test_bands_find_the_centre_a_threshold_cannot():
    """With 200,000 draws the band certifies more than any threshold can reach (1.31);
    bound valid with probability 95%, and the band's lead is a power check for the fixed
    seed. The default finds the centre too (its level sets, issue 23); a threshold alone
    cannot."""
    from privkit.audits import Bands, Best, Threshold

    banded = audit(_centre_or_sides, PAIR, epsilon=1.0, trials=200_000, rng=13,
                   distinguisher=Best(Threshold(), Bands()))
    thresholded = audit(_centre_or_sides, PAIR, epsilon=1.0, trials=200_000, rng=13,
                        distinguisher=Threshold())
    default = audit(_centre_or_sides, PAIR, epsilon=1.0, trials=200_000, rng=13)
    assert thresholded.lower_bound <= math.log(math.e**2 / 2)
    assert banded.lower_bound > 1.5
    assert default.lower_bound > 1.5
    assert "< x <=" in banded.rule
