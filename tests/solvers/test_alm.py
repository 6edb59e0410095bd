"""Paper 000's SSL-ALM and ALM (Alg. 2) on the minibatch interface: iterates by hand, μ = 0,
seeds, the safeguard, and a fairer MLP than SGD's."""

from __future__ import annotations

import numpy as np
import pytest

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers import Budget, solve
from engine.solvers.alm import SSLALM
from engine.solvers.catalogue.p000_alm import ALMConfig, SSLALMConfig

DELTA = 0.02
GAP = ConstraintSpec("group_loss_gap", DELTA)


def iterates_by_hand(problem: Problem, config: SSLALMConfig, seed: int, steps: int) -> list:
    """(w, s, y) after each of the first `steps` steps of paper 000's Alg. 2 on a linear model
    with the two-group loss gap, in numpy, with the solver's draws (the model seed, then the
    sampler's ξ, ζ1, ζ2 per step)."""
    rng = np.random.default_rng(seed)
    rng.integers(2**31)
    batches = BatchSampler(problem.data.train.groups, problem.data.n_groups, rng)
    X, y_true, g = problem.design().dense(), problem.data.train.y, problem.data.train.groups

    def loss_and_grad(rows: np.ndarray) -> tuple[float, np.ndarray]:
        h = X[rows] @ w
        p = 1.0 / (1.0 + np.exp(-h))
        loss = np.mean(np.logaddexp(0.0, h) - y_true[rows] * h)
        return loss, X[rows].T @ (p - y_true[rows]) / len(rows)

    def rows_and_jacobian(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """c = [ℓ_0 − ℓ_1 − δ, ℓ_1 − ℓ_0 − δ] + s and its Jacobian in w."""
        (l0, d0), (l1, d1) = (loss_and_grad(rows[g[rows] == k]) for k in (0, 1))
        return np.array([l0 - l1, l1 - l0]) - DELTA + s, np.stack([d0 - d1, d1 - d0])

    w, s, y = np.zeros(X.shape[1]), np.zeros(2), np.zeros(2)
    zw, zs = w.copy(), s.copy()
    out = []
    for _ in range(steps):
        xi = batches.objective(config.batch_size).rows
        zeta1 = batches.per_group(config.per_group).rows
        zeta2 = batches.per_group(config.per_group).rows
        _, grad_f = loss_and_grad(xi)
        c1, jac = rows_and_jacobian(zeta1)
        c2, _ = rows_and_jacobian(zeta2)
        y = y + config.eta * c1
        if np.linalg.norm(y) >= config.dual_bound:
            y = np.zeros(2)
        weight = y + config.rho * c2
        gw = grad_f + jac.T @ weight + config.mu * (w - zw)
        gs = weight + config.mu * (s - zs)
        zw, zs = zw + config.beta * (w - zw), zs + config.beta * (s - zs)
        w, s = w - config.tau * gw, np.maximum(s - config.tau * gs, 0.0)
        out.append((w, s, y))
    return out


@pytest.mark.parametrize("dual_bound", [10.0, 1e-3])  # 1e-3: the safeguard resets y every step
def test_the_first_iterates_are_algorithm_2_by_hand(toy, dual_bound):
    problem = Problem(toy, ModelSpec(), GAP)
    config = SSLALMConfig(tau=0.3, eta=0.5, rho=2.0, mu=2.0, beta=0.5, batch_size=5,
                          per_group=3, dual_bound=dual_bound)  # fmt: skip
    solver = SSLALM(problem, config, np.random.default_rng(7))
    rows = problem.bound.rows
    for w, s, y in iterates_by_hand(problem, config, seed=7, steps=3):
        state = solver.step().state
        np.testing.assert_allclose(solver.candidate()["w"], w, rtol=0, atol=1e-10)
        np.testing.assert_allclose([state[f"slack.{r}"] for r in rows], s, rtol=0, atol=1e-10)
        np.testing.assert_allclose([state[f"dual.{r}"] for r in rows], y, rtol=0, atol=1e-10)
        assert state["dual_reset"] == float(dual_bound < 1)


def test_the_safeguard_resets_the_duals_when_their_norm_reaches_the_bound(toy):
    problem = Problem(toy, ModelSpec(), GAP)
    free = SSLALM(problem, SSLALMConfig(eta=0.5), np.random.default_rng(0))
    bounded = SSLALM(problem, SSLALMConfig(eta=0.5, dual_bound=1e-3), np.random.default_rng(0))
    duals = [k for k in free.step().state if k.startswith("dual.")]
    state = free.step().state
    assert 1e-3 <= np.linalg.norm([state[k] for k in duals]) < 10 and state["dual_reset"] == 0
    bounded.step()
    state = bounded.step().state
    assert state["dual_reset"] == 1 and all(state[k] == 0 for k in duals)


def test_alm_is_ssl_alm_with_mu_zero(toy):
    assert ALMConfig().mu == 0 and SSLALMConfig().mu == 2.0
    problem = Problem(toy, ModelSpec(kind="mlp", hidden=(6,)), GAP)
    budget = Budget(max_iterations=40)
    alm = solve(problem, "alm", budget=budget, seed=2)
    ssl = solve(problem, "ssl_alm", SSLALMConfig(mu=0.0), budget=budget, seed=2)
    proximal = solve(problem, "ssl_alm", budget=budget, seed=2)
    for name, value in alm.params.items():
        np.testing.assert_array_equal(value, ssl.params[name])
    assert not np.array_equal(alm.params["layers.0.weight"], proximal.params["layers.0.weight"])


def test_an_mlp_trained_by_ssl_alm_has_a_smaller_group_loss_gap_than_sgd(toy):
    problem = Problem(toy, ModelSpec(kind="mlp", hidden=(8, 4)), GAP)
    budget = Budget(max_iterations=400)
    constrained = solve(problem, "ssl_alm", budget=budget, seed=0)
    plain = solve(problem, "sgd", budget=budget, seed=0)
    gap = constrained.metrics["train"]["constraint"]
    assert gap < plain.metrics["train"]["constraint"]
