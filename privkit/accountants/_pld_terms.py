"""The PLD accountant's cost: a plan as distinct blocks with counts, and their profiles.

A plan folds (see :mod:`privkit.accountant`) into a :class:`Terms`: each distinct
*atom* with how many times it runs, plus the Gaussian leaves merged exactly (mu-GDP
blocks compose to ``sqrt(sum mu_i^2)``-GDP, Dong, Roth, Su 2019, Corollary 3.3). An atom
is a leaf's exact privacy profile, or a node whose profile is derived from its block's:
Poisson subsampling, sampling without replacement, or disjoint parts. Identical leaves
are one atom, so a plan of many leaves costs what its distinct blocks cost.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit._profiles import Family
from privkit.guarantees import GDP, ApproxDP, BoundedRange, Guarantee

__all__ = ["Atom", "Composed", "LeafAtom", "Parts", "Subsampled", "Terms", "poisson_profiles",
           "realised"]

Profile = Callable[[NDArray[np.float64]], NDArray[np.float64]]


@attrs.frozen
class Terms:
    """Distinct atoms with their counts, and the merged Gaussian part (sum of mu^2)."""

    counts: tuple[tuple[Atom, int], ...] = ()
    gaussian: float = 0.0

    def merged(self, others: list[Terms]) -> Terms:
        totals: dict[Atom, int] = {}
        for terms in [self, *others]:
            for atom, n in terms.counts:
                totals[atom] = totals.get(atom, 0) + n
        return Terms(counts=tuple(totals.items()),
                     gaussian=math.fsum(t.gaussian for t in [self, *others]))

    def times(self, count: int) -> Terms:
        return Terms(counts=tuple((a, n * count) for a, n in self.counts),
                     gaussian=self.gaussian * count)

    def atoms(self) -> list[tuple[Atom, int]]:
        """Every atom with its count, the merged Gaussians as one GDP leaf."""
        out = list(self.counts)
        if self.gaussian > 0.0:
            out.append((LeafAtom(GDP(mu=math.sqrt(self.gaussian))), 1))
        return out

    @property
    def runs(self) -> int:
        return sum(n for _, n in self.counts) + (1 if self.gaussian else 0)


class Atom:
    """A block whose pair of profiles is known: ``remove`` ``H(P || Q)`` and ``add``
    ``H(Q || P)`` for eps >= 0, and ``floor``, at most ``H_inf(P || Q)``."""

    symmetric: bool = True

    def profiles(self, solved: Callable[[Terms], tuple[Profile, Profile, Profile, Profile]]
                 ) -> tuple[Profile, Profile, Profile, Profile]:
        """(upper remove, upper add, lower remove, lower add) profiles; ``solved`` turns a
        nested composition into its PLDs' curves."""
        raise NotImplementedError

    floor: float = 0.0


@attrs.frozen
class LeafAtom(Atom):
    """A leaf with an exact profile (its guarantee's worst-case pair is symmetric)."""

    guarantee: Guarantee

    @property
    def floor(self) -> float:  # type: ignore[override]
        return self.guarantee.delta if isinstance(self.guarantee, ApproxDP) else 0.0

    @property
    def family(self) -> tuple[Family, tuple[float, ...]]:
        """The profile's formula and parameters (:mod:`privkit._profiles`)."""
        return self.guarantee._profile_family()

    def profiles(self, solved: Callable[[Terms], tuple[Profile, Profile, Profile, Profile]]
                 ) -> tuple[Profile, Profile, Profile, Profile]:
        f = self.guarantee._profile_nonnegative
        return f, f, f, f


def _reverse_any(forward: Profile, reverse: Profile) -> Profile:
    """``H_(e^eps)(Q || P)`` for every real eps, from both non-negative profiles."""

    def h(e: NDArray[np.float64]) -> NDArray[np.float64]:
        e = np.asarray(e, dtype=float)
        out = np.empty(e.shape)
        pos = e >= 0
        out[pos] = reverse(e[pos])
        neg = ~pos
        out[neg] = -np.expm1(e[neg]) + np.exp(e[neg]) * forward(-e[neg])
        return out

    return h


def poisson_profiles(q: float, forward: Profile, reverse: Profile) -> tuple[Profile, Profile]:
    """Profiles (eps >= 0) of (M, Q) and (Q, M) for M = q P + (1 - q) Q.

    Notes
    -----
    ``H_g(M || Q) = q H_(g')(P || Q)`` with ``g' = (g - 1 + q) / q`` (for g >= 1), and
    ``H_g(Q || M) = (1 - g (1 - q))_+ H_(g'')(Q || P)`` with
    ``g'' = g q / (1 - g (1 - q))``: both exact (Balle, Barthe, Gaboardi 2018,
    arXiv:1807.01647v2, Theorem 8 and its proof), and monotone in the profiles of
    (P, Q), so bounds on those give bounds on these (Zhu, Dong, Wang 2022, Theorem 11).
    """
    reverse_any = _reverse_any(forward, reverse)

    def remove(e: NDArray[np.float64]) -> NDArray[np.float64]:
        g = np.exp(np.asarray(e, dtype=float))
        result: NDArray[np.float64] = q * forward(np.log1p((g - 1.0) / q))
        return result

    def add(e: NDArray[np.float64]) -> NDArray[np.float64]:
        g = np.exp(np.asarray(e, dtype=float))
        weight = 1.0 - g * (1.0 - q)
        out = np.zeros(g.shape)
        live = weight > 0
        out[live] = weight[live] * reverse_any(np.log(g[live] * q / weight[live]))
        return out

    return remove, add


@attrs.frozen
class Subsampled(Atom):
    """A block run on a sample: ``M = q P + (1 - q) Q`` against ``Q``.

    Poisson subsampling under ADD_REMOVE (``q`` the rate; the two directions are the
    removal and the addition of a record), and sampling ``m`` of ``n`` without
    replacement under REPLACE_ONE (``q = m / n``; with probability ``q`` the replaced
    record is in the sample). For the latter the block's pair is taken symmetric, the
    pointwise worse of its two directions, and the pair ``(q P + (1 - q) Q, Q)`` with its
    reverse is realised by neighbouring datasets (the replaced record's replacement also
    appearing elsewhere in the data), so the bound is the exact privacy of that pair
    (Zhu, Dong, Wang 2022, Section 5; Balle, Barthe, Gaboardi 2018, Theorem 10 give its
    forward profile).
    """

    block: Terms
    rate: float
    symmetrise: bool = False
    symmetric = False

    @property
    def floor(self) -> float:  # type: ignore[override]
        return 0.0

    def profiles(self, solved: Callable[[Terms], tuple[Profile, Profile, Profile, Profile]]
                 ) -> tuple[Profile, Profile, Profile, Profile]:
        up_r, up_a, lo_r, lo_a = _block_profiles(self.block, solved)
        exact = lo_r is up_r and lo_a is up_a
        if self.symmetrise:
            up_r = up_a = _pointwise_max(up_r, up_a) if up_r is not up_a else up_r
            lo_r = lo_a = _pointwise_max(lo_r, lo_a) if lo_r is not lo_a else lo_r
        upper = poisson_profiles(self.rate, up_r, up_a)
        lower = upper if exact else poisson_profiles(self.rate, lo_r, lo_a)
        return upper[0], upper[1], lower[0], lower[1]


@attrs.frozen
class Parts(Atom):
    """Disjoint parts: the upper profile is the pointwise maximum of the parts' (a pair
    dominating each); the lower one is the part with the largest upper delta at eps = 1
    (the neighbouring change may touch that part alone)."""

    parts: tuple[Terms, ...]

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        return False

    def profiles(self, solved: Callable[[Terms], tuple[Profile, Profile, Profile, Profile]]
                 ) -> tuple[Profile, Profile, Profile, Profile]:
        each = [_block_profiles(p, solved) for p in self.parts]
        one = np.array([1.0])
        worst = max(range(len(each)), key=lambda i: float(max(each[i][0](one)[0],
                                                               each[i][1](one)[0])))
        return (_pointwise_max(*[e[0] for e in each]), _pointwise_max(*[e[1] for e in each]),
                each[worst][2], each[worst][3])


@attrs.frozen
class Composed(Atom):
    """A block run many times, composed on a finer grid first and used, through its
    PLDs' curves, as one block of the enclosing composition (whose grid can then be as
    coarse as the composed block's spread allows): two-level composition."""

    block: Terms

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        return all(a.symmetric for a, _ in self.block.counts)

    def profiles(self, solved: Callable[[Terms], tuple[Profile, Profile, Profile, Profile]]
                 ) -> tuple[Profile, Profile, Profile, Profile]:
        return solved(self.block)


def _block_profiles(block: Terms, solved: Callable[[Terms], tuple[Profile, Profile, Profile,
                                                                   Profile]]
                    ) -> tuple[Profile, Profile, Profile, Profile]:
    atoms = block.atoms()
    if len(atoms) == 1 and atoms[0][1] == 1:
        return atoms[0][0].profiles(solved)
    return solved(block)


def _pointwise_max(*profiles: Profile) -> Profile:
    def h(e: NDArray[np.float64]) -> NDArray[np.float64]:
        result: NDArray[np.float64] = np.maximum.reduce([p(e) for p in profiles])
        return result

    return h


def realised(terms: Terms) -> bool:
    """Whether every block's worst-case pair is realised by one pair of neighbouring
    datasets under composition, so that the composed lower PLDs bound the plan's exact
    privacy. Not for bounded-range blocks: their profile is a pointwise maximum over a
    family of pairs, and k runs of the worst pair for one run are looser than the worst
    k runs (Dong, Durfee, Rogers 2020, "Optimal differential privacy composition for
    exponential mechanisms", Section 3); the lower PLDs then bound only the composition
    of the dominating pairs."""
    for atom, _ in terms.counts:
        if isinstance(atom, LeafAtom):
            if isinstance(atom.guarantee, BoundedRange):
                return False
        elif isinstance(atom, Parts):
            if not all(realised(p) for p in atom.parts):
                return False
        elif isinstance(atom, (Subsampled, Composed)) and not realised(atom.block):
            return False
    return True
