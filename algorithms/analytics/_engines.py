"""Which engine runs a query, the schema check, and the answer's kind.

The engine is chosen by the type of the data (a public fact): pandas, polars or Spark
DataFrames. Each engine's module is imported only when its kind of data arrives, so
``import privkit.algorithms.analytics`` needs neither polars nor pyspark.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

from privkit import _validation as check

if TYPE_CHECKING:
    from privkit.algorithms.analytics.query import Query

__all__ = ["check_schema", "engine_for", "kind_of", "to_kind"]

Engine = Callable[[Any, Any], tuple[pd.DataFrame, dict[str, pd.DataFrame]]]


def kind_of(data: Any) -> str:
    """``"pandas"``, ``"polars"`` or ``"spark"``, from the data's type; anything else
    is refused (naming its type, a public fact)."""
    for cls in type(data).__mro__:
        module, name = cls.__module__, cls.__name__
        if module.startswith("pandas") and name == "DataFrame":
            return "pandas"
        if module.startswith("polars") and name in ("DataFrame", "LazyFrame"):
            return "polars"
        if module.startswith("pyspark") and name == "DataFrame":
            return "spark"
    module, name = type(data).__module__, type(data).__name__
    raise check.fail("data", f"a {module}.{name}", "a pandas, polars or Spark DataFrame",
                     "Query.run")


def engine_for(data: Any, query: Query) -> Engine:
    """The engine's ``aggregate(data, bounding)`` for ``data``."""
    kind = kind_of(data)
    if kind == "pandas":
        from ._pandas import aggregate
    elif kind == "polars":
        from ._polars import aggregate
    else:
        from ._spark import aggregate
    return aggregate


def _schema(data: Any) -> dict[str, str]:
    """Column name to a coarse type: ``"numeric"`` or ``"other"``."""
    kind = kind_of(data)
    if kind == "pandas":
        return {str(c): "numeric" if pd.api.types.is_numeric_dtype(t)
                and not pd.api.types.is_bool_dtype(t) else "other"
                for c, t in data.dtypes.items()}
    if kind == "polars":
        schema = data.collect_schema() if hasattr(data, "collect_schema") else data.schema
        return {str(c): "numeric" if t.is_numeric() else "other" for c, t in schema.items()}
    numeric = ("ByteType", "ShortType", "IntegerType", "LongType", "FloatType",
               "DoubleType", "DecimalType")
    return {f.name: "numeric" if type(f.dataType).__name__ in numeric else "other"
            for f in data.schema.fields}


def check_schema(data: Any, query: Query) -> None:
    """Refuse, before any row is read, data whose schema (public) does not fit the
    query: a missing column, or a value column that is not numeric."""
    schema = _schema(data)
    needed = [query.privacy_unit, *query.by]
    values = list(dict.fromkeys(c for _, a in query.aggregations for c in a.columns))
    for column in dict.fromkeys([*needed, *values]):
        if column not in schema:
            raise check.fail("data", f"columns {sorted(schema)}", f"a table with the "
                             f"column {column!r}", "Query.run")
    for column in values:
        if schema[column] != "numeric":
            raise check.fail("data", f"column {column!r} of a non-numeric type",
                             "numeric value columns", "Query.run")


def to_kind(table: pd.DataFrame, data: Any) -> Any:
    """The released table as the kind of ``data`` (pandas for Spark: it is small)."""
    if kind_of(data) == "polars":
        import polars as pl

        return pl.from_pandas(table)
    return table
