"""Preprocessing that uses public bounds only, so it costs no privacy.

scikit-learn's scalers learn a mean, a scale or a range from the rows they are fitted on;
in front of a private estimator those statistics of the private data are released with
the model and no privkit guarantee covers them (privkit's estimators warn when they are
fitted in such a pipeline: :func:`privkit.algorithms._bounds.warn_if_preprocessed`).
The transformers here take every constant as a parameter, declared before any data is
seen; ``fit`` only checks the number of columns. Their output is a per-record public map
of their input, so it preserves either neighbouring relation.

The rows they transform may be private (a ``Pipeline`` fitting a private estimator), so
nothing is refused or reported by value (issue 22): finite values outside the declared
bounds are clipped onto them, and an integer code outside the declared levels is the
all-zero indicator, silently (a warning or an error that fires only when some value is out
of bounds would reveal that one is). Non-finite values (NaN, infinities) are left
non-finite, so that the estimator downstream applies its own rule: in ``fit`` a row with
one is its neutral record; in ``predict`` it is a query error.

==========================  ===============================================================
``PublicRangeScaler``       ``[lower, upper]`` per feature onto ``[0, 1]`` (MinMaxScaler)
``PublicStandardScaler``    ``(x - center) / scale`` with public constants (StandardScaler)
``PublicOneHotEncoder``     integer codes ``0 .. n_levels - 1`` to indicator columns
``RowNormClipper``          rows divided by a public norm bound, clipped to norm 1
==========================  ===============================================================

Each has ``privkit_public_bounds = True``, which the estimators' pipeline check reads.

.. versionadded:: 0.2.0
.. versionchanged:: 0.3.0
   Clipping is silent, codes outside the levels are the all-zero indicator, non-finite
   values pass through: no ``clip`` parameter, no ``ClippedValuesWarning``, no
   ``n_clipped_``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check

from ._bounds import row_factors
from ._private_rows import private_rows

__all__ = [
    "PublicOneHotEncoder",
    "PublicRangeScaler",
    "PublicStandardScaler",
    "RowNormClipper",
]


def _vector(name: str, value: Any, d: int, owner: str) -> NDArray[np.float64]:
    array = np.broadcast_to(np.asarray(value, dtype=np.float64), (d,)) if np.ndim(
        value) == 0 else np.asarray(value, dtype=np.float64)
    if array.shape != (d,) or not np.all(np.isfinite(array)):
        raise check.fail(name, value, f"a finite number or {d} finite numbers (one per "
                         "feature)", owner)
    return np.array(array)


def _read_rows(estimator: Any, X: Any, *, reset: bool, sparse: bool = False) -> Any:
    """Rows that may be private (a transform maps the training rows), read by
    :func:`~privkit.algorithms._private_rows.private_rows`: schema checked, values never
    (an entry that is not a number becomes NaN, passed through for the estimator's own
    rule); on ``transform`` the columns must be those seen by ``fit``."""
    owner = type(estimator).__name__
    rows = private_rows(X, owner=owner, estimator=estimator if reset else None,
                        sparse=sparse)
    if not reset:
        check.withheld(lambda: validate_data(estimator, X if hasattr(X, "columns") else rows,
                                             reset=False, skip_check_array=True),
                       "X", f"a 2-D array of real numbers with {estimator.n_features_in_} "
                       "columns", owner)
    return rows


class _PublicTransformer(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    privkit_public_bounds = True

    def fit(self, X: Any, y: Any = None) -> Any:
        """Checks the columns and the parameters; learns nothing from the values."""
        X = _read_rows(self, X, reset=True)
        self._fit_parameters(X.shape[1])
        return self

    def _rows(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        out: NDArray[np.float64] = _read_rows(self, X, reset=False)
        return out

    def _fit_parameters(self, d: int) -> None:
        """Validates the public parameters for ``d`` columns once and stores them as
        fitted arrays (``transform`` uses those, so it does not validate again)."""
        raise NotImplementedError

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.input_tags.allow_nan = True  # passed through, for the estimator's own rule
        return tags


def _clip_values(Z: NDArray[np.float64], low: NDArray[np.float64],
                 high: NDArray[np.float64]) -> NDArray[np.float64]:
    """Finite values clipped onto ``[low, high]``, silently; non-finite values kept."""
    clipped: NDArray[np.float64] = np.where(np.isfinite(Z), np.clip(Z, low, high), Z)
    return clipped


class PublicRangeScaler(_PublicTransformer):
    """Maps each feature's public range ``[lower, upper]`` onto ``[0, 1]``.

    Parameters
    ----------
    lower, upper : float or array of floats (one per feature)
        Public bounds, declared before seeing the data (a schema, a sensor's range, a
        census top-code), with ``lower < upper``.

    Public and private
    ------------------
    Public: the bounds and the number of features. Finite values outside the range are
    clipped onto it, silently; non-finite values stay non-finite (see the module
    docstring).
    """

    def __init__(self, lower: Any = 0.0, upper: Any = 1.0) -> None:
        self.lower = lower
        self.upper = upper

    def _fit_parameters(self, d: int) -> None:
        owner = type(self).__name__
        low = _vector("lower", self.lower, d, owner)
        high = _vector("upper", self.upper, d, owner)
        if np.any(high <= low):
            raise check.fail("upper", self.upper, "above lower in every feature", owner)
        self.lower_, self.upper_ = low, high

    def transform(self, X: Any) -> NDArray[np.float64]:
        X = self._rows(X)
        low, high = self.lower_, self.upper_
        return (_clip_values(X, low, high) - low) / (high - low)

    def inverse_transform(self, X: Any) -> NDArray[np.float64]:
        X = self._rows(X)
        out: NDArray[np.float64] = X * (self.upper_ - self.lower_) + self.lower_
        return out


class PublicStandardScaler(_PublicTransformer):
    """``(x - center) / scale`` with public constants (a published reference mean and
    spread, not the training rows'); optionally clipped to ``[-bound, bound]`` first
    in standardised units.

    Parameters
    ----------
    center : float or array, default 0
    scale : float or array (> 0), default 1
    bound : float or None, default None
        If given, finite standardised values are clipped to ``[-bound, bound]``, silently.

    Public and private
    ------------------
    Public: the constants, the bound and the number of features. Non-finite values stay
    non-finite (see the module docstring).
    """

    def __init__(self, center: Any = 0.0, scale: Any = 1.0, *,
                 bound: float | None = None) -> None:
        self.center = center
        self.scale = scale
        self.bound = bound

    def _fit_parameters(self, d: int) -> None:
        owner = type(self).__name__
        center = _vector("center", self.center, d, owner)
        scale = _vector("scale", self.scale, d, owner)
        if np.any(scale <= 0):
            raise check.fail("scale", self.scale, "positive in every feature", owner)
        if self.bound is not None:
            check.positive_finite("bound", self.bound, owner)
        self.center_, self.scale_ = center, scale

    def transform(self, X: Any) -> NDArray[np.float64]:
        X = self._rows(X)
        Z: NDArray[np.float64] = (X - self.center_) / self.scale_
        if self.bound is None:
            return Z
        limit = np.full(X.shape[1], float(self.bound))
        return _clip_values(Z, -limit, limit)


class PublicOneHotEncoder(_PublicTransformer):
    """Integer codes ``0 .. n_levels[j] - 1`` of each column to indicator columns, with
    the numbers of levels declared in advance (a public schema).

    Parameters
    ----------
    n_levels : int or list of int (one per column)

    Public and private
    ------------------
    Public: the numbers of levels. A finite value that is not one of the declared codes
    (negative, too large, not an integer) has no level: its indicators are all zero, the
    stated neutral value, silently. A non-finite value gives NaN indicators, so the
    estimator downstream applies its own rule (see the module docstring).
    """

    def __init__(self, n_levels: Any = 2) -> None:
        self.n_levels = n_levels

    def _fit_parameters(self, d: int) -> None:
        owner = type(self).__name__
        raw = [self.n_levels] * d if np.ndim(self.n_levels) == 0 else list(self.n_levels)
        if len(raw) != d:
            raise check.fail("n_levels", self.n_levels, f"one count per column ({d})", owner)
        self.levels_ = [check.positive_int("n_levels", v, owner) for v in raw]

    def transform(self, X: Any) -> NDArray[np.float64]:
        X = self._rows(X)
        parts = []
        for j, count in enumerate(self.levels_):
            codes = X[:, j]
            finite = np.isfinite(codes)
            valid = finite & (codes >= 0) & (codes < count) & (codes == np.round(codes))
            block = np.zeros((X.shape[0], count))
            block[np.flatnonzero(valid), codes[valid].astype(np.int64)] = 1.0
            block[~finite] = np.nan
            parts.append(block)
        return np.hstack(parts)


class RowNormClipper(_PublicTransformer):
    """Rows divided by a public bound on their L2 norm, so that every row has norm at
    most 1; rows beyond it are clipped onto it. Sparse input stays sparse.

    Public and private
    ------------------
    Public: the bound and the number of features. Clipping is silent; a row with a
    non-finite entry is only divided by the bound, so it stays non-finite (see the module
    docstring).
    """

    def __init__(self, row_norm_bound: float = 1.0) -> None:
        self.row_norm_bound = row_norm_bound

    def fit(self, X: Any, y: Any = None) -> RowNormClipper:
        X = _read_rows(self, X, reset=True, sparse=True)
        self._fit_parameters(X.shape[1])
        return self

    def _fit_parameters(self, d: int) -> None:
        check.positive_finite("row_norm_bound", self.row_norm_bound, type(self).__name__)

    def transform(self, X: Any) -> Any:
        import scipy.sparse as sp

        check_is_fitted(self)
        X = _read_rows(self, X, reset=False, sparse=True)
        factors, _ = row_factors(X, float(self.row_norm_bound))
        if sp.issparse(X):
            return sp.csr_matrix(sp.diags(factors) @ X)
        scaled: NDArray[np.float64] = X * factors[:, None]
        return scaled

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
