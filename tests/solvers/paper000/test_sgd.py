"""Paper 000's SGD baseline on the minibatch interface: iterates by hand, any model, seeds."""

from __future__ import annotations

import numpy as np
import pytest

from engine.models import ModelSpec
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers import Budget, solve
from engine.solvers.paper000.cards_sgd import SGDConfig
from engine.solvers.paper000.sgd import SGD


def test_the_first_iterates_are_minibatch_gradient_steps_on_the_logistic_loss(toy):
    problem = Problem(toy, ModelSpec(cross_terms=True), None)
    config = SGDConfig(step=0.3, batch_size=5)
    solver = SGD(problem, config, np.random.default_rng(7))
    # the same draws by hand: the solver's first draw seeds the model, then the sampler's
    rng = np.random.default_rng(7)
    rng.integers(2**31)
    batches = BatchSampler(toy.train.groups, toy.n_groups, rng)
    X = problem.design().dense()
    zeta = 2.0 * toy.train.y - 1.0
    w = np.zeros(X.shape[1])
    for _ in range(3):
        rows = batches.objective(5).rows
        margin = -zeta[rows] * (X[rows] @ w)
        gradient = X[rows].T @ (-zeta[rows] / (1.0 + np.exp(-margin))) / len(rows)
        w = w - 0.3 * gradient
        solver.step()
        np.testing.assert_allclose(solver.candidate()["w"], w, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "model", [ModelSpec(), ModelSpec(cross_terms=True), ModelSpec(kind="mlp", hidden=(8, 4))]
)
def test_sgd_lowers_the_training_loss_of_any_model(toy, model):
    problem = Problem(toy, model, None)
    start = problem.report(problem.init_params(0), splits=("train",))["train"]["loss"]
    solution = solve(problem, "sgd", SGDConfig(step=0.05), Budget(max_iterations=600), seed=0)
    assert solution.metrics["train"]["loss"] < start
