"""The accountant registry: a third-party accountant, registered from outside, is used by
tightest, the filter and get_accountant with no edit to privkit."""

import ast
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from privkit import (
    BudgetExceededError,
    BudgetFilter,
    Claimed,
    InvalidParameterError,
    Neighbouring,
    PureDP,
    Repeat,
    Sequential,
    UnsupportedPlanError,
    tightest,
)
from privkit.accountant import (
    Accountant,
    available_accountants,
    get_accountant,
    register_accountant,
    unregister_accountant,
)
from privkit.guarantees import Guarantee
from privkit.plan import Leaf

A = Neighbouring.ADD_REMOVE


class SquareRootAccountant(Accountant[float]):
    """A toy third-party accountant: pure blocks, costs add, and (for the test only) it
    claims half the basic sum, so that tightest must pick it when it is registered."""

    name = "sqrt-toy"
    valid_for_adaptive_filter = True
    adaptive_filter_note = "a toy for the registry test"

    def accepts_leaf(self, leaf: Leaf) -> bool:
        return math.isfinite(leaf.epsilon_at(0.0))

    def leaf(self, leaf: Leaf) -> float:
        return leaf.epsilon_at(0.0) / 2.0

    def sequential(self, costs: Sequence[float]) -> float:
        return math.fsum(costs)

    def repeat(self, cost: float, count: int) -> float:
        return count * cost

    def to_guarantee(self, cost: float) -> Guarantee:
        return PureDP(epsilon=cost)


@pytest.fixture
def registered():
    register_accountant("sqrt-toy", SquareRootAccountant)
    yield
    unregister_accountant("sqrt-toy")


def block(eps=0.1):
    return Claimed(PureDP(epsilon=eps), relation=A, label="q")


def test_registered_accountant_is_used_by_tightest(registered):
    """tightest iterates the registry: given the pool, the toy's (smaller) number wins, by
    name; by default it is considered too, and skipped at delta 0 because basic
    composition is exact there (no certified accountant can go below it)."""
    from privkit import BasicAccountant

    result = tightest(Repeat(block(), 10), delta=0.0,
                      accountants=[BasicAccountant(), SquareRootAccountant()])
    assert result.accountant == "sqrt-toy"
    assert result.epsilon == pytest.approx(0.5)
    assert result.by_accountant["basic"] == pytest.approx(1.0)
    default = tightest(Repeat(block(), 10), delta=0.0)
    assert default.accountant == "basic"
    assert "exact" in default.skipped["sqrt-toy"]


def test_registered_accountant_is_listed_and_found(registered):
    """available_accountants lists it after privkit's own; get_accountant builds it."""
    names = [a.name for a in available_accountants()]
    assert names[:7] == ["basic", "advanced", "optimal", "zcdp", "rdp", "gdp", "pld"]
    assert names[-1] == "sqrt-toy"
    assert isinstance(get_accountant("sqrt-toy"), SquareRootAccountant)


def test_unregistered_accountant_is_gone():
    """Without registration tightest never sees it and get_accountant names the choices."""
    assert "sqrt-toy" not in [a.name for a in available_accountants()]
    with pytest.raises(InvalidParameterError, match="'basic'"):
        get_accountant("sqrt-toy")


def test_rule_it_does_not_define_is_refused_naming_who_can(registered):
    """The toy has no parallel rule: the fold refuses the node with the standard error."""
    from privkit import Parallel

    with pytest.raises(UnsupportedPlanError, match=r"sqrt-toy accountant cannot account for "
                       r"Parallel.*accountants that can: basic"):
        SquareRootAccountant().epsilon(Parallel(block(), block()), delta=0.0)


def test_filter_asks_the_registered_accountant(registered):
    """A filter over the toy composes with its algebra (half the epsilons): 20 blocks of
    0.1 fit a limit of 1, the 21st does not."""
    f = BudgetFilter(epsilon=1.0, accountant="sqrt-toy")
    for _ in range(20):
        f.spend(block())
    with pytest.raises(BudgetExceededError):
        f.spend(block())
    assert f.remaining.epsilon == pytest.approx(0.0, abs=1e-8)


def test_duplicate_names_and_bad_factories_are_refused(registered):
    """A second registration under a taken name needs replace=True; a factory must build
    an accountant carrying the registered name."""
    with pytest.raises(InvalidParameterError, match="replace=True"):
        register_accountant("sqrt-toy", SquareRootAccountant)
    with pytest.raises(InvalidParameterError, match="callable"):
        register_accountant("other", 3)
    register_accountant("misnamed", SquareRootAccountant)
    try:
        with pytest.raises(InvalidParameterError, match="named 'misnamed'"):
            get_accountant("misnamed")
    finally:
        unregister_accountant("misnamed")


def test_depth_never_exhausts_the_stack(registered):
    """The fold is iterative: 350 nested Sequential nodes cost by every accountant."""
    plan = block(0.001)
    for _ in range(350):
        plan = Sequential(plan, block(0.001))
    able = [a for a in available_accountants() if a.supports(plan)]
    assert len(able) == 7  # all but gdp (no Gaussian here)
    for accountant in able:
        assert 0 < accountant.epsilon(plan, delta=1e-6) <= 0.351 * (1 + 1e-9)


def test_accountant_module_does_not_import_the_accountants_package():
    """No import cycle: privkit/accountant.py imports nothing from privkit.accountants."""
    source = Path(__import__("privkit.accountant").accountant.__file__).read_text()
    modules = [n.module or "" for n in ast.walk(ast.parse(source))
               if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import)
                for a in n.names]
    assert not [m for m in modules if m.startswith("privkit.accountants")]
