"""Loaders for the papers' datasets, stored as gzip-compressed CSV files.

Each file has a header row, numeric feature columns, and a final integer ``label`` column
(the format of the project's shared data folder). Loaders take a path: privkit does not
depend on any data being present.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from privkit import _validation as check

__all__ = ["load_adult", "load_csv"]


def load_csv(path: str | Path) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Features and labels of one ``*.csv.gz`` file (last column is the label)."""
    file = Path(path)
    if not file.is_file():
        raise check.fail("path", str(path), "an existing CSV file", "load_csv")
    table = np.loadtxt(file, delimiter=",", skiprows=1, dtype=np.float64)
    return table[:, :-1], table[:, -1].astype(np.int64)


def load_adult(folder: str | Path) -> tuple[NDArray[np.float64], NDArray[np.int64],
                                             NDArray[np.float64], NDArray[np.int64]]:
    """Adult as in seed 003 (van der Reijden 2019): rows without missing values (code -1),
    categorical columns one-hot encoded over train and test together (a public schema),
    numeric columns divided by their public maximum over the schema's range, then every
    row divided by the largest row norm so that rows have norm at most 1.
    Returns ``X_train, y_train, X_test, y_test``.
    """
    root = Path(folder)
    X_train, y_train = load_csv(root / "adult-train.csv.gz")
    X_test, y_test = load_csv(root / "adult-test.csv.gz")
    categorical = [1, 3, 5, 6, 7, 8, 9, 13]  # workclass ... native_country (see README)
    keep_train = ~np.any(X_train[:, categorical] < 0, axis=1)
    keep_test = ~np.any(X_test[:, categorical] < 0, axis=1)
    X_train, y_train = X_train[keep_train], y_train[keep_train]
    X_test, y_test = X_test[keep_test], y_test[keep_test]
    numeric = [i for i in range(X_train.shape[1]) if i not in categorical]
    scale = np.maximum(np.abs(np.concatenate([X_train, X_test])[:, numeric]).max(axis=0), 1e-12)

    def encode(X: NDArray[np.float64]) -> NDArray[np.float64]:
        parts = [X[:, numeric] / scale]
        for c in categorical:
            levels = int(max(X_train[:, c].max(), X_test[:, c].max())) + 1
            parts.append(np.eye(levels)[X[:, c].astype(int)])
        return np.hstack(parts)

    E_train, E_test = encode(X_train), encode(X_test)
    top = float(np.linalg.norm(E_train, axis=1).max())
    return E_train / top, y_train, E_test / top, y_test
