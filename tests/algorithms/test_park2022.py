"""The reproduction protocol of J. Park, "Differentially private multi-class classification
using kernel supports and equilibrium points" (2022), which ``privkit reproduce park2022``
runs (its command line is tested in tests/core/test_reproduce.py)."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")

from privkit.algorithms.svdd import park2022 as p

DATA = Path("/work/shared/data")


@pytest.fixture
def data_dir():
    if not (DATA / "iris.csv.gz").exists():
        pytest.skip(f"the UCI files are not in {DATA}")
    return DATA


def test_output_accounting_per_query_against_batch():
    """The thesis' SVM OUTPUT charges eps per test query (m queries compose to m eps);
    the batch variant calibrates the m queries to the total eps."""
    X, y = p.load_dataset("three_moons", "", seed=0)
    per_query = p.run_once("svm_output", "three_moons", epsilon=1.0, X=X, y=y, seed=0)
    batch = p.run_once("svm_output_batch", "three_moons", epsilon=1.0, X=X, y=y, seed=0)
    m = len(y) - round(0.8 * len(y))
    assert per_query["guarantee"].epsilon_at(0.0) == pytest.approx(m, rel=1e-6)
    assert batch["guarantee"].epsilon_at(0.0) == pytest.approx(1.0)


def test_make_method_refuses_unknown_names():
    from privkit.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="method"):
        p.make_method("svm_magic", "iris", epsilon=1.0, seed=0)
    with pytest.raises(InvalidParameterError, match="dataset"):
        p.make_method("proposed", "mnist", epsilon=1.0, seed=0)


def test_generated_sets_have_the_documented_shapes():
    X, y = p.load_dataset("three_moons", "", seed=0)
    assert X.shape == (400, 2)
    assert set(np.unique(y)) == {0, 1, 2}
    X, y = p.load_dataset("five_gaussians", "", seed=0)
    assert X.shape == (1000, 2)
    assert np.bincount(y).tolist() == [200] * 5


def test_uci_loaders_follow_the_documented_choices(data_dir):
    X, y = p.load_dataset("iris", data_dir, seed=0)
    assert X.shape == (150, 4)
    assert X.min() > 0  # raw centimetres: the loader does not scale
    X, y = p.load_dataset("shuttle", data_dir, seed=0, fraction=0.1)
    assert len(y) == round(0.1 * round(0.7 * 43_500))
    assert set(np.unique(y)) <= {0, 1, 2}


def test_split_scales_with_test_rows_only():
    """The split's scaling constants come from the test rows: changing a training row
    changes no test value, and the test split is standardised exactly."""
    X, y = p.load_dataset("three_moons", "", seed=0)
    X_train, y_train, X_test, y_test = p.split(X, y, seed=3)
    assert X_train.shape == (320, 2)
    assert len(y_train) == 320
    assert len(y_test) == 80
    assert np.allclose(X_test.mean(0), 0, atol=1e-12)
    assert np.allclose(X_test.std(0), 1)
    order = np.random.default_rng(3).permutation(len(y))
    moved = X.copy()
    moved[order[0]] += 100.0  # a training row
    _, _, again, _ = p.split(moved, y, seed=3)
    assert np.array_equal(again, X_test)
