"""Regression as a task of its own: ridge regression and the squared-hinge SVM through the
unconstrained solver against independent fits, the exact regression report, and the sentences
that refuse an objective or a constraint family of another task."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import scipy.optimize
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score

from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.data.prepared import Prepared
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.objectives import LogisticLoss, SquaredHingeLoss, SquaredLoss
from engine.problem import Problem
from engine.solvers import solve, solver_card, solver_names
from engine.solvers.budget import Budget
from engine.solvers.paper000.cards_sgd import SGDConfig
from engine.solvers.reference.cards import UnconstrainedConfig
from engine.task import Task

L2 = 0.1
CLASSIFIER_ONLY = {
    "accuracy",
    "auc",
    "psp",
    "pdp",
    "sp",
    "dp",
    "eo",
    "eopp",
    "majority",
    "positive_rate",
    "group_auc_gap",
    "independence",
    "separation",
    "inaccuracy",
}


def toy_data(n: int = 500, seed: int = 0, task: Task = Task.REGRESSION) -> Prepared:
    """Two groups a, b (b shifted in x1 and in the label); y = 1.5 x1 − x2 + 0.5·[b] + noise,
    real, or its sign for a classifier."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 2, n)
    x1, x2 = rng.normal(size=n) + 0.5 * group, rng.normal(size=n)
    y = 1.5 * x1 - x2 + 0.5 * group + rng.normal(scale=0.7, size=n)
    label = y if task is Task.REGRESSION else (y > 0.5).astype(np.int8)
    frame = pd.DataFrame({"x1": x1, "x2": x2, "g": np.where(group, "b", "a")})
    dataset = Dataset(
        name="toy",
        frame=frame,
        label=label,
        numeric=("x1", "x2"),
        categorical=(),
        protected=("g",),
        label_name="y",
        task=task,
    )
    return prepare(dataset, PrepareOptions(grouping=(GroupingSpec("g"),), seed=seed))


def design(X: np.ndarray) -> np.ndarray:
    return np.hstack([np.ones((len(X), 1)), X])


def test_ridge_through_the_unconstrained_solver_is_sklearn_ridge():
    """The solver minimises mean ½(h − y)² + l2/2‖w‖² over w = (intercept, weights), the
    intercept penalised too; times 2n that is sklearn's ‖y − X̃w‖² + α‖w‖² with α = n·l2 on
    X̃ = [1, X] and no intercept of its own."""
    data = toy_data()
    problem = Problem(data, ModelSpec(), None, objective=SquaredLoss())
    ours = solve(problem, "unconstrained", UnconstrainedConfig(l2=L2, tolerance=1e-12)).params["w"]
    X, y = design(data.train.X), data.train.y
    reference = Ridge(alpha=len(y) * L2, fit_intercept=False, solver="cholesky").fit(X, y)
    np.testing.assert_allclose(ours, reference.coef_, atol=1e-6)
    unpenalised = Ridge(alpha=len(y) * L2).fit(data.train.X, y)  # sklearn's own intercept
    assert abs(ours[0] - unpenalised.intercept_) > 1e-3  # so the intercept is penalised here


def test_a_squared_hinge_svm_through_the_unconstrained_solver_is_the_direct_minimiser():
    data = toy_data(task=Task.CLASSIFICATION)
    problem = Problem(data, ModelSpec(), None, objective=SquaredHingeLoss())
    ours = solve(problem, "unconstrained", UnconstrainedConfig(l2=L2, tolerance=1e-12)).params["w"]
    X, zeta = design(data.train.X), 2.0 * data.train.y - 1.0

    def f(w: np.ndarray) -> tuple[float, np.ndarray]:
        slack = np.maximum(1.0 - zeta * (X @ w), 0.0)
        return (
            np.mean(slack**2) + 0.5 * L2 * w @ w,
            X.T @ (-2.0 * zeta * slack) / len(zeta) + L2 * w,
        )

    direct = scipy.optimize.minimize(
        f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15}
    )
    np.testing.assert_allclose(ours, direct.x, atol=1e-5)


def test_sgd_trains_ridge_regression_on_minibatches():
    data = toy_data()
    problem = Problem(data, ModelSpec(), None, objective=SquaredLoss())
    solution = solve(
        problem, "sgd", SGDConfig(step=0.02, batch_size=16), Budget(max_iterations=4000)
    )
    assert solution.metrics["test"]["r2"] > 0.7


def test_the_regression_report_is_computed_exactly():
    data = toy_data()
    problem = Problem(data, ModelSpec(), None, objective=SquaredLoss())
    w = np.array([0.3, 1.2, -0.8])
    report = problem.report({"w": w})
    train_mean = data.train.y.mean()
    for split, values in report.items():
        part = data.split(split)
        h, y, g = design(part.X) @ w, part.y, part.groups
        assert set(values) == {
            "loss",
            "rmse",
            "r2",
            "mae",
            "mean_gap",
            "group_loss_gap",
            "baseline_rmse",
            "score_std",
        }
        assert values["loss"] == pytest.approx(np.mean(0.5 * (h - y) ** 2))
        assert values["rmse"] == pytest.approx(np.sqrt(np.mean((h - y) ** 2)))
        assert values["r2"] == pytest.approx(r2_score(y, h))
        assert values["mae"] == pytest.approx(np.mean(np.abs(h - y)))
        assert values["mean_gap"] == pytest.approx(abs(h[g == 0].mean() - h[g == 1].mean()))
        losses = 0.5 * (h - y) ** 2
        assert values["group_loss_gap"] == pytest.approx(
            abs(losses[g == 0].mean() - losses[g == 1].mean())
        )
        assert values["baseline_rmse"] == pytest.approx(np.sqrt(np.mean((y - train_mean) ** 2)))
        assert values["score_std"] == pytest.approx(np.std(h))
    assert problem.report_scores(design(data.test.X) @ w, "test", only=("r2", "accuracy")) == {
        "r2": report["test"]["r2"]
    }


def test_a_classifier_report_keeps_its_metrics_and_has_none_of_a_regression():
    data = toy_data(task=Task.CLASSIFICATION)
    report = Problem(data, ModelSpec(), None).report({"w": np.array([0.0, 1.0, -0.5])})["test"]
    assert set(report) >= CLASSIFIER_ONLY
    assert not {"rmse", "r2", "mae", "mean_gap", "baseline_rmse"} & set(report)


def test_an_objective_of_another_task_is_refused_with_a_sentence():
    with pytest.raises(UserError) as error:
        Problem(toy_data(), ModelSpec(), None, objective=LogisticLoss())
    assert str(error.value) == (
        "the logistic objective, the logistic loss, is for a binary label; data set toy's "
        "label 'y' is real-valued: choose the objective squared"
    )
    with pytest.raises(
        UserError,
        match="the squared objective, the squared loss .* is for a "
        "real-valued label; data set toy's label 'y' is binary",
    ):
        Problem(toy_data(task=Task.CLASSIFICATION), ModelSpec(), None, objective=SquaredLoss())


def test_a_constraint_family_on_a_real_valued_label_is_refused_with_a_sentence():
    with pytest.raises(UserError) as error:
        Problem(
            toy_data(),
            ModelSpec(),
            ConstraintSpec("pSP", 0.05, (0.0, 0.5)),
            objective=SquaredLoss(),
        )
    assert str(error.value) == (
        "the pSP constraint (paper 003, model (15)) is defined for a binary label; data set "
        "toy's label 'y' is real-valued: no constraint family is defined for one, so train it "
        "without a constraint (e.g. the unconstrained or sgd solver)"
    )


def test_a_constant_real_valued_label_is_refused():
    data = toy_data()
    train = dataclasses.replace(data.train, y=np.full(len(data.train), 2.5))
    constant = dataclasses.replace(data, train=train)
    with pytest.raises(UserError, match="the training labels are all the same"):
        Problem(constant, ModelSpec(), None, objective=SquaredLoss())


@pytest.mark.parametrize("family", ["pSP", "EO", "group_loss_gap"])
def test_solvers_that_need_a_family_or_a_binary_label_are_refused_for_a_regression(family):
    """Every solver that trains a classifier under `family` is refused a regression, saying
    that the family is defined for a binary label, or that the algorithm itself trains
    classifiers only (fairlearn's mitigators); the unconstrained ones are not."""
    model = ModelSpec()
    for solver in ("unconstrained", "sgd"):
        assert solver_card(solver).refusal(model, family, "squared") is None
    under_family = [
        name
        for name in solver_names()
        if solver_card(name).constrained
        and solver_card(name).refusal(model, family, "logistic") is None
    ]
    assert "idca" in under_family or family != "pSP"
    for solver in under_family:
        reason = solver_card(solver).refusal(model, family, "squared")
        assert reason is not None, solver
        if solver_card(solver).classifier_only:
            assert reason.startswith(f"{solver} trains classifiers only"), solver
            continue
        assert f"the {family} constraint" in reason, solver
        assert "is defined for a binary label" in reason
    reason = solver_card("sgd_fairret").refusal(model, family, "squared")
    assert reason.startswith("sgd_fairret trains classifiers only")


def test_saved_iterates_of_a_regression_carry_each_groups_squared_loss():
    data = toy_data()
    problem = Problem(data, ModelSpec(), None, objective=SquaredLoss())
    solution = solve(problem, "sgd", SGDConfig(step=0.05), Budget(max_iterations=60, save_every=30))
    saved = [r for r in solution.trajectory if r.kind == "iterate"]
    assert [r.iteration for r in saved] == [30, 60]
    h = problem.scores(solution.params, "test")  # the last saved iterate is the final model
    for group, name in enumerate(data.group_names):
        members = data.test.groups == group
        expected = np.mean(0.5 * (h[members] - data.test.y[members]) ** 2)
        assert saved[-1].values[f"test.group.{name}.loss"] == pytest.approx(expected)
        assert f"test.group.{name}.positive_rate" not in saved[-1].values
