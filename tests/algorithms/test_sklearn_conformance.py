"""Every estimator passes scikit-learn's estimator checks, except where privacy forbids.

Expected failures, and why:

* ``check_classifiers_train`` for ``OutputPerturbationClassifier``: the check demands
  83% training accuracy on a small 3-class problem (about 100 rows) at the default
  budget; output perturbation's noise, of scale 2 / (n Lambda eps) per weight vector
  with eps split three ways, is larger than the weights themselves there. That is the
  privacy-utility trade-off, not a defect; objective perturbation passes (at the default
  regularization 1e-3).
* ``check_classifiers_train`` for the PCA pipelines (DPDR-DPML, FedDPDR-DPML): other
  checks fit on one-feature data, so they run with ``n_components=1``; projecting the
  check's 2-feature, 3-class blobs on a single (private) direction cannot separate
  three classes to 83%, with or without privacy.

The DP-SGD estimator trains through opacus on every check (about a minute in all), so
its checks are in the slow tier.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from privkit.algorithms import (
    DPPCA,
    DPDRDPMLClassifier,
    DPSGDLinearSVM,
    FedDPDRDPMLClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PublicRangeScaler,
    PublicStandardScaler,
    RowNormClipper,
)

_REDUCED = "one private principal component of 2-feature, 3-class blobs (see module)"
_EMPTY = "fits an empty dataset: under add-remove n is private, so fit cannot refuse n = 0"
_NON_FINITE_ROWS = "fit maps a non-finite row to the neutral record instead of refusing it"
_ANY_LABEL = "a label outside classes_ (NaN, a float) is a neutral record, never refused"
_NO_QUOTE = "the refusal of unreadable X withholds scikit-learn's text, which quotes X"
EXPECTED = {
    "OutputPerturbationClassifier": {
        "check_classifiers_train": "noise at the default budget on ~100 rows (see module)",
    },
    "DPSGDLinearSVM": {
        "check_estimators_empty_data_messages": _EMPTY,
        "check_estimators_nan_inf": _NON_FINITE_ROWS,
        "check_supervised_y_no_nan": _ANY_LABEL,
        "check_classifiers_regression_target": _ANY_LABEL,
        "check_dtype_object": _NO_QUOTE,
    },
    "DPDRDPMLClassifier": {"check_classifiers_train": _REDUCED},
    "FedDPDRDPMLClassifier": {"check_classifiers_train": _REDUCED},
}


@parametrize_with_checks(
    [OutputPerturbationClassifier(random_state=0), ObjectivePerturbationClassifier(random_state=0),
     DPPCA(n_components=1, epsilon=1.0, random_state=0),
     DPDRDPMLClassifier(epsilon=20.0, n_components=1, random_state=0),
     FedDPDRDPMLClassifier(epsilon=20.0, n_components=1, random_state=0),
     RowNormClipper(5.0), PublicRangeScaler(-10.0, 10.0), PublicStandardScaler(1.0, 2.0)],
    expected_failed_checks=lambda est: EXPECTED.get(type(est).__name__, {}),
)
def test_sklearn_conformance(estimator, check):
    """The scikit-learn estimator check passes (or is an expected failure above)."""
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(
    [DPSGDLinearSVM(epsilon=20.0, delta=1e-3, sampling_rate=0.2, epochs=2,
                    expected_batch_size=20.0, random_state=0)],
    expected_failed_checks=lambda est: EXPECTED.get(type(est).__name__, {}),
)
def test_sklearn_conformance_dp_sgd(estimator, check):
    """The scikit-learn estimator check passes for the opacus-trained estimator."""
    check(estimator)
