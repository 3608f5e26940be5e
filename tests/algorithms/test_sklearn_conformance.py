"""Every estimator passes scikit-learn's estimator checks, except where privacy forbids.

Expected failures, and why:

* ``check_classifiers_train`` for ``OutputPerturbationClassifier``: the check demands
  83% training accuracy on a small 3-class problem (about 100 rows) at the default
  budget; output perturbation's noise, of scale 2 / (n Lambda eps) per weight vector
  with eps split three ways, is larger than the weights themselves there. That is the
  privacy-utility trade-off, not a defect; objective perturbation passes.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from privkit.algorithms import ObjectivePerturbationClassifier, OutputPerturbationClassifier

EXPECTED = {
    "OutputPerturbationClassifier": {
        "check_classifiers_train": "noise at the default budget on ~100 rows (see module)",
    },
}


@parametrize_with_checks(
    [OutputPerturbationClassifier(random_state=0), ObjectivePerturbationClassifier(random_state=0)],
    expected_failed_checks=lambda est: EXPECTED.get(type(est).__name__, {}),
)
def test_sklearn_conformance(estimator, check):
    """The scikit-learn estimator check passes (or is an expected failure above)."""
    check(estimator)
