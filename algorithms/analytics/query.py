"""A private grouped query: contribution bounding, partition selection and aggregations,
composed from privkit's blocks and run by a DataFrame engine.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import attrs
import pandas as pd

from privkit import _validation as check
from privkit.accountants import AccountingResult, tightest
from privkit.filter import BudgetFilter
from privkit.mechanisms import Exponential, Laplace, StabilityHistogram
from privkit.neighbouring import Neighbouring
from privkit.plan import Block, Repeat, Sequential
from privkit.rng import RNGLike, as_generator
from privkit.shared_filter import SharedBudgetFilter

from ._exact import Bounding, ExactTable, Measure, assemble
from ._release import release_columns
from .aggregations import WEIGHTS, Aggregation, Quantile, Statistic

__all__ = ["SELECTION_SHARE", "Query"]

#: Share of epsilon that private partition selection spends (all of delta goes to it: the
#: aggregations are pure). A public constant; with public partitions it is not spent.
SELECTION_SHARE = 0.25
#: Weight of a quantile's selections in the aggregation budget (see ``WEIGHTS``).
QUANTILE_WEIGHT = 1.0
#: A summed statistic is released in integer units ``q = row_bound * 2^-b``, with ``b``
#: at most this many bits (finer costs nothing but range; see :meth:`Query.measure`).
UNIT_BITS = 20
_A = Neighbouring.ADD_REMOVE
_OWNER = "Query"


def _names(value: Any, name: str) -> tuple[str, ...]:
    items = (value,) if isinstance(value, str) else value
    try:
        names = tuple(items)
    except TypeError:
        names = ()
    if not names or not all(isinstance(c, str) and c for c in names) \
            or len(set(names)) != len(names):
        raise check.fail(name, value, "a column name or a list of distinct column names",
                         _OWNER)
    return names


def _aggregations(value: Any) -> tuple[tuple[str, Aggregation], ...]:
    if not isinstance(value, Mapping):
        raise check.fail("aggregations", value, "a mapping of output names to "
                         "aggregations (Count(), Mean(...), ...)", _OWNER)
    for name, aggregation in value.items():
        if not isinstance(name, str) or not name or not isinstance(aggregation, Aggregation):
            raise check.fail("aggregations", value, "a mapping of non-empty names to "
                             "privkit aggregations", _OWNER)
    return tuple(value.items())


def _partitions(value: Any) -> tuple[Any, ...] | None:
    if value is None:
        return None
    try:
        keys = tuple(dict.fromkeys(value))
    except TypeError as exc:
        raise check.fail("partitions", value, "None or a collection of hashable keys "
                         "(tuples when grouping by several columns)", _OWNER) from exc
    if not keys:
        raise check.fail("partitions", value, "None or a non-empty collection of keys",
                         _OWNER)
    return keys


def _unit(value: Any) -> str:
    return _names(value, "privacy_unit")[0]


def _by(value: Any) -> tuple[str, ...]:
    return _names(value, "by")


def _epsilon(value: Any) -> float:
    return check.positive_finite("epsilon", value, _OWNER)


def _delta(value: Any) -> float:
    return check.delta("delta", value, _OWNER)


def _max_partitions(value: Any) -> int:
    return check.positive_int("max_partitions", value, _OWNER)


def _max_rows(value: Any) -> int:
    return check.positive_int("max_rows", value, _OWNER)


@functools.lru_cache(maxsize=256)
def _tightest(plan: Block, delta: float) -> AccountingResult:
    return tightest(plan, delta=delta)


@attrs.frozen(kw_only=True)
class Query:
    """A differentially private grouped query over a table where one privacy unit (a
    person, a device) may own many rows.

    Parameters
    ----------
    privacy_unit : str
        The column identifying who is protected: neighbouring tables differ by all the
        rows of one privacy unit (add-remove; ``Neighbouring.ADD_REMOVE``).
    by : str or list of str
        The partition (group-by) key columns.
    aggregations : mapping of str to Aggregation
        Output column name to :class:`Count`, :class:`Sum`, :class:`Mean`,
        :class:`Variance`, :class:`Quantile` or :class:`Histogram`. May be empty when
        ``partitions`` is ``None``: the query then releases the set of partitions only.
    epsilon, delta : float
        The budget of the whole query. ``delta`` is spent by private partition selection
        only, and must be > 0 when ``partitions`` is ``None``.
    max_partitions : int
        At most this many partitions are kept per privacy unit (chosen at random among
        those it has rows in).
    max_rows : int
        At most this many rows are kept per privacy unit and partition (at random).
    partitions : collection of keys, optional
        The public partition keys (tuples when ``by`` has several columns). Declared: the
        released table has exactly these rows, in sorted order, and rows with other keys
        are dropped. ``None``: the released partitions are chosen privately by a
        stability histogram (Korolova et al. 2009; Wilson et al. 2020, "Differentially
        private SQL with bounded user contribution") on the number of units per
        partition.

    Public and private
    ------------------
    Public: the column names, the bounds of each aggregation, ``max_partitions``,
    ``max_rows``, ``epsilon``, ``delta`` and, when declared, ``partitions``; the schema
    (that the columns exist and are numeric) is checked before any data is read. Private:
    the rows, their number, the set of partitions that occur (unless declared) and the
    number of units. Per-row public rules (never refused, never reported): a row with a
    missing unit or key, or a missing or non-finite value in a column the query reads, is
    dropped; a row whose key is not declared is dropped; values are clamped to their
    bounds. Nothing in an error message, a warning or the output's shape depends on the
    rows except through the released noise.

    Notes
    -----
    The plan (:attr:`plan`, accounted before any data is touched):

    * selection (partitions not declared): ``Repeat(StabilityHistogram, max_partitions)``,
      each ``(eps_s / k, delta / k)``-DP on one partition's unit count (a unit adds 1 to
      at most ``k`` partitions; the released set is a product over partitions, so its
      privacy loss is the sum of at most ``k`` of theirs), ``eps_s = SELECTION_SHARE *
      epsilon``;
    * each summed statistic (count, sum, centred sum, centred sum of squares) and each
      histogram: one ``Laplace`` release of the vector over partitions with L1
      sensitivity ``k * m * row_bound``;
    * each quantile: ``Repeat(Exponential, k)``, each selection ``(eps_q / k)``-DP.

    The rest of epsilon is split in proportion to :data:`WEIGHTS` (and
    :data:`QUANTILE_WEIGHT`). :attr:`guarantee` is privkit's tightest accountant on that
    plan. ``run`` spends the plan on a ``budget_filter`` before it reads the data.
    """

    privacy_unit: str = attrs.field(converter=_unit)
    by: tuple[str, ...] = attrs.field(converter=_by)
    aggregations: tuple[tuple[str, Aggregation], ...] = attrs.field(converter=_aggregations)
    epsilon: float = attrs.field(converter=_epsilon)
    delta: float = attrs.field(default=0.0, converter=_delta)
    max_partitions: int = attrs.field(default=1, converter=_max_partitions)
    max_rows: int = attrs.field(default=1, converter=_max_rows)
    partitions: tuple[Any, ...] | None = attrs.field(default=None, converter=_partitions)

    def __attrs_post_init__(self) -> None:
        if self.partitions is None and self.delta == 0.0:
            raise check.fail("delta", self.delta, "> 0 when partitions are not declared",
                             _OWNER, "private partition selection needs delta > 0; "
                             "declare the public keys with partitions=[...] for pure DP")
        if not self.aggregations and self.partitions is not None:
            raise check.fail("aggregations", {}, "non-empty when partitions are declared",
                             _OWNER, "there would be nothing to release")
        names = [o for n, a in self.aggregations for o in a.output_names(n)]
        clash = set(names) & set(self.by) or len(set(names)) != len(names)
        if clash:
            raise check.fail("aggregations", [n for n, _ in self.aggregations],
                             f"output names distinct from each other and from by={self.by}",
                             _OWNER)
        for key, eps in self._epsilons()[1].items():
            km = self.max_partitions * self.max_rows
            if not isinstance(key, Quantile) and not (
                    eps >= 2.0**-17 and km <= 2.0**30 * eps and km <= 2.0**37 * eps * eps):
                raise check.fail("epsilon", self.epsilon, "large enough that each noisy "
                                 "statistic gets epsilon >= max(2^-17, k m 2^-30, "
                                 f"sqrt(k m 2^-37)) with k m = {km}", _OWNER,
                                 "below that no floating-point-safe release is exact")
        if self.partitions is not None and len(self.by) > 1 and not all(
                isinstance(k, tuple) and len(k) == len(self.by) for k in self.partitions):
            raise check.fail("partitions", self.partitions[:3], f"tuples of {len(self.by)} "
                             "keys (one per column of by)", _OWNER)

    # -- what the query releases, and at what cost --------------------------------------

    @property
    def statistics(self) -> tuple[Statistic, ...]:
        """The exact statistics the engine computes, each once."""
        return tuple(dict.fromkeys(s for _, a in self.aggregations for s in a.statistics()))

    @property
    def releases(self) -> tuple[Any, ...]:
        """The noisy releases, each once: statistics, and quantiles' selections."""
        return tuple(dict.fromkeys(r for _, a in self.aggregations for r in a.releases()))

    def _epsilons(self) -> tuple[float, dict[Any, float]]:
        share = (1.0 if not self.aggregations else SELECTION_SHARE) \
            if self.partitions is None else 0.0
        weights = {r: QUANTILE_WEIGHT if isinstance(r, Quantile) else WEIGHTS[r.kind]
                   for r in self.releases}
        total = sum(weights.values())
        rest = self.epsilon * (1.0 - share)
        return self.epsilon * share, {r: rest * w / total for r, w in weights.items()}

    def measure(self, statistic: Statistic) -> Measure:
        """How the engine computes ``statistic`` per row: for sums, in integer units
        ``q = row_bound * 2^-b`` with the largest ``b <= UNIT_BITS`` that keeps the noise
        below ``2^30`` units and its grid exact (``_grid.py``: integer-valued releases
        need ``noise_scale <= 2^38 / noise_scale`` in units of the sensitivity); rounding
        each row to the unit is a public per-row map, and then the sum's sensitivity is
        exactly ``k m 2^b`` units."""
        if statistic.kind in ("count", "buckets"):
            return Measure(statistic.name, statistic.kind, statistic.column, statistic.lower,
                           statistic.upper, 1.0, statistic.bins)
        eps = self._epsilons()[1][statistic]
        km = self.max_partitions * self.max_rows
        bits = max(0, min(UNIT_BITS, math.floor(math.log2(2.0**30 * eps / km)),
                          math.floor(math.log2(2.0**37 * eps * eps / km))))
        unit = math.ldexp(statistic.row_bound(), -bits)
        return Measure(statistic.name, statistic.kind, statistic.column, statistic.lower,
                       statistic.upper, unit)

    @property
    def selection_block(self) -> StabilityHistogram | None:
        """The partition selection's mechanism, one per partition (``None`` when the
        partitions are declared)."""
        if self.partitions is not None:
            return None
        eps = self._epsilons()[0] / self.max_partitions
        return StabilityHistogram.for_approx_dp(
            epsilon=eps, delta=self.delta / self.max_partitions, n_classes=1, relation=_A)

    @property
    def blocks(self) -> dict[Any, Laplace | Exponential]:
        """Each release's mechanism (a quantile's: one partition's selection)."""
        found: dict[Any, Laplace | Exponential] = {}
        k, m = self.max_partitions, self.max_rows
        for key, eps in self._epsilons()[1].items():
            if isinstance(key, Quantile):
                found[key] = Exponential.for_epsilon(
                    eps / k, sensitivity=m * key.row_sensitivity, relation=_A)
            else:
                measure = self.measure(key)
                bound = key.row_bound() / measure.unit
                found[key] = Laplace.for_epsilon(eps, sensitivity=k * m * bound, relation=_A)
        return found

    @property
    def plan(self) -> Block:
        """The query's plan, from public parameters only (see the class notes)."""
        k = self.max_partitions
        steps: list[Block] = []
        selection = self.selection_block
        if selection is not None:
            steps.append(selection if k == 1 else Repeat(selection, k))
        for key, block in self.blocks.items():
            steps.append(Repeat(block, k) if isinstance(key, Quantile) and k > 1 else block)
        return steps[0] if len(steps) == 1 else Sequential(*steps)

    @property
    def accounting(self) -> AccountingResult:
        """privkit's tightest accountant on :attr:`plan` at ``delta``."""
        return _tightest(self.plan, self.delta)

    @property
    def guarantee(self) -> Any:
        """The guarantee :attr:`accounting` certifies (the tightest accountant's own)."""
        return self.accounting.guarantee

    # -- running it ---------------------------------------------------------------------

    def bounding(self, salt: int) -> Bounding:
        """What an engine needs to bound and aggregate, with the secret ``salt``."""
        columns = tuple(dict.fromkeys(c for _, a in self.aggregations for c in a.columns))
        keys = None
        if self.partitions is not None:
            rows = [k if isinstance(k, tuple) else (k,) for k in self.partitions]
            keys = pd.DataFrame(rows, columns=list(self.by))
            keys = keys.sort_values(list(self.by), kind="stable").reset_index(drop=True)
        return Bounding(self.privacy_unit, self.by, columns, self.max_partitions,
                        self.max_rows, tuple(self.measure(s) for s in self.statistics),
                        salt, keys)

    def exact(self, data: Any, salt: int) -> ExactTable:
        """The exact statistics of ``data``'s bounded rows (private: not for release)."""
        from ._engines import engine_for

        bounding = self.bounding(salt)
        engine = engine_for(data, self)
        per_partition, buckets = engine(data, bounding)
        return assemble(bounding, per_partition, buckets)

    def run(self, data: Any, *, rng: RNGLike = None,
            budget_filter: BudgetFilter | SharedBudgetFilter | None = None) -> Any:
        """Release the query's answer on ``data``: a table with the key columns and one
        column per aggregation output, one row per released partition, sorted by key.

        ``data`` is a pandas or polars DataFrame (the answer is of the same kind) or a
        Spark DataFrame (the answer is a pandas DataFrame: it is small and public). The
        plan is spent on ``budget_filter`` first; a refusal raises
        :class:`~privkit.BudgetExceededError` before the data is read.
        """
        from ._engines import check_schema, to_kind

        check_schema(data, self)
        if budget_filter is not None:
            check.instance("budget_filter", budget_filter, (BudgetFilter, SharedBudgetFilter),
                           _OWNER)
            budget_filter.spend(self.plan)
        generator = as_generator(rng, owner="Query.run")
        salt = int(generator.integers(0, 2**62))
        exact = self.exact(data, salt)
        selected, columns = release_columns(self, exact, generator)
        table = exact.keys[selected].reset_index(drop=True)
        for name, values in columns.items():
            table[name] = values[selected]
        return to_kind(table, data)
