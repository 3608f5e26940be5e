"""Park's runner solves each non-private baseline SVM once per grid cell
(`one_solve_per_problem`): the noise is all that differs between the epsilons of a cell.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["one_solve_per_problem"]


def _digest(a: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).hexdigest()


@contextmanager
def one_solve_per_problem() -> Iterator[None]:
    """Within the block, the random-feature baselines solve each non-private SVM once:
    the same rows, labels and nu at every epsilon (and for SVM OUTPUT and its batch
    variant) give the same liblinear problem, whose solution is deterministic (its
    ``random_state`` is fixed), so the first solution is reused, bit for bit; only the
    noise differs between epsilons. Figure 7.1's cells spent about 70% of their time
    re-solving them."""
    from privkit.algorithms.svdd._hinge_ovr import OneVsRestSVM

    original = OneVsRestSVM._weights
    solved: dict[tuple[str, str, float, int], np.ndarray] = {}

    def weights(self: Any, Phi: np.ndarray, codes: np.ndarray) -> np.ndarray:
        key = (_digest(Phi), _digest(codes), float(self.nu), int(self.classes_.size))
        if key not in solved:
            solved[key] = original(self, Phi, codes)
        return solved[key].copy()

    OneVsRestSVM._weights = weights  # type: ignore[method-assign]
    try:
        yield
    finally:
        OneVsRestSVM._weights = original  # type: ignore[method-assign]
