"""AccountingResult.explain() states every difference the same way: relative to the
winning answer, in percent (issue 25: absolute and relative differences were mixed)."""

import re

import numpy as np
import pytest

from privkit import Neighbouring, PoissonSubsample, Repeat, Sequential, tightest
from privkit.accountants.tightest import relative
from privkit.mechanisms import Gaussian, Laplace

A = Neighbouring.ADD_REMOVE
NUMBER = r"([0-9.e+-]+|inf)"
#: Numbers are printed to 6 significant digits: a difference of two of them, in percent
#: of either, is off by at most 2 * 5e-6 * 100.
PRINTED = 1e-3


def _mixed(n: int) -> Sequential:
    rng = np.random.default_rng(7)
    return Sequential(*[Laplace.for_epsilon(float(e), sensitivity=1.0, relation=A)
                        for e in rng.uniform(0.05, 0.2, n)],
                      *[Gaussian.for_gdp(float(m), sensitivity=1.0, relation=A)
                        for m in rng.uniform(0.05, 0.2, n)])


def _pct(text: str) -> float:
    return float(text.rstrip("%"))


def _check(explained: str) -> int:
    """Recompute every percentage of ``explained`` from the numbers beside it; return how
    many were checked."""
    checked = 0
    for line in explained.splitlines():
        assert not re.search(r"by at most [0-9.e+-]+ \(", line), line  # no absolute gaps
        win = re.search(rf"in \[{NUMBER}, {NUMBER}\].* at most {NUMBER}% below", line)
        if win:
            lower, value, pct = map(float, win.groups())
            assert pct == pytest.approx(100 * (value - lower) / value, rel=2e-3, abs=PRINTED)
            checked += 1
        lost = re.search(rf"lost: {NUMBER} is {NUMBER}% above {NUMBER}$", line)
        if lost:
            other, pct, value = map(float, lost.groups())
            assert pct == pytest.approx(100 * (other - value) / value, rel=2e-3, abs=PRINTED)
            checked += 1
        floor = re.search(rf"at least {NUMBER} \(its own lower bound\), {NUMBER}% above "
                          rf"{NUMBER}$", line)
        if floor:
            at_least, pct, best = map(float, floor.groups())
            assert pct == pytest.approx(100 * (at_least - best) / best, rel=2e-3, abs=PRINTED)
            checked += 1
        gap = re.search(rf"improve on {NUMBER} by at most {NUMBER}% .* is {NUMBER}\), "
                        rf"within the tolerance 0.1%", line)
        if gap:
            best, pct, lower = map(float, gap.groups())
            assert pct == pytest.approx(100 * (best - lower) / best, rel=2e-3, abs=PRINTED)
            assert pct <= 0.1
            checked += 1
    return checked


def test_every_percentage_is_relative_to_the_winner():
    """Skips by the accountants' own lower bounds (a mixture of Laplace and Gaussian
    blocks) and by the gap to the certified lower bound (DP-SGD, where the PLD's interval
    is narrower than 0.1%), and losses (every accountant run): each percentage equals
    ``(other - winner) / winner`` recomputed from the printed numbers."""
    skipped = tightest(_mixed(20), delta=1e-5)
    assert {"zcdp", "rdp"} <= set(skipped.skipped)
    assert _check(skipped.explain()) >= 3
    dpsgd = Repeat(PoissonSubsample(Gaussian.for_gdp(1.0, sensitivity=1.0, relation=A), 0.01),
                   1000)
    gap = tightest(dpsgd, delta=1e-5)
    assert any("within the tolerance" in why for why in gap.skipped.values())
    assert _check(gap.explain()) >= 2
    from privkit import available_accountants

    every = tightest(_mixed(5), delta=1e-5,
                     accountants=[a for a in available_accountants()
                                  if a.name in ("basic", "zcdp", "rdp", "pld")])
    text = every.explain()
    assert text.count(" lost: ") == 3
    assert _check(text) == 4


def test_relative_handles_zero_and_infinity():
    """The helper never divides by zero or prints nan."""
    assert relative(2.0, 1.0) == "100%"
    assert relative(1.0, 2.0, 2.0) == "-50%"
    assert relative(float("inf"), 1.0) == "inf%"
    assert relative(0.0, 0.0) == "0%"
