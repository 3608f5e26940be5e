"""The aggregations a private query computes per partition, and the bounded statistics
each one needs.

An aggregation is a frozen value of public parameters: the column it reads and the
public bounds its values are clamped to. Each one asks the engine for *statistics* of the
bounded rows of a partition (the row count, a sum of clamped values, a sum of centred
values or of their squares, the counts of equal-width buckets), and turns their noisy
releases into its answer by post-processing. Two aggregations that need the same
statistic share one release (a mean and a variance of one column share the count and the
centred sum).

Sensitivities are those of one privacy unit's bounded rows: at most ``max_rows`` rows in
each of at most ``max_partitions`` partitions (:class:`~.query.Query`), every value
clamped to ``[lower, upper]``.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

__all__ = ["Aggregation", "Count", "Histogram", "Mean", "Quantile", "Statistic", "Sum",
           "Variance"]


@attrs.frozen
class Statistic:
    """One exact per-partition statistic of the bounded rows, released once per query.

    ``kind`` is ``"count"`` (rows), ``"sum"`` (clamped values), ``"csum"`` (values minus
    the midpoint of the bounds), ``"csumsq"`` (their squares) or ``"buckets"`` (counts of
    ``bins`` equal-width buckets of ``[lower, upper]``); its share of the aggregation
    budget is ``WEIGHTS[kind]`` (a public constant per kind).
    """

    kind: str
    column: str | None = None
    lower: float = 0.0
    upper: float = 0.0
    bins: int = 0

    @property
    def name(self) -> str:
        """The statistic's column in the engines' exact table."""
        if self.kind == "count":
            return "__count"
        suffix = f"{self.column}:{self.lower!r}:{self.upper!r}"
        return f"__{self.kind}:{suffix}" + (f":{self.bins}" if self.bins else "")

    @property
    def midpoint(self) -> float:
        return 0.5 * (self.lower + self.upper)

    @property
    def half_range(self) -> float:
        return 0.5 * (self.upper - self.lower)

    def row_bound(self) -> float:
        """How far one row moves this statistic, in the L1 norm over its coordinates."""
        if self.kind in ("count", "buckets"):
            return 1.0
        if self.kind == "sum":
            return max(abs(self.lower), abs(self.upper))
        if self.kind == "csum":
            return self.half_range
        return self.half_range**2  # csumsq

    @property
    def integer_valued(self) -> bool:
        """Whether every possible value is an integer (a public fact: counts)."""
        return self.kind in ("count", "buckets")


#: The share of the aggregation budget each statistic gets, relative to the others: a
#: public constant. A mean's error is dominated by its centred sum (the count's noise is
#: multiplied by the distance of the mean from the midpoint only), so centred sums get
#: twice a count's share: for a mean a third of the way from the midpoint to a bound,
#: the split that minimises the variance of ``S / C`` is about 2.2 : 1.
WEIGHTS = {"count": 1.0, "sum": 1.0, "csum": 2.0, "csumsq": 2.0, "buckets": 1.0}


def _bounds(lower: Any, upper: Any, owner: str) -> tuple[float, float]:
    lo = check.real("lower", lower, owner)
    hi = check.real("upper", upper, owner)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise check.fail("upper", upper, f"finite and greater than lower={lo!r}", owner,
                         "the bounds are public: choose them from what the column means, "
                         "never from the data")
    return lo, hi


def _column(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise check.fail("column", value, "a non-empty column name", "an aggregation")
    return value


def _bins(value: Any, owner: str) -> int:
    bins = check.positive_int("bins", value, owner)
    if bins < 2 or bins > 100_000:
        raise check.fail("bins", value, "an integer in [2, 100000]", owner)
    return bins


class Aggregation:
    """Base of the aggregations: the statistics it needs and its post-processing."""

    __slots__ = ()

    def statistics(self) -> tuple[Statistic, ...]:
        """The exact statistics the engine computes for this aggregation."""
        raise NotImplementedError

    def releases(self) -> tuple[Any, ...]:
        """The releases its answer is computed from: statistics released with additive
        noise (by default, all of :meth:`statistics`), or the aggregation itself where it
        runs its own mechanism (a quantile's selection)."""
        return self.statistics()

    @property
    def columns(self) -> tuple[str, ...]:
        """The value columns it reads (a row with a non-finite value there is dropped)."""
        return ()

    def output_names(self, name: str) -> tuple[str, ...]:
        """The released table's columns for this aggregation named ``name``."""
        return (name,)

    def finish(self, released: dict[Any, NDArray[np.float64]]) -> NDArray[np.float64]:
        """The answer from its releases (post-processing); shape
        ``(..., n_partitions)`` or ``(..., n_partitions, n_outputs)``."""
        raise NotImplementedError


@attrs.frozen
class Count(Aggregation):
    """The number of rows per partition (after contribution bounding), with Laplace noise.

    The released count is an integer; it may be negative (clip it if you like: that is
    post-processing).
    """

    def statistics(self) -> tuple[Statistic, ...]:
        return (Statistic("count"),)

    def finish(self, released: dict[Any, NDArray[np.float64]]) -> NDArray[np.float64]:
        return released[Statistic("count")]


@attrs.frozen
class Sum(Aggregation):
    """The sum of a column's values clamped to ``[lower, upper]``, with Laplace noise of
    L1 sensitivity ``max_partitions * max_rows * max(|lower|, |upper|)``."""

    column: str = attrs.field(converter=_column)
    lower: float = attrs.field(kw_only=True)
    upper: float = attrs.field(kw_only=True)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "lower", _bounds(self.lower, self.upper, "Sum")[0])
        object.__setattr__(self, "upper", float(self.upper))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def statistics(self) -> tuple[Statistic, ...]:
        return (Statistic("sum", self.column, self.lower, self.upper),)

    def finish(self, released: dict[Any, NDArray[np.float64]]) -> NDArray[np.float64]:
        return released[self.statistics()[0]]


def _moments(column: str, lower: float, upper: float, squares: bool) -> tuple[Statistic, ...]:
    found = (Statistic("count"), Statistic("csum", column, lower, upper))
    return (*found, Statistic("csumsq", column, lower, upper)) if squares else found


@attrs.frozen
class Mean(Aggregation):
    """The mean of a column clamped to ``[lower, upper]``: ``m + S / max(C, 1)`` clamped
    to the bounds, from a noisy count ``C`` and a noisy sum ``S`` of the values minus the
    midpoint ``m`` (the normalised sum of PipelineDP and of Google's library: it moves by
    half the range per row, not by the largest magnitude)."""

    column: str = attrs.field(converter=_column)
    lower: float = attrs.field(kw_only=True)
    upper: float = attrs.field(kw_only=True)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "lower", _bounds(self.lower, self.upper, "Mean")[0])
        object.__setattr__(self, "upper", float(self.upper))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def statistics(self) -> tuple[Statistic, ...]:
        return _moments(self.column, self.lower, self.upper, squares=False)

    def finish(self, released: dict[Any, NDArray[np.float64]]) -> NDArray[np.float64]:
        count, csum = (released[s] for s in self.statistics())
        mid = 0.5 * (self.lower + self.upper)
        return np.clip(mid + csum / np.maximum(count, 1.0), self.lower, self.upper)


@attrs.frozen
class Variance(Aggregation):
    """The (population) variance of a column clamped to ``[lower, upper]``, from a noisy
    count, centred sum and centred sum of squares: ``Q / C - (S / C)^2`` with
    ``C = max(count, 1)``, clamped to ``[0, ((upper - lower) / 2)^2]``."""

    column: str = attrs.field(converter=_column)
    lower: float = attrs.field(kw_only=True)
    upper: float = attrs.field(kw_only=True)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "lower", _bounds(self.lower, self.upper, "Variance")[0])
        object.__setattr__(self, "upper", float(self.upper))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def statistics(self) -> tuple[Statistic, ...]:
        return _moments(self.column, self.lower, self.upper, squares=True)

    def finish(self, released: dict[Any, NDArray[np.float64]]) -> NDArray[np.float64]:
        count, csum, csumsq = (released[s] for s in self.statistics())
        c = np.maximum(count, 1.0)
        half = 0.5 * (self.upper - self.lower)
        return np.clip(csumsq / c - (csum / c) ** 2, 0.0, half * half)


@attrs.frozen
class Histogram(Aggregation):
    """Counts of a column's values in ``bins`` equal-width buckets of ``[lower, upper]``
    (values clamped first, so the end buckets also hold what lies beyond), with Laplace
    noise. Released as ``bins`` columns ``name[0]``, ..., ``name[bins-1]``."""

    column: str = attrs.field(converter=_column)
    lower: float = attrs.field(kw_only=True)
    upper: float = attrs.field(kw_only=True)
    bins: int = attrs.field(kw_only=True, default=10)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "lower", _bounds(self.lower, self.upper, "Histogram")[0])
        object.__setattr__(self, "upper", float(self.upper))
        object.__setattr__(self, "bins", _bins(self.bins, "Histogram"))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def statistics(self) -> tuple[Statistic, ...]:
        return (Statistic("buckets", self.column, self.lower, self.upper, self.bins),)

    def output_names(self, name: str) -> tuple[str, ...]:
        return tuple(f"{name}[{j}]" for j in range(self.bins))

    def finish(self, released: dict[Any, NDArray[np.float64]]) -> NDArray[np.float64]:
        return released[self.statistics()[0]]


def _alpha(value: Any) -> float:
    a = check.real("quantile", value, "Quantile")
    if not 0.0 < a < 1.0:
        raise check.fail("quantile", value, "in (0, 1)", "Quantile")
    return a


@attrs.frozen
class Quantile(Aggregation):
    """The ``quantile`` (in (0, 1)) of a column clamped to ``[lower, upper]``, chosen
    among the public candidates ``lower + j (upper - lower) / bins``, ``j = 0..bins``, by
    the exponential mechanism (McSherry, Talwar 2007) with the rank utility of Smith
    (2011, "Privacy-preserving statistical estimation with optimal convergence rates").

    Notes
    -----
    With ``L_j`` the number of the partition's bounded rows whose bucket (of ``bins``
    equal-width buckets) lies below candidate ``j``, and ``n`` their number, candidate
    ``j``'s utility is ``u_j = -|L_j - alpha n|``. One privacy unit adds ``m' <= m`` rows
    to a partition (``max_rows``), which moves ``L_j - alpha n`` by ``a_j - alpha m'``
    with ``0 <= a_j <= m'``: each utility moves by at most ``max(alpha, 1 - alpha) m``
    (its L-infinity sensitivity, checked exhaustively in the test suite, where the bound
    is attained), and privkit's :class:`~privkit.mechanisms.Exponential` with that
    sensitivity is ``2 max(alpha, 1 - alpha) m / noise_scale``-DP and bounded range
    (McSherry, Talwar 2007, Theorem 6; Durfee, Rogers 2019). The answer is one of the
    public candidates, so no floating-point bits depend on the data. Each partition is
    one selection.
    """

    column: str = attrs.field(converter=_column)
    quantile: float = attrs.field(converter=_alpha)
    lower: float = attrs.field(kw_only=True)
    upper: float = attrs.field(kw_only=True)
    bins: int = attrs.field(kw_only=True, default=1000)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "lower", _bounds(self.lower, self.upper, "Quantile")[0])
        object.__setattr__(self, "upper", float(self.upper))
        object.__setattr__(self, "bins", _bins(self.bins, "Quantile"))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def statistics(self) -> tuple[Statistic, ...]:
        return (Statistic("buckets", self.column, self.lower, self.upper, self.bins),)

    def releases(self) -> tuple[Any, ...]:
        return (self,)

    @property
    def candidates(self) -> NDArray[np.float64]:
        """The public candidates, ``bins + 1`` equally spaced points of the bounds."""
        return np.linspace(self.lower, self.upper, self.bins + 1)

    @property
    def row_sensitivity(self) -> float:
        """How far one row moves any utility: ``max(alpha, 1 - alpha)``."""
        return max(self.quantile, 1.0 - self.quantile)

    def utilities(self, buckets: NDArray[np.int64]) -> NDArray[np.float64]:
        """``u_j = -|L_j - alpha n|`` per partition (rows) and candidate (columns) from the
        exact bucket counts ``(n_partitions, bins)``."""
        below = np.zeros((buckets.shape[0], self.bins + 1))
        np.cumsum(buckets, axis=1, out=below[:, 1:])
        n = below[:, -1:]
        return -np.abs(below - self.quantile * n)

    def finish(self, released: dict[Any, NDArray[np.float64]]) -> NDArray[np.float64]:
        chosen = released[self].astype(np.int64)
        return self.candidates[chosen]
