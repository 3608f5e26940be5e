"""Privacy loss distribution accounting: two-sided, on a grid chosen for the question.

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   The grid step is chosen for the plan and the question (two stages: a coarse grid
   measures the gap between the certified upper bound and the lower bound, a second
   grid is as fine as that gap says the requested tightness needs); answers are
   two-sided; distinct blocks are composed by one FFT each with their counts as powers;
   no cap on loss values (a grid that would outgrow ``max_points`` is coarsened, and the
   guarantee's notes say so and what to change).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from privkit import _pld_fft
from privkit import _validation as check
from privkit.accountant import Accountant
from privkit.accountants._pld_terms import (
    Atom,
    LeafAtom,
    Parts,
    Profile,
    Subsampled,
    Terms,
)
from privkit.guarantees import GDP, Guarantee
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Leaf, PlanNode, PoissonSubsample, SampleWithoutReplacement
from privkit.pld import PLDGuarantee, PrivacyLossDistribution, discretise

__all__ = ["PLDAccountant"]

#: Where the profile of a block is searched for its grid's upper end (losses above the
#: largest are charged to +infinity).
_SWEEP = np.geomspace(1e-4, 700.0, 96)
#: The coarsest grid step the accountant uses (beyond, it gives up and says so).
_WIDEST_STEP = 0.5
#: The most runs composed by FFT powers (beyond, rounding in the powers' phases is no
#: longer small against the deltas of interest); such plans are refused.
MAX_RUNS = 10**12
#: The delta a guarantee is tuned for when no question is given.
_DEFAULT_DELTA = 1e-6


def _profile_guarantee(leaf: Leaf) -> Guarantee | None:
    for g in leaf.guarantees():
        if g.has_profile:
            return g
    return None


def _top(profile: Profile, tail: float) -> float:
    """A loss above which the profile is at most ``tail``: a geometric sweep, then a
    fine sweep of the bracket."""
    coarse = np.asarray(profile(_SWEEP))
    beyond = np.flatnonzero(coarse <= tail)
    if beyond.size == 0:
        return float(_SWEEP[-1])
    i = int(beyond[0])
    lo = float(_SWEEP[i - 1]) if i > 0 else 0.0
    fine = np.linspace(lo, float(_SWEEP[i]), 65)
    return float(fine[int(np.argmax(np.asarray(profile(fine)) <= tail))])


class _Question:
    """What is asked (epsilon at a delta, or delta at an epsilon) and the tail masses it
    allows to be charged pessimistically."""

    def __init__(self, delta: float | None, epsilon: float | None) -> None:
        self.delta = delta
        self.epsilon = epsilon
        scale = delta if delta is not None and delta > 0 else _DEFAULT_DELTA
        if epsilon is not None:
            scale = 1e-10
        self.tail = max(scale * 1e-5, 1e-300)

    def value(self, g: PLDGuarantee) -> tuple[float, float]:
        """(upper, lower) answers."""
        if self.epsilon is not None:
            return g.delta_at(self.epsilon), g.delta_lower_at(self.epsilon)
        d = _DEFAULT_DELTA if self.delta is None else self.delta
        return g.epsilon_at(d), g.epsilon_lower_at(d)


class PLDAccountant(Accountant[Terms]):
    """Compose privacy loss distributions; every answer is certified and two-sided.

    Parameters
    ----------
    step : float, optional
        A fixed grid spacing. Default: chosen per question, in two stages, so that the
        gap between the certified upper bound and the lower bound is at most
        ``tolerance`` times the answer (where ``max_points`` allows).
    tolerance : float, default 2e-4
        The relative gap the default grid aims for.
    max_points : int, default 2**20
        The largest composition grid; a plan that would need more is computed on a
        coarser grid (still certified, looser), and the guarantee's ``notes`` say so.

    Notes
    -----
    Supports leaves with an exact profile (``PureDP``, ``ApproxDP``, ``LaplaceDP``,
    ``GDP``, ``BoundedRange``: Laplace, Gaussian, exponential and randomized-response
    mechanisms), ``Sequential``, ``Repeat``, ``Parallel`` (the pointwise maximum of the
    parts' profiles), ``PostProcess``, ``PoissonSubsample`` under ADD_REMOVE and
    ``SampleWithoutReplacement`` under REPLACE_ONE (the exact pair, see
    :class:`~privkit.accountants._pld_terms.Subsampled`). See :mod:`privkit.pld` for the
    discretisations and :mod:`privkit._pld_fft` for the composition. The native guarantee
    is a :class:`~privkit.pld.PLDGuarantee` with both bounds.

    Examples
    --------
    >>> from privkit import PLDAccountant, Repeat, PoissonSubsample, Neighbouring
    >>> from privkit.mechanisms import Gaussian
    >>> step = PoissonSubsample(Gaussian.for_gdp(1.0, sensitivity=1.0,
    ...                         relation=Neighbouring.ADD_REMOVE), 0.01)
    >>> g = PLDAccountant().guarantee(Repeat(step, 1000), delta=1e-5)
    >>> round(g.epsilon_lower_at(1e-5), 3), round(g.epsilon_at(1e-5), 3)
    (1.82, 1.829)

    .. versionadded:: 0.1.0
    """

    name: ClassVar[str] = "pld"
    adaptive_filter_note: ClassVar[str] = (
        "PLD composition assumes the blocks are fixed in advance; fully adaptive PLD "
        "filters (Whitehouse, Ramdas, Rogers, Wu 2023) are not implemented here")

    def __init__(self, step: float | None = None, tolerance: float = 2e-4,
                 max_points: int = 2**20) -> None:
        owner = "PLDAccountant"
        self.step = None if step is None else check.positive_finite("step", step, owner)
        self.tolerance = check.positive_finite("tolerance", tolerance, owner)
        self.max_points = check.positive_int("max_points", max_points, owner)
        if self.max_points < 64:
            raise check.fail("max_points", max_points, "an integer >= 64", owner)

    def accepts_leaf(self, leaf: Leaf) -> bool:
        return _profile_guarantee(leaf) is not None

    def accepts_node(self, node: PlanNode) -> bool:
        if isinstance(node, PoissonSubsample):
            return node.relation is Neighbouring.ADD_REMOVE
        if isinstance(node, SampleWithoutReplacement):
            return node.relation is Neighbouring.REPLACE_ONE
        return True

    def _refuse_whole(self, plan: Block) -> Block | None:
        return plan if _runs(self._fold(plan)) > MAX_RUNS else None

    # -- the cost algebra: the plan as distinct atoms with counts ----------------------------

    def leaf(self, leaf: Leaf) -> Terms:
        g = _profile_guarantee(leaf)
        assert g is not None
        if isinstance(g, GDP):
            return Terms(gaussian=g.mu**2)
        return Terms(counts=((LeafAtom(g), 1),))

    def sequential(self, costs: Sequence[Terms]) -> Terms:
        return costs[0].merged(list(costs[1:]))

    def repeat(self, cost: Terms, count: int) -> Terms:
        return cost.times(count)

    def parallel(self, costs: Sequence[Terms]) -> Terms:
        return Terms(counts=((Parts(tuple(costs)), 1),))

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
        return self._solve(cost, _Question(None, None))

    # -- answers -----------------------------------------------------------------------------

    def guarantee(self, plan: Block, *, delta: float | None = None,
                  epsilon: float | None = None) -> PLDGuarantee:
        """The plan's PLDs, on a grid chosen for the question (``delta`` to read epsilon
        at, or ``epsilon`` to read delta at; default: epsilon at delta 1e-6). The result
        is certified at every question; it is tightest at the one asked."""
        return self._solve(self.cost(plan), _Question(delta, epsilon))

    def pair(self, plan: Block) -> PLDGuarantee:
        """The plan's privacy loss distributions in both directions (its guarantee)."""
        return self.guarantee(plan)

    def bounds(self, plan: Block, *, delta: float) -> tuple[float, float]:
        """(lower, upper): certified bounds on the plan's exact epsilon at ``delta``."""
        d = check.delta("delta", delta, "PLDAccountant.bounds")
        g = self.guarantee(plan, delta=d)
        return g.epsilon_lower_at(d), g.epsilon_at(d)

    # -- the numerics ------------------------------------------------------------------------

    def _solve(self, terms: Terms, question: _Question) -> PLDGuarantee:
        """Two coarse grids (step h and h / 2, upper bounds only) measure the
        discretisation error, which is second order: ``U(h) - exact ~ k h^2``, so
        ``k ~ (U(h) - U(h/2)) / (3 h^2 / 4)``; the final grid's step makes ``k h^2`` at
        most ``tolerance`` times the answer. Every grid's bound is certified; the
        estimate only chooses the step."""
        if self.step is not None:
            return self._at_step(terms, self.step, question, [], lower=True)
        notes: list[str] = []
        h = 2e-3
        coarse = self._at_step(terms, h, question, notes, lower=False)
        half = self._at_step(terms, coarse.remove.step / 2, question, notes, lower=False)
        u1, u2 = question.value(coarse)[0], question.value(half)[0]
        if not (math.isfinite(u1) and math.isfinite(u2)) or half.remove.step > h:
            return self._at_step(terms, half.remove.step, question, notes, lower=True)
        h2 = half.remove.step
        k = max(u1 - u2, 0.0) / (0.75 * (2 * h2) ** 2)
        wanted = self.tolerance * u2
        step = h2 if k * h2 * h2 <= wanted else max(math.sqrt(wanted / k), 1e-05)
        return self._at_step(terms, step, question, notes, lower=True, coarse=half)

    def _at_step(self, terms: Terms, step: float, question: _Question, notes: list[str],
                 *, lower: bool, coarse: PLDGuarantee | None = None) -> PLDGuarantee:
        atoms = terms.atoms()
        runs = max(terms.runs, 1)
        tail = question.tail / runs
        cache: dict[Atom, tuple[Profile, Profile, Profile, Profile]] = {}
        parts = [(a, n, self._profiles(a, cache, question)) for a, n in atoms]
        symmetric = all(a.symmetric for a, _ in atoms)
        h = step
        for _ in range(8):
            if h > _WIDEST_STEP:
                note = (f"the plan's losses span more than max_points={self.max_points} "
                        f"grid points even at step {_WIDEST_STEP}; no finite bound here "
                        "(raise max_points, or use another accountant)")
                vacuous = PrivacyLossDistribution(step=h, offset=0, pmf=np.zeros(1),
                                                  infinity_mass=1.0)
                return PLDGuarantee(remove=vacuous, add=vacuous,
                                    notes=(*notes, note))
            grids = [self._grids(a, p, h, tail, lower) for a, _, p in parts]
            window = _pld_fft.Window([(g[0], n) for g, (_, n, _) in zip(grids, parts,
                                                                        strict=True)])
            first, last = window.span(question.tail, question.tail)
            if last - first + 1 <= self.max_points:
                break
            wider = h * (last - first + 1) / self.max_points * 1.05
            note = (f"the grid was coarsened to step {wider:.3g} to stay within "
                    f"max_points={self.max_points}; raise max_points for a tighter bound")
            if note not in notes:
                notes.append(note)
            h = wider
        counts = [n for _, n, _ in parts]

        def composed(index: int, upper: bool) -> tuple[PrivacyLossDistribution, float]:
            terms_ = [(g[index], n) for g, n in zip(grids, counts, strict=True)]
            w = _pld_fft.Window(terms_)
            lo, hi = w.span(question.tail, question.tail)
            return _pld_fft.compose(terms_, lo, hi, upper=upper)

        remove, _ = composed(0, True)
        lower_remove, slack_r = composed(2, False) if lower else (None, 0.0)
        if symmetric:
            return PLDGuarantee(remove=remove, add=remove, lower_remove=lower_remove,
                                lower_add=None, lower_slack=slack_r, notes=tuple(notes))
        if coarse is not None and _not_worse(coarse.add, remove, question):
            add = coarse.add
        else:
            add, _ = composed(1, True)
        return PLDGuarantee(remove=remove, add=add, lower_remove=lower_remove,
                            lower_add=None, lower_slack=slack_r, notes=tuple(notes))

    def _profiles(self, atom: Atom, cache: dict[Atom, tuple[Profile, Profile, Profile,
                                                              Profile]],
                  question: _Question) -> tuple[Profile, Profile, Profile, Profile]:
        if atom not in cache:
            cache[atom] = atom.profiles(lambda block: self._curves(block, question))
        return cache[atom]

    def _curves(self, block: Terms, question: _Question
                ) -> tuple[Profile, Profile, Profile, Profile]:
        """The curves (eps >= 0) of a nested composition's PLDs."""
        g = self._solve(block, question)
        low_r = g.lower_remove if g.lower_remove is not None else g.remove
        low_a = g.lower_add if g.lower_add is not None else low_r
        slack = g.lower_slack if g.lower_remove is not None else math.inf

        def curve(p: PrivacyLossDistribution, minus: float = 0.0) -> Profile:
            def h(e: NDArray[np.float64]) -> NDArray[np.float64]:
                out: NDArray[np.float64] = np.maximum(p.profile(e) - minus, 0.0)
                return out
            return h

        return (curve(g.remove), curve(g.add), curve(low_r, slack), curve(low_a, slack))

    def _grids(self, atom: Atom, profiles: tuple[Profile, Profile, Profile, Profile],
               step: float, tail: float, lower: bool
               ) -> tuple[PrivacyLossDistribution, PrivacyLossDistribution,
                          PrivacyLossDistribution, PrivacyLossDistribution]:
        up_r, up_a, lo_r, lo_a = profiles
        top_r, top_a = _top(up_r, tail), _top(up_a, tail)
        if not lower:
            upper_r, _ = discretise(up_r, up_a, step=step, lowest=-top_a - step,
                                    highest=max(top_r, top_a, 2 * step), lower=False)
            if atom.symmetric:
                return upper_r, upper_r, upper_r, upper_r
            upper_a, _ = discretise(up_a, up_r, step=step, lowest=-top_r - step,
                                    highest=max(top_r, top_a, 2 * step), lower=False)
            return upper_r, upper_a, upper_r, upper_a
        upper_r, lower_r = discretise(up_r, up_a, step=step, lowest=-top_a - step,
                                      highest=max(top_r, top_a, 2 * step), floor=atom.floor)
        if lo_r is not up_r:
            _, lower_r = discretise(lo_r, lo_a, step=step, lowest=-top_a - step,
                                    highest=max(top_r, top_a, 2 * step), floor=atom.floor)
        assert lower_r is not None
        if atom.symmetric:
            return upper_r, upper_r, lower_r, lower_r
        upper_a, _ = discretise(up_a, up_r, step=step, lowest=-top_r - step,
                                highest=max(top_r, top_a, 2 * step), lower=False)
        # the add direction's lower PLD: only the remove direction's is kept (a lower
        # bound on the worse direction needs one direction; the remove direction is the
        # worse one for subsampling at the deltas of interest)
        return upper_r, upper_a, lower_r, upper_a

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


def _not_worse(candidate: PrivacyLossDistribution, than: PrivacyLossDistribution,
               question: Any) -> bool:
    if question.epsilon is not None:
        return candidate.delta_at(question.epsilon) <= than.delta_at(question.epsilon)
    d = _DEFAULT_DELTA if question.delta is None else question.delta
    return candidate.epsilon_at(d) <= than.epsilon_at(d)


def _runs(terms: Terms) -> int:
    """How many blocks run, nested ones included (each counted in its enclosing count)."""
    total = 1 if terms.gaussian else 0
    for atom, n in terms.counts:
        inner = 1
        if isinstance(atom, Subsampled):
            inner = max(_runs(atom.block), 1)
        elif isinstance(atom, Parts):
            inner = max(max(_runs(p) for p in atom.parts), 1)
        total += n * inner
    return total
