"""Oracle counts of the full-batch solvers (paper 001 spec §5: "count oracle calls ... and data
passes"), with the conventions of `engine.oracles.OracleCounts`; counting leaves the iterates
alone (the solvers' own tests pin those)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from solver_data import toy_prepared, two_groups

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, solve
from engine.solvers.paper003.cards import (
    IDCAConfig,
    PenaltyConfig,
    QuadraticConfig,
    SSGConfig,
)
from engine.solvers.paper003.idca import IDCA
from engine.solvers.paper003.penalty import Penalty
from engine.solvers.paper003.quadratic_baselines import QuadraticBaseline
from engine.solvers.paper003.ssg import SwitchingSubgradient

INTERVAL = (0.1, 0.5)
CROSS = ModelSpec(cross_terms=True)
COUNTS = (
    "oracle.objective_gradients",
    "oracle.constraint_values",
    "oracle.constraint_gradients",
    "oracle.data_passes",
)


def counts(state: dict) -> np.ndarray:
    """(objective gradients, constraint values, constraint gradients, data passes)."""
    return np.array([state[key] for key in COUNTS])


def psp(toy, family: str = "pSP") -> Problem:
    return Problem(toy, CROSS, ConstraintSpec(family, 0.1, INTERVAL), interval=INTERVAL)


def quadratic_auc() -> Problem:
    return Problem(
        two_groups(slopes=(0.6, 2.0)),
        ModelSpec(),
        ConstraintSpec("quad_group_auc", 0.05),
        interval=(0.05, 0.3),
    )


RUNS = {  # solver: (its problem, its config)
    "unconstrained": (lambda: Problem(toy_prepared(), ModelSpec(), None, interval=INTERVAL), None),
    "idca": (lambda: psp(toy_prepared()), IDCAConfig(inner_iterations=20)),
    "ssg": (lambda: psp(toy_prepared()), None),
    "penalty": (lambda: psp(toy_prepared()), None),
    "group_auc": (quadratic_auc, QuadraticConfig(tolerance=0.0)),
}


@pytest.mark.parametrize("solver", list(RUNS))
def test_every_full_batch_run_records_growing_oracle_counts(solver):
    problem, config = RUNS[solver]
    solution = solve(problem(), solver, config, Budget(max_iterations=60))
    records = [r for r in solution.trajectory if r.kind == "surrogate"]
    assert records and all(set(COUNTS) <= set(r.state) for r in records)
    table = np.array([counts(r.state) for r in records])
    assert np.all(np.diff(table, axis=0) >= 0)
    objective_gradients, _, constraint_gradients, passes = table[-1]
    assert objective_gradients > 0 and passes > 0
    for record, row in zip(records, table, strict=True):  # at least one gradient per iteration
        assert row[0] + row[2] >= record.iteration


def test_ssg_takes_one_objective_or_one_constraint_gradient_per_step():
    solver = SwitchingSubgradient(
        psp(toy_prepared()), SSGConfig(epsilon=1e-3), np.random.default_rng(0)
    )
    before, branches = np.zeros(4), set()
    for _ in range(80):
        info = solver.step()
        after = counts(info.state)
        objective = info.state["branch"] == "objective"
        np.testing.assert_array_equal(after - before, [objective, 1, not objective, 1])
        before, branches = after, branches | {info.state["branch"]}
    assert branches == {"objective", "constraint"}


@pytest.mark.parametrize("family", ["pSP", "pDP"])
def test_penalty_takes_one_gradient_of_f0_and_one_of_the_penalty_term_per_step(family):
    solver = Penalty(psp(toy_prepared(), family), PenaltyConfig(), np.random.default_rng(0))
    for t in range(1, 6):
        np.testing.assert_array_equal(counts(solver.step().state), [t, t, t, t])


def test_quadratic_baseline_counts_its_projection_as_a_constraint_evaluation():
    solver = QuadraticBaseline(
        quadratic_auc(), QuadraticConfig(tolerance=0.0), np.random.default_rng(0)
    )
    for k in range(1, 5):  # ∇f0 at w^k and f0 at w^{k+1}: two passes over the rows
        np.testing.assert_array_equal(counts(solver.step().state), [k, k, 0, 2 * k])


def test_unconstrained_counts_every_evaluation_of_the_line_search():
    problem, _ = RUNS["unconstrained"]
    solution = solve(problem(), "unconstrained", budget=Budget(max_iterations=40))
    state = solution.last_surrogate().state
    objective_gradients, values, constraint_gradients, passes = counts(state)
    assert (values, constraint_gradients) == (0, 0)
    assert objective_gradients == passes > solution.iterations  # ≥ 1 per iteration, and more


@pytest.mark.parametrize("model", [CROSS, ModelSpec()])
def test_idca_counts_inner_steps_and_outer_linearisations_alike_compiled_or_not(model):
    problem = Problem(
        toy_prepared(seed=3), model, ConstraintSpec("pSP", 0.1, INTERVAL), interval=INTERVAL
    )
    config = IDCAConfig(outer_iterations=3, inner_iterations=40, patience=0)
    generic = IDCA(problem, dataclasses.replace(config, compiled=False), np.random.default_rng(0))
    compiled = IDCA(problem, config, np.random.default_rng(0))
    assert generic._ramp_psp is None and compiled._ramp_psp is not None
    objective_steps = 0
    while not (info := generic.step()).done:
        objective_steps += info.state["branch"] == "objective"
    objective_steps += info.state["branch"] == "objective"
    while not (last := compiled.advance(9)).done:
        pass
    steps, outer, m = generic.total, generic.outer, problem.bound.m
    # outer iterations 0..K: f⁻ and its m-row Jacobian at each w^k (eq. 32), one pass each
    expected = [
        objective_steps,
        steps + outer + 1,
        steps - objective_steps + m * (outer + 1),
        steps + outer + 1,
    ]
    np.testing.assert_array_equal(counts(info.state), expected)
    np.testing.assert_array_equal(counts(last.state), expected)
    assert 0 < objective_steps < steps
