"""Paper 000's Stochastic Ghost (Alg. 1): iterates by hand with independently solved LPs and QPs,
eq. 9 alone, the capped level distribution, the failure fallbacks, and a fairer MLP than SGD's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, solve
from engine.solvers.paper000 import ghost
from engine.solvers.paper000.cards_ghost import GhostConfig
from engine.solvers.paper000.ghost import Oracle, StochasticGhost, combine, direction

DELTA = 0.01
GAP = ConstraintSpec("group_loss_gap", DELTA)


def kappa_closed_form(c: np.ndarray, jac: np.ndarray, rho: float, lam: float) -> float:
    """κ for the two-group gap, whose rows are c_2 = −c_1 − 2δ and ∇c_2 = −∇c_1: with
    u = ∇c_1ᵀd ∈ [−ρ‖∇c_1‖₁, ρ‖∇c_1‖₁], min max(c_1 + u, c_2 − u, 0) is at u = (c_2 − c_1)/2
    clipped to that interval."""
    np.testing.assert_allclose(jac[1], -jac[0], rtol=0, atol=1e-15)
    radius = rho * np.abs(jac[0]).sum()
    u = np.clip((c[1] - c[0]) / 2, -radius, radius)
    return (1 - lam) * max(c.max(), 0.0) + lam * max(c[0] + u, c[1] - u, 0.0)


def qp_by_active_sets(g, c, jac, level, tau, beta) -> np.ndarray:
    """argmin gᵀd + (τ/2)‖d‖² s.t. c + Jc d ≤ κ by enumerating active sets of the rows (KKT:
    d = −(g + J_Sᵀμ)/τ, J_S d = κ − c_S, μ ≥ 0); the box ‖d‖∞ ≤ β must be inactive."""
    b = level - c
    for size in range(len(c) + 1):
        for active in map(list, itertools.combinations(range(len(c)), size)):
            A = jac[active]
            gram = A @ A.T
            if size and abs(np.linalg.det(gram)) < 1e-14:
                continue
            mu = -np.linalg.solve(gram, tau * b[active] + A @ g) if size else np.zeros(0)
            d = -(g + A.T @ mu) / tau
            if np.all(mu >= -1e-12) and np.all(jac @ d <= b + 1e-12):
                assert np.abs(d).max() < beta
                return d
    raise AssertionError("no KKT point")


def iterates_by_hand(problem: Problem, config: GhostConfig, seed: int, steps: int) -> list:
    """(w, N, κ of X^J) after each of the first `steps` steps of Alg. 1 on a linear model with the
    two-group loss gap, in numpy, with the solver's draws replayed (the model seed; then per
    step N, X¹, X^J, 1 row and J rows of every group, all with replacement)."""
    rng = np.random.default_rng(seed)
    rng.integers(2**31)
    X, y, g = problem.design().dense(), problem.data.train.y, problem.data.train.groups
    members = [np.flatnonzero(g == k) for k in (0, 1)]
    top = int(np.log2(min(config.max_batch, max(map(len, members))))) - 1

    def loss_grad(rows: np.ndarray) -> tuple[float, np.ndarray]:
        h = X[rows] @ w
        return (
            np.mean(np.logaddexp(0.0, h) - y[rows] * h),
            X[rows].T @ (1 / (1 + np.exp(-h)) - y[rows]) / len(rows),
        )

    def oracle(f_rows, c_rows):
        (l0, d0), (l1, d1) = (loss_grad(c_rows[k]) for k in (0, 1))
        c = np.array([l0 - l1, l1 - l0]) - DELTA
        return loss_grad(f_rows)[1], c, np.stack([d0 - d1, d1 - d0])

    def per_group(count):
        return [rows[rng.integers(len(rows), size=count)] for rows in members]

    w, out, alpha = np.zeros(X.shape[1]), [], config.alpha0
    for _ in range(steps):
        level = rng.geometric(config.p0) - 1
        while level > top:
            level = rng.geometric(config.p0) - 1
        size = 2 ** (level + 1)
        single, batch = rng.integers(len(y), size=1), rng.integers(len(y), size=size)
        single_c, batch_c = per_group(1), per_group(size)
        d, kappas = {}, {}
        for name, f_rows, c_rows in [
            ("single", single, single_c),
            ("odd", batch[0::2], [r[0::2] for r in batch_c]),
            ("even", batch[1::2], [r[1::2] for r in batch_c]),
            ("full", batch, batch_c),
        ]:
            grad, c, jac = oracle(f_rows, c_rows)
            kappas[name] = kappa_closed_form(c, jac, config.rho, config.lam)
            d[name] = qp_by_active_sets(grad, c, jac, kappas[name], config.tau, config.beta)
        p = (1 - config.p0) ** level * config.p0 / (1 - (1 - config.p0) ** (top + 1))
        w = w + alpha * (d["single"] + (d["full"] - (d["odd"] + d["even"]) / 2) / p)
        alpha *= 1 - config.alpha_hat * alpha
        out.append((w, level, kappas["full"]))
    return out


@pytest.mark.parametrize("rho", [0.8, 0.01])  # 0.01: the LP's box binds
def test_the_first_iterates_are_algorithm_1_by_hand(toy, rho):
    problem = Problem(toy, ModelSpec(), GAP)
    config = GhostConfig(alpha0=0.5, alpha_hat=0.3, rho=rho, max_batch=8)
    solver = StochasticGhost(problem, config, np.random.default_rng(5))
    for w, level, kappa in iterates_by_hand(problem, config, seed=5, steps=3):
        state = solver.step().state
        np.testing.assert_allclose(solver.candidate()["w"], w, rtol=0, atol=1e-6)
        assert state["N"] == level and state["J"] == 2 ** (level + 1)
        assert state["kappa"] == pytest.approx(kappa, abs=1e-7)
        assert state["lp_failures"] == state["qp_failures"] == 0


def test_equation_9_combines_the_four_directions():
    single, odd, even, full = (
        np.array(v) for v in ([1.0, 0.0], [1.0, 1.0], [3.0, 1.0], [4.0, 2.0])
    )
    np.testing.assert_allclose(combine(single, odd, even, full, 0.25), [9.0, 4.0])


def test_the_level_is_capped_and_drawn_with_the_truncated_geometric_law(toy):
    problem = Problem(toy, ModelSpec(), GAP)
    solver = StochasticGhost(problem, GhostConfig(max_batch=12), np.random.default_rng(0))
    draws = [solver.draw_level() for _ in range(4000)]
    levels = np.array([level for level, _ in draws])
    assert levels.max() == 2  # 2^(N+1) ≤ 12
    law = {level: p for level, p in draws}
    assert sum(law.values()) == pytest.approx(1.0)
    for level, p in law.items():
        assert np.mean(levels == level) == pytest.approx(p, abs=0.03)


def test_a_failed_lp_uses_lambda_rho_and_a_failed_qp_leaves_d_zero(toy, monkeypatch):
    infeasible = Oracle(0.0, np.ones(2), np.array([1.0]), np.zeros((1, 2)))
    assert direction(infeasible, 0.0, tau=1.0, beta=1.0) is None
    problem = Problem(toy, ModelSpec(), GAP)
    config = GhostConfig(rho=0.3, lam=0.5)
    solver = StochasticGhost(problem, config, np.random.default_rng(0))
    monkeypatch.setattr(ghost, "kappa", lambda *args: None)
    level, d = solver.subproblems(infeasible)
    assert level == pytest.approx(0.5 * 1.0 + 0.5 * 0.3) and solver.lp_failures == 1
    assert np.array_equal(d, np.zeros(2)) and solver.qp_failures == 1


def test_an_mlp_trained_by_stochastic_ghost_has_a_smaller_group_loss_gap_than_sgd(toy):
    problem = Problem(toy, ModelSpec(kind="mlp", hidden=(8, 4)), GAP)
    budget = Budget(max_iterations=300)
    constrained = solve(problem, "stochastic_ghost", budget=budget, seed=0)
    plain = solve(problem, "sgd", budget=budget, seed=0)
    assert constrained.metrics["train"]["constraint"] < plain.metrics["train"]["constraint"]
