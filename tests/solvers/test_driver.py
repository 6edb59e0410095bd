"""The shared driver: budgets, throttled logs, exact records, cancellation, divergence."""

import math

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.objectives import objective_type
from engine.problem import Problem
from engine.solvers import Budget, config_from_dict, run_clock, solve, solver_card, solver_names
from engine.solvers import driver as driver_module
from engine.solvers.paper003.cards import (
    IDCAConfig,
    PenaltyConfig,
    QuadraticConfig,
    SSGConfig,
)
from engine.solvers.paper003.idca import IDCA
from engine.solvers.reference.cards import UnconstrainedConfig
from engine.status import RunStatus, StopCode

INTERVAL = (0.1, 0.5)


def problem_of(toy):
    return Problem(
        toy, ModelSpec(cross_terms=True), ConstraintSpec("pSP", 0.1, INTERVAL), interval=INTERVAL
    )


def test_non_finite_values_stop_the_run_and_keep_what_was_done(toy, monkeypatch):
    original = IDCA.step
    calls = {"n": 0}

    def failing_step(self):
        calls["n"] += 1
        info = original(self)
        if calls["n"] >= 40:
            info.objective = math.nan
        return info

    monkeypatch.setattr(IDCA, "step", failing_step)
    monkeypatch.setattr(driver_module, "LOG_EVERY_SECONDS", 0.0)
    monkeypatch.setitem(driver_module.RECORD_SHARE, "surrogate", 0.0)  # a record every step
    generic = IDCAConfig(inner_iterations=10, compiled=False)  # the patched step runs
    solution = solve(problem_of(toy), "idca", generic)
    assert solution.status == "diverged"
    assert "iteration 40" in solution.reason
    surrogate = [r for r in solution.trajectory if r.kind == "surrogate"]
    assert len(surrogate) == 39 and all(math.isfinite(r.objective) for r in surrogate)
    assert solution.metrics["test"]["accuracy"] is not None  # the kept iterate is evaluated


def test_cancellation_is_honoured(toy):
    calls = {"n": 0}

    def stop_after_25():
        calls["n"] += 1
        return calls["n"] > 25

    one_step_calls = IDCAConfig(compiled=False)
    solution = solve(problem_of(toy), "idca", one_step_calls, should_stop=stop_after_25)
    assert solution.status == "cancelled" and solution.iterations == 25
    calls["n"] = 0
    solution = solve(problem_of(toy), "idca", should_stop=stop_after_25)
    assert solution.status == "cancelled"
    assert 25 < solution.iterations <= 25 * driver_module.BATCH  # compiled: batches of steps


def test_logging_is_throttled_and_exact_metrics_come_along(toy, monkeypatch):
    monkeypatch.setattr(driver_module, "EXACT_EVERY_SECONDS", 0.0)
    monkeypatch.setitem(driver_module.RECORD_SHARE, "exact", 0.0)
    monkeypatch.setattr(run_clock, "EXACT_POINTS", math.inf)  # no spacing by the run's age
    seen = []
    config = IDCAConfig(outer_iterations=5, inner_iterations=20, compiled=False)  # a call a step
    solution = solve(problem_of(toy), "idca", config, log=seen.append)
    surrogate = [r for r in seen if r.kind == "surrogate"]
    exact = [r for r in seen if r.kind == "exact"]
    assert len(surrogate) < solution.iterations / 2
    assert len(exact) == solution.iterations + 1  # where it starts, then after every call
    assert exact[0].iteration == 0
    assert {"train.accuracy", "train.psp", "val.psp"} <= set(exact[0].values)
    assert seen[-1].kind == "final" and seen == solution.trajectory
    rows = problem_of(toy).bound.rows
    assert set(surrogate[-1].values) == set(rows)
    assert surrogate[-1].max_violation == pytest.approx(max(surrogate[-1].values.values()))


def test_time_budget(toy, monkeypatch):
    """An endless solve ends by its time budget, read on a clock that moves by a fixed tick at
    every reading, so what is checked is the driver's use of the clock, not this machine's
    speed."""
    ticks = iter(range(10**9))
    tick = 0.001
    monkeypatch.setattr(run_clock, "now", lambda: next(ticks) * tick)
    endless = IDCAConfig(outer_iterations=10**6, patience=0)
    solution = solve(problem_of(toy), "idca", endless, Budget(max_seconds=0.3))
    assert solution.status == "budget" and "time budget" in solution.reason
    assert solution.trajectory[-1].iteration > 1  # the budget held many steps, not one
    assert 0.3 - 2 * run_clock.CALL_SHARE * 0.3 <= solution.wall_seconds <= 0.3 * 1.1


def test_registry_and_options():
    assert {"idca", "ssg", "unconstrained"} <= set(solver_names())
    config = config_from_dict(IDCAConfig, {"outer_iterations": "12", "epsilon": "0.002"})
    assert config.outer_iterations == 12 and config.epsilon == 0.002
    with pytest.raises(UserError, match="unknown option"):
        config_from_dict(IDCAConfig, {"speed": "fast"})
    with pytest.raises(UserError, match="option epsilon needs a finite number, not 'small'"):
        config_from_dict(IDCAConfig, {"epsilon": "small"})
    for bad in ("nan", "inf", float("nan"), True):
        with pytest.raises(UserError, match="option epsilon needs a finite number"):
            config_from_dict(IDCAConfig, {"epsilon": bad})
    with pytest.raises(UserError, match="outer_iterations needs a whole number, not '2.5'"):
        config_from_dict(IDCAConfig, {"outer_iterations": "2.5"})
    with pytest.raises(UserError, match="compiled needs true or false"):
        config_from_dict(IDCAConfig, {"compiled": "maybe"})
    with pytest.raises(UserError, match="unknown solver"):
        solve(None, "magic")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda p: Problem(
                p, ModelSpec(), ConstraintSpec("pSP", 0.1, (0.1, 0.5)), interval=(0.5, 0.1)
            ),
            "needs 0 ≤ α < β ≤ 1",
        ),
        (
            lambda p: Problem(p, ModelSpec(), ConstraintSpec("pSP", 1.5, (0.1, 0.5))),
            "outside \\(0, 1\\]",
        ),
        (lambda p: Problem(p, ModelSpec(), ConstraintSpec("pSP", 0.001, (0.1, 0.11))), "rank band"),
    ],
)
def test_bad_problems_are_explained(toy, change, message):
    with pytest.raises(UserError, match=message):
        change(toy)


def test_a_group_without_training_rows_is_refused(toy):
    empty = type(toy.train)(toy.train.X, toy.train.y, np.zeros_like(toy.train.groups))
    broken = type(toy)(**{**toy.__dict__, "train": empty})
    with pytest.raises(UserError, match="no training rows"):
        Problem(broken, ModelSpec(), None)


@pytest.mark.parametrize(
    ("solver", "family", "config", "cap"),
    [
        ("idca", "pSP", IDCAConfig(outer_iterations=2, inner_iterations=5, patience=0), 10),
        ("ssg", "EO", SSGConfig(iterations=7), 7),
        ("penalty", "pDP", PenaltyConfig(iterations=7), 7),
        (
            "unconstrained",
            None,
            UnconstrainedConfig(max_iterations=3, chunk=2, tolerance=1e-300),
            3,
        ),
        ("group_auc", "quad_group_auc", QuadraticConfig(iterations=4, tolerance=0.0), 4),
    ],
)
def test_a_solvers_own_iteration_cap_ends_the_run_as_budget(toy, solver, family, config, cap):
    """K, T or the iteration count of the solver's options: status budget, code iteration_cap,
    told apart from the run's iteration budget (code iteration_budget)."""
    constraint = None if family is None else ConstraintSpec(family, 0.1, INTERVAL)
    problem = Problem(toy, ModelSpec(), constraint, interval=INTERVAL)
    capped = solve(problem, solver, config)
    assert capped.stop.code is StopCode.ITERATION_CAP and capped.status is RunStatus.BUDGET
    assert capped.iterations == cap
    budgeted = solve(problem, solver, config, Budget(max_iterations=cap - 1))
    assert budgeted.stop.code is StopCode.ITERATION_BUDGET and budgeted.iterations == cap - 1


DUAL_SOLVERS = ("ssl_alm", "alm", "plada", "multiplier_model", "ipp_conex", "proxy_lagrangian")


@pytest.mark.parametrize("name", DUAL_SOLVERS)
def test_exact_records_carry_the_kkt_measure_with_the_solvers_duals(toy, monkeypatch, name):
    """A solver hands the driver its multipliers, the same as the duals its state shows: the
    last exact record, of the final iterate, has the measure with the last step's duals."""
    from engine.solvers.kkt import kkt_terms, multipliers_from_state

    monkeypatch.setattr(driver_module, "EXACT_EVERY_SECONDS", 0.0)
    monkeypatch.setitem(driver_module.RECORD_SHARE, "exact", 0.0)
    family = next(
        f
        for f in ("group_loss_gap", "DP", "auc_gap")
        if solver_card(name).refusal(ModelSpec(), f) is None
    )
    objective = objective_type(solver_card(name).default_objective)()
    problem = Problem(toy, ModelSpec(), ConstraintSpec(family, 0.02), objective=objective)
    solution = solve(problem, name, budget=Budget(max_iterations=50))
    exact = [r for r in solution.trajectory if r.kind == "exact"]
    assert exact and all(r.values["train.kkt"] >= 0 for r in exact)
    state = [r for r in solution.trajectory if r.kind == "surrogate"][-1].state
    duals = multipliers_from_state(problem, state)
    assert duals is not None  # every row's dual is in the state
    assert exact[-1].iteration == solution.iterations
    expected = kkt_terms(problem, solution.params, duals)
    assert exact[-1].values["train.kkt"] == pytest.approx(expected.total)


def test_a_records_constraint_rows_are_read_back_by_name_and_split():
    from engine.solvers.records import row_key, rows_of

    values = {
        row_key("train", "a-b:upper"): 0.1,
        row_key("val", "a-b:upper"): 0.2,
        "train.accuracy": 0.9,
        row_key("train", "x.y"): None,  # a row name may hold the separator
    }
    assert rows_of(values, "train") == {"a-b:upper": 0.1, "x.y": None}
    assert rows_of(values, "val") == {"a-b:upper": 0.2}
    assert rows_of(values, "test") == {}
