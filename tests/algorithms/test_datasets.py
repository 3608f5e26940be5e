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
    from privkit.algorithms.linear._losses import MarginLoss

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


def _write(tmp_path, text, name="data.csv.gz"):
    import gzip

    file = tmp_path / name
    with gzip.open(file, "wt") as handle:
        handle.write(text)
    return file


_ROW = "below the header (blank lines not counted)"


@pytest.mark.parametrize(("text", "where"), [
    ("a,b,label\n1,2,0\n1,SECRET-7,1\n", f"row 2 {_ROW}, column 2 is not a number"),
    ("a,b,label\n1,2,0\n\n3,4,1\n5,SECRET-7\n", f"row 3 {_ROW} has 2"),
    ("a,b,label\n1,2,0\n3,4,0.5\n", f"row 2 {_ROW}, column 3 does not"),
    ("a,b,label\n1,2,nan\n", f"row 1 {_ROW}, column 3"),
])
def test_malformed_files_are_located_not_quoted(tmp_path, text, where):
    """The cells are private: the error says which row and column are malformed and
    what is allowed, never what the cell holds (numpy's own message quoted it)."""
    with pytest.raises(ValueError) as info:
        load_csv(_write(tmp_path, text))
    message = str(info.value)
    assert where in message
    assert "SECRET" not in message
    assert "0.5" not in message
    assert info.value.__cause__ is None


def test_a_file_that_is_not_gzip_is_refused_without_its_bytes(tmp_path):
    file = tmp_path / "data.csv.gz"
    file.write_bytes(b"SECRET,1\n")
    with pytest.raises(ValueError, match="readable") as info:
        load_csv(file)
    assert "SECRET" not in str(info.value)


def test_no_rows_load_as_zero_rows_without_a_warning(tmp_path):
    """The number of rows is private (add-remove): a header alone is zero rows, with
    no warning that would say so."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        X, y = load_csv(_write(tmp_path, "a,b,c,label\n"))
    assert caught == []
    assert X.shape == (0, 3)
    assert y.shape == (0,)
    assert y.dtype == np.int64


def test_non_finite_features_load_as_they_are(tmp_path):
    """nan and inf features are data, mapped to neutral records by the estimators."""
    X, y = load_csv(_write(tmp_path, "a,b,label\nnan,2,0\ninf,-1e400,1\n", "plain.csv.gz"))
    assert np.isnan(X[0, 0])
    assert np.isinf(X[1]).all()
    np.testing.assert_array_equal(y, [0, 1])
