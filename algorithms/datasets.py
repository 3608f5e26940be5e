"""Loaders for the papers' datasets, stored as gzip-compressed CSV files.

Each file has a header row, numeric feature columns, and a final integer ``label`` column
(the format of the project's shared data folder). Loaders take a path: privkit does not
depend on any data being present.

The cells are private data. A malformed file is refused with a message that says where
(the line and the column) and what is wrong, never what the cell holds; a file with a
header and no rows loads as zero rows, without a warning. Non-finite numbers (``nan``,
``inf``) in feature columns load as they are: privkit's estimators map such a row to a
neutral record by their stated rules.

.. versionadded:: 0.1.0
.. versionchanged:: 0.3.0
   Errors locate a malformed cell instead of quoting it; zero rows load silently.
"""

from __future__ import annotations

import csv
import gzip
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

__all__ = ["load_adult", "load_csv"]


def _open(file: Path) -> Any:
    if file.suffix == ".gz":
        return gzip.open(file, "rt", newline="")
    return file.open(newline="")


def _row(row: int) -> str:
    return f"row {row} below the header (blank lines not counted)"


def _malformed(file: Path) -> Exception:
    """The error for a file ``np.loadtxt`` could not read: the first line and column
    that are not a number (or a line with the wrong number of cells), found by reading
    the file again; the cell's content is never quoted."""
    owner = "load_csv"
    try:
        with _open(file) as handle:
            rows = csv.reader(handle)
            width = len(next(rows, []))
            for row, cells in enumerate((c for c in rows if c), start=1):
                if len(cells) != width:
                    return check.fail("path", str(file), "a CSV file whose rows all have "
                                      f"{width} cells, like its header", owner,
                                      f"{_row(row)} has {len(cells)}")
                for column, cell in enumerate(cells, start=1):
                    try:
                        float(cell)
                    except ValueError:
                        return check.fail("path", str(file), "a CSV file of numbers below "
                                          "its header", owner, f"{_row(row)}, column "
                                          f"{column} is not a number")
    except (OSError, EOFError, UnicodeDecodeError, csv.Error):
        pass
    return check.fail("path", str(file), "a readable (gzip) CSV file of numbers with a "
                      "header line", owner)


def load_csv(path: str | Path) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Features and labels of one ``*.csv.gz`` (or plain ``*.csv``) file: a header line,
    then numbers; the last column is the integer label."""
    file = Path(path)
    if not file.is_file():
        raise check.fail("path", str(path), "an existing CSV file", "load_csv")
    try:
        with _open(file) as handle:
            width = len(next(csv.reader(handle), []))
        with warnings.catch_warnings():  # "input contained no data" would reveal n = 0
            warnings.simplefilter("ignore", UserWarning)
            table = np.loadtxt(file, delimiter=",", skiprows=1, dtype=np.float64,
                               ndmin=2)
    except (ValueError, OSError, EOFError, UnicodeDecodeError, csv.Error):
        table = None  # numpy's message quotes the cell: raised below, unchained
    if table is None:
        raise _malformed(file)
    if width < 2:
        raise check.fail("path", str(path), "a CSV file with at least one feature column "
                         "and a label column", "load_csv")
    if table.shape[0] == 0:
        return np.empty((0, width - 1)), np.empty(0, dtype=np.int64)
    labels = table[:, -1]
    whole = np.isfinite(labels) & (labels == np.round(labels))
    if not whole.all():
        row = int(np.argmin(whole)) + 1
        raise check.fail("path", str(path), "a CSV file whose last column holds integer "
                         "labels", "load_csv", f"{_row(row)}, column {width} does not")
    return table[:, :-1], labels.astype(np.int64)


#: Adult's columns (UCI ``adult.names``) in file order, and the public bounds privkit
#: scales the numeric ones by. They come from the census schema, not from the rows: ages
#: are 17..90 (90 is the Current Population Survey's top code), ``education_num`` is
#: 1..16 (the 16 education levels), ``capital_gain`` is top-coded at 99,999 and
#: ``hours_per_week`` at 99; ``fnlwgt`` (a survey weight) and ``capital_loss`` have no
#: documented top code, so privkit declares 1,500,000 and 5,000 and clips above them.
ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education_num",
                 "marital_status", "occupation", "relationship", "race", "sex",
                 "capital_gain", "capital_loss", "hours_per_week", "native_country")
ADULT_NUMERIC_BOUNDS = {"age": (17.0, 90.0), "fnlwgt": (0.0, 1_500_000.0),
                        "education_num": (1.0, 16.0), "capital_gain": (0.0, 99_999.0),
                        "capital_loss": (0.0, 5_000.0), "hours_per_week": (1.0, 99.0)}
#: Numbers of levels of the categorical columns (``category_codes.json`` of the shared
#: data folder: codes are assigned in sorted order of the schema's values).
ADULT_LEVELS = {"workclass": 8, "education": 16, "marital_status": 7, "occupation": 14,
                "relationship": 6, "race": 5, "sex": 2, "native_country": 41}


def load_adult(folder: str | Path) -> tuple[NDArray[np.float64], NDArray[np.int64],
                                             NDArray[np.float64], NDArray[np.int64]]:
    """Adult as in van der Reijden 2019, scaled by public bounds only.

    Rows without missing values (code -1) are kept; each numeric column is mapped from
    its public range (:data:`ADULT_NUMERIC_BOUNDS`) onto [0, 1], values outside clipped
    (:class:`~privkit.algorithms.preprocessing.PublicRangeScaler`); each categorical
    column is one-hot encoded over its public levels (:data:`ADULT_LEVELS`); every row
    is then divided by the public bound ``sqrt(6 + 8)`` on its norm (six numeric
    features in [0, 1] and eight indicators with one 1 each), so rows have norm at most
    1. No statistic of the data is used. Returns ``X_train, y_train, X_test, y_test``.

    .. versionchanged:: 0.2.0
       Public bounds replace the data's maxima and largest row norm.
    """
    from .preprocessing import PublicOneHotEncoder, PublicRangeScaler

    root = Path(folder)
    X_train, y_train = load_csv(root / "adult-train.csv.gz")
    X_test, y_test = load_csv(root / "adult-test.csv.gz")
    numeric = [ADULT_COLUMNS.index(c) for c in ADULT_NUMERIC_BOUNDS]
    categorical = [ADULT_COLUMNS.index(c) for c in ADULT_LEVELS]
    keep_train = ~np.any(X_train[:, categorical] < 0, axis=1)
    keep_test = ~np.any(X_test[:, categorical] < 0, axis=1)
    X_train, y_train = X_train[keep_train], y_train[keep_train]
    X_test, y_test = X_test[keep_test], y_test[keep_test]
    bounds = np.array(list(ADULT_NUMERIC_BOUNDS.values()))
    scaler = PublicRangeScaler(bounds[:, 0], bounds[:, 1])
    encoder = PublicOneHotEncoder(list(ADULT_LEVELS.values()))
    norm_bound = float(np.sqrt(len(numeric) + len(categorical)))

    def encode(X: NDArray[np.float64]) -> NDArray[np.float64]:
        out: NDArray[np.float64] = np.hstack(
            [scaler.fit_transform(X[:, numeric]),
             encoder.fit_transform(X[:, categorical])]) / norm_bound
        return out

    return encode(X_train), y_train, encode(X_test), y_test
