"""The estimators inside scikit-learn: clone, pipelines, and grid search over κ with the
sensitive features as fit metadata, passed the legacy way and routed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from estimator_tables import toy_table
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from engine.estimator import FairFrontClassifier

KAPPAS = [0.02, 0.2]


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def small(**params) -> FairFrontClassifier:
    return FairFrontClassifier(max_iter=500, random_state=0, **params)


def test_clone_keeps_the_parameters_and_drops_the_fit():
    X, y = toy_table(200)
    clf = small(kappa=0.1, interval=(0.05, 0.3)).fit(X, y, sensitive_features="group")
    copy = clone(clf)
    assert copy.get_params() == clf.get_params()
    assert not hasattr(copy, "coef_")


def test_in_a_pipeline_after_a_scaler_with_the_sensitive_values_as_a_step_parameter():
    X, y = toy_table(200)
    numbers, groups = X[["x1", "x2"]].to_numpy(), X["group"].to_numpy()
    pipe = make_pipeline(StandardScaler(), small())
    pipe.fit(numbers, y, fairfrontclassifier__sensitive_features=groups)
    assert list(pipe[-1].groups_) == ["a", "b"]
    assert set(pipe.predict(numbers)) <= {"no", "yes"}


def test_in_a_pipeline_after_a_column_transformer_with_routed_sensitive_values():
    X, y = toy_table(200)
    prepare = ColumnTransformer(
        [("numbers", StandardScaler(), ["x1", "x2"]), ("colour", OneHotEncoder(), ["colour"])]
    )
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(prepare, small().set_fit_request(sensitive_features=True))
        pipe.fit(X, y, sensitive_features=X["group"].to_numpy())
        assert pipe[-1].n_features_in_ == 5
        assert pipe.score(X, y) > 0.6


@pytest.mark.parametrize("sensitive", ["column name", "values"])
def test_grid_search_over_kappa_with_the_sensitive_features_passed_to_fit(sensitive):
    """The legacy path: GridSearchCV slices fit parameters as long as X (the values) and passes
    others (a column name) as they are."""
    X, y = toy_table(300)
    given = "group" if sensitive == "column name" else X["group"].to_numpy()
    search = GridSearchCV(small(), {"kappa": KAPPAS}, cv=2, error_score="raise")
    search.fit(X, y, sensitive_features=given)
    assert search.best_params_["kappa"] in KAPPAS
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_estimator_.verdict_.kappa == search.best_params_["kappa"]


@pytest.mark.parametrize("sensitive", ["column name", "values"])
def test_grid_search_over_kappa_with_routed_sensitive_features(sensitive):
    """Metadata routing: the values are sliced with the folds (unsliced, they would be refused
    as longer than the fold's X), a column name is passed as it is."""
    X, y = toy_table(300)
    given = "group" if sensitive == "column name" else X["group"].to_numpy()
    with sklearn.config_context(enable_metadata_routing=True):
        estimator = small().set_fit_request(sensitive_features=True)
        search = GridSearchCV(estimator, {"kappa": KAPPAS}, cv=2, error_score="raise")
        search.fit(X, y, sensitive_features=given)
    assert search.best_params_["kappa"] in KAPPAS
    assert len(search.best_estimator_.groups_) == 2


def test_routed_sensitive_features_reach_scoring_for_a_model_that_needs_them():
    """Scoring requests them by default, so a model with group cross-terms is scored."""
    X, y = toy_table(300)
    with sklearn.config_context(enable_metadata_routing=True):
        estimator = small(cross_terms=True).set_fit_request(sensitive_features=True)
        search = GridSearchCV(estimator, {"kappa": KAPPAS}, cv=2, error_score="raise")
        search.fit(X, y, sensitive_features=X["group"].to_numpy())
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
