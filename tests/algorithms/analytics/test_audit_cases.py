"""The query layer's ``privkit audit`` cases: registered, consistent with their claims,
certifying at least 0.8 of each claim (slow tier: the draws ``privkit audit`` uses), and
a planted bug (rows counted without bounding) caught.

Each audit's verdict is "violation" only when its 95% lower bound exceeds the claim; with
the fixed seed 2026 (``privkit audit``'s) the outcome is deterministic."""

from __future__ import annotations

import pytest

from privkit.algorithms.analytics import _pandas
from privkit.algorithms.analytics.audit_cases import CASE_BUILDERS
from privkit.audits.registry import CASES, run_case

SEED = 2026


def test_every_case_is_registered_for_privkit_audit():
    assert set(CASE_BUILDERS) <= set(CASES)
    case = CASES["analytics_count"](epsilon=1.0)
    assert case.epsilon == pytest.approx(1.0)
    assert case.delta == 0.0
    selection = CASES["analytics_selection"](epsilon=1.0, delta=1e-5)
    assert selection.delta == 1e-5


@pytest.mark.parametrize("name", ["analytics_count", "analytics_mean",
                                  "analytics_selection"])
def test_cases_are_consistent_on_fewer_draws(name):
    """100,000 draws per side: the claim holds and the bound is already informative."""
    case = CASES[name](epsilon=1.0)
    result = run_case(case, name=name, trials=100_000, rng=SEED)
    assert result.verdict == "consistent"
    assert result.lower_bound > 0.6 * case.epsilon


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASE_BUILDERS))
def test_cases_certify_at_least_0_8_of_each_claim(name):
    """At the draws privkit audit uses (each case's max_trials), every case certifies a
    lower bound of at least 0.8 of its claim, and none exceeds it."""
    case = CASES[name](epsilon=1.0)
    result = run_case(case, name=name, rng=SEED)
    assert result.verdict == "consistent"
    assert result.lower_bound >= 0.8 * case.epsilon


def test_a_row_counted_without_bounding_is_caught(monkeypatch):
    """The planted bug: the pandas engine keeps every row of a unit in a partition (no
    max_rows bound). The unit's 3 rows per partition then move each count by 3, and the
    audit of the count's released table certifies far more than the claim."""
    original = _pandas.keep_rows

    def unbounded_rows(units, parts, n_parts, max_partitions, max_rows, salt):
        return original(units, parts, n_parts, max_partitions, 10**9, salt)

    monkeypatch.setattr(_pandas, "keep_rows", unbounded_rows)
    case = CASES["analytics_count"](epsilon=1.0)
    result = run_case(case, name="analytics_count", trials=100_000, rng=SEED)
    assert result.verdict == "violation"
    assert result.lower_bound > 2.0 * case.epsilon
