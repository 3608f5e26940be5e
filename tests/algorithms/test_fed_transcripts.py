"""The transcripts of DP-PCA, DPDR-DPML, FedDPDR-DPML and DP-SGD on the channels of issue
22, checked exactly: on each channel's neighbouring datasets, with the same seed, a fit
gives the same transcript but for the values of noisy arrays (attribute names, shapes,
dtypes, labels, counts, plans, guarantees, ledgers, warnings, errors, the query answers'
shapes), both with ``classes=`` declared and with the label set released privately.

This is the deterministic half of the transcript audit (``privkit.audits.transcript``
measures the noisy values too, statistically): anything here that differs between the two
datasets is a leak no noise covers. Every test is deterministic (fixed seeds, no
tolerance).
"""

import warnings

import numpy as np
import pytest
from _fed_transcripts import case_transcript, channel_pair

from privkit import Neighbouring
from privkit.algorithms import (
    DPPCA,
    DPDRDPMLClassifier,
    DPSGDLinearSVM,
    FedDPDRDPMLClassifier,
)

ESTIMATORS = [DPPCA, DPDRDPMLClassifier, FedDPDRDPMLClassifier, DPSGDLinearSVM]
CHANNELS = ["record", "new_label", "non_finite", "at_bound", "beyond_bound"]
SENTINEL = 123456.789


def fit(estimator, case, X, y):
    """``estimator.fit`` on (X, y), or on X alone for an unsupervised case."""
    args = (X,) if case.y is None else (X, y)
    return estimator.fit(*args, **case.fit_params)


def cases():
    for cls in ESTIMATORS:
        modes = [True] if cls is DPPCA else [True, False]
        for declared in modes:
            for channel in CHANNELS:
                if cls is DPPCA and channel == "new_label":
                    continue
                yield pytest.param(cls, declared, channel,
                                   id=f"{cls.__name__}-{'declared' if declared else 'released'}"
                                      f"-{channel}")


@pytest.mark.parametrize(("cls", "declared", "channel"), list(cases()))
def test_channel_changes_nothing_but_noise(cls, declared, channel):
    """Both fits succeed without a warning, and their transcripts agree on everything but
    the values of noisy arrays (seed 0); under add-remove a non-finite record is removed,
    so even those agree."""
    case = cls.transcript_case(declare_classes=declared)
    first, second = channel_pair(case, channel)
    exact = channel == "non_finite" and case.relation is Neighbouring.ADD_REMOVE
    a = case_transcript(case, first, seed=0, values=exact)
    b = case_transcript(case, second, seed=0, values=exact)
    assert a["error"] is None
    assert a["warnings"] == []
    assert a == b


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_transcript_case_is_small_and_consistent(cls):
    """The declared case: an unfitted estimator on at most 200 rows whose guarantee, once
    fitted on the case's data, is the case's claim at its delta; in both label modes the
    fitted model knows every label of the data and predicts on the probes."""
    for declared in (True, False):
        case = cls.transcript_case(declare_classes=declared)
        assert not hasattr(case.estimator, "plan_")
        assert len(case.X) <= 200
        estimator = fit(case.estimator.set_params(random_state=1), case, case.X, case.y)
        assert estimator.guarantee_.epsilon_at(case.delta) == pytest.approx(case.epsilon,
                                                                            rel=1e-3)
        if case.y is not None:
            assert set(np.unique(case.y)) <= set(estimator.classes_.tolist())
            assert estimator.predict(case.probes).shape == (len(case.probes),)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_refusals_never_quote_the_data(cls):
    """Inputs that are not a table of numbers are refused naming X or y, without the
    sentinel value they hold (scikit-learn's own messages print the array). An object
    entry that is not a number is no refusal (R3): it is NaN, its row neutral."""
    case = cls.transcript_case(declare_classes=True)
    estimator = case.estimator
    text = np.array([[str(SENTINEL), "abc"]] * len(case.X), dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit(estimator, case, text, case.y)
    bad_inputs = [(np.array([SENTINEL, 1.0]), case.y)]
    if case.y is not None:
        bad_inputs.append((case.X, np.column_stack([case.y, case.y]) + SENTINEL))
    for X, y in bad_inputs:
        with pytest.raises(ValueError) as info:
            fit(estimator, case, X, y)
        assert "123456" not in str(info.value)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_queries_are_validated_strictly(cls):
    """A query row with a non-finite entry is refused with a clear error (queries are not
    private), never answered with a class or a NaN."""
    case = cls.transcript_case(declare_classes=True)
    estimator = fit(case.estimator.set_params(random_state=0), case, case.X, case.y)
    bad = case.probes.copy()
    bad[0, 0] = np.nan
    for method in ("predict", "decision_function", "transform"):
        if hasattr(estimator, method):
            with pytest.raises(ValueError, match="NaN"):
                getattr(estimator, method)(bad)
    if hasattr(estimator, "inverse_transform"):
        with pytest.raises(ValueError, match="non-finite"):
            estimator.inverse_transform(np.array([[np.nan]]))
