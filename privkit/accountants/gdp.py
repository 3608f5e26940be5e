"""Gaussian differential privacy accounting (Dong, Roth, Su 2019).

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import math
import warnings
from typing import ClassVar

from privkit import _validation as check
from privkit import conversions
from privkit.accountant import Accountant
from privkit.errors import LooseBoundWarning
from privkit.guarantees import GDP
from privkit.plan import Block, Leaf, Parallel, PoissonSubsample, PostProcess, Repeat, Sequential

__all__ = ["GDPAccountant"]


def _leaf_mu(leaf: Leaf) -> float | None:
    for g in leaf.guarantees():
        if isinstance(g, GDP):
            return g.mu
    return None


class GDPAccountant(Accountant):
    """Compose Gaussian plans in GDP: mu's add in quadrature, exactly.

    Parameters
    ----------
    clt : bool, default False
        Also accept Poisson-subsampled Gaussians through the central-limit approximation
        ``mu = q sqrt(T (e^(1/sigma^2) - 1))`` (Dong, Roth, Su 2019, Corollary 5.4 / Bu,
        Dong, Long, Su 2020). That number is an *approximation*, not a bound: it can
        undercount, an accountant built with ``clt=True`` says so with a
        ``LooseBoundWarning`` and :func:`privkit.tightest` never uses it.

    Notes
    -----
    Gaussian mechanisms are exactly mu-GDP and mu-GDP blocks compose to
    ``sqrt(sum mu_i^2)``-GDP (Dong, Roth, Su 2019, Corollary 3.3); disjoint parts take the
    largest mu. The (epsilon, delta) conversion is exact (their Corollary 2.13).
    """

    name: ClassVar[str] = "gdp"

    def __init__(self, clt: bool = False) -> None:
        self.clt = bool(check.instance("clt", clt, bool, "GDPAccountant"))
        self.certified = not clt

    def _handles(self, block: Block) -> bool:
        if isinstance(block, Leaf):
            return _leaf_mu(block) is not None
        if isinstance(block, PoissonSubsample):
            return self.clt
        return isinstance(block, Sequential | Parallel | Repeat | PostProcess)

    def mu(self, plan: Block) -> float:
        """The plan's GDP parameter (an approximation where the CLT was used)."""
        self.check(plan)
        return self._mu(plan)

    def _mu(self, plan: Block) -> float:
        if isinstance(plan, Leaf):
            mu = _leaf_mu(plan)
            assert mu is not None
            return mu
        if isinstance(plan, Sequential):
            return math.sqrt(math.fsum(self._mu(b) ** 2 for b in plan.steps))
        if isinstance(plan, Parallel):
            return max(self._mu(b) for b in plan.parts)
        if isinstance(plan, Repeat):
            if isinstance(plan.block, PoissonSubsample):
                return self._clt_mu(plan.block, plan.count)
            return math.sqrt(plan.count) * self._mu(plan.block)
        if isinstance(plan, PoissonSubsample):
            return self._clt_mu(plan, 1)
        assert isinstance(plan, PostProcess)
        return self._mu(plan.block)

    def _clt_mu(self, node: PoissonSubsample, steps: int) -> float:
        warnings.warn(
            "GDPAccountant(clt=True): the central-limit GDP of a subsampled Gaussian is an "
            "approximation, not an upper bound", LooseBoundWarning, stacklevel=4)
        inner = self._mu(node.block)
        return node.sampling_rate * math.sqrt(steps * math.expm1(inner * inner))

    def _epsilon(self, plan: Block, delta: float) -> float:
        return conversions.gdp_epsilon(self._mu(plan), delta)

    def _delta(self, plan: Block, epsilon: float) -> float:
        return conversions.gdp_delta(self._mu(plan), epsilon)
