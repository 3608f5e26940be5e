"""The reproduction protocol of J. Park, "Differentially private multi-class classification
using kernel supports and equilibrium points" (2022): ``privkit reproduce park2022``."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")

from privkit import PureDP
from privkit.algorithms import park2022 as p

DATA = Path("/work/shared/data")


@pytest.fixture
def data_dir():
    if not (DATA / "iris.csv.gz").exists():
        pytest.skip(f"the UCI files are not in {DATA}")
    return DATA


def test_quick_run_prints_every_method_without_a_data_folder(capsys, monkeypatch):
    """--quick needs no data (three moons are generated) and reports each method's
    guarantee next to the paper's claim."""
    monkeypatch.delenv(p.DATA_ENV, raising=False)
    code = p.main(["--quick", "--methods", "proposed_paper", "svm_weight",
                   "svm_output_batch"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("three_moons") == 6  # 3 methods x (eps 1, non-private)
    assert "none (no finite guarantee) / eps=1" in out
    assert "svm_weight" in out
    assert "eps=1 / eps=1" in out


def test_data_folder_is_required_by_name(capsys, monkeypatch):
    monkeypatch.delenv(p.DATA_ENV, raising=False)
    assert p.main(["--datasets", "iris", "--runs", "1"]) == 2
    err = capsys.readouterr().err
    assert "--data" in err
    assert p.DATA_ENV in err
    assert "iris" in err


def test_environment_variable_gives_the_data_folder(capsys, monkeypatch, tmp_path):
    """$PRIVKIT_DATA is used when --data is absent: an empty folder gives a named error
    about the missing file, not a traceback."""
    monkeypatch.setenv(p.DATA_ENV, str(tmp_path))
    assert p.main(["--datasets", "iris", "--runs", "1", "--methods", "svm_weight"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path) in err
    assert "iris" in err


@pytest.mark.parametrize(("argv", "name"), [
    (["--runs", "0"], "--runs"),
    (["--methods", "svm_magic"], "--methods"),
    (["--datasets", "mnist"], "--datasets"),
    (["--epsilons", "-1"], "--epsilons"),
    (["--fraction", "1.5"], "--fraction"),
    (["--epsilons", "x"], "--epsilons"),
    (["--bogus"], "--bogus"),
])
def test_bad_options_are_named_not_tracebacks(argv, name, capsys):
    assert p.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("privkit reproduce park2022: error:")
    assert name in err


def test_describe_guarantees():
    assert p.describe(None) == "none (no finite guarantee)"
    assert p.describe(PureDP(epsilon=2.0)) == "eps=2"


def test_output_accounting_per_query_against_batch():
    """The thesis' SVM OUTPUT charges eps per test query (m queries compose to m eps);
    the batch variant calibrates the m queries to the total eps."""
    X, y = p.load_dataset("three_moons", "", seed=0)
    per_query = p.run_once("svm_output", "three_moons", 1.0, X, y, seed=0)
    batch = p.run_once("svm_output_batch", "three_moons", 1.0, X, y, seed=0)
    m = len(y) - round(0.8 * len(y))
    assert per_query["guarantee"].epsilon_at(0.0) == pytest.approx(m, rel=1e-6)
    assert batch["guarantee"].epsilon_at(0.0) == pytest.approx(1.0)


def test_make_method_refuses_unknown_names():
    from privkit.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="method"):
        p.make_method("svm_magic", "iris", 1.0, 0)
    with pytest.raises(InvalidParameterError, match="dataset"):
        p.make_method("proposed", "mnist", 1.0, 0)


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


def test_describe_reads_pure_composition_exactly():
    """k pure runs compose to exactly k eps at delta 0 (Kairouz, Oh, Viswanath 2015)."""
    from privkit.accountants.optimal import OptimalComposition

    g = OptimalComposition(epsilon=0.01, delta=0.0, count=80)
    assert p.describe(g, PureDP(epsilon=0.01)) == "eps=0.8"
