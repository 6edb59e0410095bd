"""A fitted estimator exported as a model file (engine.model_file) predicts, once reloaded,
what the estimator predicts."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from estimator_tables import toy_table

from engine.estimator import FairFrontClassifier, FairFrontRegressor
from engine.model_file import load_model


def fit(estimator, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y, **fit_params)


@pytest.mark.parametrize("cross_terms", [False, True])
def test_a_reloaded_classifier_predicts_as_the_estimator(tmp_path, cross_terms):
    X, y = toy_table()
    clf = fit(
        FairFrontClassifier(cross_terms=cross_terms, max_iter=2000, random_state=0),
        X,
        y,
        sensitive_features="group",
    )
    path = tmp_path / "model.npz"
    clf.export(path)
    loaded = load_model(path)
    assert loaded.classes == ("no", "yes")
    assert loaded.group_names == tuple(clf.groups_)
    assert loaded.about["estimator"] == "FairFrontClassifier"
    assert loaded.about["verdict"] == clf.verdict_.summary
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X, sensitive_features="group"))
    np.testing.assert_allclose(
        loaded.scores(X), clf.decision_function(X, sensitive_features="group"), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        loaded.predict_proba(X), clf.predict_proba(X, sensitive_features="group"), atol=1e-12
    )


def test_sensitive_values_given_without_a_name_are_read_from_a_column_named_sensitive(tmp_path):
    X, y = toy_table()
    groups = X.pop("group").to_numpy()
    clf = fit(
        FairFrontClassifier(cross_terms=True, max_iter=2000, random_state=0),
        X,
        y,
        sensitive_features=groups,
    )
    clf.export(tmp_path / "model.npz")
    loaded = load_model(tmp_path / "model.npz")
    assert loaded.columns[-1] == "sensitive"
    np.testing.assert_array_equal(
        loaded.predict(X.assign(sensitive=groups)), clf.predict(X, sensitive_features=groups)
    )


def test_a_model_of_one_group_and_a_regression_are_exported_too(tmp_path):
    X, y = toy_table()
    one_group = fit(FairFrontClassifier(random_state=0), X, y)
    one_group.export(tmp_path / "one.npz")
    loaded = load_model(tmp_path / "one.npz")
    assert loaded.group_map is None
    np.testing.assert_array_equal(loaded.predict(X), one_group.predict(X))
    target = X["x1"] - 2.0 * X["x2"]
    reg = fit(FairFrontRegressor(random_state=0), X, target, sensitive_features="group")
    reg.export(tmp_path / "reg.npz")
    np.testing.assert_allclose(
        load_model(tmp_path / "reg.npz").predict(X), reg.predict(X), rtol=0, atol=1e-12
    )


def test_a_pickled_estimator_predicts_as_the_original():
    X, y = toy_table()
    clf = fit(
        FairFrontClassifier(cross_terms=True, max_iter=500, random_state=0),
        X,
        y,
        sensitive_features="group",
    )
    copy = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(
        copy.predict(X, sensitive_features="group"), clf.predict(X, sensitive_features="group")
    )
