"""Paper 004's IQRC (Alg. 3): SFLS on the proximal subproblems (28) for a weakly convex model,
and the validation selection SFLS and IQRC report by (App. E.3)."""

from __future__ import annotations

import numpy as np
import pytest
from solver_data import two_groups

from engine.fairness.constraint_spec import ConstraintSpec
from engine.models import ModelSpec
from engine.objectives import PairwiseAUCLoss
from engine.problem import Problem
from engine.solvers import Budget, solve
from engine.solvers.paper004.cards_sfls import IQRCConfig, SFLSConfig
from engine.solvers.paper004.iqrc import IQRC
from engine.solvers.paper004.sfls import SFLS

NETWORK = ModelSpec("mlp", hidden=(10,), activation="sigmoid")  # paper 004, App. E


def _problem(model: ModelSpec = NETWORK, kappa: float = 0.05) -> Problem:
    return Problem(
        two_groups(n=1500), model, ConstraintSpec("auc_gap", kappa), objective=PairwiseAUCLoss()
    )


def _stage_moves(rho: float) -> list[float]:
    """‖x̃(s+1) − x̃(s)‖ over the first stages of one-call stages."""
    solver = IQRC(
        _problem(), IQRCConfig(rho=rho, stage_calls=1, inner_steps=200), np.random.default_rng(0)
    )
    centres = [solver.center.copy()]
    while solver.stage < 4:
        solver.advance(200)
        if solver.stage == len(centres):
            centres.append(solver.center.copy())
    return [float(np.linalg.norm(b - a)) for a, b in zip(centres, centres[1:], strict=False)]


def test_each_stage_starts_at_the_last_output_with_a_fresh_level():
    problem = _problem()
    solver = IQRC(problem, IQRCConfig(stage_calls=2, inner_steps=300), np.random.default_rng(1))
    while solver.stage < 2:
        solver.advance(300)
    assert 2 <= len(solver.outputs) <= 4  # a stage halts (Alg. 1) or ends after two calls
    last = problem.network.flatten(solver.outputs[-1].params)
    assert np.allclose(solver.center[: last.size], last)  # x̃(2) = the second stage's x̄
    expected = problem.loss(problem.scores(solver.outputs[-1].params)) + solver.config.margin
    assert solver.r == pytest.approx(expected)  # r(0) of stage 2 (ours: f0(x̃) + margin)


def test_a_strong_proximal_term_keeps_each_stage_near_its_centre():
    """(ρ̂/2)‖x − x̃‖² in the SMD step (Alg. 2) and in U(r): a large ρ̂ pins the subproblem's
    solution to x̃, App. E.3's 1e-5 barely moves it."""
    pinned, free = _stage_moves(1e4), _stage_moves(1e-5)
    assert max(pinned) < 0.2 * min(free), (pinned, free)


def test_iqrc_trains_the_sigmoid_network_within_kappa_on_validation():
    problem = _problem()
    solution = solve(
        problem,
        "iqrc",
        IQRCConfig(stage_calls=3, inner_steps=500),
        budget=Budget(max_iterations=6000),
        seed=0,
    )
    reference = solve(problem, "unconstrained", budget=Budget(max_iterations=200), seed=0)
    assert solution.metrics["val"]["constraint"] <= 0.05
    assert "reported: the iterate after" in solution.reason  # the selection's outcome, said
    assert solution.metrics["test"]["auc"] > 0.6
    assert solution.metrics["test"]["constraint"] < reference.metrics["test"]["constraint"]


def test_the_reported_iterate_is_the_best_feasible_one_on_validation():
    """App. E.3: among the iterates judged, the reported one is within κ on validation and no
    judged iterate within κ has a better validation AUC."""
    problem = _problem(ModelSpec(), kappa=0.02)
    solver = SFLS(problem, SFLSConfig(inner_steps=300, select_every=50), np.random.default_rng(0))
    judged = []
    offer = solver.selection.offer
    solver.selection.offer = lambda *args: judged.append(offer(*args)) or judged[-1]
    while solver.t < 3000:
        solver.advance(100)
    assert len(judged) >= 3000 // 50
    params = solver.select(solver.snapshots())
    chosen = problem.report_scores(problem.scores(params, "val"), "val")
    feasible = [s.metrics["val"]["auc"] for s in judged if s.metrics["val"]["constraint"] <= 0.02]
    assert feasible and chosen["constraint"] <= 0.02
    assert chosen["auc"] == pytest.approx(max(feasible))
    assert solver.evaluation_seconds() > 0  # judged off the run's clock


def test_without_an_iterate_within_kappa_the_nearest_one_is_reported_and_said():
    from engine.solvers.validation_select import ValidationSelection

    problem = _problem(ModelSpec(), kappa=1e-9)
    selection = ValidationSelection(problem, "auc")
    rng = np.random.default_rng(2)
    offered = [{"w": rng.normal(size=problem.design().shape[1])} for _ in range(4)]
    gaps = []
    for i, params in enumerate(offered):
        selection.offer(i, 0, params)
        gaps.append(problem.report_scores(problem.scores(params, "val"), "val")["constraint"])
    assert selection.best is None and min(gaps) > 1e-9
    chosen = selection.chosen({"w": np.zeros(problem.design().shape[1])})
    assert chosen is offered[int(np.argmin(gaps))]
    assert f"the one nearest to κ is reported (validation value {min(gaps):.4f})" in (
        selection.note()
    )
