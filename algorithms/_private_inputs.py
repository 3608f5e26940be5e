"""The private rows and labels a ``fit`` receives, read without refusing or quoting them.

scikit-learn's ``validate_data`` refuses a non-finite entry, and several of its messages
quote the data (a 1-D array is printed whole; a string that does not convert is echoed;
complex data is printed); ``check_X_y`` also refuses a NaN label and prints the number of
rows. An estimator whose transcript is its release can do neither (privkit's rules R3 and
R5, ``DESIGN.md``, "The transcript is the release"): a refusal that depends on one record
reveals that record, and a message is read by whoever reads the log.

:func:`private_rows` and :func:`private_labels` therefore keep non-finite entries and
labels of any value (each estimator maps such records to its neutral record by a public
rule its docstring states), and raise, for an input that is not a table of numbers at all,
an error that names the parameter and what is allowed and withholds scikit-learn's text.

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

__all__ = ["private_labels", "private_rows"]

#: scikit-learn's message for a table without rows or columns: it quotes the shape only,
#: which is public where n is (REPLACE_ONE).
_SHAPE_ONLY = re.compile(r"Found array with 0 (sample|feature)\(s\) \(shape=\(\d+, \d+\)\) "
                         r"while a minimum of \d+ is required")

#: What is said instead of a refused input (scikit-learn's own message may quote it).
_WITHHELD = ("an input scikit-learn cannot read as one (its message is withheld: it may "
             "quote the data)")


def private_rows(estimator: Any, X: Any, *, min_rows: int, owner: str) -> NDArray[np.float64]:
    """``X`` as ``fit`` uses it: a 2-D float64 array with at least one column, non-finite
    entries kept; sets ``n_features_in_`` (the schema, public). ``min_rows`` is 1 where
    n is public (replace-one) and 0 where it is private (add-remove: an empty dataset is
    a neighbour like any other, so fitting on it must succeed)."""
    import scipy.sparse as sp
    from sklearn.utils.validation import validate_data

    if sp.issparse(X):  # the container's type and dtype are public: say what they are
        raise check.fail("X", f"a sparse {type(X).__name__}", "a dense 2-D array", owner,
                         "sparse input is not supported; pass X.toarray()")
    if getattr(getattr(X, "dtype", None), "kind", "") == "c":
        raise check.fail("X", "an array of complex numbers", "real numbers", owner,
                         "Complex data not supported")
    shape = None
    try:
        rows: NDArray[np.float64] = validate_data(
            estimator, X, dtype=np.float64, ensure_all_finite=False,
            ensure_min_samples=min_rows)
        return rows
    except (TypeError, ValueError) as exc:
        if min_rows and _SHAPE_ONLY.match(str(exc)):  # n is public: say what it is
            shape = str(exc)
    # raised here, after the except block: no chained error quotes the data
    if shape is not None:
        raise check.fail("X", "an empty table", "a table with at least one row and one "
                         "column", owner, shape)
    raise check.fail("X", _WITHHELD, "a 2-D array of real numbers (rows x features)"
                     + (", with at least one row" if min_rows else ""), owner)


def private_labels(y: Any, n_rows: int, owner: str) -> NDArray[Any]:
    """``y`` as ``fit`` uses it: one label per row, of any value (a label outside the
    estimator's label set is mapped by its public rule, never refused). A column vector
    is flattened with scikit-learn's ``DataConversionWarning``, as scikit-learn does."""
    from sklearn.utils.validation import column_or_1d

    if y is None:
        raise check.fail("y", None, "one label per row of X", owner,
                         "this estimator requires y to be passed, but the target y is None")
    labels: NDArray[Any] = check.withheld(lambda: column_or_1d(y, warn=True), "y",
                                          "a 1-D array of labels, one per row of X", owner)
    if labels.shape[0] != n_rows:
        raise check.fail("y", "a different number of labels than X has rows",
                         "one label per row of X", owner)
    return labels
