"""Paper 000's penalised SGD baselines (eq. 13 and SGD-Fairret): the penalties against their
definitions, iterates by hand with replayed draws, their relation to SGD, seeds."""

from __future__ import annotations

import numpy as np
import pytest
from solver_data import toy_prepared

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers import Budget, solve
from engine.solvers.paper000.cards_penalties import SGDFairretConfig, SGDPenaltyConfig
from engine.solvers.paper000.cards_sgd import SGDConfig
from engine.solvers.paper000.penalised_sgd import SGDFairret, SGDPenalty
from engine.solvers.paper000.sgd import SGD


def gap_problem(groups: int, pairs: str = "vs_mean", model: ModelSpec | None = None) -> Problem:
    constraint = ConstraintSpec("group_loss_gap", 0.05, pairs=pairs)
    return Problem(toy_prepared(groups=groups), model or ModelSpec(cross_terms=True), constraint)


def replayed(problem: Problem, seed: int) -> BatchSampler:
    """The solver's batches by hand: its first draw seeds the model, then the sampler's."""
    rng = np.random.default_rng(seed)
    rng.integers(2**31)
    return BatchSampler(problem.data.train.groups, problem.data.n_groups, rng)


def start_at(solver: SGD, seed: int) -> np.ndarray:
    """Move a linear solver off w = 0, where every group loss is ln 2 and the gaps vanish."""
    weights = solver.oracles.layout["weights"]
    w = 0.5 * np.random.default_rng(seed).normal(size=solver.x[weights].shape)
    solver.x[weights] = w
    return w


def logistic(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row BCE-with-logits loss (paper 000, eq. 12) and its derivative in the score."""
    zeta = 2.0 * y - 1.0
    margin = -zeta * (X @ w)
    return np.logaddexp(0.0, margin), -zeta / (1.0 + np.exp(-margin))


def group_means(values: np.ndarray, groups: np.ndarray, m: int) -> np.ndarray:
    return np.array([values[groups == g].mean() for g in range(m)])


@pytest.mark.parametrize(("groups", "pairs"), [(3, "vs_mean"), (2, "vs_mean"), (3, "all")])
def test_the_penalty_is_eq_13_on_the_group_balanced_batch(groups, pairs):
    problem = gap_problem(groups, pairs)
    config = SGDPenaltyConfig(batch_size=6, per_group=5, penalty=0.4)
    solver = SGDPenalty(problem, config, np.random.default_rng(2))
    w = start_at(solver, 9)
    value, penalty, _ = solver.batch_terms()
    batches = replayed(problem, 2)
    X, y = problem.design().dense(), problem.data.train.y.astype(np.float64)
    rows = batches.objective(6).rows
    np.testing.assert_allclose(float(value), logistic(X[rows], y[rows], w)[0].mean(), rtol=1e-12)
    batch = batches.per_group(5)
    losses = group_means(logistic(X[batch.rows], y[batch.rows], w)[0], batch.groups, groups)
    if pairs == "vs_mean":  # eq. 13: λ Σ_i |ℓ_i − (1/m) Σ_j ℓ_j|
        expected = 0.4 * np.abs(losses - losses.mean()).sum()
    else:  # every pair: λ Σ_{i<j} |ℓ_i − ℓ_j|
        expected = 0.4 * np.abs(losses[:, None] - losses[None, :])[np.triu_indices(groups, 1)].sum()
    assert expected > 1e-3
    np.testing.assert_allclose(float(penalty), expected, rtol=1e-12)


def test_sgd_penalty_iterates_by_hand():
    m, lam, step = 3, 0.4, 0.3
    problem = gap_problem(m)
    config = SGDPenaltyConfig(step=step, batch_size=5, per_group=4, penalty=lam)
    solver = SGDPenalty(problem, config, np.random.default_rng(7))
    w = start_at(solver, 1)
    batches = replayed(problem, 7)
    X, y = problem.design().dense(), problem.data.train.y.astype(np.float64)
    for _ in range(3):
        rows = batches.objective(5).rows
        gradient = X[rows].T @ logistic(X[rows], y[rows], w)[1] / len(rows)
        batch = batches.per_group(4)
        loss, slope = logistic(X[batch.rows], y[batch.rows], w)
        losses = group_means(loss, batch.groups, m)
        group_grads = np.array(
            [X[batch.rows][batch.groups == g].T @ slope[batch.groups == g] / 4 for g in range(m)]
        )
        sign = np.sign(losses - losses.mean())
        # ∇ Σ_i |ℓ_i − mean| = Σ_i sign_i (∇ℓ_i − mean_j ∇ℓ_j)
        gradient += lam * (sign @ group_grads - sign.sum() * group_grads.mean(axis=0))
        w = w - step * gradient
        solver.step()
        np.testing.assert_allclose(solver.candidate()["w"], w, rtol=1e-10, atol=1e-12)


def test_sgd_fairret_iterates_by_hand_with_batch_size_over_g_rows_of_each_group():
    m, mult, step = 3, 2.0, 0.3
    problem = gap_problem(m)
    config = SGDFairretConfig(step=step, batch_size=7, multiplier=mult)
    solver = SGDFairret(problem, config, np.random.default_rng(5))
    w = start_at(solver, 4)
    batches = replayed(problem, 5)
    X, y = problem.design().dense(), problem.data.train.y.astype(np.float64)
    for _ in range(3):
        batch = batches.per_group(2)  # ⌊7 / 3⌋ rows of each group
        Xb, yb, g = X[batch.rows], y[batch.rows], batch.groups
        n = len(yb)
        slope = logistic(Xb, yb, w)[1]
        p = 1.0 / (1.0 + np.exp(-(Xb @ w)))
        correct = p * yb + (1.0 - p) * (1.0 - yb)
        d_correct = p * (1.0 - p) * (2.0 * yb - 1.0)
        overall, stats = correct.mean(), group_means(correct, g, m)
        sign = np.sign(stats / overall - 1.0)
        member = (g[:, None] == np.arange(m)).astype(np.float64)
        # ∂/∂h_r Σ_s |stat_s / overall − 1|
        d_norm = d_correct * (
            (member / member.sum(axis=0)) @ sign / overall - (sign @ stats) / overall**2 / n
        )
        w = w - step * (Xb.T @ (slope / n + mult * d_norm))
        solver.step()
        np.testing.assert_allclose(solver.candidate()["w"], w, rtol=1e-10, atol=1e-12)


def test_sgd_fairret_without_penalty_is_sgd_on_the_same_balanced_batches():
    """The balanced batches differ from SGD's uniform ones, so SGD is fed them to compare."""
    problem = gap_problem(2, model=ModelSpec(kind="mlp", hidden=(6,)))
    fairret = SGDFairret(
        problem, SGDFairretConfig(step=0.1, multiplier=0.0), np.random.default_rng(3)
    )
    fed = SGD(problem, SGDConfig(step=0.1), np.random.default_rng(3))
    fed.sampler.objective = lambda size: fed.sampler.per_group(size // 2)
    plain = SGD(problem, SGDConfig(step=0.1), np.random.default_rng(3))
    for _ in range(5):
        for solver in (fairret, fed, plain):
            solver.step()
        for name, value in fairret.candidate().items():
            np.testing.assert_array_equal(value, fed.candidate()[name])
    assert not np.array_equal(
        plain.candidate()["layers.0.weight"], fairret.candidate()["layers.0.weight"]
    )


def test_a_large_penalty_narrows_the_training_group_loss_gap():
    problem = gap_problem(3)
    budget = Budget(max_iterations=600)
    sgd = solve(problem, "sgd", SGDConfig(step=0.05), budget, seed=0)
    penalised = solve(
        problem, "sgd_penalty", SGDPenaltyConfig(step=0.05, penalty=5.0), budget, seed=0
    )
    gaps = sgd.metrics["train"]["constraint"], penalised.metrics["train"]["constraint"]
    assert gaps[1] < 0.5 * gaps[0], gaps
