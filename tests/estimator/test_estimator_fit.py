"""Fitting and predicting: the data as the app prepares it, the same model from a DataFrame and
from arrays, labels, groups, scores that agree with the engine's report, and bad input refused
with a sentence."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from estimator_tables import numeric_table, toy_table

from engine.errors import UserError
from engine.estimator import FairFrontClassifier, FairFrontRegressor
from engine.verdict import Label

FAST = {"max_iter": 2000, "validation_fraction": 0.0, "random_state": 0}


def fit_quietly(estimator, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y, **fit_params)


def test_a_dataframe_and_the_same_numbers_as_arrays_give_the_same_model():
    """Numbers standardised alike, the group from a column name or from its values: the same
    groups, split and weights (IDCA under pSP, then the reference solver)."""
    X, y = numeric_table()
    for params in ({"solver": "idca", "kappa": 0.05}, {"solver": "unconstrained"}):
        by_name = fit_quietly(FairFrontClassifier(**params, **FAST), X, y, sensitive_features="g")
        by_values = fit_quietly(
            FairFrontClassifier(**params, **FAST),
            X.to_numpy(),
            y,
            sensitive_features=X["g"].to_numpy(),
        )
        assert list(by_name.groups_) == list(by_values.groups_) == ["0", "1"]
        np.testing.assert_allclose(by_name.coef_, by_values.coef_, rtol=0, atol=1e-10)
        np.testing.assert_allclose(by_name.intercept_, by_values.intercept_, rtol=0, atol=1e-10)
        assert list(by_name.feature_names_in_) == ["x1", "x2", "g"]
        assert not hasattr(by_values, "feature_names_in_")


def test_categories_are_one_hot_encoded_and_named_in_the_model_inputs():
    X, y = toy_table()
    clf = fit_quietly(FairFrontClassifier(**FAST), X, y, sensitive_features="group")
    names = list(clf.model_feature_names_)
    assert names[:2] == ["x1", "x2"]
    assert {"colour=blue", "colour=green", "colour=red", "group=a", "group=b"} <= set(names)
    assert clf.coef_.shape == (1, len(names))
    assert clf.n_features_in_ == 4


def test_text_labels_are_classes_and_the_second_is_positive():
    X, y = toy_table()
    clf = fit_quietly(FairFrontClassifier(**FAST), X, y, sensitive_features="group")
    assert list(clf.classes_) == ["no", "yes"]
    scores = clf.decision_function(X)
    assert set(clf.predict(X)) <= {"no", "yes"}
    np.testing.assert_array_equal(clf.predict(X), np.where(scores > 0, "yes", "no"))
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-scores)))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_boolean_labels_keep_their_type():
    X, y = toy_table()
    clf = fit_quietly(FairFrontClassifier(**FAST), X, y == "yes", sensitive_features="group")
    assert clf.classes_.tolist() == [False, True]
    assert clf.predict(X).dtype == bool


def test_train_metrics_are_the_engines_and_the_verdict_is_set():
    """With every row training, the estimator's accuracy on them is the run's exact train
    accuracy: it scores as the engine does."""
    X, y = toy_table()
    clf = fit_quietly(FairFrontClassifier(kappa=0.1, **FAST), X, y, sensitive_features="group")
    assert clf.score(X, y) == pytest.approx(clf.metrics_["train"]["accuracy"], abs=1e-12)
    assert clf.verdict_.kappa == 0.1
    assert clf.verdict_.label in set(Label)
    assert clf.verdict_.check("train") is not None
    assert clf.n_iter_ == 2000 and clf.status_ == "budget"
    assert {"surrogate", "final"} <= set(clf.history_["kind"])
    final = clf.history_[clf.history_["kind"] == "final"].iloc[-1]
    assert final["train.accuracy"] == pytest.approx(clf.metrics_["train"]["accuracy"])


def test_a_validation_split_is_held_out_and_judged():
    X, y = toy_table()
    clf = fit_quietly(
        FairFrontClassifier(max_iter=2000, validation_fraction=0.25, random_state=0),
        X,
        y,
        sensitive_features="group",
    )
    assert set(clf.metrics_) == {"train", "val"}
    assert clf.verdict_.check("val") is not None


def test_intersection_of_several_sensitive_columns():
    X, y = toy_table()
    clf = fit_quietly(FairFrontClassifier(**FAST), X, y, sensitive_features=["group", "colour"])
    assert len(clf.groups_) == 6
    assert "a × blue" in set(clf.groups_)
    two_d = fit_quietly(
        FairFrontClassifier(**FAST), X, y, sensitive_features=X[["group", "colour"]].to_numpy()
    )
    assert set(two_d.groups_) == set(clf.groups_)


def test_sensitive_values_are_matched_by_position_not_by_index():
    """A shuffled index (as after cross-validation slicing) does not move the groups."""
    X, y = toy_table()
    shuffled = X.set_axis(np.random.default_rng(0).permutation(len(X)), axis=0)
    plain = fit_quietly(FairFrontClassifier(**FAST), X, y, sensitive_features=X["group"])
    moved = fit_quietly(
        FairFrontClassifier(**FAST), shuffled, y, sensitive_features=shuffled["group"]
    )
    np.testing.assert_allclose(plain.coef_, moved.coef_, atol=1e-10)


def test_a_model_with_group_cross_terms_needs_the_sensitive_features_to_predict():
    X, y = toy_table()
    clf = fit_quietly(
        FairFrontClassifier(cross_terms=True, **FAST),
        X,
        y,
        sensitive_features=X["group"].to_numpy(),
    )
    assert clf.needs_sensitive_features_
    with pytest.raises(ValueError, match="needs sensitive_features to predict"):
        clf.predict(X)
    accuracy = clf.score(X, y, sensitive_features=X["group"].to_numpy())
    assert accuracy == pytest.approx(clf.metrics_["train"]["accuracy"], abs=1e-12)
    assert clf.score(X, y, sensitive_features="group") == accuracy  # a column of X alike
    with pytest.raises(UserError, match="never seen"):
        clf.predict(X, sensitive_features=np.full(len(X), "c"))


def test_a_model_without_groups_predicts_without_sensitive_features():
    X, y = toy_table()
    clf = fit_quietly(FairFrontClassifier(**FAST), X, y, sensitive_features="group")
    assert not clf.needs_sensitive_features_
    np.testing.assert_array_equal(clf.predict(X), clf.predict(X, sensitive_features="group"))


def test_without_sensitive_features_one_group_is_trained_without_a_constraint():
    X, y = toy_table()
    with pytest.warns(UserWarning, match="one group"):
        clf = FairFrontClassifier(**FAST).fit(X, y)
    assert list(clf.groups_) == ["all"]
    assert clf.solver_ == "unconstrained" and clf.constraint_ is None
    assert clf.verdict_.label is Label.UNCONSTRAINED


def test_the_squared_hinge_objective_has_no_probabilities():
    X, y = toy_table()
    clf = FairFrontClassifier(objective="squared_hinge", **FAST)
    assert not hasattr(clf, "predict_proba")
    fit_quietly(clf, X, y, sensitive_features="group")
    assert not hasattr(clf, "predict_proba")
    assert hasattr(FairFrontClassifier(), "predict_proba")


def test_regressor_trains_a_real_valued_label_by_paper_002():
    X, _ = toy_table()
    target = 2.0 * X["x1"] - X["x2"] + np.random.default_rng(0).normal(scale=0.3, size=len(X))
    reg = fit_quietly(
        FairFrontRegressor(validation_fraction=0.0, random_state=0),
        X,
        target,
        sensitive_features="group",
    )
    assert reg.solver_ == "badr_gd"
    assert reg.score(X, target) == pytest.approx(reg.metrics_["train"]["r2"], abs=1e-12)
    assert reg.score(X, target) > 0.8
    assert np.ndim(reg.intercept_) == 0 and reg.coef_.shape == (len(reg.model_feature_names_),)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"solver": "no_such_solver"}, "unknown solver 'no_such_solver'"),
        ({"kappa": -0.1}, "kappa must be a finite number ≥ 0"),
        ({"kappa": 2.0}, "outside \\(0, 1\\]"),
        ({"kappa": "small"}, "kappa must be a number"),
        ({"constraint": "fair"}, "Unknown constraint family 'fair'"),
        ({"interval": (0.5, 0.2)}, "0 ≤ α < β ≤ 1"),
        ({"interval": 0.3}, "interval is two numbers"),
        ({"model": "mlp"}, "idca trains linear models only"),
        ({"solver_options": {"outer": 3}}, "unknown option\\(s\\) outer"),
        ({"solver_options": {"outer_iterations": "many"}}, "needs a whole number"),
        ({"validation_fraction": 1.0}, "validation_fraction"),
        ({"max_iter": 0}, "iteration budget must be at least 1"),
        ({"objective": "squared"}, "squared"),
    ],
)
def test_bad_parameters_are_refused_with_a_sentence(params, message):
    X, y = toy_table(100)
    with pytest.raises(ValueError, match=message) as caught:
        FairFrontClassifier(**params).fit(X, y, sensitive_features="group")
    assert isinstance(caught.value, UserError)


def test_bad_data_is_refused_with_a_sentence():
    X, y = toy_table(100)
    clf = FairFrontClassifier(**FAST)
    with_nan = X.assign(x1=X["x1"].where(X.index != 3))
    with pytest.raises(ValueError, match="column 'x1' of X has 1 NaN"):
        clf.fit(with_nan, y, sensitive_features="group")
    with pytest.raises(ValueError, match="Input X contains NaN"):
        clf.fit(with_nan[["x1", "x2"]].to_numpy(), y, sensitive_features=X["group"])
    with pytest.raises(ValueError, match="'sex', not a column of X"):
        clf.fit(X, y, sensitive_features="sex")
    with pytest.raises(ValueError, match="sensitive_features has 99 rows and X 100"):
        clf.fit(X, y, sensitive_features=X["group"].to_numpy()[:99])
    with pytest.raises(ValueError, match="X is an array without column names"):
        clf.fit(X[["x1", "x2"]].to_numpy(), y, sensitive_features="group")
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        clf.fit(X, X["colour"], sensitive_features="group")
    with pytest.raises(ValueError, match="one class"):
        clf.fit(X, np.full(len(X), "yes"), sensitive_features="group")
    with pytest.raises(ValueError, match="datetime"):
        clf.fit(X.assign(when=pd.Timestamp("2020-01-01")), y, sensitive_features="group")


def test_nan_at_prediction_is_refused():
    X, y = toy_table(100)
    clf = fit_quietly(FairFrontClassifier(**FAST), X, y, sensitive_features="group")
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(X.assign(x2=np.inf))
