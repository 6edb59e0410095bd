"""Paper 004's SFLS (Alg. 1) with its SMD oracle (Alg. 2): the closed forms of Lemmas 1, 3, 4
against numeric optima, and the solver on a small convex problem and from the command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from solver_data import two_groups, two_groups_flags, two_groups_frame

from engine.cli import main
from engine.fairness.constraint_spec import ConstraintSpec
from engine.models import ModelSpec
from engine.objectives import PairwiseAUCLoss
from engine.pairwise import lemma1_terms, square_pair_loss
from engine.problem import Problem
from engine.solvers.paper004.cards_sfls import SFLSConfig
from engine.solvers.paper004.sfls import SFLS
from engine.solvers.paper004.smd import entropy_weight, level_value, y_step

GROUP = np.array([0, 1, 1, 2, 2])  # term → component, as in paper 004, eqs. (11)–(13)
BOUND = 1.5


def _split(point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ỹ by a softmax of the first three entries, α the last five."""
    logits = point[:3] - point[:3].max()
    return np.exp(logits) / np.exp(logits).sum(), point[3:]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_y_step_is_the_argmin_of_eq_25(seed):
    rng = np.random.default_rng(seed)
    y_old = rng.dirichlet(np.ones(3))
    alpha_old = rng.uniform(-BOUND, BOUND, 5)
    u, v, tau = rng.normal(size=3), rng.normal(scale=2.0, size=5), 0.7
    weight = entropy_weight(BOUND)

    def objective(point: np.ndarray) -> float:  # −⟨g_y, y⟩ + V_y(y, y(t))/τ + d_y(y)
        y, alpha = _split(point)
        yg = y[GROUP]
        linear = y @ u + (yg * alpha) @ v
        bregman = weight * np.sum(y * np.log(y / y_old)) + yg @ (alpha - alpha_old) ** 2
        return -linear + bregman / tau + yg @ alpha**2

    bounds = [(-30, 30)] * 3 + [(-BOUND, BOUND)] * 5
    start = np.r_[np.log(y_old), alpha_old]
    numeric = minimize(
        objective, start, bounds=bounds, method="L-BFGS-B", options={"ftol": 1e-14, "gtol": 1e-10}
    )
    log_y, alpha = y_step(np.log(y_old), alpha_old, u, v, tau, BOUND, GROUP)
    y_num, alpha_num = _split(numeric.x)
    assert np.allclose(np.exp(log_y), y_num, atol=1e-5)
    assert np.allclose(alpha, alpha_num, atol=1e-4)
    assert objective(np.r_[log_y, alpha]) <= numeric.fun + 1e-9


@pytest.mark.parametrize("seed", [0, 1])
def test_the_level_value_is_the_max_of_eq_26(seed):
    rng = np.random.default_rng(seed)
    steps = 7
    F, G = rng.normal(size=(steps, 3)), rng.normal(scale=3.0, size=(steps, 5))
    tau = 1.0 / np.sqrt(np.arange(steps) + 1.0)

    def negative(point: np.ndarray) -> float:  # −Σ_t τ_t[Φ(x(t), y, z(t)) − d_y(y)] / Σ_t τ_t
        y, alpha = _split(point)
        yg = y[GROUP]
        phi = F @ y + G @ (yg * alpha) - yg @ alpha**2
        return -float(tau @ phi / tau.sum())

    bounds = [(-30, 30)] * 3 + [(-BOUND, BOUND)] * 5
    best = min(
        (
            minimize(negative, rng.normal(size=8), bounds=bounds, method="L-BFGS-B")
            for _ in range(5)
        ),
        key=lambda r: r.fun,
    )
    level = level_value(tau @ F / tau.sum(), tau @ G / tau.sum(), BOUND, GROUP)
    assert level == pytest.approx(-best.fun, abs=1e-5)


@pytest.mark.parametrize("c1", [0.5, 1.0])
def test_lemma_1_terms_at_their_optimum_average_to_the_moment_form(c1):
    rng = np.random.default_rng(3)
    h = rng.normal(size=40)
    in_a, in_b = rng.random(40) < 0.4, rng.random(40) < 0.7  # overlapping sets
    weight_a, weight_b = in_a / in_a.mean(), in_b / in_b.mean()
    m_a, m_b = h[in_a].mean(), h[in_b].mean()
    alpha = np.sqrt(c1) * (m_a - m_b)
    one = np.array([1.0])
    terms = lemma1_terms(
        h, weight_a[:, None], weight_b[:, None], one * m_a, one * m_b, one * c1, one * 1.0
    )
    value = float(np.mean(terms.F + alpha * terms.G) - alpha**2)
    assert value == pytest.approx(square_pair_loss(h[in_a], h[in_b], c1, 1.0)[0], rel=1e-10)


def test_the_level_falls_and_the_output_is_feasible_with_a_useful_auc():
    prepared = two_groups(n=2000)
    constraint = ConstraintSpec("auc_gap", 0.05, None, options=(("c1", 0.5),))
    problem = Problem(prepared, ModelSpec(), constraint, objective=PairwiseAUCLoss(0.5, 1.0))
    solver = SFLS(problem, SFLSConfig(select="last"), np.random.default_rng(0))
    levels = [solver.r]
    while solver.outer < 6 and not solver.halted:
        solver.advance(1000)
        if solver.inner == 0:
            levels.append(solver.r)
    assert len(levels) >= 5 and np.all(np.diff(levels) < 0), levels
    _, rows = solver.surrogate_view()
    assert np.all(rows <= 0), rows
    scores = problem.scores(solver.select(solver.snapshots()))
    assert problem.report_scores(scores, "train", only=("auc",))["auc"] > 0.5


def test_an_empty_surrogate_feasible_set_is_said_in_the_stop_reason():
    """With c1 = 1, c2 = 1 the constant model has f_i = 2 > 1 + κ (paper 004, Lemma 2): the
    first oracle calls (T = 1000, then 2000) find U(r(0)) > 0 and the run ends saying so."""
    from engine.solvers import Budget, solve

    constraint = ConstraintSpec("auc_gap", 0.05, None, options=(("c1", 1.0),))
    problem = Problem(
        two_groups(n=600), ModelSpec(), constraint, objective=PairwiseAUCLoss(1.0, 1.0)
    )
    solution = solve(
        problem,
        "sfls",
        SFLSConfig(first_level_doublings=1),
        budget=Budget(max_iterations=5000),
        seed=0,
    )
    assert solution.status == "converged" and solution.iterations == 3000
    assert "the surrogate constraints admit no point at the first level" in solution.stop.text
    assert "T was 2,000" in solution.stop.text
    feasible = Problem(
        two_groups(n=600), ModelSpec(), ConstraintSpec("auc_gap", 0.05), objective=PairwiseAUCLoss()
    )  # the defaults: c1 = 0.5
    first = SFLS(feasible, SFLSConfig(), np.random.default_rng(0))
    while np.isnan(first.level):  # the first oracle call
        first.advance(1000)
    assert first.level < 0  # U(r(0)) < 0: the level can fall


def test_the_command_line_runs_sfls_with_the_pairwise_auc_objective(tmp_path, capsys):
    out = tmp_path / "s.json"
    code = main(
        [
            "run",
            *two_groups_flags(_table(tmp_path)),
            "--constraint",
            "auc_gap",
            "--kappa",
            "0.05",
            "--solver",
            "sfls",
            "--iterations",
            "3000",
            "--seed",
            "0",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    document = json.loads(out.read_text())
    assert document["spec"]["objective"]["name"] == "pairwise_auc"
    test = document["result"]["metrics"]["test"]
    assert 0.0 <= test["auc"] <= 1.0 and 0.0 <= test["constraint"] <= 1.0


def _table(folder):
    path = folder / "two_groups.csv"
    two_groups_frame().to_csv(path, index=False)
    return path


def _one_feature_problem(kappa: float) -> Problem:
    """Two groups apart along one feature, the group left out of the features: the scores are
    w·x (+ a bias, which no pair loss sees), so f0 and the rows are quadratics in one weight."""
    from engine.data.dataset import Dataset
    from engine.data.grouping import GroupingSpec
    from engine.data.prepare import PrepareOptions, prepare

    rng = np.random.default_rng(5)
    member = rng.random(3000) < 0.4
    x = rng.normal(size=3000) + 1.5 * member
    y = (rng.random(3000) < 1 / (1 + np.exp(-2 * x + 1))).astype(np.int8)
    frame = pd.DataFrame({"x": x, "sex": np.where(member, "F", "M")})
    dataset = Dataset(
        name="line",
        frame=frame,
        label=y,
        numeric=("x",),
        categorical=("sex",),
        protected=("sex",),
        label_name="y",
    )
    options = PrepareOptions(grouping=(GroupingSpec("sex"),), drop_protected=True)
    return Problem(
        prepare(dataset, options),
        ModelSpec(),
        ConstraintSpec("auc_gap", kappa),
        objective=PairwiseAUCLoss(),
    )


def _surrogate(problem: Problem, weight: float) -> tuple[float, np.ndarray]:
    """f0 and the surrogate rows (≤ 0 feasible) on the training data at w = (0, weight)."""
    import torch

    h = problem.scores({"w": np.array([0.0, weight])})
    return problem.loss(h), problem.bound.surrogate(torch.from_numpy(h)).numpy()


def test_the_levels_stay_above_the_known_optimum_and_every_output_is_feasible():
    """Alg. 1 on a convex problem whose optimum f* is known (a fine grid over the one weight):
    every level r(k) stays above f* and falls to it, and every oracle output x̄(k) meets the
    surrogate constraints (paper 004, Prop. 1)."""
    problem = _one_feature_problem(kappa=0.05)
    assert problem.design().shape[1] == 2  # bias and x
    weights = np.linspace(-2.0, 2.0, 4001)
    values = [_surrogate(problem, w) for w in weights]
    feasible = [f0 for f0, rows in values if np.all(rows <= 0)]
    f_star = min(feasible)
    unconstrained = min(f0 for f0, _ in values)
    assert f_star > unconstrained + 0.01  # the constraint binds
    solver = SFLS(problem, SFLSConfig(select="last", inner_steps=2000), np.random.default_rng(0))
    levels = [solver.r]
    while len(solver.outputs) < 16 and not solver.halted:
        solver.advance(2000)
        if solver.inner == 0:
            levels.append(solver.r)
    assert min(levels) >= f_star - 1e-3 and levels[-1] - f_star < 0.02, (levels, f_star)
    for output in solver.outputs:
        f0, rows = _surrogate(problem, float(output.params["w"][1]))
        assert np.all(rows <= 5e-3), rows
    assert f0 - f_star < 0.02


def test_a_small_kappa_doubles_the_first_oracle_call_until_the_level_can_fall():
    """κ = 0.005 leaves the constant start a slack of 0.005 in eq. (6): a short oracle call
    cannot tell H(r(0)) < 0 from its own error, so T doubles until U(r(0)) < −ε_opt."""
    problem = _one_feature_problem(kappa=0.005)
    solver = SFLS(problem, SFLSConfig(select="last", inner_steps=100), np.random.default_rng(0))
    while solver.outer == 0 and not solver.halted:
        solver.advance(100)
    assert solver.doublings >= 1 and solver.steps == 100 * 2**solver.doublings
    assert not solver.halted and solver.level < -solver.config.eps_opt
    fixed = SFLS(
        problem,
        SFLSConfig(select="last", inner_steps=100, first_level_doublings=0),
        np.random.default_rng(0),
    )
    while not fixed.outputs:
        fixed.advance(100)
    assert fixed.halted  # without doubling, Alg. 1 halts at the first level
