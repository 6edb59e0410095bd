"""The quadratic-surrogate AUC baselines of paper 003 (App. G.3, eqs. 102–110)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import torch
from solver_data import two_groups

from engine.errors import UserError
from engine.fairness import group_auc_gap, inter_group_auc_gap, intra_group_auc_gap
from engine.fairness.constraints import ConstraintSpec, bind
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, config_from_dict, solve, solver_card
from engine.solvers.paper003.cards import QuadraticConfig
from engine.solvers.paper003.qcqp_projection import Projection
from engine.solvers.paper003.quadratic_baselines import quadratic_rows
from engine.status import RunStatus, StopCode

SOLVERS = {
    "quad_group_auc": "group_auc",
    "quad_inter": "inter_pairwise",
    "quad_intra": "intra_pairwise",
}
EXACT = {
    "quad_group_auc": group_auc_gap,
    "quad_inter": inter_group_auc_gap,
    "quad_intra": intra_group_auc_gap,
}


@pytest.fixture(scope="module")
def data():
    """Groups that also differ in how well y can be predicted, so the AUC gaps are large."""
    return two_groups(slopes=(0.6, 2.0))


def problem(data, family: str, kappa: float, model: ModelSpec | None = None) -> Problem:
    return Problem(data, model or ModelSpec(), ConstraintSpec(family, kappa), interval=(0.05, 0.3))


def sigma(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + x) ** 2  # paper 003, eq. 103


def pair_average(a: np.ndarray, b: np.ndarray) -> float:
    """The double sum of eqs. 102–107 over every pair, written out."""
    return float(np.mean([sigma(x - z) for x in a for z in b]))


def brute_force_rows(h, groups, y, family: str, kappa: float) -> dict[str, float]:
    rows = {}
    for k in range(3):
        for j in range(3):
            if k == j:
                continue
            pos = lambda g: h[(groups == g) & (y == 1)]  # noqa: E731
            neg = lambda g: h[(groups == g) & (y == 0)]  # noqa: E731
            if family == "quad_group_auc":  # eq. 102
                value = pair_average(h[groups == k], h[groups == j]) - 0.5
            elif family == "quad_inter":  # eq. 105
                value = pair_average(pos(k), neg(j)) + pair_average(neg(k), pos(j)) - 1.0
            else:  # eq. 107
                value = pair_average(pos(k), neg(k)) + pair_average(neg(j), pos(j)) - 1.0
            rows[f"{family}[{k},{j}]"] = value - kappa
    return rows


@pytest.mark.parametrize("family", list(SOLVERS))
def test_closed_form_rows_equal_the_pair_averages(family):
    rng = np.random.default_rng(4)
    groups = rng.integers(0, 3, size=90)
    y = rng.integers(0, 2, size=90)
    h = rng.normal(scale=1.5, size=90) + 0.7 * groups
    bound = bind(ConstraintSpec(family, 0.3), groups=groups, y=y)
    expected = brute_force_rows(h, groups, y, family, 0.3)
    assert bound.named(bound.surrogate(torch.from_numpy(h))) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("family", list(SOLVERS))
def test_exact_rows_are_the_auc_gaps_of_engine_fairness(family):
    rng = np.random.default_rng(5)
    groups = rng.integers(0, 3, size=200)
    y = rng.integers(0, 2, size=200)
    h = np.round(rng.normal(size=200) + 0.4 * groups + 0.5 * groups * y, 1)  # ties count ½
    bound = bind(ConstraintSpec(family, 0.1), groups=groups, y=y)
    args = (h, groups) if family == "quad_group_auc" else (h, groups, y)
    gap = EXACT[family](*args)
    assert gap > 0.05
    assert bound.exact_rows(h).max() + 0.1 == pytest.approx(gap)
    assert bound.exact(h) == pytest.approx(gap)


@pytest.mark.parametrize("family", list(SOLVERS))
def test_quadratics_in_w_equal_the_family_rows_and_zero_is_strictly_feasible(data, family):
    prob = problem(data, family, 0.4)
    rows = quadratic_rows(prob)
    assert rows.values(np.zeros(prob.design().shape[1])) == pytest.approx([-0.4] * prob.bound.m)
    rng = np.random.default_rng(6)
    for _ in range(3):
        w = rng.normal(size=prob.design().shape[1])
        direct = prob.bound.surrogate(torch.from_numpy(prob.design().matvec(w))).numpy()
        assert rows.values(w) == pytest.approx(direct, rel=1e-9, abs=1e-9)
    for hessian in rows.hessians:
        assert np.linalg.eigvalsh(hessian).min() > -1e-10


def test_projection_is_the_nearest_feasible_point(data):
    prob = problem(data, "quad_inter", 0.1)
    rows = quadratic_rows(prob)
    project = Projection(rows)
    z = np.random.default_rng(7).normal(size=prob.design().shape[1])
    assert rows.values(z).max() > 0
    w, how = project(z)
    assert how.startswith("optimal")
    assert rows.values(w).max() <= 0
    reference = scipy.optimize.minimize(
        lambda v: 0.5 * np.sum((v - z) ** 2),
        np.zeros_like(z),
        jac=lambda v: v - z,
        constraints=[{"type": "ineq", "fun": lambda v: -rows.values(v)}],
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 500},
    )
    assert reference.success
    assert w == pytest.approx(reference.x, abs=1e-4)
    inside = 0.01 * z
    assert rows.values(inside).max() < 0
    assert project(inside) == (pytest.approx(inside), "inside")


@pytest.mark.parametrize("family", list(SOLVERS))
def test_solutions_are_feasible_and_a_tighter_kappa_gives_a_smaller_exact_gap(data, family):
    gaps = {}
    for kappa in (0.02, 3.0):
        prob = problem(data, family, kappa)
        solution = solve(prob, SOLVERS[family], QuadraticConfig(iterations=300))
        rows = prob.bound.surrogate(torch.from_numpy(prob.scores(solution.params)))
        assert rows.max() <= 1e-9
        gaps[kappa] = solution.metrics["train"]["constraint"]
    assert gaps[0.02] < gaps[3.0] - 0.02


def test_kappa_above_one_is_accepted(data):
    prob = problem(data, "quad_inter", 6.0)
    solution = solve(prob, "inter_pairwise", QuadraticConfig(iterations=50))
    assert solution.status == "converged"
    assert solution.last_surrogate().max_violation <= 0


@pytest.mark.parametrize(
    "values", [{"iterations": 0}, {"step": 0.0}, {"step": float("nan")}, {"tolerance": -1e-5}]
)
def test_bad_configs_are_refused(values):
    with pytest.raises(UserError):
        QuadraticConfig(**values)


def test_step_from_text_and_the_default_step(data):
    assert config_from_dict(QuadraticConfig, {"step": "0.25"}).step == 0.25
    prob = problem(data, "quad_group_auc", 0.5)
    solver = solver_card("group_auc").load()(prob, QuadraticConfig(), np.random.default_rng(0))
    X = prob.design().dense()
    lipschitz = np.linalg.norm(X, 2) ** 2 / (4 * X.shape[0])
    assert solver.eta == pytest.approx(1.0 / lipschitz, rel=1e-5)  # λ_max by power iterations


def test_bad_constraints_and_problems_are_refused(data):
    with pytest.raises(UserError, match="κ > 0"):
        problem(data, "quad_intra", 0.0)
    with pytest.raises(UserError, match="pairs"):
        Problem(data, ModelSpec(), ConstraintSpec("quad_group_auc", 0.1, pairs="vs_rest"))
    with pytest.raises(UserError, match="constraint families"):
        solver_card("group_auc").check_problem(problem(data, "quad_inter", 0.1))
    with pytest.raises(UserError, match="constraint families"):
        solver_card("intra_pairwise").check_problem(
            Problem(data, ModelSpec(), ConstraintSpec("pSP", 0.2, (0.05, 0.3)))
        )
    with pytest.raises(UserError, match="linear model"):
        solver_card("inter_pairwise").check_problem(
            problem(data, "quad_inter", 0.1, ModelSpec("mlp", hidden=(4,)))
        )
    groups = np.array([0, 0, 0, 1, 1, 1])
    with pytest.raises(UserError, match="positive and negative"):
        bind(ConstraintSpec("quad_intra", 0.1), groups=groups, y=np.array([1, 0, 1, 1, 1, 1]))


@pytest.mark.parametrize("family", list(SOLVERS))
def test_runs_through_the_driver_with_a_budget(data, family):
    prob = problem(data, family, 0.05)
    config = QuadraticConfig(tolerance=0.0)
    solution = solve(prob, SOLVERS[family], config, Budget(max_iterations=5))
    assert solution.status == "budget" and solution.iterations == 5
    for split in ("train", "val", "test"):
        metrics = solution.metrics[split]
        assert all(metrics[m] is not None for m in ("accuracy", "psp", "pdp", "constraint"))
    logged = [r for r in solution.trajectory if r.kind == "surrogate"]
    assert logged and set(logged[-1].values) == set(prob.bound.rows)
    assert {"step", "projection", "max_row"} <= set(logged[-1].state)


def test_a_failed_projection_ends_the_run_as_failed_keeping_the_iterate_before(data, monkeypatch):
    prob = problem(data, "quad_inter", 0.05)
    calls = {"n": 0}
    project = Projection.__call__

    def fails_third(self, z):
        calls["n"] += 1
        return (z, "failed: solver_error") if calls["n"] == 3 else project(self, z)

    monkeypatch.setattr(Projection, "__call__", fails_third)
    solution = solve(prob, "inter_pairwise", QuadraticConfig(tolerance=0.0))
    assert solution.stop.code is StopCode.STEP_FAILED and solution.status is RunStatus.FAILED
    assert solution.iterations == 3 and "failed: solver_error at iteration 3" in solution.reason
    assert "kept w^2" in solution.reason
    rows = prob.bound.surrogate(torch.from_numpy(prob.scores(solution.params)))
    assert rows.max() <= 1e-9 and solution.metrics["test"]["accuracy"] is not None
