"""Any private values, every kernel-support estimator of Park 2022 (issue 22): no
exception, no warning, so no text that could carry a value."""

import warnings

import numpy as np
from _transcripts import SENTINEL
from hypothesis import given, settings
from hypothesis import strategies as st

from privkit.algorithms.svdd.equilibrium import EquilibriumPointClassifier
from privkit.algorithms.svdd.svdd import PrivateSVDD
from privkit.algorithms.svdd.svm_baselines import (
    SVMOutputClassifier,
    SVMSemiClassifier,
    SVMWeightClassifier,
)

_VALUES = st.sampled_from([0.0, 1.0, -2.5, SENTINEL, -SENTINEL, 1e-300, 1e300, 1e308,
                           -1e308, np.nan, np.inf, -np.inf])


def _all_estimators(declared):
    classes = [0, 1, 2] if declared else None
    delta = 1e-3
    return [
        PrivateSVDD(epsilon=1.0, nu=0.25, n_components=4, relation="add_remove",
                    random_state=0),
        EquilibriumPointClassifier(epsilon=2.0, delta=delta, n_components=4, n_iter=3,
                                   r_max=0.5, relation="add_remove", classes=classes,
                                   random_state=0),
        SVMWeightClassifier(epsilon=2.0, delta=delta, n_components=4, classes=classes,
                            random_state=0),
        SVMOutputClassifier(epsilon=2.0, delta=delta, n_components=4, classes=classes,
                            random_state=0),
        SVMSemiClassifier(epsilon=2.0, delta=delta, n_components=4, classes=classes,
                          random_state=0),
    ]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 8), entries=st.lists(_VALUES, min_size=16, max_size=16),
       labels=st.lists(st.sampled_from([0.0, 1.0, 2.0, 9.0, SENTINEL, np.nan]),
                       min_size=8, max_size=8),
       declared=st.booleans())
def test_no_private_value_refuses_warns_or_is_echoed(n, entries, labels, declared):
    """Any values in the private rows and labels (NaN, infinities, 1e308, a sentinel,
    labels outside the set): every estimator fits and predicts on public probes with no
    exception and no warning of any kind, so no text can carry a private value."""
    X = np.array(entries[:2 * n]).reshape(n, 2)
    y = np.array(labels[:n])
    probes = np.array([[0.0, 0.0], [1.0, -1.0]])
    for model in _all_estimators(declared):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if isinstance(model, PrivateSVDD):
                model.fit(X).score_samples(probes)
                continue
            fit_params = {"Z": probes} if isinstance(model, SVMSemiClassifier) else {}
            model.fit(X, y, **fit_params)
            if model.classes_.size:
                model.predict(probes)
            assert SENTINEL not in model.classes_.tolist() or not declared
