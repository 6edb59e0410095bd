"""The regularisation baseline of paper 003 (App. G.4, eqs. 114 and 119)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec, VacuousConstraintWarning
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, config_from_dict, solve, solver_card
from engine.solvers.paper003.cards import PenaltyConfig
from engine.solvers.paper003.penalty import Penalty
from engine.status import RunStatus

INTERVAL = (0.1, 0.6)


def problem(data, family: str = "pSP", surrogate: str = "ramp", interval=INTERVAL) -> Problem:
    spec = ConstraintSpec(family, 0.2, interval=interval, surrogate=surrogate)
    return Problem(data, ModelSpec(), spec, interval=interval)


def penalty_solver(prob: Problem, **config) -> Penalty:
    return Penalty(prob, PenaltyConfig(**config), np.random.default_rng(0))


@pytest.mark.parametrize("family", ["pSP", "pDP"])
@pytest.mark.slow
def test_a_larger_lambda_gives_a_smaller_exact_gap_on_train(data, family):
    prob = problem(data, family)
    metric = family.lower()
    gaps = {
        lam: solve(prob, "penalty", PenaltyConfig(lam=lam, step=0.05, iterations=800)).metrics[
            "train"
        ][metric]
        for lam in (0.0, 1.0)
    }
    assert gaps[0.0] > 0.3  # the data are unfair without the penalty
    assert gaps[1.0] < 0.5 * gaps[0.0]


def test_the_objective_decreases_early_on(data):
    solver = penalty_solver(problem(data), lam=0.5, step=0.01)
    objectives = [solver.step().objective for _ in range(300)]
    assert objectives[-1] < objectives[0] - 0.02
    assert np.mean(objectives[-50:]) < np.mean(objectives[:50])


def ramp(x: np.ndarray) -> np.ndarray:
    return np.clip(x + 0.5, 0.0, 1.0)


def test_psp_penalty_is_eq_114(data):
    prob = problem(data)
    solver = penalty_solver(prob, lam=0.7)
    rng = np.random.default_rng(1)
    w = rng.normal(scale=0.5, size=prob.design().shape[1])
    h = prob.design().matvec(w)
    theta = solver.theta + rng.normal(scale=0.2, size=solver.theta.shape)
    groups = prob.data.train.groups
    grid = prob.bound.grid
    worst = max(
        abs(ramp(h[groups == k][:, None] - theta[None, :]).mean(axis=0) - grid).max()
        for k in range(prob.data.n_groups)
    )
    alpha, beta = INTERVAL
    assert solver.penalty(h, theta).value == pytest.approx(2 * 0.7 / (beta - alpha) * worst)


def test_pdp_penalty_is_eq_119(data):
    interval = (0.2, 0.9)
    prob = problem(data, "pDP", interval=interval)
    solver = penalty_solver(prob, lam=0.3)
    w = np.random.default_rng(2).normal(scale=0.5, size=prob.design().shape[1])
    h = prob.design().matvec(w)
    groups = prob.data.train.groups
    alpha, beta = interval
    s = np.array([ramp(h[groups == k]).mean() for k in range(prob.data.n_groups)])
    c = np.minimum(s, beta) - np.minimum(s, alpha)
    expected = 0.3 / (beta - alpha) * (c.max() - c.min())
    assert expected > 0
    assert solver.penalty(h, np.zeros(0)).value == pytest.approx(expected)


def test_pdp_penalty_does_not_pull_a_group_whose_rate_is_below_alpha(data):
    """min{s, β} − min{s, α} is flat for s < α (eq. 119): only the other group is moved."""
    prob = problem(data, "pDP", interval=(0.5, 0.95))
    solver = penalty_solver(prob, lam=1.0)
    rng = np.random.default_rng(8)
    low = prob.data.train.groups == 1
    h = np.where(low, -0.3, 0.3) + rng.normal(scale=0.1, size=low.size)
    rates = [np.clip(h[low == side] + 0.5, 0, 1).mean() for side in (False, True)]
    assert rates[1] < 0.5 <= rates[0] < 0.95
    value = solver.penalty(h, np.zeros(0))
    assert value.value == pytest.approx(1.0 / 0.45 * (rates[0] - 0.5))
    assert not value.d_scores[low].any() and value.d_scores[~low].any()
    v, eps = rng.normal(size=h.size), 1e-6
    difference = solver.penalty(h + eps * v, np.zeros(0)).value - value.value
    assert difference / eps == pytest.approx(value.d_scores @ v, rel=1e-4)


@pytest.mark.parametrize("surrogate", ["ramp", "sigmoid"])
@pytest.mark.parametrize("family", ["pSP", "pDP"])
def test_subgradient_matches_finite_differences(data, family, surrogate):
    """Away from kinks (random points), the penalty is differentiable and its subgradient is the
    gradient: directional derivatives in w (and θ) agree with central differences."""
    prob = problem(data, family, surrogate, interval=(0.2, 0.9))
    solver = penalty_solver(prob, lam=0.8)
    design = prob.design()
    rng = np.random.default_rng(3)
    w = rng.normal(scale=0.3, size=design.shape[1])
    theta = solver.theta + rng.normal(scale=0.1, size=solver.theta.shape)
    value = solver.penalty(design.matvec(w), theta)
    d_w = design.rmatvec(value.d_scores)
    assert np.linalg.norm(d_w) > 1e-3
    eps = 1e-6
    for _ in range(3):
        v = rng.normal(size=w.shape)
        up = solver.penalty(design.matvec(w + eps * v), theta).value
        down = solver.penalty(design.matvec(w - eps * v), theta).value
        assert (up - down) / (2 * eps) == pytest.approx(d_w @ v, rel=1e-4, abs=1e-8)
    if family == "pSP":
        u = rng.normal(size=theta.shape)
        up = solver.penalty(design.matvec(w), theta + eps * u).value
        down = solver.penalty(design.matvec(w), theta - eps * u).value
        assert np.abs(value.d_theta).max() > 1e-3
        assert (up - down) / (2 * eps) == pytest.approx(value.d_theta @ u, rel=1e-4, abs=1e-8)


@pytest.mark.parametrize(
    "values",
    [{"lam": -0.1}, {"lam": float("nan")}, {"step": 0.0}, {"step": -1e-3}, {"iterations": 0}],
)
def test_bad_configs_are_refused(values):
    with pytest.raises(UserError):
        PenaltyConfig(**values)


def test_options_from_text_are_typed_and_unknown_ones_refused():
    config = config_from_dict(PenaltyConfig, {"lam": "0.2", "step": "5e-4", "iterations": "10"})
    assert (config.lam, config.step, config.iterations) == (0.2, 5e-4, 10)
    with pytest.raises(UserError, match="unknown option"):
        config_from_dict(PenaltyConfig, {"lambda": 1.0})


def test_problems_it_cannot_solve_are_refused(data):
    with pytest.raises(UserError, match="constraint families"):
        card = solver_card("penalty")
        card.check_problem(Problem(data, ModelSpec(), ConstraintSpec("quad_group_auc", 0.1)))
    with pytest.raises(UserError, match="linear model"):
        card.check_problem(
            Problem(data, ModelSpec("mlp", hidden=(4,)), ConstraintSpec("pSP", 0.2, INTERVAL))
        )
    with pytest.warns(VacuousConstraintWarning), pytest.raises(UserError, match="grid"):
        penalty_solver(Problem(data, ModelSpec(), ConstraintSpec("pSP", 1.0, INTERVAL)))


@pytest.mark.parametrize("family", ["pSP", "pDP"])
def test_runs_through_the_driver_with_a_budget(data, family):
    prob = problem(data, family)
    solution = solve(prob, "penalty", PenaltyConfig(iterations=1000), Budget(max_iterations=40))
    assert solution.status is RunStatus.BUDGET
    assert solution.iterations == 40
    for split in ("train", "val", "test"):
        metrics = solution.metrics[split]
        assert all(metrics[m] is not None for m in ("accuracy", "psp", "pdp"))
    logged = [r for r in solution.trajectory if r.kind == "surrogate"]
    assert logged and set(logged[-1].values) == set(prob.bound.rows)
    assert {"f0", "penalty", "step"} <= set(logged[-1].state)
    assert ("aux.theta" in solution.params) == (family == "pSP")
