"""Paper 001's baselines, full batch: SSG (Huang & Lin 2023, Alg. 1) and the inexact proximal point
methods IPP-SSG and IPP-ConEx. The first steps by hand, the random output's law over objective
iterations, one outer step equal to its inner solver on the regularised problem by hand, ConEx's
duals, feasibility from an infeasible start, the oracle counts, an MLP, and a run from the command
line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from engine.cli import main
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, solve, solver_card
from engine.solvers.full_data import FullData
from engine.solvers.kkt import kkt_terms, multipliers_from_state
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.paper001.cards_baselines import IPPConExConfig, IPPSSGConfig, SSGHLConfig
from engine.solvers.paper001.ipp import InexactProximalPoint
from engine.solvers.paper001.ssg_hl import SwitchingSubgradientHL
from engine.solvers.tail_sample import TailSample

KAPPA = 0.02
SOLVERS = ("ssg_hl", "ipp_ssg", "ipp_conex")


def dp(kappa: float = KAPPA) -> ConstraintSpec:
    """Paper 001's DP rows (eq. 15), sigmoid surrogate: s_a − s_b − κ ≤ 0, s_b − s_a − κ ≤ 0."""
    return ConstraintSpec("DP", kappa, surrogate="sigmoid")


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


class ByHand:
    """∇F, G and J_G of a linear model (intercept first) under the two-group DP rows, in
    numpy."""

    def __init__(self, problem: Problem) -> None:
        train = problem.data.train
        self.X = np.hstack([np.ones((len(train), 1)), problem.features("train")])
        self.y, self.g, self.kappa = train.y, train.groups, problem.constraint.kappa

    def loss_gradient(self, w: np.ndarray) -> np.ndarray:
        return self.X.T @ (sigmoid(self.X @ w) - self.y) / len(self.y)

    def rows(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rates, slopes = [], []
        for k in (0, 1):
            s = sigmoid(self.X[self.g == k] @ w)
            rates.append(s.mean())
            slopes.append(self.X[self.g == k].T @ (s * (1 - s)) / len(s))
        gap, d_gap = rates[0] - rates[1], slopes[0] - slopes[1]
        return np.array([gap, -gap]) - self.kappa, np.stack([d_gap, -d_gap])


def unfair_start(problem: Problem) -> np.ndarray:
    """The unconstrained fit's weights: far outside DP ≤ κ on the solver tests' data."""
    free = solve(problem, "unconstrained").params
    return problem.network.flatten(free)


def test_the_first_ssg_steps_are_algorithm_1_by_hand(toy):
    problem = Problem(toy, ModelSpec(), dp())
    config = SSGHLConfig(objective_step=1.5, epsilon=0.005)
    solver = SwitchingSubgradientHL(problem, config, np.random.default_rng(0))
    hand, w, branches = ByHand(problem), np.zeros(3), []
    for _ in range(8):
        values, jacobian = hand.rows(w)
        worst = int(np.argmax(values))
        info = solver.step()
        if values[worst] <= config.epsilon:
            branches.append("objective")
            step, direction = config.objective_step, hand.loss_gradient(w)
        else:  # Polyak: G/‖∇G‖² along the worst row's gradient
            branches.append("constraint")
            direction = jacobian[worst]
            step = values[worst] / (direction @ direction)
        w = w - step * direction
        assert info.state["branch"] == branches[-1]
        assert info.state["violation"] == pytest.approx(values[worst], abs=1e-12)
        assert info.state["step"] == pytest.approx(step, rel=1e-10)
        np.testing.assert_allclose(solver.current()["w"], w, rtol=0, atol=1e-10)
    assert {"objective", "constraint"} == set(branches)  # the step 1.5 was picked for this
    assert info.state["branch.objective"] == branches.count("objective")
    assert info.state["branch.constraint"] == branches.count("constraint")


def test_a_constant_constraint_step_is_taken_as_given(toy):
    problem = Problem(toy, ModelSpec(), dp())
    config = SSGHLConfig(objective_step=1.5, constraint_rule="constant", constraint_step=0.3)
    solver = SwitchingSubgradientHL(problem, config, np.random.default_rng(0))
    states = [solver.step().state for _ in range(10)]
    steps = {state["branch"]: state["step"] for state in states}
    assert steps == {"objective": 1.5, "constraint": 0.3}


def test_the_tail_sample_draws_in_proportion_to_the_weights_from_s_on():
    weights = np.array([0.5, 2.0, 1.0, 0.25, 1.25, 3.0, 1.0, 0.5, 2.0, 0.75])
    draws, counts = 20_000, np.zeros(len(weights))
    rng = np.random.default_rng(0)
    for _ in range(draws):
        sample: TailSample[int] = TailSample(rng, fraction=0.5)
        for index, weight in enumerate(weights):
            sample.offer(index, weight, lambda index=index: index)
        counts[sample.item(len(weights))] += 1
    # T = 10: S = 4, the largest power of two ≤ 0.5·10; nothing before it is drawn
    assert counts[:4].sum() == 0
    p = weights[4:] / weights[4:].sum()
    expected = draws * p
    assert np.all(np.abs(counts[4:] - expected) < 4.5 * np.sqrt(expected * (1 - p)))


def test_the_tail_sample_follows_the_count_and_keeps_few_reservoirs():
    sample: TailSample[int] = TailSample(np.random.default_rng(1), fraction=0.25)
    for index in range(0, 5000, 3):  # every third index, as objective iterations come
        sample.offer(index, 1.0, lambda index=index: index)
        assert len(sample.open) <= 4  # log2(1/f) + 2
        count = index + 1
        start = 0 if 0.25 * count < 1 else 1 << int(math.floor(math.log2(0.25 * count)))
        assert start <= sample.item(count) <= index
    assert TailSample(np.random.default_rng(0), fraction=0.5).item(10) is None
    only: TailSample[int] = TailSample(np.random.default_rng(0), fraction=0.0)
    for index in range(100):
        only.offer(index, 1.0, lambda index=index: index)
    assert len(only.open) == 1


def test_ssg_outputs_an_objective_iterate_from_s_on(toy):
    problem = Problem(toy, ModelSpec(), dp())
    config = SSGHLConfig(objective_step=1.5, epsilon=0.005)
    found = set()
    for seed in range(12):
        solver = SwitchingSubgradientHL(problem, config, np.random.default_rng(seed))
        iterates, branches = [], []
        for _ in range(40):
            iterates.append(solver.current()["w"])
            branches.append(solver.step().state["branch"])
        start = 16  # the largest power of two ≤ 0.5·40
        assert "constraint" in branches[start:] and "objective" in branches[start:]
        chosen = solver.candidate()["w"]
        (t,) = [t for t, w in enumerate(iterates) if np.array_equal(w, chosen)]
        assert t >= start and branches[t] == "objective"
        found.add(t)
    assert len(found) > 3  # random, not one fixed iterate
    last = SwitchingSubgradientHL(problem, SSGHLConfig(output="last"), np.random.default_rng(0))
    for _ in range(5):
        last.step()
        np.testing.assert_array_equal(last.candidate()["w"], last.current()["w"])


def regularised(hand: ByHand, w: np.ndarray, center: np.ndarray, rho: float):
    """∇F_k, G_k and J_{G_k} of subproblem k by hand."""
    offset = w - center
    values, jacobian = hand.rows(w)
    return (
        hand.loss_gradient(w) + rho * offset,
        values + 0.5 * rho * offset @ offset,
        jacobian + rho * offset,
    )


def ipp_ssg_by_hand(hand, w0, config: IPPSSGConfig) -> np.ndarray:
    """One subproblem of IPP-SSG: switching steps α_t on the regularised problem, the weighted
    average (weights 1/α_t) of its objective iterates."""
    w, total, weight, rho = w0.copy(), 0.0, 0.0, config.rho_hat
    for t in range(config.inner_iterations):
        alpha = 1.0 / (1.0 / config.inner_step + rho * t / 2)
        grad, values, jacobian = regularised(hand, w, w0, rho)
        worst = int(np.argmax(values))
        if values[worst] <= config.epsilon:
            total, weight = total + w / alpha, weight + 1.0 / alpha
            w = w - alpha * grad
        else:
            w = w - values[worst] / (jacobian[worst] @ jacobian[worst]) * jacobian[worst]
    return total / weight


def ipp_conex_by_hand(hand, w0, config: IPPConExConfig) -> tuple[np.ndarray, np.ndarray]:
    """One subproblem of IPP-ConEx from y = 0: ConEx with the linearisation at the previous
    iterate, and the average Σ γ_t x_{t+1} / Σ γ_t; also the duals."""
    rho, a0 = config.rho_hat, config.inner_step

    def alpha(t: int) -> float:
        return 1.0 / (1.0 / a0 + rho * t / 2)

    w, y, total, weight, before = w0.copy(), np.zeros(2), 0.0, 0.0, None
    for t in range(config.inner_iterations):
        grad, values, jacobian = regularised(hand, w, w0, rho)
        gamma, gamma_before = 1.0 / alpha(t + 1), 1.0 / alpha(t)
        if before is None:
            ell = s = values
        else:
            w_before, values_before, jacobian_before, ell_before = before
            ell = values_before + jacobian_before @ (w - w_before)
            theta = gamma_before / gamma
            s = (1 + theta) * ell - theta * ell_before
        y = np.maximum(y + config.dual_step * gamma * alpha(1) * s, 0.0)
        before = (w, values, jacobian, ell)
        w = w - alpha(t) * (grad + jacobian.T @ y)
        total, weight = total + gamma * w, weight + gamma
    return total / weight, y


@pytest.mark.parametrize("inner", ["ssg", "conex"])
def test_one_outer_step_is_the_inner_solver_on_the_regularised_problem(toy, inner):
    problem = Problem(toy, ModelSpec(), dp())
    if inner == "ssg":
        config = IPPSSGConfig(rho_hat=0.1, inner_iterations=9, inner_step=0.8, epsilon=0.004)
    else:
        config = IPPConExConfig(rho_hat=0.7, inner_iterations=9, inner_step=0.8, dual_step=3.0)
    solver = InexactProximalPoint(problem, config, np.random.default_rng(0))
    start = 0.3 * unfair_start(problem)  # infeasible, so that both branches are taken
    solver.x = start.copy()
    for _ in range(config.inner_iterations):
        state = solver.step().state
    assert (state["outer"], state["inner"]) == (1, 0)
    hand = ByHand(problem)
    if inner == "ssg":
        expected = ipp_ssg_by_hand(hand, start, config)
        assert state["branch.objective"] and state["branch.constraint"]
    else:
        expected, duals = ipp_conex_by_hand(hand, start, config)
        np.testing.assert_allclose(multipliers_from_state(problem, state), duals, atol=1e-10)
        assert duals.max() > 0
    np.testing.assert_allclose(solver.x, expected, rtol=0, atol=1e-10)
    # θ_1 is the only outer iterate: the output, random or last
    np.testing.assert_allclose(solver.candidate()["w"], expected, rtol=0, atol=1e-10)


def test_the_score_space_linearisation_is_exact_for_a_linear_model(toy):
    """J_G(x)(x' − x) from the scores' change and m pullbacks, with pSP's auxiliary θ too."""
    for constraint, interval in ((dp(), (0.0, 1.0)), (ConstraintSpec("pSP", 0.05), (0.1, 0.4))):
        problem = Problem(toy, ModelSpec(), constraint, interval=interval)
        solver = InexactProximalPoint(problem, IPPConExConfig(), np.random.default_rng(0))
        rng = np.random.default_rng(2)
        x = solver.x + 0.3 * rng.normal(size=solver.x.shape)
        x_next = x + 0.1 * rng.normal(size=x.shape)
        full = FullData(solver.oracles, problem)
        change = full.point(x).change_to(full.point(x_next))
        _, jacobian = solver.oracles.constraint_jacobian(x, np.arange(len(toy.train)))
        np.testing.assert_allclose(change, jacobian @ (x_next - x), rtol=1e-9, atol=1e-12)


def test_conex_duals_stay_nonnegative_and_reach_the_kkt_record(toy):
    problem = Problem(toy, ModelSpec(), dp())
    solver = InexactProximalPoint(problem, IPPConExConfig(), np.random.default_rng(0))
    solver.x = unfair_start(problem)
    states = [solver.step().state for _ in range(300)]
    duals = np.array([multipliers_from_state(problem, state) for state in states])
    assert duals.min() >= 0 and duals.max() > 0
    assert (duals == 0).any()  # the inactive row's dual is clipped at 0
    terms = kkt_terms(problem, solver.candidate(), multipliers_from_state(problem, states[-1]))
    np.testing.assert_array_equal(terms.multipliers, duals[-1])  # used as they are


def surrogate_max(solver: MinibatchSolver) -> float:
    """The largest surrogate row at the solver's output."""
    return float(solver.surrogate_view()[1].max())


@pytest.mark.parametrize("name", SOLVERS)
def test_each_solver_reaches_the_surrogate_constraint_from_an_infeasible_start(data, name):
    problem = Problem(data, ModelSpec(), dp())
    card = solver_card(name)
    solver = card.load()(problem, card.Config(), np.random.default_rng(0))
    solver.x = unfair_start(problem)
    rows = problem.bound.surrogate(torch.from_numpy(problem.scores(solver.current())))
    assert rows.max() > 0.1
    for _ in range(600):
        solver.step()
    loss, _ = solver.surrogate_view()
    assert surrogate_max(solver) <= 0.002  # within the switching tolerance of feasible
    assert loss < 0.55  # near the constrained optimum, ≈ 0.541 (the constant classifier: log 2)


@pytest.mark.parametrize("name", SOLVERS)
def test_an_mlp_under_eo_runs_with_full_batch_oracle_counts(toy, name):
    problem = Problem(
        toy, ModelSpec("mlp", hidden=(6,)), ConstraintSpec("EO", KAPPA, surrogate="sigmoid")
    )
    run = solve(problem, name, budget=Budget(max_iterations=60), seed=1)
    assert run.iterations == 60
    for split in ("train", "val", "test"):
        assert math.isfinite(run.metrics[split]["constraint"])
    state = [r for r in run.trajectory if r.kind == "surrogate"][-1].state
    assert state["oracle.data_passes"] == 60 and state["oracle.constraint_values"] == 60
    m = len(problem.bound.rows)
    if name == "ssg_hl" or name == "ipp_ssg":  # one gradient per step, of F or of the worst row
        assert state["oracle.objective_gradients"] == state["branch.objective"]
        assert state["oracle.constraint_gradients"] == state["branch.constraint"]
    if name == "ipp_conex":  # ∇F + J_Gᵀy, and J_G(x_{t−1})(x_t − x_{t−1}) after the first step
        starts = 3  # three subproblems of 20 inner iterations
        assert state["oracle.objective_gradients"] == 60
        assert state["oracle.constraint_gradients"] == 60 + m * (60 - starts)
        assert {f"dual.{row}" for row in problem.bound.rows} <= set(state)
    if name != "ssg_hl":
        assert state["outer"] == 3 and state["inner"] == 0


def test_options_are_checked():
    with pytest.raises(UserError, match="output"):
        SSGHLConfig(output="best")
    with pytest.raises(UserError, match="start_fraction"):
        IPPConExConfig(start_fraction=1.0)
    with pytest.raises(UserError, match="constraint_rule"):
        IPPSSGConfig(constraint_rule="diminishing")
    with pytest.raises(UserError, match="inner_iterations"):
        IPPSSGConfig(inner_iterations=0)
    with pytest.raises(UserError, match="dual_step"):
        IPPConExConfig(dual_step=-1.0)


def test_ipp_conex_runs_from_the_command_line_on_adult(tmp_path, capsys):
    out = tmp_path / "run.json"
    code = main(
        [
            "run",
            "--data",
            "adult",
            "--attribute",
            "sex",
            "--constraint",
            "dp",
            "--kappa",
            "0.02",
            "--solver",
            "ipp_conex",
            "--iterations",
            "100",
            "--seed",
            "0",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    document = json.loads(out.read_text())
    assert document["verdict"]["quantity"] == "DP gap"
    result = document["result"]
    assert result["stop_code"] == "iteration_budget" and result["iterations"] == 100
    test_gap = result["metrics"]["test"]["dp"]
    assert 0 <= test_gap <= 1 and f"{test_gap:.4f}" in printed.out
    last = [r for r in result["trajectory"] if r["kind"] == "surrogate"][-1]["state"]
    assert last["outer"] >= 1 and last["oracle.data_passes"] == result["iterations"]
    assert min(v for k, v in last.items() if k.startswith("dual.")) >= 0
