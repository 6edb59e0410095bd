import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import solve
from engine.solvers.paper003.cards import SSGConfig

INTERVAL = (0.1, 0.5)


def test_unconstrained_matches_scikit_learn_logistic_regression(toy):
    problem = Problem(toy, ModelSpec(), None, interval=INTERVAL)
    ours = solve(problem, "unconstrained")
    reference = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(
        toy.train.X, toy.train.y
    )
    w = ours.params["w"]
    assert w[0] == pytest.approx(reference.intercept_[0], abs=1e-4)
    np.testing.assert_allclose(w[1:], reference.coef_[0], atol=1e-4)
    accuracy = reference.score(toy.test.X, toy.test.y)
    assert ours.metrics["test"]["accuracy"] == pytest.approx(accuracy)


def test_unconstrained_mlp_fits_better_than_chance(toy):
    problem = Problem(toy, ModelSpec(kind="mlp", hidden=(8,)), None, interval=INTERVAL)
    solution = solve(problem, "unconstrained")
    majority = max(toy.train.y.mean(), 1 - toy.train.y.mean())
    assert solution.metrics["train"]["accuracy"] > majority + 0.05


@pytest.mark.parametrize("tolerance", ["static", "diminishing"])
def test_ssg_reports_its_best_nearly_feasible_iterate(toy, tolerance):
    problem = Problem(
        toy, ModelSpec(cross_terms=True), ConstraintSpec("pSP", 0.1, INTERVAL), interval=INTERVAL
    )
    config = SSGConfig(iterations=2000, tolerance=tolerance, epsilon=1e-3, c=0.5)
    solution = solve(problem, "ssg", config)
    params = solution.params
    h = torch.from_numpy(problem.scores(params))
    rows = problem.bound.surrogate(h, {"theta": torch.from_numpy(params["aux.theta"])})
    assert float(rows.max()) <= 0.5  # the loosest ε_t any iterate was accepted with
    if tolerance == "static":
        assert float(rows.max()) <= 1e-3 + 1e-12
    start = problem.loss(np.zeros(len(toy.train)))
    assert problem.loss(problem.scores(params)) < start


def test_ssg_config_is_checked():
    with pytest.raises(
        UserError, match="option tolerance must be one of static, diminishing, not 'sometimes'"
    ):
        SSGConfig(tolerance="sometimes")
