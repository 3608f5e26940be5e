"""privkit.algorithms.analytics: private grouped statistics on DataFrames, from a laptop
to a Spark cluster.

A :class:`Query` names the privacy unit, the group-by keys and the aggregations
(:class:`Count`, :class:`Sum`, :class:`Mean`, :class:`Variance`, :class:`Quantile`,
:class:`Histogram`) with their public bounds. It bounds each unit's contribution (at most
``max_partitions`` partitions and ``max_rows`` rows in each) inside the engine that holds
the data (pandas or polars in memory, Spark DataFrames on a cluster), selects partitions
privately unless their keys are declared, and releases every number through privkit's
mechanisms. Its plan is known before any data is read; its guarantee is privkit's
tightest accountant on that plan; ``run`` spends it on a budget filter first.

>>> import pandas as pd
>>> from privkit.algorithms.analytics import Count, Mean, Query
>>> visits = pd.DataFrame({"user": [1, 1, 2, 3, 3, 3], "day": ["mon", "tue", "mon",
...                        "mon", "tue", "tue"], "minutes": [10, 25, 5, 40, 30, 20]})
>>> query = Query(privacy_unit="user", by="day", partitions=["mon", "tue"],
...               aggregations={"visits": Count(), "minutes": Mean("minutes", lower=0,
...               upper=60)}, epsilon=1.0, max_partitions=2, max_rows=1)
>>> query.accounting.epsilon
1.0
>>> list(query.run(visits, rng=0).columns)
['day', 'visits', 'minutes']

.. versionadded:: 0.3.0
"""

from privkit.algorithms.analytics.aggregations import (
    Aggregation,
    Count,
    Histogram,
    Mean,
    Quantile,
    Statistic,
    Sum,
    Variance,
)
from privkit.algorithms.analytics.query import SELECTION_SHARE, Query

__all__ = [
    "SELECTION_SHARE",
    "Aggregation",
    "Count",
    "Histogram",
    "Mean",
    "Quantile",
    "Query",
    "Statistic",
    "Sum",
    "Variance",
]
