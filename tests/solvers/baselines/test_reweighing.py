"""Reweighing (Kamiran & Calders 2012, Sec. 4.2): the weights by their definition, counted row by
row; the fit as scikit-learn's weighted logistic regression; the gap it narrows; and the solver
on the frontier and in the estimator (the matrix walk runs it from the page and the CLI)."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from solver_data import two_groups, two_groups_flags, two_groups_frame

from engine.cli import main
from engine.estimator import FairFrontClassifier
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.rates import positive_rates
from engine.models import ModelSpec
from engine.problem import Problem
from engine.runs import Store
from engine.runs.frontier import frontier
from engine.runs.results import sweep_results
from engine.runs.worker import execute_run
from engine.solvers import solve, solver_card
from engine.solvers.baselines.cards_reweighing import ReweighingConfig
from engine.solvers.baselines.reweighing import reweighing_weights

DP = ConstraintSpec("DP", 0.05, None)


@pytest.fixture(scope="module")
def data():
    return two_groups(n=1500)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_rows_weight_is_its_cells_expected_share_over_its_observed_share(seed):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 3, 200)
    y = (rng.random(200) < 0.2 + 0.25 * groups).astype(np.int8)
    weights = reweighing_weights(groups, y)
    n = len(y)
    for i in range(n):  # P(s)·P(c) / P(s, c), by counting
        p_s = np.sum(groups == groups[i]) / n
        p_c = np.sum(y == y[i]) / n
        p_sc = np.sum((groups == groups[i]) & (y == y[i])) / n
        assert weights[i] == pytest.approx(p_s * p_c / p_sc, rel=1e-12)
    assert weights.mean() == pytest.approx(1.0, rel=1e-12)
    for g in range(3):  # in the weighted data each group has the label's overall rate
        member = groups == g
        weighted_rate = np.sum(weights[member] * y[member]) / np.sum(weights[member])
        assert weighted_rate == pytest.approx(y.mean(), rel=1e-12)


def test_the_fit_is_scikit_learns_logistic_regression_with_the_weights(data):
    problem = Problem(data, ModelSpec(), DP)
    solution = solve(problem, "reweighing", ReweighingConfig(tolerance=1e-12))
    train = data.train
    reference = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(
        problem.features("train"),
        train.y,
        sample_weight=reweighing_weights(train.groups, train.y),
    )
    np.testing.assert_allclose(
        problem.scores(solution.params, "train"),
        reference.decision_function(problem.features("train")),
        atol=1e-4,
    )
    assert solution.reason.endswith(
        "rows reweighed by P(s)·P(c)/P(s, c), from "
        f"{reweighing_weights(train.groups, train.y).min():.3g} to "
        f"{reweighing_weights(train.groups, train.y).max():.3g}"
    )


def test_reweighing_narrows_the_unconstrained_models_selection_rate_gap(data):
    problem = Problem(data, ModelSpec(), DP)
    gaps = {}
    for solver in ("unconstrained", "reweighing"):
        scores = problem.scores(solve(problem, solver).params, "train")
        gaps[solver] = np.ptp(positive_rates(scores, data.train.groups))
    assert gaps["unconstrained"] > 0.2  # the groups differ in x and in y
    assert gaps["reweighing"] < 0.6 * gaps["unconstrained"]


def test_it_trains_classifiers_under_dp_only_and_says_why_elsewhere():
    card = solver_card("reweighing")
    assert card.families() == ["DP"]
    assert "statistical parity" in card.refusal(ModelSpec(), "EO")
    assert "κ plays no part" in card.kappa_free


def test_a_kappa_sweep_puts_one_point_per_kappa_on_the_frontier(tmp_path, monkeypatch):
    table = tmp_path / "two_groups.csv"
    two_groups_frame().to_csv(table, index=False)
    home = tmp_path / "runs"
    monkeypatch.setenv("FAIRFRONT_HOME", str(home))  # queued runs stay queued: run here
    monkeypatch.setattr(
        importlib.import_module("engine.runs.submit"), "ensure_runner", lambda *args, **kwargs: None
    )
    assert (
        main(
            [
                "sweep",
                *two_groups_flags(table),
                "--constraint",
                "dp",
                "--solvers",
                "reweighing",
                "--kappas",
                "0.1",
                "0.05",
            ]
        )
        == 0
    )
    store = Store(home)
    (sweep,) = store.sweeps()
    for row in store.runs(sweep_id=sweep["id"]):
        assert execute_run(str(home), row.id) == "converged"
    points = frontier(sweep_results(store, sweep["id"]), metric="constraint").points
    assert sorted((p.solver, p.kappa) for p in points) == [
        ("reweighing", 0.05),
        ("reweighing", 0.1),
    ]


def test_the_estimator_fits_and_predicts_with_it():
    frame = two_groups_frame(n=800)
    X, y = frame.drop(columns="y"), frame["y"]
    clf = FairFrontClassifier(solver="reweighing", constraint="DP", kappa=0.05, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y, sensitive_features="sex")
    assert set(clf.predict(X, sensitive_features=X["sex"])) <= {0, 1}
    free = FairFrontClassifier(solver="unconstrained", constraint=None, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        free.fit(X, y, sensitive_features="sex")
    assert clf.metrics_["train"]["dp"] < free.metrics_["train"]["dp"]
