"""Public data bounds: the only way privkit's estimators scale data.

Rows are divided by a public bound on their norm; rows beyond it are clipped back onto it,
with a :class:`ClippedRowsWarning` that says how many, or refused. Nothing here is
computed from statistics of the private data, which would need a budget of its own.

The same module detects the other way data get scaled in practice: a scikit-learn
``Pipeline`` whose earlier steps were fitted on the rows the private estimator trains on
(``StandardScaler``, ``MinMaxScaler``, ...). Their fitted statistics are functions of the
private data that no privkit guarantee covers, so fitting warns with
:class:`~privkit.errors.PrivacyLeakWarning`.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.errors import PrivacyLeakWarning

__all__ = ["ClippedRowsWarning", "clipped_rows", "row_norms", "warn_if_preprocessed"]


class ClippedRowsWarning(UserWarning):
    """Rows beyond a public norm bound were clipped onto it (the warning says how many).

    .. versionadded:: 0.2.0
    """


def row_norms(X: Any) -> NDArray[np.float64]:
    """L2 norm of every row of a dense array or a scipy sparse matrix."""
    import scipy.sparse as sp

    if sp.issparse(X):
        squares = X.multiply(X).sum(axis=1)
        return np.sqrt(np.asarray(squares, dtype=np.float64).ravel())
    out: NDArray[np.float64] = np.linalg.norm(X, axis=1)
    return out


def clipped_rows(X: Any, row_norm_bound: float, *, clip: bool = True,
                 owner: str = "clipped_rows") -> Any:
    """Rows divided by the public bound B, so that every row has norm at most 1.

    Rows of norm above B are scaled back onto it (``clip=True``, with a
    :class:`ClippedRowsWarning` naming how many of the rows) or refused (``clip=False``,
    an error naming the largest norm). Dense arrays stay dense, sparse matrices sparse
    (CSR).
    """
    import scipy.sparse as sp

    bound = check.positive_finite("row_norm_bound", row_norm_bound, owner)
    norms = row_norms(X) / bound
    over = norms > 1.0 + 1e-12
    factors = 1.0 / bound / np.where(over, norms, 1.0)
    if np.any(over):
        if not clip:
            worst = float(norms.max() * bound)
            raise check.fail("X", f"a row of L2 norm {worst:.6g}",
                             f"rows of norm at most row_norm_bound={bound}", owner,
                             "clip them (clip=True) or raise the bound")
        warnings.warn(f"{owner}: {int(over.sum())} of {len(norms)} rows have L2 norm above "
                      f"row_norm_bound={bound} and were clipped onto it (clip=True); pass "
                      "clip=False to refuse them instead", ClippedRowsWarning, stacklevel=3)
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(factors) @ X)
    scaled: NDArray[np.float64] = X * factors[:, None]
    return scaled


def _is_public(step: Any) -> bool:
    """A pipeline step that learns nothing from the rows: ``None``, ``"passthrough"``,
    privkit's public-bound transformers, or a step that says so with
    ``privkit_public_bounds = True``."""
    return step is None or step == "passthrough" or bool(
        getattr(step, "privkit_public_bounds", False))


def warn_if_preprocessed(estimator: Any) -> None:
    """Warn when ``estimator.fit`` runs inside a scikit-learn ``Pipeline.fit`` after a
    step that was fitted on the same rows (looked up on the call stack).

    The fitted step's statistics (a mean, a scale, a vocabulary, ...) are functions of
    the private rows; privkit's guarantee covers the estimator, not them.
    """
    from sklearn.pipeline import Pipeline

    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if isinstance(owner, Pipeline) and frame.f_code.co_name.startswith("fit"):
            leaky = []
            for name, step in owner.steps:
                if step is estimator:
                    break
                if not _is_public(step):
                    leaky.append(f"{name!r} ({type(step).__name__})")
            else:
                leaky = []
            if leaky:
                warnings.warn(
                    f"{type(estimator).__name__} is fitted in a Pipeline after "
                    f"{', '.join(leaky)}, fitted on the same rows: what those steps learnt "
                    "from the private data is not covered by guarantee_. Use public bounds "
                    "instead (privkit.algorithms.preprocessing).",
                    PrivacyLeakWarning, stacklevel=3)
            return
        frame = frame.f_back  # type: ignore[assignment]
