"""The dataset loaders (skipped when the shared data folder is absent)."""

from pathlib import Path

import numpy as np
import pytest

from privkit.algorithms import load_adult, load_csv

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_data = pytest.mark.skipif(not (DATA / "adult-train.csv.gz").is_file(),
                                reason=f"shared data folder not present at {DATA}")


def test_missing_file_is_refused(tmp_path):
    """A path that is not a file is refused, naming it."""
    with pytest.raises(ValueError, match="`path` must be an existing CSV file"):
        load_csv(tmp_path / "absent.csv.gz")


def test_small_csv_round_trip(tmp_path):
    """A gzip CSV with a header and a label column loads as (X, y)."""
    import gzip

    file = tmp_path / "tiny.csv.gz"
    with gzip.open(file, "wt") as handle:
        handle.write("a,b,label\n1,2,0\n3,4,1\n")
    X, y = load_csv(file)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(y, [0, 1])


@needs_data
def test_adult_matches_seed_003():
    """45,222 complete rows (30,162 train + 15,060 test), one-hot categoricals, rows of
    norm at most 1, and the non-private Huber SVM's test error near van der Reijden's 0.173."""
    from privkit.algorithms import solve_erm
    from privkit.algorithms._losses import MarginLoss

    X, y, X_test, y_test = load_adult(DATA)
    assert (len(y), len(y_test)) == (30_162, 15_060)
    assert X.shape[1] == 6 + 8 + 16 + 7 + 14 + 6 + 5 + 2 + 41
    assert np.linalg.norm(X, axis=1).max() <= 1.0
    w = solve_erm(X, np.where(y == 1, 1.0, -1.0), MarginLoss("huber"), 1e-3)
    error = np.mean((X_test @ w > 0) != (y_test == 1))
    assert abs(error - 0.173) < 0.01


@needs_data
def test_adult_scaling_uses_public_bounds_only():
    """The first training row is encoded from the schema alone (no statistic of the
    data): age 39 in [17, 90], fnlwgt 77,516 in [0, 1.5e6], education_num 13 in [1, 16],
    capital gain 2,174 of 99,999, loss 0 of 5,000, 40 hours in [1, 99], then the row is
    divided by sqrt(14)."""
    X, _, _, _ = load_adult(DATA)
    expected = np.array([(39 - 17) / 73, 77_516 / 1.5e6, 12 / 15, 2_174 / 99_999, 0.0,
                         39 / 98]) / np.sqrt(14)
    np.testing.assert_allclose(X[0, :6], expected)
    assert np.sum(X[0, 6:] > 0) == 8
