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

Park 2022's kernel-support estimators (``PrivateSVDD``, ``EquilibriumPointClassifier``,
``SVMWeightClassifier``) run with a learnt label set (delta > 0, a large epsilon) and 20
random features. Their expected failures (``_PARK``): six checks set ``n_components=1``,
and the random Fourier map needs an even F (a cosine and a sine per frequency); the
checks that expect ``fit`` to refuse NaN, objects that are not numbers, NaN or continuous
labels contradict privkit's rules R2-R3 (private rows and labels are never refused by
value: they become neutral records); and the empty-data check wants a message with the
number of rows, which is private under ``add_remove``. ``SVMSemiClassifier`` (its ``fit``
needs the public points Z) and ``SVMOutputClassifier`` (its ``predict`` is a private
release that spends the model's budget and draws fresh noise, by design) are not run.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from privkit.algorithms import (
    DPPCA,
    DPDRDPMLClassifier,
    DPSGDLinearSVM,
    EquilibriumPointClassifier,
    FedDPDRDPMLClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PrivateSVDD,
    PublicRangeScaler,
    PublicStandardScaler,
    RowNormClipper,
    SVMWeightClassifier,
)

_REDUCED = "one private principal component of 2-feature, 3-class blobs (see module)"
EXPECTED = {
    "OutputPerturbationClassifier": {
        "check_classifiers_train": "noise at the default budget on ~100 rows (see module)",
    },
    "DPDRDPMLClassifier": {"check_classifiers_train": _REDUCED},
    "FedDPDRDPMLClassifier": {"check_classifiers_train": _REDUCED},
}
_ODD = "sets n_components=1; the random Fourier map needs an even F (see module)"
_PARK = {
    **dict.fromkeys(("check_dont_overwrite_parameters", "check_fit2d_predict1d",
                     "check_methods_subset_invariance", "check_methods_sample_order_invariance",
                     "check_fit2d_1sample", "check_fit2d_1feature"), _ODD),
    "check_estimators_nan_inf": "R3: a non-finite private row is a neutral record",
    "check_dtype_object": "R3: an entry that is not a number makes a neutral record",
    "check_estimators_empty_data_messages": "the message would carry n, private (R5)",
}
_PARK_LABELS = {**_PARK,
                "check_classifiers_regression_target": "R2: labels are not refused by value",
                "check_supervised_y_no_nan": "R2: a NaN label makes a neutral record"}
EXPECTED |= {"PrivateSVDD": _PARK, "EquilibriumPointClassifier": _PARK_LABELS,
             "SVMWeightClassifier": _PARK_LABELS}


@parametrize_with_checks(
    [OutputPerturbationClassifier(random_state=0), ObjectivePerturbationClassifier(random_state=0),
     DPPCA(n_components=1, epsilon=1.0, random_state=0),
     DPDRDPMLClassifier(epsilon=20.0, n_components=1, random_state=0),
     FedDPDRDPMLClassifier(epsilon=20.0, n_components=1, random_state=0),
     RowNormClipper(5.0), PublicRangeScaler(-10.0, 10.0), PublicStandardScaler(1.0, 2.0),
     PrivateSVDD(n_components=20, random_state=0),
     EquilibriumPointClassifier(epsilon=1000.0, delta=1e-3, n_components=20, r_max=0.5,
                                random_state=0),
     SVMWeightClassifier(epsilon=1000.0, delta=1e-3, n_components=20, random_state=0)],
    expected_failed_checks=lambda est: EXPECTED.get(type(est).__name__, {}),
)
def test_sklearn_conformance(estimator, check):
    """The scikit-learn estimator check passes (or is an expected failure above)."""
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(
    [DPSGDLinearSVM(epsilon=20.0, sampling_rate=0.2, epochs=2, random_state=0)],
    expected_failed_checks=lambda est: EXPECTED.get(type(est).__name__, {}),
)
def test_sklearn_conformance_dp_sgd(estimator, check):
    """The scikit-learn estimator check passes for the opacus-trained estimator."""
    check(estimator)
