"""Every estimator passes scikit-learn's estimator checks, except where privacy forbids.

Expected failures, and why:

* ``check_estimators_nan_inf``, ``check_supervised_y_no_nan`` and
  ``check_classifiers_regression_target`` for privkit's own classifiers
  (``OutputPerturbationClassifier``, ``ObjectivePerturbationClassifier``,
  ``LPSVMClassifier``): the checks expect ``fit`` to refuse a NaN or an infinity in X or
  y, or a continuous y. The training rows are private, and a refusal by value reveals that
  such a row exists (issue 22, R3): privkit maps a non-finite row to its neutral record and
  a label outside the (declared or privately released) label set to a neutral record.
  ``predict`` still refuses a non-finite query.
* ``check_classifiers_train`` for the PCA pipelines (DPDR-DPML, FedDPDR-DPML): other
  checks fit on one-feature data, so they run with ``n_components=1``; projecting the
  check's 2-feature, 3-class blobs on a single (private) direction cannot separate
  three classes to 83%, with or without privacy.
* Checks whose expectation contradicts the transcript rules of issue 22 for DP-PCA,
  DPDR-DPML, FedDPDR-DPML and DP-SGD: the three above (their non-finite rows and labels
  outside the label set are neutral records too); ``check_dtype_object``, which expects
  scikit-learn's message, which quotes the data; DP-SGD's
  ``check_estimators_empty_data_messages``, which expects a refusal of n = 0, private
  under add-remove.

privkit's classifiers run with ``classes=None`` and a ``delta`` (their label set released
privately, as the checks use many label sets) at a large epsilon.

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
    LPSVMClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PrivateGridSearch,
    PublicOneHotEncoder,
    PublicRangeScaler,
    PublicStandardScaler,
    RowNormClipper,
)

_REDUCED = "one private principal component of 2-feature, 3-class blobs (see module)"
_R3 = {
    "check_estimators_nan_inf": "a non-finite private row is a neutral record, not refused",
    "check_supervised_y_no_nan": "a non-finite label is a neutral record, not refused",
    "check_classifiers_regression_target": "a label outside the label set is a neutral "
                                           "record, not refused",
}
_EMPTY = "fits an empty dataset: under add-remove n is private, so fit cannot refuse n = 0"
_NO_QUOTE = "the refusal of unreadable X withholds scikit-learn's text, which quotes X"
EXPECTED = {
    "OutputPerturbationClassifier": _R3,
    "ObjectivePerturbationClassifier": _R3,
    "LPSVMClassifier": _R3,
    "PrivateGridSearch": {"check_estimators_nan_inf": _R3["check_estimators_nan_inf"]},
    "DPSGDLinearSVM": {**_R3, "check_estimators_empty_data_messages": _EMPTY,
                       "check_dtype_object": _NO_QUOTE},
    "DPPCA": {"check_estimators_nan_inf": _R3["check_estimators_nan_inf"],
              "check_dtype_object": _NO_QUOTE},
    "DPDRDPMLClassifier": {"check_classifiers_train": _REDUCED, **_R3,
                           "check_dtype_object": _NO_QUOTE},
    "FedDPDRDPMLClassifier": {"check_classifiers_train": _REDUCED, **_R3,
                              "check_dtype_object": _NO_QUOTE},
}


@parametrize_with_checks(
    [OutputPerturbationClassifier(epsilon=50.0, delta=1e-3, random_state=0),
     ObjectivePerturbationClassifier(epsilon=50.0, delta=1e-3, random_state=0),
     DPPCA(n_components=1, epsilon=1.0, random_state=0),
     DPDRDPMLClassifier(epsilon=50.0, delta=1e-2, n_components=1, random_state=0),
     FedDPDRDPMLClassifier(epsilon=50.0, delta=1e-2, n_components=1, random_state=0),
     RowNormClipper(5.0), PublicRangeScaler(-10.0, 10.0), PublicStandardScaler(1.0, 2.0),
     LPSVMClassifier(epsilon=50.0, quality="count", n_iterations=5, random_state=0),
     PublicOneHotEncoder(3),
     PrivateGridSearch(OutputPerturbationClassifier(loss="logistic", tol=1e-6),
                       {"regularization": [0.01, 0.1]}, epsilon=50.0, delta=1e-3,
                       random_state=0)],
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
