"""The KKT measure common to every solver (spec 001 §5): 0 at known KKT points (a small QP, and a
fairness-constrained logistic regression solved by SLSQP), positive elsewhere, the parts by hand,
multipliers projected on λ ≥ 0 or fitted by NNLS, and read from a solver's state."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize
from solver_data import toy_prepared

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, solve
from engine.solvers.kkt import (
    kkt_measure,
    kkt_of,
    kkt_terms,
    multipliers_from_state,
)
from engine.solvers.paper001.cards_plada import PLADAConfig
from engine.solvers.paper001.plada import PLADA

# the QP  min ½‖x − a‖²  s.t.  x1 + x2 ≤ 1,  x3 ≤ 5,  −x1 ≤ 0: its solution projects a on the first
# row's half-space, x* = (1, 0, 0) with λ* = (1, 0, 0) (the other two rows are inactive)
A = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])
B = np.array([1.0, 5.0, 0.0])
TARGET = np.array([2.0, 1.0, 0.0])
X_STAR, LAMBDA_STAR = np.array([1.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0])


def qp(x: np.ndarray, multipliers: np.ndarray | None = None):
    return kkt_of(x - TARGET, A, A @ x - B, multipliers)


def test_the_measure_is_zero_at_the_qps_kkt_point():
    for multipliers in (None, LAMBDA_STAR, LAMBDA_STAR - [0.0, 3.0, 2.0]):  # negatives → 0
        terms = qp(X_STAR, multipliers)
        assert terms.total == pytest.approx(0.0, abs=1e-12)
        np.testing.assert_allclose(terms.multipliers, LAMBDA_STAR, atol=1e-12)


@pytest.mark.parametrize(
    "x", [TARGET, np.zeros(3), np.array([0.5, 0.5, 0.0]), X_STAR + [0.0, 0.0, 1e-3]]
)
def test_the_measure_is_positive_away_from_the_qps_kkt_point(x):
    assert qp(x).total > 0
    assert qp(x, LAMBDA_STAR).total > 0


def test_the_parts_of_the_measure_by_hand():
    # at a, infeasible in row 1 by 2: ∇F = 0, so the least-squares multipliers are 0
    terms = qp(TARGET)
    assert (terms.stationarity, terms.complementarity, terms.feasibility) == (0.0, 0.0, 2.0)
    # at x*, wrong multipliers: λ = (0.5, 1, 0) leaves ∇F + Aᵀλ = (−0.5, −0.5, 1) and pays
    # |1 · (x3 − 5)| = 5 for the inactive row 2
    terms = qp(X_STAR, np.array([0.5, 1.0, 0.0]))
    assert terms.stationarity == pytest.approx(math.sqrt(1.5))
    assert terms.complementarity == pytest.approx(5.0)
    assert terms.feasibility == 0.0
    assert terms.total == pytest.approx(math.sqrt(1.5) + 5.0)
    assert terms.state()["kkt"] == terms.total


def test_when_nnls_runs_out_of_iterations_the_multipliers_are_zero_and_the_run_goes_on(
    monkeypatch,
):
    asked = []

    def out_of_iterations(matrix, target, maxiter):
        asked.append(maxiter)
        raise RuntimeError("Maximum number of iterations reached.")

    monkeypatch.setattr("engine.solvers.kkt.nnls", out_of_iterations)
    terms = qp(TARGET + 1.0)
    np.testing.assert_array_equal(terms.multipliers, np.zeros(3))
    # λ = 0 is feasible: its residual, ‖∇F‖, bounds the least-squares one from above
    assert terms.stationarity == pytest.approx(np.linalg.norm(np.ones(3)))
    assert asked == [30]  # ten sweeps per multiplier, against scipy's default of three


def test_a_variable_at_the_end_of_its_box_counts_only_a_gradient_pointing_inwards():
    # min ½(x + 1)² over x ≥ 0 without rows: x = 0 is a KKT point through the normal cone
    no_rows = np.zeros((0, 1))
    assert kkt_of(np.array([1.0]), no_rows, np.zeros(0), at_lower=[True]).total == 0.0
    assert kkt_of(np.array([1.0]), no_rows, np.zeros(0)).total == 1.0
    assert kkt_of(np.array([-1.0]), no_rows, np.zeros(0), at_lower=[True]).total == 1.0
    assert kkt_of(np.array([-1.0]), no_rows, np.zeros(0), at_upper=[True]).total == 0.0


@pytest.fixture(scope="module")
def fair_logistic():
    """A linear model on the toy data under paper 001's DP rows (sigmoid, κ = 0.02), solved to
    a KKT point by SLSQP from numpy derivatives: one row active, with SLSQP's multipliers."""
    problem = Problem(toy_prepared(), ModelSpec(), ConstraintSpec("DP", 0.02, surrogate="sigmoid"))
    X, y = problem.design().dense(), problem.data.train.y

    def loss(w):
        h = X @ w
        return np.mean(np.logaddexp(0.0, h) - y * h), X.T @ (1 / (1 + np.exp(-h)) - y) / len(y)

    def rows(w):
        return problem.bound.surrogate(torch.from_numpy(X @ w)).numpy()

    def jacobian(w):
        out = []
        for row in range(2):
            h = torch.from_numpy(X @ w).requires_grad_()
            problem.bound.surrogate(h)[row].backward()
            out.append(h.grad.numpy() @ X)
        return np.array(out)

    result = minimize(
        lambda w: loss(w)[0],
        np.zeros(X.shape[1]),
        jac=lambda w: loss(w)[1],
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda w: -rows(w), "jac": lambda w: -jacobian(w)}],
        options={"ftol": 1e-15, "maxiter": 500},
    )
    assert result.success
    return problem, result.x, np.asarray(result.multipliers), (loss, rows, jacobian)


def test_the_measure_is_zero_at_a_kkt_point_of_a_fairness_constrained_problem(fair_logistic):
    problem, w_star, lambda_star, _ = fair_logistic
    params = {"w": w_star}
    assert lambda_star.max() > 0.5  # an active row, not the unconstrained optimum
    assert kkt_measure(problem, params) < 1e-8
    assert kkt_measure(problem, params, lambda_star) < 1e-8
    # the least-squares multipliers argmin_{λ ≥ 0} ‖∇F + J_Gᵀλ‖ are λ* there
    np.testing.assert_allclose(kkt_terms(problem, params).multipliers, lambda_star, atol=1e-6)
    # elsewhere: the start, a perturbed point, the unconstrained multipliers
    assert kkt_measure(problem, {"w": np.zeros_like(w_star)}) > 0.1
    assert kkt_measure(problem, {"w": w_star + [0.0, 0.01, 0.0]}) > 1e-3
    assert kkt_measure(problem, params, np.zeros(2)) > 0.01


def test_the_parts_on_a_problem_are_the_formula_by_hand(fair_logistic):
    problem, w_star, _, (loss, rows, jacobian) = fair_logistic
    w = w_star + np.array([0.3, -0.2, 0.4])
    multipliers = np.array([-1.0, 0.7])  # λ ≥ 0 by projection: (0, 0.7)
    terms = kkt_terms(problem, {"w": w}, multipliers)
    lam, g = np.array([0.0, 0.7]), rows(w)
    assert terms.stationarity == pytest.approx(np.linalg.norm(loss(w)[1] + jacobian(w).T @ lam))
    assert terms.complementarity == pytest.approx(np.sum(np.abs(lam * g)))
    assert terms.feasibility == pytest.approx(np.linalg.norm(np.maximum(g, 0.0)))
    np.testing.assert_array_equal(terms.multipliers, lam)


def test_without_a_constraint_the_measure_is_the_gradient_norm(toy):
    problem = Problem(toy, ModelSpec(), None)
    w = np.array([0.1, -0.3, 0.2])
    X, y = problem.design().dense(), problem.data.train.y
    gradient = X.T @ (1 / (1 + np.exp(-(X @ w))) - y) / len(y)
    assert kkt_measure(problem, {"w": w}) == pytest.approx(np.linalg.norm(gradient))


def test_solvers_multipliers_come_from_their_state(toy):
    problem = Problem(toy, ModelSpec(), ConstraintSpec("EO", 0.05, surrogate="sigmoid"))
    plada = PLADA(problem, PLADAConfig(), np.random.default_rng(0))
    state = plada.step().state
    np.testing.assert_array_equal(multipliers_from_state(problem, state), plada.multipliers())
    assert multipliers_from_state(problem, {"batch_loss": 0.3}) is None  # SGD: NNLS instead
    value = kkt_measure(problem, plada.candidate(), multipliers_from_state(problem, state))
    assert math.isfinite(value) and value > 0


def test_the_measure_handles_auxiliary_variables_and_networks(toy):
    """pSP's θ is a variable of the measure (from the params, or its starting values for a
    solver that keeps none); an MLP's gradients come through its backward pass."""
    problem = Problem(
        toy,
        ModelSpec("mlp", hidden=(4,)),
        ConstraintSpec("pSP", 0.3, (0.05, 0.3)),
        interval=(0.05, 0.3),
    )
    run = solve(problem, "plada", budget=Budget(max_iterations=5))
    assert any(name.startswith("aux.") for name in run.params)
    without_aux = {k: v for k, v in run.params.items() if not k.startswith("aux.")}
    for params in (run.params, without_aux):
        terms = kkt_terms(problem, params)
        assert math.isfinite(terms.total) and len(terms.multipliers) == problem.bound.m
