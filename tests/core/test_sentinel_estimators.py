"""The sentinel fuzz (issue 22, "Must show"), algorithms part: every estimator of
``privkit.algorithms.__all__`` (``fit`` on hostile private data, then every query method
on clean probes, or ``transform`` on the private rows for the public-bound preprocessing
and feature maps) and every function there that takes private data; no sentinel of
``tests/_transcript.py`` may show in any exception chain, warning, log record or output.

Hostile datasets: the float sentinel beside NaN and infinities, huge magnitudes, 1187
rows (the count sentinel), wrong shapes, lengths that disagree, empty, strings, labels
that no other record has, every label the sentinel, a label outside a declared label set
(``classes=[0, 1]`` where the estimator takes it). Each test lists every leak of its
entry point. DP-SGD (torch) is in the slow tier; the Flower federation is fuzzed as the
in-process one.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from _transcript import SENTINEL_COUNT, SENTINEL_FLOAT, SENTINEL_LABEL, Said, capture, leaks

# -- estimators ------------------------------------------------------------------------

def _algorithms() -> Any:
    import privkit.algorithms as algorithms

    return algorithms


def _nystrom_map() -> Any:
    a = _algorithms()
    return a.NystromMap(np.eye(3) * 0.5, a.Kernel("rbf", gamma=1.0), data_radius=1.0)


#: Each estimator of privkit.algorithms.__all__ in a small configuration (a fit in
#: milliseconds on a few dozen rows), by name: (factory, supervised).
ESTIMATORS: dict[str, tuple[Callable[[], Any], bool]] = {
    "OutputPerturbationClassifier": (lambda: _algorithms().OutputPerturbationClassifier(
        random_state=0), True),
    "ObjectivePerturbationClassifier": (lambda: _algorithms().ObjectivePerturbationClassifier(
        random_state=0), True),
    "DPPCA": (lambda: _algorithms().DPPCA(n_components=2, epsilon=1.0, random_state=0), False),
    "DPDRDPMLClassifier": (lambda: _algorithms().DPDRDPMLClassifier(
        epsilon=1.0, n_components=2, random_state=0), True),
    "FedDPDRDPMLClassifier": (lambda: _algorithms().FedDPDRDPMLClassifier(
        epsilon=1.0, n_components=2, random_state=0), True),
    "EquilibriumPointClassifier": (lambda: _algorithms().EquilibriumPointClassifier(
        epsilon=4.0, n_components=16, n_iter=3, random_state=0), True),
    "SVMWeightClassifier": (lambda: _algorithms().SVMWeightClassifier(
        n_components=16, random_state=0), True),
    "SVMOutputClassifier": (lambda: _algorithms().SVMOutputClassifier(
        n_components=16, random_state=0), True),
    "SVMSemiClassifier": (lambda: _algorithms().SVMSemiClassifier(
        n_components=16, random_state=0), True),
    "PrivateSVDD": (lambda: _algorithms().PrivateSVDD(n_components=16, random_state=0), False),
    "LPSVMClassifier": (lambda: _algorithms().LPSVMClassifier(
        n_iterations=5, random_state=0), True),
    "DPKMeans": (lambda: _algorithms().DPKMeans(n_clusters=2, n_iter=2, random_state=0), False),
    "KMeansNystromClassifier": (lambda: _algorithms().KMeansNystromClassifier(
        n_components=4, n_iter=2, random_state=0), True),
    "PrivateKernelMean": (lambda: _algorithms().PrivateKernelMean(
        n_components=8, random_state=0), False),
    "DPKSVMEL": (lambda: _algorithms().DPKSVMEL(random_state=0), True),
    "DPKSVMELCorrected": (lambda: _algorithms().DPKSVMELCorrected(
        n_components=4, n_iter=2, random_state=0), True),
    "PrivateGridSearch": (lambda: _algorithms().PrivateGridSearch(
        _algorithms().OutputPerturbationClassifier(),
        {"regularization": [0.1, 0.01]}, random_state=0), True),
    "RandomFourierFeatures": (lambda: _algorithms().RandomFourierFeatures(
        n_components=8, random_state=0), False),
    "NystromMap": (_nystrom_map, False),
    "PublicRangeScaler": (lambda: _algorithms().PublicRangeScaler(-1.0, 1.0), False),
    "PublicStandardScaler": (lambda: _algorithms().PublicStandardScaler(0.0, 1.0), False),
    "RowNormClipper": (lambda: _algorithms().RowNormClipper(1.0), False),
    "PublicOneHotEncoder": (lambda: _algorithms().PublicOneHotEncoder(3), False),
}
#: The slow tier: DP-SGD trains through opacus (torch import, seconds per fit).
SLOW_ESTIMATORS: dict[str, tuple[Callable[[], Any], bool]] = {
    "DPSGDLinearSVM": (lambda: _algorithms().DPSGDLinearSVM(
        epsilon=4.0, sampling_rate=0.5, epochs=1, random_state=0), True),
}
#: Estimators fuzzed through another one that runs the same code, and why.
FUZZED_AS: dict[str, tuple[str, str]] = {
    "FlowerFedDPDRDPMLClassifier": (
        "FedDPDRDPMLClassifier",
        ("its code and random streams in a process per participant (about 13 processes "
        "per fit); the output equals the in-process one bit for bit "
        "(tests/algorithms/test_flower.py)")),
}
#: Names of privkit.algorithms.__all__ that are not entry points for private data here,
#: and why.
NOT_ESTIMATORS = {
    "ClippedRowsWarning": "a warning class",
    "ClippedValuesWarning": "a warning class",
    "Kernel": "a kernel function of public parameters (used through the estimators)",
    "Participant": "a federated role, fuzzed through FedDPDRDPMLClassifier's fit",
    "Server": "a federated role, fuzzed through FedDPDRDPMLClassifier's fit",
    "calibrate_step_epsilon": "public parameters only",
    "inspect_rows": "the data owner's own diagnostic, NOT private by design: it returns "
                    "exact counts of the rows an estimator would map",
    "RowReport": "inspect_rows's result class",
    "load_adult": "fuzzed by test_sentinel.py (test_load_adult_...)",
    "load_csv": "fuzzed by test_sentinel.py (test_load_csv_...)",
}
QUERY_METHODS = ("predict", "predict_proba", "decision_function", "score_samples",
                 "transform", "witness")
#: The public-bound preprocessing maps private rows: its transform is called on them.
TRANSFORMS_PRIVATE_ROWS = {"PublicRangeScaler", "PublicStandardScaler", "RowNormClipper",
                           "PublicOneHotEncoder", "NystromMap", "RandomFourierFeatures"}

_RNG = np.random.default_rng(20260)
X0 = _RNG.uniform(-0.5, 0.5, size=(30, 3))  # rows of norm below 1: inside every bound
Y0 = np.arange(30) % 2
PROBES = _RNG.uniform(-0.5, 0.5, size=(5, 3))


def with_entries(*cells: tuple[int, int, Any]) -> Any:
    X = X0.copy()
    for i, j, v in cells:
        X[i, j] = v
    return X


def data_variants(supervised: bool) -> dict[str, tuple[Any, Any]]:
    """Hostile private datasets (X, y): the sentinels beside NaN and infinities, huge
    magnitudes, wrong shapes, disagreeing lengths, empty, wrong dtypes, and labels."""
    count_X = np.resize(X0, (SENTINEL_COUNT, 3))
    count_X[0, 0] = SENTINEL_FLOAT
    count_y = np.arange(SENTINEL_COUNT) % 2
    strings = X0.astype(object)
    strings[0, 0], strings[1, 1] = SENTINEL_LABEL, str(SENTINEL_FLOAT)
    variants: dict[str, tuple[Any, Any]] = {
        "sentinel": (with_entries((0, 0, SENTINEL_FLOAT)), Y0),
        "sentinel and NaN": (with_entries((0, 0, SENTINEL_FLOAT), (1, 1, math.nan)), Y0),
        "sentinel and inf": (with_entries((0, 0, SENTINEL_FLOAT), (1, 1, math.inf),
                                          (2, 2, -math.inf)), Y0),
        "huge": (with_entries((0, 0, SENTINEL_FLOAT * 1e300), (1, 1, -1e308)), Y0),
        "1187 rows": (count_X, count_y),
        "1-d": (with_entries((0, 0, SENTINEL_FLOAT))[:, 0], Y0),
        "3-d": (with_entries((0, 0, SENTINEL_FLOAT))[:, :, None], Y0),
        "empty": (np.zeros((0, 3)), Y0[:0]),
        "strings": (strings, Y0),
        "one row": (with_entries((0, 0, SENTINEL_FLOAT))[:1], Y0[:1]),
    }
    if supervised:
        variants |= {
            "1187 rows, 1186 labels": (count_X, count_y[:-1]),
            "a label no other record has": (
                with_entries((0, 0, SENTINEL_FLOAT)),
                np.where(np.arange(30) == 0, SENTINEL_LABEL, np.where(Y0 == 1, "b", "a"))),
            "every label the sentinel": (X0, np.full(30, SENTINEL_LABEL)),
            "label 1187": (X0, np.where(np.arange(30) == 0, SENTINEL_COUNT, Y0)),
            "label NaN": (with_entries((0, 0, SENTINEL_FLOAT)),
                          np.where(np.arange(30) == 0, math.nan, Y0.astype(float))),
            "label sentinel float": (X0, np.where(np.arange(30) == 0, SENTINEL_FLOAT,
                                                   Y0.astype(float))),
            "mixed label types": (X0, np.array([SENTINEL_LABEL, *Y0[1:]], dtype=object)),
        }
    return variants


def estimator_problems(name: str, factory: Callable[[], Any], supervised: bool) -> list[str]:
    """Every leak of the sentinels by one estimator's fit and query methods."""
    problems: list[str] = []
    for variant, (X, y) in data_variants(supervised).items():
        def report(said: Said, call: str, variant: str = variant) -> None:
            problems.extend(f"{name}.{call} on '{variant}': {leak}" for leak in leaks(said))
            if isinstance(said.error, AssertionError | SystemError):
                problems.append(f"{name}.{call} on '{variant}': {said.error!r}")

        cases = [(X, y, {})]
        estimator = factory()
        if supervised and "classes" in estimator.get_params():
            cases.append((X, y, {"classes": [0, 1]}))  # a declared label set, y outside it
        for X_, y_, params in cases:
            estimator = factory().set_params(**params) if params else factory()
            tag = f"[classes={params['classes']}]" if params else ""
            if name in TRANSFORMS_PRIVATE_ROWS:
                said = capture(lambda est=estimator, X_=X_: _fit_transform(est, X_))
                report(said, f"fit/transform{tag}")
                continue
            fit_args = (X_, y_) if supervised else (X_,)
            said = capture(lambda est=estimator, a=fit_args: est.fit(*a))
            report(said, f"fit{tag}")
            if said.error is not None:
                continue
            for method in QUERY_METHODS:
                if hasattr(estimator, method):
                    report(capture(lambda est=estimator, m=method: getattr(est, m)(PROBES)),
                           f"{method}{tag}")
    return problems


def _fit_transform(estimator: Any, X: Any) -> Any:
    if hasattr(estimator, "fit"):
        estimator.fit(X)
    return estimator.transform(X)


def test_every_entry_point_of_the_algorithms_is_fuzzed():
    """Every class and function of privkit.algorithms.__all__ is in a table here (the
    estimators, the functions taking private data, or an exclusion with its reason)."""
    names = set(_algorithms().__all__)
    covered = (set(ESTIMATORS) | set(SLOW_ESTIMATORS) | set(NOT_ESTIMATORS) | set(FUNCTIONS)
               | set(FUZZED_AS))
    assert names - covered == set(), "not fuzzed: " + ", ".join(sorted(names - covered))
    for name in names:
        obj = getattr(_algorithms(), name)
        if inspect.isclass(obj) and hasattr(obj, "fit"):
            substitute = FUZZED_AS.get(name, (name, ""))[0]
            assert substitute in ESTIMATORS or substitute in SLOW_ESTIMATORS, name


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_estimators_say_nothing_of_the_sentinels(name):
    """fit on every hostile dataset (with classes=[0, 1] declared too, where the
    estimator takes it), then every query method on clean probes: no sentinel in any
    exception, warning, log record or output."""
    factory, supervised = ESTIMATORS[name]
    problems = estimator_problems(name, factory, supervised)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW_ESTIMATORS))
def test_slow_estimators_say_nothing_of_the_sentinels(name):
    """As above, for DP-SGD."""
    factory, supervised = SLOW_ESTIMATORS[name]
    problems = estimator_problems(name, factory, supervised)
    assert not problems, "\n".join(problems)


def _mmd(X: Any) -> Any:
    return _algorithms().private_mmd_test(X, X0, _nystrom_map(), epsilon=1.0, delta=1e-5,
                                          random_state=0)


def _private_lp(X: Any) -> Any:
    try:
        A = -np.abs(np.asarray(X, dtype=float))
    except (TypeError, ValueError):  # not numbers: solve_private_lp refuses them itself
        A = X
    return _algorithms().solve_private_lp(A, -np.ones(len(A)), np.ones(3), optimum=3.0,
                                          entry_bound=1.0, b_bound=1.0, density=100.0,
                                          accuracy=1.0, epsilon=1.0, delta=1e-5, rng=0)


def _subspace(X: Any) -> Any:
    from privkit.mechanisms import AnalyzeGauss

    block = AnalyzeGauss.for_approx_dp(epsilon=1.0, delta=1e-5, row_norm_bound=1.0,
                                       relation="add_remove")
    return _algorithms().private_subspace(X, block, 2, np.random.default_rng(0))


def _losses() -> Any:
    from privkit.algorithms.linear._losses import MarginLoss

    return MarginLoss("huber")


def _signs(X: Any) -> Any:
    """Labels +-1 of the same length as X (a disagreeing length is not the point here)."""
    return np.where(np.arange(len(X)) % 2 == 1, 1.0, -1.0) if np.ndim(X) else X


#: The functions of privkit.algorithms.__all__ that take private data, as X -> call.
FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "private_mmd_test": _mmd,
    "solve_private_lp": _private_lp,
    "private_subspace": _subspace,
    "dense_projection": lambda X: _algorithms().dense_projection(np.ravel(X), 5.0),
    "clipped_rows": lambda X: _algorithms().clipped_rows(X, 1.0),
    "solve_erm": lambda X: _algorithms().solve_erm(X, _signs(X), _losses(), 0.1),
    "solve_multinomial": lambda X: _algorithms().solve_multinomial(
        X, (_signs(X) > 0).astype(np.int64), 2, 0.1),
    "kernel_approximation_error": lambda X: _algorithms().kernel_approximation_error(
        X, _nystrom_map().transform(X), _algorithms().Kernel("rbf", gamma=1.0)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functions_on_private_data_say_nothing_of_the_sentinels(name):
    """The same unsupervised hostile datasets through each function."""
    problems = []
    for variant, (X, _) in data_variants(False).items():
        said = capture(lambda X=X: FUNCTIONS[name](X))
        problems += [f"{name} on '{variant}': {leak}" for leak in leaks(said)]
    assert not problems, "\n".join(problems)
