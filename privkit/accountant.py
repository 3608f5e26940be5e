"""The Accountant abstraction: one fold over the plan, and the public registry.

An accountant is stateless: it maps a :mod:`plan <privkit.plan>` (a tree of blocks) to the
privacy it can certify for it. The plan is traversed once, here, by :meth:`Accountant.cost`
(an iterative post-order fold: depth never exhausts the interpreter's stack, and a block
object that appears several times is costed once). Each accountant supplies only its
*cost algebra*: what a leaf costs and how the costs of children combine under each node
kind (``sequential``, ``parallel``, ``repeat``, ``post_process``, ``poisson_subsample``,
``sample_without_replacement``), and how a cost reads as its *native* guarantee
(:meth:`Accountant.to_guarantee`: ``GDP(mu)`` for the GDP accountant, ``ZCDP(rho)`` for
zCDP, an ``RDP`` curve, a privacy loss distribution...). Conversion to (epsilon, delta)
happens only when asked, through the guarantee's ``epsilon_at`` / ``delta_at`` or the
:meth:`Accountant.epsilon` / :meth:`Accountant.delta` conveniences.

A node kind whose rule an accountant does not define is refused with
:class:`~privkit.errors.UnsupportedPlanError`, naming the node and the registered
accountants that can handle it.

Accountants are found by name in a public registry (:func:`register_accountant`,
:func:`get_accountant`, :func:`available_accountants`), which :func:`privkit.tightest` and
the command line iterate, so a third-party accountant registered from outside is used by
both; an installed package's accountants are registered from the entry-point group
``privkit.accountants`` when the registry is first listed or asked for a name it does not
know (:mod:`privkit.plugins`). This module imports nothing from
:mod:`privkit.accountants`; the built-in accountants register themselves when that package
is imported (``import privkit`` does).

.. versionadded:: 0.1.0
.. versionchanged:: 0.2.0
   One fold defined here; accountants supply a cost algebra and return their native
   guarantee; the registry moved here and is public.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from privkit import _leaves, plugins
from privkit import _validation as check
from privkit.errors import UnsupportedPlanError
from privkit.guarantees import Guarantee, PureDP
from privkit.neighbouring import Neighbouring
from privkit.plan import (
    Block,
    Claimed,
    Leaf,
    Parallel,
    PlanNode,
    PoissonSubsample,
    PostProcess,
    Repeat,
    SampleWithoutReplacement,
    Sequential,
)

__all__ = [
    "Accountant",
    "available_accountants",
    "get_accountant",
    "register_accountant",
    "unregister_accountant",
]

Cost = TypeVar("Cost")

#: The rule (method name) for each node kind: the only list of node kinds in accounting.
_RULES: dict[type, str] = {
    Sequential: "sequential",
    Parallel: "parallel",
    Repeat: "repeat",
    PostProcess: "post_process",
    PoissonSubsample: "poisson_subsample",
    SampleWithoutReplacement: "sample_without_replacement",
}


def _rule_of(node: PlanNode) -> str | None:
    for kind in type(node).__mro__:
        if kind in _RULES:
            return _RULES[kind]
    return None


class _RefusedError(Exception):
    """Raised inside a checked fold at the first refused block."""

    def __init__(self, block: Block) -> None:
        super().__init__()
        self.block = block


def _describe(block: Block) -> str:
    return block.label() if isinstance(block, PlanNode) else str(block)


class Accountant(abc.ABC, Generic[Cost]):
    """Base class of accountants: a cost algebra folded over the plan.

    Subclasses define ``name``, :meth:`leaf` (and :meth:`accepts_leaf`), the node rules
    they have an analysis for, and :meth:`to_guarantee`. A rule left undefined means the
    node is refused. :meth:`accepts_node` may refuse a node for a reason beyond its kind
    (a neighbouring relation, the kind of its block).

    Attributes
    ----------
    name : str
        Short name used by the registry, :func:`privkit.tightest`, the CLI and errors.
    valid_for_adaptive_filter : bool
        Whether a :class:`~privkit.BudgetFilter` may compose with this accountant when
        each block, and its parameters, are chosen after seeing earlier outputs.
    adaptive_filter_note : str
        Why (or why not), with the citation; shown when a filter refuses the accountant.
    certified : bool
        Whether every number it returns is an upper bound (False for approximations;
        :func:`privkit.tightest` never uses those).
    """

    name: ClassVar[str]
    valid_for_adaptive_filter: ClassVar[bool] = False
    adaptive_filter_note: ClassVar[str] = "no filter analysis is known to privkit"
    certified: bool = True

    # -- the cost algebra (subclasses) -------------------------------------------------------

    @abc.abstractmethod
    def accepts_leaf(self, leaf: Leaf) -> bool:
        """Whether this accountant can cost ``leaf`` (it has a guarantee of a usable kind)."""

    @abc.abstractmethod
    def leaf(self, leaf: Leaf) -> Cost:
        """The cost of one run of an accepted leaf."""

    @abc.abstractmethod
    def to_guarantee(self, cost: Cost) -> Guarantee:
        """The native guarantee a cost stands for (no conversion)."""

    def accepts_node(self, node: PlanNode) -> bool:
        """Conditions beyond the node's kind (default: none)."""
        return True

    def sequential(self, costs: Sequence[Cost]) -> Cost:
        """Blocks run one after another on the same data, possibly adaptively."""
        raise NotImplementedError

    def parallel(self, costs: Sequence[Cost]) -> Cost:
        """Blocks each run on their own disjoint part of the data."""
        raise NotImplementedError

    def repeat(self, cost: Cost, count: int) -> Cost:
        """One block run ``count`` times (must take time logarithmic in ``count``)."""
        raise NotImplementedError

    def post_process(self, cost: Cost) -> Cost:
        """Post-processing is free for every notion of DP privkit knows (data processing
        inequality; Dwork and Roth 2014, Proposition 2.1)."""
        return cost

    def poisson_subsample(self, cost: Cost, node: PoissonSubsample) -> Cost:
        """The block run on a Poisson sample at ``node.sampling_rate``."""
        raise NotImplementedError

    def sample_without_replacement(self, cost: Cost, node: SampleWithoutReplacement) -> Cost:
        """The block run on ``node.sample_size`` of ``node.population_size`` records."""
        raise NotImplementedError

    # -- the fold ----------------------------------------------------------------------------

    def handles(self, block: Block) -> bool:
        """Whether this accountant has a rule for ``block`` itself (not its children)."""
        if isinstance(block, Leaf):
            return self.accepts_leaf(block)
        rule = _rule_of(block)
        if rule is None or (rule != "post_process"  # free for every accountant
                            and getattr(type(self), rule) is getattr(Accountant, rule)):
            return False
        return self.accepts_node(block)

    def first_unsupported(self, plan: Block) -> Block | None:
        """The first block in ``plan`` (depth first, pre-order) this accountant refuses."""
        check.instance("plan", plan, (Leaf, PlanNode), type(self).__name__)
        with _leaves.shared():
            seen: set[int] = set()
            stack: list[Block] = [plan]
            while stack:
                block = stack.pop()
                if id(block) in seen:
                    continue
                seen.add(id(block))
                if not self.handles(block):
                    return block
                if isinstance(block, PlanNode):
                    stack.extend(reversed(block.children))
            if (type(self)._refuse_cost is not Accountant._refuse_cost
                    and self._refuse_cost(self._fold(plan)) is not None):
                return plan
        return None

    def _refuse_cost(self, cost: Cost) -> str | None:
        """A hook for refusals that depend on the whole plan's cost: why this accountant
        cannot analyse it (default: None, it can)."""
        return None

    def supports(self, plan: Block) -> bool:
        """Whether this accountant can account for every node of ``plan`` (never raises
        for a valid plan)."""
        return self.first_unsupported(plan) is None

    def check(self, plan: Block) -> None:
        """Raise :class:`UnsupportedPlanError` if some node of ``plan`` is refused."""
        node = self.first_unsupported(plan)
        if node is not None:
            raise self._refusal(node)

    def _refusal(self, node: Block, why: str | None = None) -> UnsupportedPlanError:
        if why is None and node is not None and isinstance(node, PlanNode) \
                and type(self)._refuse_cost is not Accountant._refuse_cost:
            why = self._refuse_cost(self._fold(node)) if self.handles(node) else None
        if why is not None:
            return UnsupportedPlanError(f"the {self.name} accountant cannot account for "
                                        f"this plan: {why}")
        able = [a.name for a in available_accountants() if a.handles(node)]
        can = (f"accountants that can: {', '.join(able)}" if able
               else "no available accountant handles it")
        return UnsupportedPlanError(
            f"the {self.name} accountant cannot account for {_describe(node)} "
            f"({type(node).__name__}); {can}"
        )

    def cost(self, plan: Block) -> Cost:
        """Fold the cost algebra over ``plan`` (post-order, iterative), checking each
        block as it goes: an unsupported one raises :class:`UnsupportedPlanError` (the
        message of :meth:`check`). Leaves' guarantees are built once
        (:func:`privkit._leaves.shared`)."""
        check.instance("plan", plan, (Leaf, PlanNode), type(self).__name__)
        with _leaves.shared():
            try:
                total = self._fold(plan, checked=True)
            except _RefusedError as refused:
                raise self._refusal(refused.block) from None
            why = self._refuse_cost(total)
            if why is not None:
                raise self._refusal(plan, why)
        return total

    def _leaf_cost(self, leaf: Leaf) -> Cost | None:
        """The cost of one run of ``leaf``, or None if it is refused (default:
        :meth:`accepts_leaf`, then :meth:`leaf`)."""
        return self.leaf(leaf) if self.accepts_leaf(leaf) else None

    def _fold(self, plan: Block, checked: bool = False) -> Cost:
        done: dict[int, Cost] = {}
        stack: list[tuple[Block, bool]] = [(plan, False)]
        while stack:
            block, expanded = stack.pop()
            key = id(block)
            if key in done:
                continue
            if isinstance(block, Leaf):
                cost = self._leaf_cost(block) if checked else self.leaf(block)
                if cost is None:
                    raise _RefusedError(block)
                done[key] = cost
                continue
            if not expanded:
                if checked and not self.handles(block):
                    raise _RefusedError(block)
                stack.append((block, True))
                stack.extend((c, False) for c in reversed(block.children) if id(c) not in done)
                continue
            done[key] = self._combine(block, [done[id(c)] for c in block.children])
        return done[id(plan)]

    def _combine(self, node: PlanNode, costs: list[Cost]) -> Cost:
        if isinstance(node, Sequential):
            return self.sequential(costs)
        if isinstance(node, Parallel):
            return self.parallel(costs)
        if isinstance(node, Repeat):
            return self.repeat(costs[0], node.count)
        if isinstance(node, PostProcess):
            return self.post_process(costs[0])
        if isinstance(node, PoissonSubsample):
            return self.poisson_subsample(costs[0], node)
        assert isinstance(node, SampleWithoutReplacement)
        return self.sample_without_replacement(costs[0], node)

    # -- answers -----------------------------------------------------------------------------

    def guarantee(self, plan: Block, *, delta: float | None = None,
                  epsilon: float | None = None) -> Guarantee:
        """The plan's native guarantee under this accountant (converted only when asked,
        through its ``epsilon_at`` / ``delta_at``).

        ``delta`` (epsilon will be read at it) or ``epsilon`` (delta will be read at it)
        name the question, for accountants whose computation is tuned to it (the PLD's
        grid); the guarantee is certified at every question either way.

        Raises
        ------
        UnsupportedPlanError
            If the plan has a node this accountant cannot analyse.
        """
        return self.to_guarantee(self.cost(plan))

    def epsilon(self, plan: Block, *, delta: float) -> float:
        """A certified epsilon such that ``plan`` is (epsilon, delta)-DP (may be ``inf``):
        ``self.guarantee(plan).epsilon_at(delta)``."""
        d = check.delta("delta", delta, f"{type(self).__name__}.epsilon")
        return self.guarantee(plan, delta=d).epsilon_at(d)

    def delta(self, plan: Block, *, epsilon: float) -> float:
        """A certified delta such that ``plan`` is (epsilon, delta)-DP (at most 1):
        ``self.guarantee(plan).delta_at(epsilon)``."""
        e = check.nonnegative("epsilon", epsilon, f"{type(self).__name__}.delta")
        if math.isinf(e):
            self.check(plan)
            return 0.0
        return self.guarantee(plan, epsilon=e).delta_at(e)

    def lower_bound(self, plan: Block, *, delta: float | None = None,
                    epsilon: float | None = None, evidence: Guarantee | None = None
                    ) -> float | None:
        """A number this accountant's answer (epsilon at ``delta``, or delta at
        ``epsilon``) is never below, found for less than the answer costs, or None.

        ``evidence`` is a guarantee already computed for ``plan`` by another accountant
        (:func:`privkit.tightest` passes the PLD accountant's two-sided one), which some
        lower bounds use. :func:`privkit.tightest` skips an accountant whose lower bound
        is at least the best answer so far: it provably cannot win. Default: None.
        """
        return None

    # -- budget filters (see privkit.filter.BudgetFilter) ------------------------------------

    def filter_limit(self, *, epsilon: float, delta: float) -> Any:
        """This accountant's form of a filter's (epsilon, delta) limit, computed once.

        Default: the pair itself."""
        return (epsilon, delta)

    def filter_charge(self, block: Block, *, delta: float | None, owner: str) -> Cost:
        """What one adaptively chosen spend of ``block`` is charged.

        Default: the block's cost; a per-spend ``delta`` is refused, because the filter
        composes the blocks' own guarantees and converts the total at the limit's delta.
        """
        if delta is not None:
            raise check.fail(
                "delta", delta, "left out", owner,
                f"a filter over the {self.name} accountant charges each block its own "
                "guarantee and converts the total at the limit's delta; a block's delta "
                "is not chosen per spend")
        return self.cost(block)

    def filter_fits(self, total: Cost, limit: Any, slack: float) -> bool:
        """Whether the composed cost of the spends fits the limit, up to a relative
        ``slack`` for floating-point rounding. Default: the native guarantee's epsilon
        at the limit's delta is at most the limit's epsilon."""
        epsilon, delta = limit
        return bool(self.to_guarantee(total).epsilon_at(delta) <= epsilon * (1.0 + slack))

    def filter_spent(self, total: Cost | None, limit: Any) -> tuple[float, float]:
        """What the spends cost, as (epsilon, delta) (default: epsilon at the limit's
        delta)."""
        delta = limit[1]
        if total is None:
            return 0.0, 0.0
        return self.to_guarantee(total).epsilon_at(delta), delta

    def filter_remaining(self, total: Cost | None, limit: Any, slack: float,
                         relation: Neighbouring) -> tuple[float, float]:
        """What one more block may still cost, as (epsilon, delta): by default the
        largest pure epsilon whose block still fits (bisection to 1e-9 relative), and no
        delta."""
        epsilon = limit[0]

        def fits(e: float) -> bool:
            block = self.leaf(Claimed(PureDP(epsilon=e), relation=relation))
            return self.filter_fits(block if total is None else self.sequential([total, block]),
                                    limit, slack)

        if not fits(1e-300):
            return 0.0, 0.0
        lo, hi = 1e-300, epsilon
        if fits(hi):
            return hi, 0.0
        while hi - lo > 1e-9 * hi:
            mid = (lo + hi) / 2.0
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return lo, 0.0

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# -- the registry ------------------------------------------------------------------------------

AccountantFactory = Callable[[], Accountant[Any]]

_REGISTRY: dict[str, AccountantFactory] = {}


def register_accountant(name: str, factory: AccountantFactory, *,
                        replace: bool = False) -> None:
    """Make an accountant available by ``name`` to :func:`get_accountant`,
    :func:`available_accountants`, :func:`privkit.tightest` and ``privkit account``.

    Parameters
    ----------
    name : str
        The accountant's ``name`` (each instance the factory makes must carry it).
    factory : callable
        Called with no argument, returns a fresh :class:`Accountant` (usually the class).
    replace : bool, default False
        Allow replacing an accountant already registered under ``name``.

    Examples
    --------
    >>> from privkit.accountant import available_accountants, unregister_accountant
    >>> from privkit.accountants import BasicAccountant
    >>> class Mine(BasicAccountant):
    ...     name = "mine"
    >>> register_accountant("mine", Mine)
    >>> "mine" in [a.name for a in available_accountants()]
    True
    >>> unregister_accountant("mine")

    .. versionadded:: 0.2.0
    """
    owner = "register_accountant"
    check.instance("name", name, str, owner)
    if not name:
        raise check.fail("name", name, "a non-empty string", owner)
    if not callable(factory):
        raise check.fail("factory", factory, "a callable returning an Accountant", owner)
    if name in _REGISTRY and not replace:
        raise check.fail("name", name, "a name not registered yet", owner,
                         "pass replace=True to replace it")
    _REGISTRY[name] = factory


def unregister_accountant(name: str) -> None:
    """Remove the accountant registered under ``name``.

    .. versionadded:: 0.2.0
    """
    if name not in _REGISTRY:
        raise check.fail("name", name, f"one of {', '.join(map(repr, _REGISTRY))}",
                         "unregister_accountant")
    del _REGISTRY[name]


def _load_plugins() -> None:
    """Register the accountants of installed packages (the entry-point group
    ``privkit.accountants``, :mod:`privkit.plugins`), once per process."""

    def accept(name: str, factory: Any) -> None:
        if _REGISTRY.get(name) is not factory:
            register_accountant(name, factory)
        _make(name, factory)

    plugins.load_group(plugins.ACCOUNTANT_GROUP, accept)


def _make(name: str, factory: AccountantFactory) -> Accountant[Any]:
    accountant = factory()
    if not isinstance(accountant, Accountant) or accountant.name != name:
        raise check.fail("factory", factory, f"a callable returning an Accountant named "
                         f"{name!r}", "get_accountant", f"it returned {accountant!r}")
    return accountant


def get_accountant(name: str) -> Accountant[Any]:
    """A fresh instance of the accountant registered under ``name``.

    .. versionadded:: 0.1.0
    """
    if name not in _REGISTRY:
        _load_plugins()
    if name not in _REGISTRY:
        names = ", ".join(repr(n) for n in _REGISTRY)
        raise check.fail("name", name, f"one of {names}", "get_accountant")
    return _make(name, _REGISTRY[name])


def available_accountants() -> tuple[Accountant[Any], ...]:
    """One instance of every registered accountant, in registration order (privkit's
    own first: basic, advanced, optimal, zcdp, rdp, gdp, pld), then those of installed
    plug-ins (:mod:`privkit.plugins`).

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.3.0
       Loads the accountant plug-ins first.
    """
    _load_plugins()
    return tuple(_make(name, factory) for name, factory in _REGISTRY.items())
