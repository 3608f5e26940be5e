"""Pipeline leak detection reads the pipeline's structure (issue 27): no
PrivacyLeakWarning for composites of public transformers (ColumnTransformer,
FeatureUnion, nested Pipelines), one for a data-fitted transformer upstream of a privkit
estimator, at any depth."""

import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, Normalizer, StandardScaler

from privkit.algorithms import OutputPerturbationClassifier
from privkit.algorithms._bounds import upstream_fitted_steps
from privkit.algorithms.preprocessing import (
    PublicOneHotEncoder,
    PublicRangeScaler,
    RowNormClipper,
)
from privkit.errors import PrivacyLeakWarning


def mixed(n=120, seed=0):
    """Two numeric columns in [0, 10] and one categorical column of 3 levels."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 10, n), rng.uniform(0, 10, n),
                         rng.integers(0, 3, n)]).astype(float)
    return X, (X[:, 0] > 5).astype(int)


def public_columns():
    return ColumnTransformer([("num", PublicRangeScaler(0.0, 10.0), [0, 1]),
                              ("cat", PublicOneHotEncoder(3), [2])])


def clf():
    return OutputPerturbationClassifier(classes=[0, 1], loss="logistic", tol=1e-6,
                                        row_norm_bound=2.0, random_state=0)


def fit_silently(pipeline, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        return pipeline.fit(X, y)


@pytest.mark.parametrize("pipeline", [
    pytest.param(lambda: make_pipeline(public_columns(), clf()), id="column-transformer"),
    pytest.param(lambda: make_pipeline(public_columns(), RowNormClipper(2.0), clf()),
                 id="column-transformer-then-clipper"),
    pytest.param(lambda: make_pipeline(
        ColumnTransformer([("num", make_pipeline(PublicRangeScaler(0.0, 10.0),
                                                 FunctionTransformer(np.sqrt)), [0, 1])],
                          remainder="drop"), clf()), id="nested-pipeline-in-columns"),
    pytest.param(lambda: make_pipeline(
        FeatureUnion([("scaled", PublicRangeScaler(0.0, 10.0)),
                      ("normalised", Normalizer())]), clf()), id="feature-union"),
    pytest.param(lambda: Pipeline([("outer", make_pipeline(public_columns())),
                                   ("inner", make_pipeline(RowNormClipper(2.0), clf()))]),
                 id="nested-pipelines"),
])
def test_no_warning_for_composites_of_public_transformers(pipeline):
    """A ColumnTransformer of privkit's public transformers (what mixed-column data such
    as Adult needs), a FeatureUnion, stateless transformers and nested pipelines learn
    nothing from the rows: fitting raises no PrivacyLeakWarning (warnings are errors)."""
    X, y = mixed()
    fitted = fit_silently(pipeline(), X, y)
    assert fitted.score(X, y) >= 0.0  # fitted end to end


@pytest.mark.parametrize(("pipeline", "culprit"), [
    pytest.param(lambda: make_pipeline(StandardScaler(), clf()),
                 r"'standardscaler' \(StandardScaler\)", id="scaler"),
    pytest.param(lambda: make_pipeline(
        ColumnTransformer([("num", StandardScaler(), [0, 1])], remainder="passthrough"),
        clf()), r"'columntransformer' \(ColumnTransformer\)", id="scaler-in-columns"),
    pytest.param(lambda: make_pipeline(
        ColumnTransformer([("num", PublicRangeScaler(0.0, 10.0), [0, 1])],
                          remainder=StandardScaler()), clf()),
                 r"'columntransformer' \(ColumnTransformer\)", id="scaler-as-remainder"),
    pytest.param(lambda: Pipeline([("scale", StandardScaler()),
                                   ("inner", make_pipeline(RowNormClipper(2.0), clf()))]),
                 r"'scale' \(StandardScaler\)", id="scaler-outside-nested-pipeline"),
])
def test_a_data_fitted_transformer_upstream_warns(pipeline, culprit):
    """A StandardScaler fitted on the training rows before a privkit estimator, directly,
    inside a ColumnTransformer (as a member or the remainder), or in an outer pipeline
    around the estimator's own: one PrivacyLeakWarning naming the step."""
    X, y = mixed()
    with pytest.warns(PrivacyLeakWarning, match=culprit) as record:
        pipeline().fit(X, y)
    assert sum(issubclass(w.category, PrivacyLeakWarning) for w in record) == 1


def test_siblings_in_a_union_are_not_upstream():
    """upstream_fitted_steps follows the path to the estimator: a StandardScaler beside it
    in a FeatureUnion does not feed it; one before the union in the pipeline does; an
    estimator that is not in the pipeline gives None."""
    estimator = clf()
    union = FeatureUnion([("scaled", StandardScaler()),
                          ("model", make_pipeline(RowNormClipper(2.0), estimator))])
    assert upstream_fitted_steps(make_pipeline(union), estimator) == []
    assert upstream_fitted_steps(make_pipeline(StandardScaler(), union), estimator) == [
        "'standardscaler' (StandardScaler)"]
    assert upstream_fitted_steps(make_pipeline(StandardScaler(), clf()), estimator) is None


def test_an_estimator_fitted_outside_a_pipeline_does_not_warn():
    """A privkit estimator fitted on its own, or while an unrelated pipeline is being
    fitted elsewhere on the stack (here: inside a transformer's fit), does not warn."""
    X, y = mixed()

    class FitsAModel(FunctionTransformer):
        def fit(self, X, y=None):
            clf().fit(X[:, :2] / 20.0, (X[:, 0] > 5).astype(int))
            return super().fit(X, y)

    fit_silently(clf(), X[:, :2] / 20.0, y)
    fit_silently(make_pipeline(StandardScaler(), FitsAModel()), X, y)
