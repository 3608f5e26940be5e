"""Public data bounds: the only way privkit's estimators scale data.

Rows are divided by a public bound on their norm; rows beyond it are clipped back onto it
and a row with a non-finite entry becomes the zero row, silently. Both are per-record
public rules, so they preserve either neighbouring relation (a record's image depends on
that record alone), and neither refuses nor reports anything: a warning or an error that
fires only when some row is beyond the bound, or not finite, would reveal that such a row
exists, which no noise covers (issue 22, "the transcript is the release"). Nothing here is
computed from statistics of the private data, which would need a budget of its own.

A data owner who wants to know how many of their rows are clipped or replaced asks
:func:`inspect_rows`, on their own data, outside any private computation.

The same module detects the other way data get scaled in practice: a scikit-learn
``Pipeline`` whose earlier steps were fitted on the rows the private estimator trains on
(``StandardScaler``, ``MinMaxScaler``, ...). Their fitted statistics are functions of the
private data that no privkit guarantee covers, so fitting warns with
:class:`~privkit.errors.PrivacyLeakWarning` (a function of the pipeline, not of the data).
Which steps learn from the rows is read from the pipeline's structure, through nested
``Pipeline``, ``ColumnTransformer`` and ``FeatureUnion`` objects: a composite of public
transformers (what mixed-column data such as Adult needs) is public.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   Clipping is silent, non-finite rows become zero rows, and nothing is refused by value:
   ``ClippedRowsWarning`` and the ``clip`` parameter are gone; :func:`inspect_rows` is
   the data owner's diagnostic.
.. versionchanged:: 0.3.0
   The pipeline check reads the pipeline's structure (:func:`upstream_fitted_steps`):
   no warning for a ``ColumnTransformer`` or ``FeatureUnion`` of public transformers,
   nested pipelines looked into (issue 27).
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check
from privkit.errors import PrivacyLeakWarning

__all__ = ["RowReport", "clipped_rows", "finite_rows", "inspect_rows", "row_norms",
           "upstream_fitted_steps", "warn_if_preprocessed"]

#: Relative slack under which a row's norm counts as on the bound (rounding of the norm).
_ON_BOUND = 1e-12


def row_norms(X: Any) -> NDArray[np.float64]:
    """L2 norm of every row of a dense array or a scipy sparse matrix, without overflow for
    finite rows (a row whose squares overflow is rescaled by its largest entry first); NaN
    or ``inf`` for a row with a non-finite entry."""
    import scipy.sparse as sp

    if sp.issparse(X):
        csr = sp.csr_matrix(X)
        with np.errstate(over="ignore", invalid="ignore"):
            squares = np.asarray(csr.multiply(csr).sum(axis=1), dtype=np.float64).ravel()
            out: NDArray[np.float64] = np.sqrt(squares)
        big = np.isinf(out) & finite_rows(csr)
        for i in np.flatnonzero(big):
            row = csr.data[csr.indptr[i]:csr.indptr[i + 1]]
            top = float(np.abs(row).max())
            out[i] = top * float(np.linalg.norm(row / top))
        return out
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.linalg.norm(X, axis=1)
    big = np.isinf(out) & np.isfinite(X).all(axis=1)
    if big.any():
        rows = np.asarray(X[big], dtype=np.float64)
        top = np.abs(rows).max(axis=1)
        out[big] = top * np.linalg.norm(rows / top[:, None], axis=1)
    return out


def finite_rows(X: Any) -> NDArray[np.bool_]:
    """Which rows of a dense array or a scipy sparse matrix have only finite entries."""
    import scipy.sparse as sp

    if sp.issparse(X):
        csr = sp.csr_matrix(X)
        bad = ~np.isfinite(csr.data)
        rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
        finite = np.ones(csr.shape[0], dtype=bool)
        finite[rows[bad]] = False
        return finite
    out: NDArray[np.bool_] = np.isfinite(X).all(axis=1)
    return out


def row_factors(X: Any, row_norm_bound: float) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """``(factors, finite)``: the factor ``1 / max(||x||, B)`` that divides each row by the
    public bound B and clips it onto the unit ball, and which rows are finite (their
    factor is ``1 / B``: a non-finite row is the caller's to map)."""
    finite = finite_rows(X)
    norms = np.where(finite, row_norms(X), 0.0)
    factors: NDArray[np.float64] = 1.0 / np.maximum(norms, row_norm_bound)
    return factors, finite


def clipped_rows(X: Any, row_norm_bound: float, *, owner: str = "clipped_rows") -> Any:
    """Rows divided by the public bound B, so that every row has norm at most 1.

    A per-record public map, silent: a row of norm above B is scaled back onto it, and a
    row with a non-finite entry (NaN or an infinity) becomes the zero row. Dense arrays
    stay dense, sparse matrices sparse (CSR); the input is not modified.
    """
    import scipy.sparse as sp

    bound = check.positive_finite("row_norm_bound", row_norm_bound, owner)
    factors, finite = row_factors(X, bound)
    if sp.issparse(X):
        csr = sp.csr_matrix(X, dtype=np.float64, copy=True)
        if not finite.all():
            csr.data[~np.isfinite(csr.data)] = 0.0
        out = sp.csr_matrix(sp.diags(np.where(finite, factors, 0.0)) @ csr)
        out.eliminate_zeros()
        return out
    scaled: NDArray[np.float64] = np.asarray(X, dtype=np.float64) * factors[:, None]
    if not finite.all():
        scaled[~finite] = 0.0
    return scaled


@attrs.frozen(kw_only=True)
class RowReport:
    """What :func:`inspect_rows` found: ``n_rows``, ``non_finite`` (rows with a NaN or an
    infinity, which fit maps to its neutral record) and ``beyond_bound`` (finite rows of
    norm above ``row_norm_bound``, which fit clips onto it)."""

    n_rows: int
    non_finite: int
    beyond_bound: int
    row_norm_bound: float


def inspect_rows(X: Any, *, row_norm_bound: float) -> RowReport:
    """How many rows of ``X`` a privkit estimator would map: non-finite rows, and rows
    beyond the public norm bound.

    NOT PRIVATE. This is a diagnostic for the data owner, on their own data, before they
    choose a bound; its counts are exact functions of the data and carry no guarantee.
    Never publish them, and do not choose ``row_norm_bound`` from them for data you
    then release a model of: a bound chosen by looking at the data is a data-dependent
    choice that the estimator's guarantee does not cover. No estimator calls it.

    Examples
    --------
    >>> import numpy as np
    >>> from privkit.algorithms import inspect_rows
    >>> inspect_rows(np.array([[3.0, 4.0], [0.3, 0.4], [np.nan, 0.0]]), row_norm_bound=1.0)
    RowReport(n_rows=3, non_finite=1, beyond_bound=1, row_norm_bound=1.0)

    .. versionadded:: 0.3.0
    """
    import scipy.sparse as sp

    bound = check.positive_finite("row_norm_bound", row_norm_bound, "inspect_rows")
    data = X if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if data.ndim != 2:
        raise check.fail("X", f"an array of shape {data.shape}", "a 2-D array",
                         "inspect_rows")
    finite = finite_rows(data)
    beyond = finite & (np.where(finite, row_norms(data), 0.0) > bound * (1.0 + _ON_BOUND))
    return RowReport(n_rows=int(data.shape[0]), non_finite=int((~finite).sum()),
                     beyond_bound=int(beyond.sum()), row_norm_bound=bound)


def _is_public(step: Any) -> bool:
    """Whether a pipeline step learns nothing from the rows it is fitted on, read from its
    structure: ``None``, ``"passthrough"`` or ``"drop"``; a step that says so with
    ``privkit_public_bounds = True`` (privkit's public-bound transformers); a stateless
    transformer (scikit-learn's ``requires_fit`` tag is false: ``Normalizer``,
    ``FunctionTransformer``, whose function must then act record by record); or a
    composite (``Pipeline``, ``ColumnTransformer`` with its ``remainder``,
    ``FeatureUnion``) whose every part is public, at any depth."""
    if step is None or (isinstance(step, str) and step in ("passthrough", "drop")):
        return True
    if bool(getattr(step, "privkit_public_bounds", False)):
        return True
    parts = _parts(step)
    if parts is not None:
        return all(_is_public(part) for _, part in parts)
    from sklearn.utils import get_tags

    try:
        return not get_tags(step).requires_fit
    except Exception:  # not a scikit-learn estimator: nothing says it is public
        return False


def _parts(step: Any) -> list[tuple[str, Any]] | None:
    """The named parts of a scikit-learn composite (``Pipeline`` steps in order,
    ``ColumnTransformer`` transformers and its remainder, ``FeatureUnion`` members), or
    ``None`` for a step that is not one."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline

    if isinstance(step, Pipeline):
        return list(step.steps)
    if isinstance(step, ColumnTransformer):
        return ([(name, part) for name, part, _ in step.transformers]
                + [("remainder", step.remainder)])
    if isinstance(step, FeatureUnion):
        return list(step.transformer_list)
    return None


def upstream_fitted_steps(root: Any, estimator: Any) -> list[str] | None:
    """The steps of ``root`` (a scikit-learn composite, nested at any depth) that are
    fitted on the same rows before ``estimator`` and learn from them, described as
    ``"'name' (Class)"``; ``None`` when ``estimator`` is not a part of ``root``.

    Upstream means: the earlier steps of every ``Pipeline`` on the way from ``root`` down
    to ``estimator``. The other members of a ``ColumnTransformer`` or ``FeatureUnion``
    beside it are fitted on the same rows but do not feed it, so they are not upstream.
    """
    parts = _parts(root)
    if parts is None:
        return None
    from sklearn.pipeline import Pipeline

    for index, (_, part) in enumerate(parts):
        below = [] if part is estimator else upstream_fitted_steps(part, estimator)
        if below is None:
            continue
        before = parts[:index] if isinstance(root, Pipeline) else []
        return [f"{name!r} ({type(step).__name__})" for name, step in before
                if not _is_public(step)] + below
    return None


def warn_if_preprocessed(estimator: Any) -> None:
    """Warn when ``estimator.fit`` runs inside the ``fit`` of a scikit-learn ``Pipeline``
    in which a step fitted on the same rows before it learns from them.

    The fitted step's statistics (a mean, a scale, a vocabulary, ...) are functions of the
    private rows; privkit's guarantee covers the estimator, not them. The decision is read
    from the pipeline's structure (:func:`upstream_fitted_steps`: nested pipelines,
    column transformers and feature unions, each part public or not), never from the
    data; the call stack serves only to find which pipeline is being fitted (scikit-learn
    hands a step nothing else), the outermost one that holds ``estimator``.
    """
    from sklearn.pipeline import Pipeline

    frame: FrameType | None = sys._getframe(1)
    fitting: list[Any] = []
    while frame is not None:
        owner = frame.f_locals.get("self")
        if isinstance(owner, Pipeline) and frame.f_code.co_name.startswith("fit") \
                and not any(owner is seen for seen in fitting):
            fitting.append(owner)
        frame = frame.f_back
    leaky = None
    for root in reversed(fitting):  # the outermost pipeline that holds the estimator
        leaky = upstream_fitted_steps(root, estimator)
        if leaky is not None:
            break
    if leaky:
        warnings.warn(
            f"{type(estimator).__name__} is fitted in a Pipeline after "
            f"{', '.join(leaky)}, fitted on the same rows: what those steps learnt "
            "from the private data is not covered by guarantee_. Use public bounds "
            "instead (privkit.algorithms.preprocessing).",
            PrivacyLeakWarning, stacklevel=3)
