"""Preprocessing that uses public bounds only, so it costs no privacy.

scikit-learn's scalers learn a mean, a scale or a range from the rows they are fitted on;
in front of a private estimator those statistics of the private data are released with
the model and no privkit guarantee covers them (privkit's estimators warn when they are
fitted in such a pipeline: :func:`privkit.algorithms._bounds.warn_if_preprocessed`).
The transformers here take every constant as a parameter, declared before any data is
seen; ``fit`` only checks the number of columns. Values outside the declared bounds are
clipped onto them with a :class:`ClippedValuesWarning` that says how many (``clip=True``)
or refused (``clip=False``).

==========================  ===============================================================
``PublicRangeScaler``       ``[lower, upper]`` per feature onto ``[0, 1]`` (MinMaxScaler)
``PublicStandardScaler``    ``(x - center) / scale`` with public constants (StandardScaler)
``PublicOneHotEncoder``     integer codes ``0 .. n_levels - 1`` to indicator columns
``RowNormClipper``          rows divided by a public norm bound, clipped to norm 1
==========================  ===============================================================

Each has ``privkit_public_bounds = True``, which the estimators' pipeline check reads.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from privkit import _validation as check

from ._bounds import ClippedRowsWarning, clipped_rows

__all__ = [
    "ClippedValuesWarning",
    "PublicOneHotEncoder",
    "PublicRangeScaler",
    "PublicStandardScaler",
    "RowNormClipper",
]


class ClippedValuesWarning(ClippedRowsWarning):
    """Values outside declared public bounds were clipped onto them.

    .. versionadded:: 0.2.0
    """


def _vector(name: str, value: Any, d: int, owner: str) -> NDArray[np.float64]:
    array = np.broadcast_to(np.asarray(value, dtype=np.float64), (d,)) if np.ndim(
        value) == 0 else np.asarray(value, dtype=np.float64)
    if array.shape != (d,) or not np.all(np.isfinite(array)):
        raise check.fail(name, value, f"a finite number or {d} finite numbers (one per "
                         "feature)", owner)
    return np.array(array)


class _PublicTransformer(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    privkit_public_bounds = True

    def fit(self, X: Any, y: Any = None) -> Any:
        """Checks the columns and the parameters; learns nothing from the values."""
        X = validate_data(self, X, dtype=np.float64)
        self._fit_parameters(X.shape[1])
        self.n_clipped_ = 0
        return self

    def _fit_parameters(self, d: int) -> None:
        """Validates the public parameters for ``d`` columns once and stores them as
        fitted arrays (``transform`` uses those, so it does not validate again)."""
        raise NotImplementedError

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        return tags


def _clip_values(Z: NDArray[np.float64], low: NDArray[np.float64], high: NDArray[np.float64],
                 clip: bool, owner: str) -> NDArray[np.float64]:
    outside = (low > Z) | (high < Z)
    if np.any(outside):
        if not clip:
            row, col = np.argwhere(outside)[0]
            raise check.fail("X", f"value {Z[row, col]:.6g} in column {col}",
                             f"values within the declared bounds [{low[col]:.6g}, "
                             f"{high[col]:.6g}]", owner,
                             "clip them (clip=True) or widen the bounds")
        warnings.warn(f"{owner}: {int(outside.sum())} values in "
                      f"{int(outside.any(axis=1).sum())} of {Z.shape[0]} rows were outside "
                      "the declared bounds and were clipped onto them", ClippedValuesWarning,
                      stacklevel=3)
    clipped: NDArray[np.float64] = np.clip(Z, low, high)
    return clipped


class PublicRangeScaler(_PublicTransformer):
    """Maps each feature's public range ``[lower, upper]`` onto ``[0, 1]``.

    Parameters
    ----------
    lower, upper : float or array of floats (one per feature)
        Public bounds, declared before seeing the data (a schema, a sensor's range, a
        census top-code), with ``lower < upper``.
    clip : bool, default True
        Values outside are clipped onto the range with a :class:`ClippedValuesWarning`
        naming how many, or refused (``clip=False``).
    """

    def __init__(self, lower: Any = 0.0, upper: Any = 1.0, *, clip: bool = True) -> None:
        self.lower = lower
        self.upper = upper
        self.clip = clip

    def _fit_parameters(self, d: int) -> None:
        owner = type(self).__name__
        low = _vector("lower", self.lower, d, owner)
        high = _vector("upper", self.upper, d, owner)
        if np.any(high <= low):
            raise check.fail("upper", self.upper, "above lower in every feature", owner)
        check.instance("clip", self.clip, bool, owner)
        self.lower_, self.upper_ = low, high

    def transform(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        low, high = self.lower_, self.upper_
        return (_clip_values(X, low, high, self.clip, type(self).__name__) - low) / (high - low)

    def inverse_transform(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        out: NDArray[np.float64] = (np.asarray(X, dtype=np.float64) * (self.upper_ - self.lower_)
                                    + self.lower_)
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
        If given, standardised values are clipped to ``[-bound, bound]``
        (``clip=True``, with a warning) or refused.
    clip : bool, default True
    """

    def __init__(self, center: Any = 0.0, scale: Any = 1.0, *, bound: float | None = None,
                 clip: bool = True) -> None:
        self.center = center
        self.scale = scale
        self.bound = bound
        self.clip = clip

    def _fit_parameters(self, d: int) -> None:
        owner = type(self).__name__
        center = _vector("center", self.center, d, owner)
        scale = _vector("scale", self.scale, d, owner)
        if np.any(scale <= 0):
            raise check.fail("scale", self.scale, "positive in every feature", owner)
        if self.bound is not None:
            check.positive_finite("bound", self.bound, owner)
        check.instance("clip", self.clip, bool, owner)
        self.center_, self.scale_ = center, scale

    def transform(self, X: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Z: NDArray[np.float64] = (X - self.center_) / self.scale_
        if self.bound is None:
            return Z
        limit = np.full(X.shape[1], float(self.bound))
        return _clip_values(Z, -limit, limit, self.clip, type(self).__name__)


class PublicOneHotEncoder(_PublicTransformer):
    """Integer codes ``0 .. n_levels[j] - 1`` of each column to indicator columns, with
    the numbers of levels declared in advance (a public schema). Codes outside are
    refused: there is no level to clip them to.

    Parameters
    ----------
    n_levels : int or list of int (one per column)
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
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        parts = []
        for j, count in enumerate(self.levels_):
            codes = X[:, j]
            if np.any((codes < 0) | (codes >= count) | (codes != np.round(codes))):
                bad = codes[(codes < 0) | (codes >= count) | (codes != np.round(codes))][0]
                raise check.fail("X", f"code {bad:g} in column {j}",
                                 f"an integer code in 0..{count - 1}", type(self).__name__)
            parts.append(np.eye(count)[codes.astype(int)])
        return np.hstack(parts)


class RowNormClipper(_PublicTransformer):
    """Rows divided by a public bound on their L2 norm, so that every row has norm at
    most 1; rows beyond it are clipped onto it (with a warning naming how many) or
    refused. Sparse input stays sparse."""

    def __init__(self, row_norm_bound: float = 1.0, *, clip: bool = True) -> None:
        self.row_norm_bound = row_norm_bound
        self.clip = clip

    def fit(self, X: Any, y: Any = None) -> RowNormClipper:
        X = validate_data(self, X, dtype=np.float64, accept_sparse="csr")
        self._fit_parameters(X.shape[1])
        return self

    def _fit_parameters(self, d: int) -> None:
        owner = type(self).__name__
        check.positive_finite("row_norm_bound", self.row_norm_bound, owner)
        check.instance("clip", self.clip, bool, owner)

    def transform(self, X: Any) -> Any:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False, accept_sparse="csr")
        return clipped_rows(X, self.row_norm_bound, clip=self.clip, owner=type(self).__name__)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
