"""Every minibatch solver of paper 000: its randomness is the run's seed alone."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, solve

MINIBATCH_SOLVERS = (
    "sgd",
    "sgd_penalty",
    "sgd_fairret",
    "ssw",
    "ssl_alm",
    "alm",
    "stochastic_ghost",
)


@pytest.mark.parametrize("solver", MINIBATCH_SOLVERS)
def test_a_seed_reproduces_a_run_and_leaves_torch_global_state_alone(toy, solver):
    problem = Problem(
        toy, ModelSpec(kind="mlp", hidden=(6,)), ConstraintSpec("group_loss_gap", 0.01)
    )
    torch.manual_seed(123)
    before = torch.get_rng_state()
    runs = [solve(problem, solver, budget=Budget(max_iterations=40), seed=s) for s in (3, 3, 4)]
    assert torch.equal(torch.get_rng_state(), before)
    for name, value in runs[0].params.items():
        np.testing.assert_array_equal(value, runs[1].params[name])
    assert not np.array_equal(runs[2].params["layers.0.weight"], runs[0].params["layers.0.weight"])
