"""The tightest guarantee of a plan, memoised.

An estimator's ``guarantee_`` is :func:`privkit.tightest` on the plan that ran: a pure
function of the plan (public: built from parameters, n where it is public, and released
labels) and of delta. It can cost far more than the fit (a privacy loss distribution of a
million atoms for a federation of one-vs-rest problems), and refits repeat it with the
same arguments: cross-validation, grid searches, scikit-learn's checks, and the
transcript audit's hundreds of fits per side.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import functools

from privkit.accountants import tightest
from privkit.guarantees import Guarantee
from privkit.plan import Block

__all__ = ["certified"]


@functools.lru_cache(maxsize=512)
def certified(plan: Block, *, delta: float) -> Guarantee:
    """privkit's tightest accountant's guarantee for ``plan`` at ``delta``, memoised: a pure
    function of the plan (plans and guarantees are frozen and hashable; public parameters
    only), which every fit with the same budget and shape would otherwise recompute (the
    PLD accountant can take a second at a large epsilon). The result is the object
    ``tightest`` returned. Estimators report it as ``guarantee_``."""
    return tightest(plan, delta=delta).guarantee
