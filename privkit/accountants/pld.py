"""Privacy loss distribution accounting: two-sided, on a grid chosen for the question.

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   The grid step is chosen for the plan and the requested tightness (and aligned with
   the atoms of Laplace and randomized-response losses); answers are two-sided (a
   certified lower bound beside the certified upper one); the composition is tilted
   towards the question, so deltas down to 1e-300 are reached; blocks of one profile
   family are discretised together and distinct blocks composed in a product tree,
   repeated ones by powers; no cap on loss values (a grid that would outgrow
   ``max_points`` is coarsened, and the guarantee's notes say so and what to change).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import ClassVar

import attrs
import numpy as np

from privkit import _leaves
from privkit import _validation as check
from privkit._pld_fft import Group, Tilts, compose
from privkit._profiles import Family
from privkit.accountant import Accountant
from privkit.accountants._pld_question import Question, best, composed, rough_add
from privkit.accountants._pld_rows import Batch, Single
from privkit.accountants._pld_terms import (
    Atom,
    Composed,
    LeafAtom,
    Parts,
    Profile,
    Subsampled,
    Terms,
    realised,
)
from privkit.guarantees import GDP, Guarantee
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Leaf, PlanNode, PoissonSubsample, SampleWithoutReplacement
from privkit.pld import PLDGuarantee, PrivacyLossDistribution

__all__ = ["PLDAccountant"]

#: The coarsest grid step the accountant uses (beyond, it gives up and says so).
_WIDEST_STEP = 0.5
#: The finest grid step the default chooses.
_FINEST_STEP = 1e-6
#: The most runs composed by FFT powers (beyond, rounding in the powers' phases is no
#: longer small against the deltas of interest); such plans are refused.
MAX_RUNS = 10**12
#: Blocks run more than this many times are composed on a finer grid first.
_REGRID = 2**15
#: A window of fewer points than this is refined once, on grids the atoms are on (it costs
#: little there).
_SMALL = 2**13
#: At most this many distinct blocks off the grid still get the small window's refinement.
_FEW = 64


def _profile_guarantee(leaf: Leaf) -> Guarantee | None:
    for g in _leaves.guarantees(leaf):
        if g.has_profile:
            return g
    return None


class PLDAccountant(Accountant[Terms]):
    """Compose privacy loss distributions; every answer is certified and two-sided.

    Parameters
    ----------
    step : float, optional
        A fixed grid spacing. Default: chosen per plan so that the discretisation moves
        the answer by about ``tolerance`` of it (the loss variance each connect-the-dots
        block adds, ``step^2 / 4``, against the blocks' own), aligned with the atoms of
        Laplace and randomized-response losses where they share one spacing, and refined
        once if the measured gap between the two bounds is above ``4 * tolerance``.
    tolerance : float, default 1e-3
        The relative discretisation error the default grid aims for.
    max_points : int, default 2**20
        The largest composition window; a plan that would need more is computed on a
        coarser grid (still certified, looser), and the guarantee's ``notes`` say so.

    Notes
    -----
    Supports leaves with an exact profile (``PureDP``, ``ApproxDP``, ``LaplaceDP``,
    ``GDP``, ``BoundedRange``: Laplace, Gaussian, exponential and randomized-response
    mechanisms), ``Sequential``, ``Repeat``, ``Parallel`` (the pointwise maximum of the
    parts' profiles), ``PostProcess``, ``PoissonSubsample`` under ADD_REMOVE and
    ``SampleWithoutReplacement`` under REPLACE_ONE (the exact pair, see
    :class:`~privkit.accountants._pld_terms.Subsampled`). See :mod:`privkit._pld_grid`
    for the discretisations, :mod:`privkit._pld_fft` for the composition and
    :mod:`privkit.accountants._pld_question` for how both are tuned to the question. The
    native guarantee is a :class:`~privkit.pld.PLDGuarantee` with both bounds.

    Examples
    --------
    >>> from privkit import PLDAccountant, Repeat, PoissonSubsample, Neighbouring
    >>> from privkit.mechanisms import Gaussian
    >>> step = PoissonSubsample(Gaussian.for_gdp(1.0, sensitivity=1.0,
    ...                         relation=Neighbouring.ADD_REMOVE), 0.01)
    >>> g = PLDAccountant().guarantee(Repeat(step, 1000), delta=1e-5)
    >>> round(g.epsilon_lower_at(1e-5), 4), round(g.epsilon_at(1e-5), 4)
    (1.8281, 1.8284)

    .. versionadded:: 0.1.0
    """

    name: ClassVar[str] = "pld"
    adaptive_filter_note: ClassVar[str] = (
        "PLD composition assumes the blocks are fixed in advance; fully adaptive PLD "
        "filters (Whitehouse, Ramdas, Rogers, Wu 2023) are not implemented here")

    def __init__(self, step: float | None = None, tolerance: float = 1e-3,
                 max_points: int = 2**20) -> None:
        owner = "PLDAccountant"
        self.step = None if step is None else check.positive_finite("step", step, owner)
        self.tolerance = check.positive_finite("tolerance", tolerance, owner)
        self.max_points = check.positive_int("max_points", max_points, owner)
        if self.max_points < 64:
            raise check.fail("max_points", max_points, "an integer >= 64", owner)

    def accepts_leaf(self, leaf: Leaf) -> bool:
        return _profile_guarantee(leaf) is not None

    def _leaf_cost(self, leaf: Leaf) -> Terms | None:
        g = _profile_guarantee(leaf)
        if g is None:
            return None
        if isinstance(g, GDP):
            return Terms(gaussian=g.mu**2)
        return Terms(counts=((LeafAtom(g), 1),))

    def accepts_node(self, node: PlanNode) -> bool:
        if isinstance(node, PoissonSubsample):
            return node.relation is Neighbouring.ADD_REMOVE
        if isinstance(node, SampleWithoutReplacement):
            return node.relation is Neighbouring.REPLACE_ONE
        return True

    def _refuse_cost(self, cost: Terms) -> str | None:
        if _runs(cost) > MAX_RUNS:
            return (f"more than {MAX_RUNS:.0e} runs, beyond what FFT powers compute "
                    "reliably")
        return None

    # -- the cost algebra: the plan as distinct atoms with counts ----------------------------

    def leaf(self, leaf: Leaf) -> Terms:
        cost = self._leaf_cost(leaf)
        assert cost is not None
        return cost

    def sequential(self, costs: Sequence[Terms]) -> Terms:
        return costs[0].merged(list(costs[1:]))

    def repeat(self, cost: Terms, count: int) -> Terms:
        return cost.times(count)

    def parallel(self, costs: Sequence[Terms]) -> Terms:
        distinct = list(dict.fromkeys(costs))
        if len(distinct) == 1:  # identical parts: the worse part is any of them
            return distinct[0]
        return Terms(counts=((Parts(tuple(distinct)), 1),))

    def poisson_subsample(self, cost: Terms, node: PoissonSubsample) -> Terms:
        if node.sampling_rate == 1.0:
            return cost
        return Terms(counts=((Subsampled(cost, node.sampling_rate), 1),))

    def sample_without_replacement(self, cost: Terms, node: SampleWithoutReplacement
                                   ) -> Terms:
        if node.sample_size == node.population_size:
            return cost
        rate = node.sample_size / node.population_size
        return Terms(counts=((Subsampled(cost, rate, symmetrise=True), 1),))

    def to_guarantee(self, cost: Terms) -> Guarantee:
        return _marked(_guarded(lambda: self._solve(cost, Question(None, None))), cost)

    # -- answers -----------------------------------------------------------------------------

    def guarantee(self, plan: Block, *, delta: float | None = None,
                  epsilon: float | None = None) -> PLDGuarantee:
        """The plan's PLDs, on a grid chosen for the question (``delta`` to read epsilon
        at, or ``epsilon`` to read delta at; default: epsilon at delta 1e-6). The result
        is certified at every question; it is tightest at the one asked (a direction
        that does not decide that answer is composed on a coarser grid,
        :func:`~privkit.accountants._pld_question.rough_add`)."""
        cost = self.cost(plan)
        return _marked(_guarded(lambda: self._solve(cost, Question(delta, epsilon))), cost)

    def pair(self, plan: Block) -> PLDGuarantee:
        """The plan's privacy loss distributions in both directions (its guarantee)."""
        return self.guarantee(plan)

    def bounds(self, plan: Block, *, delta: float) -> tuple[float, float]:
        """(lower, upper): certified bounds on the plan's exact epsilon at ``delta``."""
        d = check.delta("delta", delta, "PLDAccountant.bounds")
        g = self.guarantee(plan, delta=d)
        return g.epsilon_lower_at(d), g.epsilon_at(d)

    def epsilon(self, plan: Block, *, delta: float) -> float:
        d = check.delta("delta", delta, "PLDAccountant.epsilon")
        return self.guarantee(plan, delta=d).epsilon_at(d)

    def delta(self, plan: Block, *, epsilon: float) -> float:
        e = check.nonnegative("epsilon", epsilon, "PLDAccountant.delta")
        if math.isinf(e):
            self.check(plan)
            return 0.0
        return self.guarantee(plan, epsilon=e).delta_at(e)

    def __repr__(self) -> str:
        return "PLDAccountant()" if self.step is None else f"PLDAccountant(step={self.step})"

    # -- the numerics ------------------------------------------------------------------------

    def _solve(self, terms: Terms, question: Question, both: bool = False) -> PLDGuarantee:
        atoms = terms.atoms()
        runs = max(terms.runs, 1)
        if question.tilts is None and any(n > _REGRID for _, n in atoms):
            question = question.fixed(self._tilts(atoms, question, runs))
        atoms = _regridded(atoms)
        batches, singles = self._parts(atoms, question, runs)
        kinks, commensurable = _kinks(atoms)
        notes: list[str] = []
        if self.step is not None:
            return self._at_step(batches, singles, self.step, question, runs, notes, both)
        step, aligned = _aligned(self._first_step(batches, singles), kinks)
        aligned = aligned and commensurable
        if not aligned:
            notes.append("the lower bound is first-order in the grid step: some blocks' "
                         "losses have atoms off the grid (a smaller tolerance, "
                         "PLDAccountant(tolerance=...), gives a finer grid)")
        g = self._at_step(batches, singles, step, question, runs, notes, both)
        gap = question.gap(g)
        # refine once: where the gap asks for it (and can shrink: the atoms are on the
        # grid), or where the window is so small that a finer grid costs little (on the
        # grid, or with few distinct blocks: with many off the grid, a second grid costs
        # as much as the first and moves the upper bound by a fraction of the tolerance,
        # 0.015% for 1,000 heterogeneous blocks; a smaller tolerance buys it)
        cheap = aligned or len(atoms) <= _FEW
        finer = step * min(g.remove.pmf.size, _SMALL) / _SMALL if cheap else step
        if aligned and math.isfinite(gap) and gap > 4 * self.tolerance:
            finer = min(finer, step * math.sqrt(2 * self.tolerance / gap))
        if finer >= step * 0.9:
            return _with_notes(g, notes)
        finer, _ = _aligned(max(finer, step / 8), kinks)
        refined = self._at_step(batches, singles, finer, question, runs, notes, both)
        return _with_notes(best(g, refined, question), notes)

    def _tilts(self, atoms: list[tuple[Atom, int]], question: Question, runs: int
               ) -> tuple[float, float]:
        """The tilts of the whole composition's two directions, from its blocks' upper
        PLDs on the grid they would get alone: fixed before the blocks that run many
        times are composed on their own (:data:`_REGRID`), for those compositions to be
        exact where the enclosing one needs them."""
        batches, singles = self._parts(atoms, question, runs)
        step = self._first_step(batches, singles)
        tail = question.tail / runs
        shared: list[Group] = []
        for b in batches:
            shared += b.groups(step, np.full(b.size, tail), lower=False)[0]
        thetas = []
        for direction in (0, 1):
            groups = shared + [s.groups(step, tail, False, direction)[0] for s in singles]
            thetas.append(question.theta(Tilts.of(groups)))
        return thetas[0], thetas[1]

    def _parts(self, atoms: list[tuple[Atom, int]], question: Question, runs: int
               ) -> tuple[list[Batch], list[Single]]:
        families: dict[str, tuple[Family, list[tuple[LeafAtom, int, tuple[float, ...]]]]] = {}
        singles = []
        for atom, count in atoms:
            if isinstance(atom, LeafAtom):
                family, params = atom.family  # built once per atom: a wide plan has many
                families.setdefault(family.name, (family, []))[1].append((atom, count, params))
            elif isinstance(atom, Composed):
                assert question.tilts is not None
                nested = question.inner(_runs(atom.block) / runs, question.tilts)
                curves = atom.profiles(functools.partial(self._curves, question=nested))
                singles.append(Single(atom, count, curves))
            else:
                nested = question.inner(1.0, (0.0, 0.0))
                curves = atom.profiles(functools.partial(self._curves, question=nested))
                singles.append(Single(atom, count, curves))
        batches = [Batch(family, group) for family, group in families.values()]
        return batches, singles

    def _first_step(self, batches: list[Batch], singles: list[Single]) -> float:
        """``sqrt(2 tolerance)`` times the root-mean-square spread of the blocks' losses,
        each estimated from its profile at 0 (``delta(0)`` is half the mean absolute
        loss, about ``0.4`` of its standard deviation, for small losses): the measured
        gap between the bounds is then about ``tolerance`` of the answer."""
        total = weight = 0.0
        zero = np.zeros(1)
        for b in batches:
            at0 = np.ravel(b.family(tuple(c[:, None] for c in b.columns), zero[None, :]))
            total += float(np.sum(b.counts * (2.5 * at0) ** 2))
            weight += float(np.sum(b.counts))
        for s in singles:
            at0_single = max(float(np.ravel(s.curves[0](zero))[0]),
                             float(np.ravel(s.curves[1](zero))[0]))
            total += s.count * (2.5 * at0_single) ** 2
            weight += s.count
        spread = math.sqrt(total / weight) if weight else 1.0
        return min(max(math.sqrt(2 * self.tolerance) * spread, _FINEST_STEP), 0.05)

    def _at_step(self, batches: list[Batch], singles: list[Single], step: float,
                 question: Question, runs: int, notes: list[str], both: bool
                 ) -> PLDGuarantee:
        tail = question.tail / runs
        h = step
        while True:
            if h > _WIDEST_STEP:
                note = (f"the plan's losses span more than max_points={self.max_points} "
                        f"grid points even at step {_WIDEST_STEP}; no finite bound here "
                        "(raise max_points, or use another accountant)")
                vacuous = PrivacyLossDistribution(step=h, offset=0, pmf=np.zeros(1),
                                                  infinity_mass=1.0)
                return PLDGuarantee(remove=vacuous, add=vacuous, notes=(*notes, note))
            shared_up: list[Group] = []
            shared_lo: list[Group] = []
            for b in batches:
                up, lo = b.groups(h, np.full(b.size, tail), lower=True)
                shared_up += up
                shared_lo += lo
            remove = shared_up + [s.groups(h, tail, False, 0)[0] for s in singles]
            tilts = Tilts.of(remove)
            theta = question.theta(tilts, 0)
            tilts = tilts.around(remove, theta)
            first, last = tilts.window(question.window_tail, theta)
            if last - first + 1 <= self.max_points:
                break
            h *= (last - first + 1) / self.max_points * 1.05
            notes.append(f"the grid was coarsened to step {h:.3g} to stay within "
                         f"max_points={self.max_points}; raise max_points for a tighter "
                         "bound")
        uppers = [compose(remove, theta=theta, tilts=tilts, tail=question.window_tail,
                          upper=True, start=0 if question.nested else None)]
        asymmetric = any(not s.atom.symmetric for s in singles)
        if asymmetric:
            rough = None
            if self.step is None and not (both or question.nested):
                rough = rough_add(batches, singles, h, tail, question,
                                   question.upper(uppers[0]))
            if rough is None:
                add = shared_up + [s.groups(h, tail, False, 1)[0] for s in singles]
                rough = composed(add, question, 1, upper=True)
            uppers.append(rough)
        worse = int(np.argmax([question.upper(p) for p in uppers]))
        lowers: list[PrivacyLossDistribution | None] = [None, None]
        for direction in ([0, 1] if both and asymmetric else [worse]):
            groups = shared_lo + [_lower_group(s, h, tail, direction) for s in singles]
            lowers[direction] = composed(groups, question, direction, upper=False)
        return PLDGuarantee(remove=uppers[0], add=uppers[-1], lower_remove=lowers[0],
                            lower_add=lowers[1] if asymmetric else lowers[0],
                            notes=tuple(notes))

    def _curves(self, block: Terms, question: Question
                ) -> tuple[Profile, Profile, Profile, Profile]:
        """The curves (eps >= 0) of a nested composition's PLDs."""
        g = self._solve(block, question, both=True)
        zero = PrivacyLossDistribution(step=1.0, offset=0, pmf=np.zeros(1))
        low_r = g.lower_remove or zero
        low_a = g.lower_add or zero
        return (g.remove.profile, g.add.profile, low_r.profile, low_a.profile)


def _lower_group(s: Single, h: float, tail: float, direction: int) -> Group:
    lower = s.groups(h, tail, True, direction)[1]
    assert lower is not None
    return lower


def _aligned(step: float, kinks: np.ndarray) -> tuple[float, bool]:
    """The largest step at most ``step`` on which every kink is a grid point, and whether
    there is one: the kinks share a spacing at least ``step / 2`` (a smaller one would
    ask for a finer grid than the plan needs; kinks that close to 0 cost at most their
    own size)."""
    if kinks.size == 0:
        return step, True
    unit = float(kinks[0])
    ratios = kinks / unit
    if unit < step / 2 or not np.allclose(ratios, np.round(ratios), rtol=0.0, atol=1e-9):
        return step, False
    return unit / math.ceil(unit / step * (1 - 1e-12)), True


def _regridded(atoms: list[tuple[Atom, int]]) -> list[tuple[Atom, int]]:
    """Blocks that run more than :data:`_REGRID` times, as ``c1 = 2^k ~ sqrt(count)`` runs
    composed on a finer grid (a :class:`Composed` block) run ``count // c1`` times, and
    the remainder composed likewise; repeated until every count is at most
    :data:`_REGRID`. Each level's grid is chosen for its own blocks' spread, so the
    windows stay about ``sqrt(count)`` times smaller than one grid fine enough for a
    single run."""
    while any(n > _REGRID for _, n in atoms):
        out: list[tuple[Atom, int]] = []
        for atom, count in atoms:
            if count <= _REGRID:
                out.append((atom, count))
                continue
            inner = 1 << ((count.bit_length() - 1) // 2)
            times, rest = divmod(count, inner)
            out.append((Composed(Terms(counts=((atom, inner),))), times))
            if rest:
                out.append((Composed(Terms(counts=((atom, rest),))), 1))
        atoms = out
    return atoms


def _kinks(atoms: Sequence[tuple[Atom, int]]) -> tuple[np.ndarray, bool]:
    """The losses at which the blocks' loss distributions have atoms (Laplace and
    randomized response: at +-epsilon; compositions of them: at sums of these), and
    whether every atom is among them (a subsampled kinked block has atoms elsewhere)."""
    values: set[float] = set()
    known = True
    for atom, _ in atoms:
        if isinstance(atom, LeafAtom):
            family, params = atom.family
            if family.kinked and family.bound is not None:
                values.add(params[family.bound])
            continue
        inner = [atom.block] if isinstance(atom, Subsampled | Composed) else \
            list(atom.parts) if isinstance(atom, Parts) else []
        for terms in inner:
            more, ok = _kinks(terms.counts)
            if isinstance(atom, Subsampled):
                known = known and ok and more.size == 0
            else:
                values.update(more.tolist())
                known = known and ok
    return np.array(sorted(values)), known


def _with_notes(g: PLDGuarantee, notes: list[str]) -> PLDGuarantee:
    return PLDGuarantee(remove=g.remove, add=g.add, lower_remove=g.lower_remove,
                        lower_add=g.lower_add, notes=tuple(dict.fromkeys(notes)))


def _guarded(solve: Callable[[], PLDGuarantee]) -> PLDGuarantee:
    """``solve()``, or a vacuous guarantee (certified, infinite) that says why when its
    floating-point numerics break down (losses of hundreds of nats overflow ``exp``):
    never a number computed from non-finite masses."""
    try:
        with np.errstate(all="ignore"):
            g = solve()
        pmfs = [p for p in (g.remove, g.add, g.lower_remove, g.lower_add) if p is not None]
        if all(np.all(np.isfinite(p.pmf)) and math.isfinite(p.infinity_mass) for p in pmfs):
            return g
    except (ValueError, FloatingPointError, OverflowError, ZeroDivisionError):
        pass
    vacuous = PrivacyLossDistribution(step=_WIDEST_STEP, offset=0, pmf=np.zeros(1),
                                      infinity_mass=1.0)
    return PLDGuarantee(remove=vacuous, add=vacuous, notes=(
        ("the PLD numerics overflowed on this plan's losses (hundreds of nats); no finite "
        "bound here (use another accountant)"),))


def _marked(g: PLDGuarantee, terms: Terms) -> PLDGuarantee:
    if realised(terms):
        return g
    note = ("the lower bound is on the composition of the blocks' dominating pairs, not on "
            "the plan's exact privacy: bounded-range blocks (exponential mechanism) have no "
            "single worst pair under composition")
    return attrs.evolve(g, lower_bounds_plan=False, notes=(*g.notes, note))


def _runs(terms: Terms) -> int:
    """How many blocks run, nested ones included (each counted in its enclosing count)."""
    total = 1 if terms.gaussian else 0
    for atom, n in terms.counts:
        inner = 1
        if isinstance(atom, Subsampled):
            inner = max(_runs(atom.block), 1)
        elif isinstance(atom, Parts):
            inner = max(max(_runs(p) for p in atom.parts), 1)
        elif isinstance(atom, Composed):
            inner = max(_runs(atom.block), 1)
        total += n * inner
    return total
