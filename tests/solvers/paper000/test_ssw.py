"""Paper 000's stochastic switching subgradient (SSw, Alg. 3): iterates by hand, the random
output's law, seeds, and fairness against SGD."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers import Budget, solve
from engine.solvers.paper000.cards_ssw import SSwConfig
from engine.solvers.paper000.ssw import StochasticSwitching
from engine.solvers.tail_sample import WeightedReservoir


def group_losses_and_grads(X, zeta, groups, w):
    """Per-group mean BCE-with-logits log(1 + exp(−ζh)) and its gradient in w, by hand."""
    h = X @ w
    loss = np.logaddexp(0.0, -zeta * h)
    slope = -zeta / (1.0 + np.exp(zeta * h))  # d loss / d h
    losses = np.array([loss[groups == g].mean() for g in (0, 1)])
    grads = np.array([X[groups == g].T @ slope[groups == g] / np.sum(groups == g) for g in (0, 1)])
    return losses, grads, (loss.mean(), X.T @ slope / len(h))


def test_the_first_iterates_switch_between_objective_and_constraint_steps_as_by_hand(toy):
    delta = 0.0
    problem = Problem(toy, ModelSpec(), ConstraintSpec("group_loss_gap", delta))
    config = SSwConfig(
        objective_step=0.5, constraint_step=0.3, epsilon=0.02, batch_size=5, per_group=4
    )
    solver = StochasticSwitching(problem, config, np.random.default_rng(11))
    # the same draws by hand: the model seed, the sampler's passes, one uniform per output offer
    rng = np.random.default_rng(11)
    rng.integers(2**31)
    batches = BatchSampler(toy.train.groups, toy.n_groups, rng)
    X = np.hstack([np.ones((len(toy.train), 1)), problem.features("train")])
    zeta, groups = 2.0 * toy.train.y - 1.0, toy.train.groups

    def rows_and_grads(w, rows):
        losses, grads, _ = group_losses_and_grads(X[rows], zeta[rows], groups[rows], w)
        gap, d_gap = losses[0] - losses[1], grads[0] - grads[1]
        return np.array([gap - delta, -gap - delta]), np.array([d_gap, -d_gap])

    w, kept, total, branches = np.zeros(X.shape[1]), None, 0.0, []
    for _ in range(3):
        c_bar = rows_and_grads(w, batches.per_group(4).rows)[0].max()
        if c_bar <= 0.02:
            branches.append("objective")
            total += 0.5
            if rng.random() * total < 0.5:
                kept = w.copy()
            rows = batches.objective(5).rows
            w = w - 0.5 * group_losses_and_grads(X[rows], zeta[rows], groups[rows], w)[2][1]
        else:
            branches.append("constraint")
            values, grads = rows_and_grads(w, batches.per_group(4).rows)
            w = w - 0.3 * grads[np.argmax(values)]
        info = solver.step()
        assert info.state["branch"] == branches[-1]
        assert info.state["c_bar"] == pytest.approx(c_bar, abs=1e-12)
        assert info.state["step"] == (0.5 if branches[-1] == "objective" else 0.3)
        np.testing.assert_allclose(solver.current()["w"], w, rtol=0, atol=1e-10)
    assert branches == ["objective", "constraint", "objective"]  # ε = 0.02 picked for this
    np.testing.assert_allclose(solver.candidate()["w"], kept, rtol=0, atol=1e-10)


def test_the_reservoir_keeps_item_k_with_probability_proportional_to_its_weight():
    weights = np.array([0.5, 2.0, 1.0, 0.25, 1.25])
    rng, draws = np.random.default_rng(0), 20_000
    counts = np.zeros(len(weights))
    for _ in range(draws):
        reservoir: WeightedReservoir[int] = WeightedReservoir(rng)
        for k, weight in enumerate(weights):
            reservoir.offer(weight, lambda k=k: k)
        counts[reservoir.item] += 1
    expected = draws * weights / weights.sum()
    # each count is binomial: within 4.5 standard deviations (all five: p ≈ 3e-5 of a false alarm)
    assert np.all(
        np.abs(counts - expected) < 4.5 * np.sqrt(expected * (1 - weights / weights.sum()))
    )


def test_without_objective_steps_the_output_is_the_last_iterate_and_k0_is_respected(toy):
    problem = Problem(toy, ModelSpec(), ConstraintSpec("group_loss_gap", 0.0))
    # every objective step before k0 = 10**6 is left out of the output: it follows the iterate
    solver = StochasticSwitching(problem, SSwConfig(start_index=10**6), np.random.default_rng(0))
    for _ in range(5):
        solver.step()
        np.testing.assert_array_equal(solver.candidate()["w"], solver.current()["w"])


def test_options_are_checked():
    with pytest.raises(UserError, match="objective_rule"):
        SSwConfig(objective_rule="adaptive")  # Polyak's c/‖S^c‖² is a constraint-step rule
    with pytest.raises(UserError, match="epsilon"):
        SSwConfig(epsilon=-1.0)


@pytest.mark.parametrize(
    "rules", [("diminishing", "adaptive", "diminishing"), ("constant", "diminishing", "constant")]
)
def test_the_schedules_and_psp_auxiliary_run_on_an_mlp(toy, rules):
    objective_rule, constraint_rule, tolerance_rule = rules
    problem = Problem(
        toy, ModelSpec(kind="mlp", hidden=(6,)), ConstraintSpec("pSP", 0.1, (0.1, 0.5))
    )
    config = SSwConfig(
        objective_rule=objective_rule,
        constraint_rule=constraint_rule,
        tolerance_rule=tolerance_rule,
    )
    solution = solve(problem, "ssw", config, Budget(max_iterations=60), seed=1)
    assert "aux.theta" in solution.params
    assert np.isfinite(solution.metrics["train"]["constraint"])
    states = [r.state for r in solution.trajectory if r.kind == "surrogate"]
    assert {s["branch"] for s in states} <= {"objective", "constraint"}


def test_an_mlp_trained_by_ssw_has_a_smaller_group_loss_gap_than_by_sgd(toy):
    problem = Problem(
        toy, ModelSpec(kind="mlp", hidden=(8, 4)), ConstraintSpec("group_loss_gap", 0.005)
    )  # paper 000 Exp. 1's δ
    budget = Budget(max_iterations=800)
    ssw = solve(problem, "ssw", budget=budget, seed=0).metrics["train"]["constraint"]
    sgd = solve(problem, "sgd", budget=budget, seed=0).metrics["train"]["constraint"]
    assert ssw < sgd
