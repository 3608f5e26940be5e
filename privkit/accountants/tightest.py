"""Run every accountant that supports a plan and keep the best certified bound.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs

from privkit import _leaves
from privkit import _validation as check
from privkit.accountant import Accountant, available_accountants
from privkit.errors import UnsupportedPlanError
from privkit.guarantees import GDP, Guarantee, PureDP
from privkit.plan import Block, Leaf, PlanNode
from privkit.pld import PLDGuarantee

__all__ = ["AccountingResult", "tightest", "tightest_delta"]


@attrs.frozen(kw_only=True)
class AccountingResult:
    """The best bound over accountants, and what each accountant said.

    Attributes
    ----------
    epsilon, delta : float
        The best certified pair (one of the two was the target).
    accountant : str
        The name of the accountant that gave it.
    by_accountant : dict
        Each supporting accountant's value (epsilon for :func:`tightest`, delta for
        :func:`tightest_delta`).
    refused : dict
        Each accountant that refused the plan, with its reason.
    guarantee : Guarantee
        The winning accountant's native guarantee for the plan (``GDP(mu)`` from the GDP
        accountant, a PLD from the PLD accountant, ...), whose conversion at the target
        gives ``epsilon`` / ``delta``; estimators keep it as ``guarantee_``.

    .. versionchanged:: 0.2.0
       ``guarantee`` is the native guarantee, not an ``ApproxDP`` flattening of it.
    """

    epsilon: float
    delta: float
    accountant: str
    by_accountant: dict[str, float]
    refused: dict[str, str]
    guarantee: Guarantee
    lower: float = 0.0
    skipped: dict[str, str] = attrs.field(factory=dict)
    notes: tuple[str, ...] = ()

    def explain(self) -> str:
        """Who won, with the certified interval, and why each other accountant lost.

        Every difference is stated relative to the winning answer, as
        ``(other - winner) / winner`` in percent (the interval's width too, as
        ``(winner - lower) / winner``), never as an absolute difference: the skip
        tolerance is relative (0.1%), and so are the comparisons checked against it.
        """
        target = "delta" if self.epsilon_was_target else "epsilon"
        value = self.delta if self.epsilon_was_target else self.epsilon
        lines = [(f"{self.accountant} wins: {target} in [{self.lower:.6g}, {value:.6g}] "
                  "(a certified lower bound on the exact value, and the certified bound; "
                  f"the exact value is at most {relative(value, self.lower, value)} below "
                  "the bound)")]
        for name, other in sorted(self.by_accountant.items(), key=lambda kv: kv[1]):
            if name != self.accountant:
                lines.append(f"{name} lost: {other:.6g} is {relative(other, value)} above "
                             f"{value:.6g}")
        lines += [f"{name} skipped: {why}" for name, why in self.skipped.items()]
        lines += [f"{name} refused: {why}" for name, why in self.refused.items()]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def table(self) -> str:
        """A plain-text table of every accountant's answer."""
        target = "delta" if self.epsilon_was_target else "epsilon"
        rows = [f"{'accountant':<12} {target:>14}"]
        for name, value in sorted(self.by_accountant.items(), key=lambda kv: kv[1]):
            mark = "  <- tightest" if name == self.accountant else ""
            rows.append(f"{name:<12} {value:>14.6g}{mark}")
        rows += [f"{name:<12} {'skipped':>14}  ({why})" for name, why in self.skipped.items()]
        rows += [f"{name:<12} {'refused':>14}  ({why})" for name, why in self.refused.items()]
        if self.lower > 0.0:
            rows.append(f"{'lower bound':<12} {self.lower:>14.6g}  (certified, on the exact "
                        f"{target})")
        rows += [f"note: {n}" for n in self.notes]
        return "\n".join(rows)

    @property
    def epsilon_was_target(self) -> bool:
        """True for results of :func:`tightest_delta`."""
        return self.by_accountant.get(self.accountant) == self.delta


def _pool(accountants: Sequence[Accountant[Any]] | None, owner: str, first: tuple[str, ...]
          ) -> tuple[list[Accountant[Any]], dict[str, str]]:
    refused: dict[str, str] = {}
    if accountants is None:  # every registered accountant whose numbers are bounds
        pool = []
        for a in available_accountants():
            if a.certified:
                pool.append(a)
            else:
                refused[a.name] = "its numbers are approximations, not upper bounds"
        # privkit's order: the exact and the two-sided ones first
        pool.sort(key=lambda a: first.index(a.name) if a.name in first else len(first))
        return pool, refused
    pool = list(accountants)
    for i, a in enumerate(pool):
        check.instance(f"accountants[{i}]", a, Accountant, owner)
        if not a.certified:
            raise check.fail(f"accountants[{i}]", a, "an accountant whose numbers are "
                             "upper bounds", owner, f"{a!r} computes an approximation")
    return pool, refused


#: Accountants tried first: exact for the plans they support (gdp), then two-sided (pld);
#: for pure DP (delta 0), basic composition first: it is exact there (the largest losses
#: of independent blocks add up, and occur together).
_FIRST = ("gdp", "pld")
_FIRST_PURE = ("basic", "gdp", "pld")
#: The relative gap under which accountants that cannot win by more are skipped.
_GAP = 1e-3


def _answer(g: Guarantee, delta: float | None, epsilon: float | None) -> float:
    if epsilon is not None:
        return 0.0 if math.isinf(epsilon) else g.delta_at(epsilon)
    assert delta is not None
    return g.epsilon_at(delta)


def _lower(g: Guarantee, delta: float | None, epsilon: float | None) -> float:
    if isinstance(g, PLDGuarantee) and g.lower_bounds_plan:
        if epsilon is not None:
            return 0.0 if math.isinf(epsilon) else g.delta_lower_at(epsilon)
        assert delta is not None
        return g.epsilon_lower_at(delta)
    return 0.0


def _best(plan: Block, accountants: Sequence[Accountant[Any]] | None, owner: str,
          delta: float | None, epsilon: float | None) -> AccountingResult:
    """Run the pool in order; by default, before running an accountant, skip it when it
    provably cannot win (an exact answer is in, or its own lower bound is at least the
    best answer so far) or cannot win by more than a relative ``_GAP`` (the certified
    lower bound on the exact answer says so). Support is found out by running."""
    check.instance("plan", plan, (Leaf, PlanNode), owner)
    pool, refused = _pool(accountants, owner, _FIRST_PURE if delta == 0.0 else _FIRST)
    natives: dict[str, Guarantee] = {}
    values: dict[str, float] = {}
    skipped: dict[str, str] = {}
    lower = 0.0
    exact: str | None = None
    evidence: Guarantee | None = None
    with _leaves.shared():
        for a in pool:
            if accountants is None and values:
                reason = _cannot_win(a, plan, delta, epsilon, values, lower, exact, evidence)
                if reason is not None:
                    skipped[a.name] = reason
                    continue
            try:
                g = a.guarantee(plan, delta=delta, epsilon=epsilon)
            except UnsupportedPlanError as exc:
                refused[a.name] = str(exc)
                continue
            natives[a.name] = g
            values[a.name] = _answer(g, delta, epsilon)
            lower = max(lower, _lower(g, delta, epsilon))
            if isinstance(g, PLDGuarantee) and g.lower_bounds_plan:
                evidence = g
            if ((a.name == "gdp" and isinstance(g, GDP))  # Dong, Roth, Su 2019, Cor. 3.3
                    or (a.name == "basic" and delta == 0.0 and isinstance(g, PureDP))):
                exact = a.name
                lower = values[a.name]
    if not values:
        raise UnsupportedPlanError(
            f"no accountant supports this plan: {'; '.join(refused.values())}")
    name = min(values, key=lambda n: values[n])
    value = values[name]
    notes = tuple(getattr(natives.get("pld"), "notes", ()))
    if epsilon is not None:
        return AccountingResult(epsilon=epsilon, delta=value, accountant=name,
                                by_accountant=values, refused=refused,
                                guarantee=natives[name], lower=min(lower, value),
                                skipped=skipped, notes=notes)
    assert delta is not None
    return AccountingResult(epsilon=value, delta=delta, accountant=name,
                            by_accountant=values, refused=refused, guarantee=natives[name],
                            lower=min(lower, value), skipped=skipped, notes=notes)


def _cannot_win(a: Accountant[Any], plan: Block, delta: float | None, epsilon: float | None,
                values: dict[str, float], lower: float, exact: str | None,
                evidence: Guarantee | None) -> str | None:
    """Why ``a`` need not run (None: it must)."""
    best = min(values.values())
    if exact is not None:
        return f"cannot win: the {exact} accountant's answer is exact for this plan"
    if lower > 0.0 and math.isfinite(best) and best - lower <= _GAP * best:
        return (f"could improve on {best:.6g} by at most {relative(best, lower, best)} (the "
                f"certified lower bound on the exact value is {lower:.6g}), within the "
                f"tolerance {relative(1.0 + _GAP, 1.0)}")
    try:
        floor = a.lower_bound(plan, delta=delta, epsilon=epsilon, evidence=evidence)
    except UnsupportedPlanError:
        return None  # running it will say why it refuses
    if floor is not None and floor >= best:
        return (f"cannot win: its answer is at least {floor:.6g} (its own lower bound), "
                f"{relative(floor, best)} above {best:.6g}")
    return None


def relative(a: float, b: float, base: float | None = None) -> str:
    """``(a - b) / base`` (``base`` defaults to ``b``) in percent, for
    :meth:`AccountingResult.explain` and the skip reasons: ``inf%`` when it is unbounded."""
    base = b if base is None else base
    if not (math.isfinite(a) and math.isfinite(b)) or base <= 0.0:
        return "inf%" if a != b else "0%"
    return f"{100.0 * (a - b) / base:.4g}%"


def tightest(
    plan: Block, *, delta: float, accountants: Sequence[Accountant[Any]] | None = None
) -> AccountingResult:
    """The smallest certified epsilon at ``delta`` over the accountants that support ``plan``.

    By default every registered accountant (:func:`privkit.available_accountants`) whose
    numbers are upper bounds is considered, third-party ones included, exact and
    two-sided ones first: the GDP accountant (exact for Gaussian plans; then nothing can
    beat it) and the PLD accountant (certified upper and lower bounds). Before running
    each of the others, it is skipped when it provably cannot win (its
    :meth:`~privkit.accountant.Accountant.lower_bound` is at least the best answer so
    far: the RDP and zCDP accountants' from the PLD's lower bounds on the plan's Renyi
    divergences, the basic accountant's from its pure blocks' sum) or cannot win by more
    than a relative ``1e-3`` (the PLD's certified lower bound on the exact answer says
    so). :meth:`AccountingResult.explain` says who won and why each other accountant
    lost, was skipped or refused, and the PLD's notes (a coarsened grid, a lower bound
    that is only first order). With ``accountants`` given, each of them is run.

    .. versionchanged:: 0.3.0
       Accountants that cannot win are skipped before they run; the result carries a
       certified lower bound on the exact answer.

    Examples
    --------
    >>> from privkit import tightest, Neighbouring
    >>> from privkit.mechanisms import Gaussian
    >>> g = Gaussian.for_gdp(0.5, sensitivity=1.0, relation=Neighbouring.ADD_REMOVE)
    >>> result = tightest(g.repeat(10), delta=1e-5)
    >>> result.accountant
    'gdp'
    """
    owner = "tightest"
    d = check.delta("delta", delta, owner)
    return _best(plan, accountants, owner, d, None)


def tightest_delta(
    plan: Block, *, epsilon: float, accountants: Sequence[Accountant[Any]] | None = None
) -> AccountingResult:
    """The smallest certified delta at ``epsilon`` over the accountants that support ``plan``."""
    owner = "tightest_delta"
    e = check.nonnegative("epsilon", epsilon, owner)
    return _best(plan, accountants, owner, None, e)
