"""The one reader of private rows and labels (``privkit.algorithms._private_rows``) and the
reader of query rows (``privkit.algorithms._queries``): one test per refusal rule and per
neutral-record rule, on numpy, sparse and dask input where each is accepted.

Private rows are refused by schema only (R8), never by value (R3), and no message names a
value or the number of rows (R5); query rows are checked strictly (R7)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.base import BaseEstimator

from privkit.algorithms._private_rows import private_labels, private_rows
from privkit.algorithms._queries import query_rows
from privkit.errors import InvalidParameterError

da = pytest.importorskip("dask.array")

#: A private value that no message may contain; 7 rows, a count no message may contain.
SECRET = 987654.125
OWNER = "Reader"


def _secret_rows(n=7, d=3):
    X = np.full((n, d), SECRET)
    X[:, 0] = np.arange(n)
    return X


def _refused(call, *fragments):
    """``call()`` raises InvalidParameterError naming X or y and each fragment, and no
    private value (SECRET) nor the row count (7)."""
    with pytest.raises(InvalidParameterError) as info:
        call()
    message = str(info.value)
    assert "987654" not in message
    assert "7" not in message.replace(OWNER, "")
    assert info.value.__cause__ is None
    assert info.value.__context__ is None
    for fragment in fragments:
        assert fragment in message
    return message


def _silently(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


# -- refusals by schema -------------------------------------------------------------------


def test_a_sparse_matrix_is_refused_unless_sparse_is_accepted():
    X = sp.csr_matrix(_secret_rows())
    _refused(lambda: private_rows(X, owner=OWNER), "`X`", "sparse", "X.toarray()")
    out = private_rows(sp.coo_matrix(X), owner=OWNER, sparse=True)
    assert sp.isspmatrix_csr(out)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.toarray(), _secret_rows())


def test_a_ragged_sequence_is_refused():
    _refused(lambda: private_rows([[SECRET, 1.0], [2.0]] * 4, owner=OWNER), "`X`", "2-D")


@pytest.mark.parametrize("dtype", [str, complex, "datetime64[s]"])
def test_a_dtype_without_real_numbers_is_refused(dtype):
    """The dtype is the public schema: text, complex numbers and dates are refused by it,
    whatever the entries."""
    X = _secret_rows().astype(int).astype(dtype)
    message = _refused(lambda: private_rows(X, owner=OWNER), "`X`", "real numbers")
    assert str(X.dtype.itemsize) not in message  # a text dtype's size is its longest entry's
    assert ("Complex data not supported" in message) == (dtype is complex)


@pytest.mark.parametrize("shape", [(7,), (7, 3, 1), ()])
def test_an_array_that_is_not_2d_is_refused_naming_its_dimensions(shape):
    X = np.full(shape, SECRET)
    _refused(lambda: private_rows(X, owner=OWNER), f"a {len(shape)}-D array")
    if shape:
        _refused(lambda: private_rows(da.from_array(X), owner=OWNER, dask=True),
                 f"a {len(shape)}-D array")


@pytest.mark.parametrize("kind", ["numpy", "sparse", "dask"])
def test_an_array_without_columns_is_refused(kind):
    X = {"numpy": np.empty((7, 0)), "sparse": sp.csr_matrix((7, 0)),
         "dask": da.zeros((7, 0))}[kind]
    _refused(lambda: private_rows(X, owner=OWNER, sparse=True, dask=True), "no columns")


@pytest.mark.parametrize("kind", ["numpy", "sparse", "dask"])
def test_no_rows_fit_where_n_is_private_and_are_refused_where_it_is_public(kind):
    """min_rows=0 (add-remove): an empty dataset is read; min_rows=1 (replace-one): it
    is refused, saying why."""
    X = {"numpy": np.empty((0, 3)), "sparse": sp.csr_matrix((0, 3)),
         "dask": da.zeros((0, 3))}[kind]
    assert private_rows(X, owner=OWNER, sparse=True, dask=True).shape == (0, 3)
    _refused(lambda: private_rows(X, owner=OWNER, sparse=True, dask=True, min_rows=1),
             "at least one row", "replace-one")


def test_the_parameter_name_is_the_callers():
    _refused(lambda: private_rows(np.ones(3), owner=OWNER, name="Y"), "`Y`")


# -- values: never refused, mapped by per-record public rules ----------------------------------


@given(hnp.arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(1, 4)),
                  elements=st.floats(allow_nan=True, allow_infinity=True)))
def test_no_float_value_is_refused_or_changed(X):
    """Any finite or non-finite entries, any number of rows: read as they are, silently."""
    out = _silently(lambda: private_rows(X, owner=OWNER))
    assert out.dtype == np.float64
    assert out.tobytes() == X.tobytes()


@pytest.mark.parametrize("kind", ["numpy", "sparse", "dask"])
def test_non_finite_entries_are_kept_for_the_estimators_rule(kind):
    X = _secret_rows()
    X[2, 1], X[4, 0] = np.nan, -np.inf
    given_X = {"numpy": X, "sparse": sp.csr_matrix(X), "dask": da.from_array(X)}[kind]
    out = _silently(lambda: private_rows(given_X, owner=OWNER, sparse=True, dask=True))
    dense = out.toarray() if kind == "sparse" else np.asarray(out)
    np.testing.assert_array_equal(dense, X)


def test_an_object_entry_that_is_not_a_number_becomes_nan_silently():
    """Entry by entry: numbers (and numeric text) are read as float, anything else
    (text, None, a list) is NaN, so its row is the estimator's neutral record."""
    X = _secret_rows(4, 2).astype(object)
    X[0, 1], X[1, 0], X[2, 1], X[3, 0] = "secret", None, [1.0], "2.5"
    out = _silently(lambda: private_rows(X, owner=OWNER))
    expected = _secret_rows(4, 2)
    expected[0, 1] = expected[1, 0] = expected[2, 1] = np.nan
    expected[3, 0] = 2.5
    np.testing.assert_array_equal(out, expected)


def test_an_entry_beyond_float64_becomes_infinite_silently():
    X = np.full((2, 2), np.longdouble(1.0))
    X[1, 1] = np.finfo(np.longdouble).max
    out = _silently(lambda: private_rows(X, owner=OWNER))
    if np.finfo(np.longdouble).max > np.finfo(np.float64).max:
        assert np.isinf(out[1, 1])
    assert out[0, 0] == 1.0


def test_a_dask_array_stays_lazy_in_its_row_blocks_or_is_read_when_dask_is_not_accepted():
    X = da.from_array(_secret_rows(1400, 2), chunks=(700, 2))
    lazy = private_rows(X, owner=OWNER, dask=True, chunk_size=700)
    assert isinstance(lazy, da.Array)
    assert lazy.chunks[0] == (700, 700)
    read = private_rows(X, owner=OWNER)
    assert isinstance(read, np.ndarray)
    np.testing.assert_array_equal(read, _secret_rows(1400, 2))


def test_the_schema_is_recorded_on_the_estimator():
    pd = pytest.importorskip("pandas")

    est = BaseEstimator()
    frame = pd.DataFrame(_secret_rows(), columns=["a", "b", "c"])
    np.testing.assert_array_equal(private_rows(frame, owner=OWNER, estimator=est),
                                  _secret_rows())
    assert est.n_features_in_ == 3
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    private_rows(np.ones((2, 5)), owner=OWNER, estimator=est)
    assert est.n_features_in_ == 5
    assert not hasattr(est, "feature_names_in_")


# -- labels -------------------------------------------------------------------------------------


def test_no_labels_are_refused_as_scikit_learn_words_it():
    _refused(lambda: private_labels(None, 7, owner=OWNER),
             "requires y to be passed, but the target y is None")


def test_labels_not_one_per_row_are_refused_without_either_count():
    y = np.full(6, SECRET)
    _refused(lambda: private_labels(y, 7, owner=OWNER), "`y`", "one label per row of X")


@pytest.mark.parametrize("shape", [(7, 2), (7, 1, 1), ()])
def test_labels_of_another_shape_are_refused(shape):
    _refused(lambda: private_labels(np.full(shape, SECRET), 7, owner=OWNER), "`y`",
             "1d array")


def test_a_column_vector_is_raveled_with_a_data_conversion_warning():
    from sklearn.exceptions import DataConversionWarning

    with pytest.warns(DataConversionWarning, match="^A column-vector y was passed"):
        y = private_labels(np.arange(7)[:, None], 7, owner=OWNER)
    np.testing.assert_array_equal(y, np.arange(7))


def test_label_values_are_never_looked_at():
    """NaN, None, unhashable and mixed labels come back as given (the label set's public
    rule maps them to the neutral record), silently."""
    y = np.empty(5, dtype=object)
    y[:] = [np.nan, None, [1], "secret", 2]
    out = _silently(lambda: private_labels(y, 5, owner=OWNER))
    assert out is y or out.tolist()[1:] == y.tolist()[1:]
    np.testing.assert_array_equal(_silently(lambda: private_labels([0.5, np.nan], 2,
                                                                   owner=OWNER)),
                                  [0.5, np.nan])


# -- query rows ---------------------------------------------------------------------------------


class _Fitted(BaseEstimator):
    def __init__(self, d=2):
        self.d = d

    def fit(self):
        self.n_features_in_ = self.d
        return self


def test_query_rows_before_fit_raise_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        query_rows(_Fitted(), np.zeros((1, 2)), "predict")


def test_a_plain_query_comes_back_as_itself_and_others_are_converted():
    X = np.zeros((3, 2))
    assert query_rows(_Fitted().fit(), X, "predict") is X
    np.testing.assert_array_equal(query_rows(_Fitted().fit(), [[1, 2]], "predict"), [[1.0, 2.0]])


@pytest.mark.parametrize("bad", [[[np.nan, 0.0]], [[np.inf, 0.0]], [[0.0, 1.0, 2.0]], [0.0, 1.0]])
def test_a_non_finite_or_misshapen_query_is_an_error(bad):
    with pytest.raises(ValueError):
        query_rows(_Fitted().fit(), np.array(bad), "predict")


def test_a_sparse_query_is_read_only_where_sparse_is_accepted():
    Q = sp.csr_matrix(np.eye(2))
    assert sp.issparse(query_rows(_Fitted().fit(), Q, "predict", sparse=True))
    with pytest.raises(TypeError):
        query_rows(_Fitted().fit(), Q, "predict")


def test_a_dask_query_is_checked_block_by_block_when_computed():
    good = da.from_array(np.ones((4, 2)), chunks=(2, 2))
    out = query_rows(_Fitted().fit(), good, "predict", dask=True)
    assert isinstance(out, da.Array)
    np.testing.assert_array_equal(out.compute(), np.ones((4, 2)))
    bad = np.ones((4, 2))
    bad[3, 1] = np.nan
    lazy = query_rows(_Fitted().fit(), da.from_array(bad, chunks=(2, 2)), "predict", dask=True)
    with pytest.raises(InvalidParameterError, match="finite query rows"):
        lazy.compute()
    with pytest.raises(InvalidParameterError, match="2 columns"):
        query_rows(_Fitted().fit(), da.ones((4, 3)), "predict", dask=True)


def test_a_query_whose_sum_overflows_is_read_by_the_full_check_without_a_warning():
    """Finite entries whose sum overflows take scikit-learn's full check (which accepts
    them), with no RuntimeWarning from the fast path's sum."""
    Q = np.full((2, 2), 1e308)
    np.testing.assert_array_equal(_silently(lambda: query_rows(_Fitted().fit(), Q, "predict")), Q)
