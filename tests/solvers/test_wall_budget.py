"""A run's time budget is wall time: records and evaluations spend it. The runs here are timed on
a clock of the test's own (the `wall` fixture, in conftest.py) that moves only by what each step
and each record is charged, so what they check is what the driver does with the time, not how
fast this machine is.
"""

from __future__ import annotations

import pytest
from wall_clock import Costs, charge

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import Budget, solve
from engine.solvers import driver as driver_module
from engine.solvers.budget import BudgetClock
from engine.solvers.exact_train import FIRST_SHARE, hold_on_train
from engine.solvers.honour import solve_run
from engine.solvers.paper000.sgd import SGD
from engine.solvers.paper003.cards import SSGConfig
from engine.solvers.paper003.ssg import SwitchingSubgradient
from engine.solvers.records import SOLVE
from engine.solvers.solve_sequence import SolveSequence
from engine.status import StopCode

INTERVAL = (0.1, 0.5)
OVER = 1.1  # a run may end at most this share of its budget late


def problem_of(toy) -> Problem:
    return Problem(
        toy, ModelSpec(cross_terms=True), ConstraintSpec("pSP", 0.1, INTERVAL), interval=INTERVAL
    )


def kinds(solution, kind: str) -> list:
    return [r for r in solution.trajectory if r.kind == kind]


def test_records_and_the_final_report_spend_the_time_budget_which_the_run_keeps(
    toy, wall, monkeypatch
):
    """Records that take a tenth of the run and a final report of 0.3 s: counted only on the
    solver's clock, they would have run 10 s of solving about 1.5 s over."""
    charge(monkeypatch, wall, Costs(step=0.01, surrogate=0.05, exact=0.3, report=0.3))
    started = wall.time
    solution = solve(problem_of(toy), "sgd", budget=Budget(max_seconds=10.0))
    spent = wall.time - started
    assert solution.stop.code is StopCode.TIME_BUDGET
    assert 9.0 <= spent <= 10.0 * OVER
    assert solution.wall_seconds == pytest.approx(spent)
    # the solver's clock is its steps alone: records and evaluations are off it
    assert solution.seconds == pytest.approx(0.01 * solution.iterations)
    assert kinds(solution, "exact")[-1].iteration == solution.iterations  # one at the end


def test_slow_records_take_a_bounded_share_of_the_run(toy, wall, monkeypatch):
    """When a surrogate record costs 50 ms, the next comes 19 × 50 ms later: the records take
    about a twentieth of the run's wall time (the run's last record aside), however slow the
    full-data pass."""
    charge(monkeypatch, wall, Costs(step=0.001, surrogate=0.05))
    solution = solve(problem_of(toy), "sgd", budget=Budget(max_seconds=3.0))
    surrogate = kinds(solution, "surrogate")
    assert (len(surrogate) - 1) * 0.05 <= solution.wall_seconds / 16
    assert len(surrogate) >= 3


def test_a_run_of_twenty_seconds_draws_its_exact_trajectory_within_the_records_share(
    toy, wall, monkeypatch
):
    """Exact records of 0.08 s each: at least 20 of them in a 20 s run, the first where it
    starts, the last where it ends, those between taking at most a tenth of it."""
    charge(monkeypatch, wall, Costs(step=0.01, surrogate=0.01, exact=0.08))
    solution = solve(problem_of(toy), "sgd", budget=Budget(max_seconds=20.0))
    exact = kinds(solution, "exact")
    assert len(exact) >= 20
    assert exact[0].iteration == 0 and exact[-1].iteration == solution.iterations
    assert (len(exact) - 2) * 0.08 <= 0.1 * solution.wall_seconds
    seconds = [r.seconds for r in exact]
    assert seconds == sorted(seconds)
    assert max(b - a for a, b in zip(seconds, seconds[1:], strict=False)) <= 2.0  # spread out


def test_a_run_that_converges_has_an_exact_record_where_it_ends(toy, wall, monkeypatch):
    charge(monkeypatch, wall, Costs(step=0.001, exact=0.01))
    solution = solve(problem_of(toy), "idca", budget=Budget(max_seconds=60.0))
    assert solution.stop.code is StopCode.CONVERGED
    exact = kinds(solution, "exact")
    assert exact[-1].iteration == solution.iterations
    assert len({r.iteration for r in exact}) == len(exact)  # none twice


def test_a_slow_solver_is_asked_for_what_fits_in_the_budget(toy, wall, monkeypatch):
    """Iterations of 2 s: a call of the driver's usual 25 of them would take 50 s of a 10 s
    budget; the first call takes one, the next as many as fit."""
    charge(monkeypatch, wall, Costs(step=2.0))
    started = wall.time
    solution = solve(problem_of(toy), "sgd", budget=Budget(max_seconds=10.0))
    assert solution.stop.code is StopCode.TIME_BUDGET
    assert wall.time - started <= 10.0 * OVER
    assert solution.iterations >= 4


def test_a_solver_whose_calls_run_more_iterations_than_asked_stops_before_one_overruns(
    toy, wall, monkeypatch
):
    """A call that always runs 10 iterations of 0.3 s: after three calls (9 s) a fourth would
    end at 12 s, past a 10 s budget, so the run ends there."""
    charge(monkeypatch, wall, Costs(step=0.3))
    advance = SGD.advance
    monkeypatch.setattr(SGD, "advance", lambda self, most: advance(self, 10))
    started = wall.time
    solution = solve(problem_of(toy), "sgd", budget=Budget(max_seconds=10.0))
    assert solution.stop.code is StopCode.TIME_BUDGET
    assert solution.iterations == 30 and wall.time - started <= 10.0


def test_saved_iterates_spend_the_wall_budget_not_the_solvers_clock(toy, wall, monkeypatch):
    """An evaluation of 0.04 s after every 5 steps of 0.001 s: most of a 3 s budget goes to
    them, and the solver's clock holds only its steps."""
    charge(monkeypatch, wall, Costs(step=0.001))
    record = driver_module._iterate_record
    monkeypatch.setattr(
        driver_module, "_iterate_record", lambda *args: (wall.spend(0.04), record(*args))[1]
    )
    started = wall.time
    solution = solve(problem_of(toy), "sgd", budget=Budget(max_seconds=3.0, save_every=5))
    assert solution.stop.code is StopCode.TIME_BUDGET
    assert wall.time - started <= 3.0 * OVER
    assert solution.seconds == pytest.approx(0.001 * solution.iterations)
    assert len(kinds(solution, "iterate")) == solution.iterations // 5
    assert 250 <= solution.iterations <= 400  # 3 s / (0.005 + 0.04) s a save is about 330


def test_a_budget_on_the_solvers_clock_leaves_saved_iterates_off_it(toy, wall, monkeypatch):
    """The same run with its 3 s on the solver's clock (a benchmark study's): the evaluations
    take most of the wall time and none of the budget, so the solver has all 3 s of steps (of
    10 ms each here, each evaluation 0.4 s: the same shares at a tenth of the saves)."""
    charge(monkeypatch, wall, Costs(step=0.01))
    record = driver_module._iterate_record
    monkeypatch.setattr(
        driver_module, "_iterate_record", lambda *args: (wall.spend(0.4), record(*args))[1]
    )
    budget = Budget(max_seconds=3.0, save_every=5, clock=BudgetClock.SOLVER)
    solution = solve(problem_of(toy), "sgd", budget=budget)
    assert solution.stop.code is StopCode.TIME_BUDGET
    assert 3.0 * 0.99 <= solution.seconds <= 3.0 * OVER
    assert solution.seconds == pytest.approx(0.01 * solution.iterations)
    assert solution.wall_seconds == pytest.approx(
        solution.seconds + 0.4 * len(kinds(solution, "iterate"))
    )


def test_a_run_that_holds_kappa_keeps_its_wall_budget_across_solves(toy, wall, monkeypatch):
    """SSG holding κ = 0.1 on train, its own solve of 200 iterations (the paper's surrogate
    misses κ there, so later solves refine it), each iteration charged 10 ms, each exact
    record 20 ms and the intervals of the model it reports 0.3 s, under a 3 s budget: the run,
    its solves and intervals included, keeps to it once the intervals' time is known, and every
    solve's records run on from the last and end with an exact record."""
    charge(monkeypatch, wall, Costs(step=0.01, exact=0.02), solver=SwitchingSubgradient)
    monkeypatch.setattr(driver_module, "INTERVAL_SECONDS", {})
    intervals = Problem.interval_report

    def timed_intervals(*args, **kwargs):
        wall.spend(0.3)
        return intervals(*args, **kwargs)

    monkeypatch.setattr(Problem, "interval_report", timed_intervals)
    problem = problem_of(toy)
    budget = Budget(max_seconds=3.0)
    config = SSGConfig(iterations=200)
    solve_run(problem, "ssg", "train", config, budget)  # learns what the intervals take
    started = wall.time
    solution = solve_run(problem, "ssg", "train", config, budget)
    assert wall.time - started <= budget.max_seconds * OVER
    assert solution.wall_seconds == pytest.approx(wall.time - started)
    records = [r for r in solution.trajectory if r.kind in ("surrogate", "exact")]
    solves = sorted({r.state[SOLVE] for r in records})
    assert len(solves) >= 2
    assert [r.seconds for r in records] == sorted(r.seconds for r in records)
    assert [r.iteration for r in records] == sorted(r.iteration for r in records)
    for index in solves:
        mine = [r for r in records if r.state[SOLVE] == index]
        last = max(r.iteration for r in mine)
        assert last == max(r.iteration for r in mine if r.kind == "exact")


def test_a_solver_that_runs_until_its_budget_gives_its_own_solve_half_of_it(toy, wall, monkeypatch):
    """SSG with no iteration count of its own to end it (it runs until the budget, as the SGD
    methods do), holding κ = 0.1 on train under a 3 s budget at 10 ms an iteration: its own
    solve ends at half of the budget, cut as by a share, not the run's budget, so later solves
    have time to hold κ; each of those takes half of the time left, and all keep to the budget."""
    charge(monkeypatch, wall, Costs(step=0.01), solver=SwitchingSubgradient)
    problem = problem_of(toy)
    sequence = SolveSequence(
        problem, "ssg", "train", SSGConfig(iterations=10**6), Budget(max_seconds=3.0)
    )
    started = wall.time
    hold_on_train(sequence)
    own, *later = sequence.solves
    assert own.time_cut and own.solution.stop.code is StopCode.SOLVE_SHARE
    assert own.solution.seconds == pytest.approx(FIRST_SHARE * 3.0, abs=0.02)
    assert later, "ssg's own surrogate met κ on train: the later solves are not exercised"
    left = 3.0 - own.solution.seconds
    for solve_ in later:
        assert solve_.solution.seconds <= FIRST_SHARE * left + 0.02
        left -= solve_.solution.seconds
    assert wall.time - started <= 3.0 * OVER


def test_a_solve_its_share_of_time_cut_that_holds_kappa_runs_on_to_the_budget(
    toy, wall, monkeypatch
):
    """The same run at κ = 0.9: its own solve, cut at half of the budget, misses κ; the first
    later solve that holds κ, cut at half of the time left, runs on from its model with all the
    rest of the budget, and that model is reported."""
    charge(monkeypatch, wall, Costs(step=0.01), solver=SwitchingSubgradient)
    problem = Problem(
        toy, ModelSpec(cross_terms=True), ConstraintSpec("pSP", 0.9, INTERVAL), interval=INTERVAL
    )
    sequence = SolveSequence(
        problem, "ssg", "train", SSGConfig(iterations=10**6), Budget(max_seconds=3.0)
    )
    holding = hold_on_train(sequence)
    *missed, held, ran_on = sequence.solves
    assert missed and all(s.time_cut and not s.holds(0.9) for s in missed)
    assert held.time_cut and held.holds(0.9) and ran_on.constraint == held.constraint
    assert holding.chosen is ran_on and ran_on.solution.stop.code is StopCode.TIME_BUDGET
    seconds = sum(s.solution.seconds for s in sequence.solves)
    assert seconds == pytest.approx(3.0, abs=0.05)
    assert "run on after the share of the run's time it was given cut it short" in holding.sentence
