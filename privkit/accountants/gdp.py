"""Gaussian differential privacy accounting (Dong, Roth, Su 2019).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import ClassVar

from privkit import _leaves
from privkit import _validation as check
from privkit.accountant import Accountant
from privkit.accountants._runs import Vacuous
from privkit.errors import LooseBoundWarning
from privkit.guarantees import GDP, Guarantee
from privkit.plan import Block, Leaf, PlanNode, PoissonSubsample

__all__ = ["GDPAccountant"]


def _leaf_mu(leaf: Leaf) -> float | None:
    for g in _leaves.guarantees(leaf):
        if isinstance(g, GDP):
            return g.mu
    return None


class GDPAccountant(Accountant[float]):
    """Compose Gaussian plans in GDP: mu's add in quadrature, exactly; the native
    guarantee is ``GDP(mu)``.

    Parameters
    ----------
    clt : bool, default False
        Also accept Poisson-subsampled Gaussians through the central-limit approximation
        ``mu = q sqrt(T (e^(mu_0^2) - 1))`` for ``T`` steps (Dong, Roth, Su 2019,
        Corollary 5.4 / Bu, Dong, Long, Su 2020): a subsampled step costs
        ``q sqrt(e^(mu_0^2) - 1)`` and steps add in quadrature. That number is an
        *approximation*, not a bound: it can undercount, an accountant built with
        ``clt=True`` says so with a ``LooseBoundWarning`` and :func:`privkit.tightest`
        never uses it.

    Notes
    -----
    Gaussian mechanisms are exactly mu-GDP and mu-GDP blocks compose to
    ``sqrt(sum mu_i^2)``-GDP (Dong, Roth, Su 2019, Corollary 3.3); disjoint parts take the
    largest mu. The (epsilon, delta) conversion is exact (their Corollary 2.13).
    """

    name: ClassVar[str] = "gdp"
    adaptive_filter_note: ClassVar[str] = (
        "composition of GDP blocks with adaptively chosen mu needs the filter of Smith and "
        "Thakurta (2022), not implemented here")

    def __init__(self, clt: bool = False) -> None:
        self.clt = bool(check.instance("clt", clt, bool, "GDPAccountant"))
        self.certified = not clt

    def accepts_leaf(self, leaf: Leaf) -> bool:
        return _leaf_mu(leaf) is not None

    def accepts_node(self, node: PlanNode) -> bool:
        return self.clt if isinstance(node, PoissonSubsample) else True

    def leaf(self, leaf: Leaf) -> float:
        mu = _leaf_mu(leaf)
        assert mu is not None
        return mu

    def sequential(self, costs: Sequence[float]) -> float:
        return math.sqrt(math.fsum(mu * mu for mu in costs))

    def parallel(self, costs: Sequence[float]) -> float:
        return max(costs)

    def repeat(self, cost: float, count: int) -> float:
        return math.sqrt(count) * cost

    def poisson_subsample(self, cost: float, node: PoissonSubsample) -> float:
        warnings.warn(
            "GDPAccountant(clt=True): the central-limit GDP of a subsampled Gaussian is an "
            "approximation, not an upper bound", LooseBoundWarning, stacklevel=5)
        return node.sampling_rate * math.sqrt(math.expm1(cost * cost))

    def to_guarantee(self, cost: float) -> Guarantee:
        if not math.isfinite(cost):
            return Vacuous("mu overflows")
        return GDP(mu=cost)

    def mu(self, plan: Block) -> float:
        """The plan's GDP parameter (an approximation where the CLT was used)."""
        return self.cost(plan)

