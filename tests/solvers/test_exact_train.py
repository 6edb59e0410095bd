"""Holding κ on the exact training value (`engine.solvers.exact_train`): a problem whose
paper-default surrogate is loose ends exactly feasible on train with the refinement, and not
without; a run that cannot hold κ says so and does not end "converged"."""

from __future__ import annotations

import dataclasses

import pytest
from adult_sample import adult_sample

from engine.fairness.constraints import ConstraintSpec
from engine.fairness.refine import TOLERANCE_SHARE
from engine.models import ModelSpec
from engine.problem import Problem
from engine.runs.honour_search import honour_search
from engine.scoring import Rows
from engine.solvers import solve
from engine.solvers.budget import Budget
from engine.solvers.catalogue import solver_card, solver_names
from engine.solvers.exact_train import (
    LEAST_STEP,
    MOST_STEP,
    SHARE,
    Holding,
    base_solve,
    finish_held,
    first_solve,
    hold_on_train,
    next_solve,
    tighter,
    with_tolerance,
)
from engine.solvers.honour import solve_honouring
from engine.solvers.paper003.cards import IDCAConfig, SSGConfig
from engine.solvers.solve_sequence import Solve, SolveSequence
from engine.status import RunStatus, StopCode

INTERVAL = (0.05, 0.3)


@pytest.fixture(scope="module")
def data():
    return adult_sample(3000)


def _problem(data, kappa: float, family: str = "pSP") -> Problem:
    interval = INTERVAL if family in ("pSP", "pDP") else None
    return Problem(
        data,
        ModelSpec(cross_terms=True),
        ConstraintSpec(family, kappa, interval),
        interval=INTERVAL,
    )


def test_kappa_prime_steps_by_the_ratio_then_the_secant_within_their_bounds():
    assert tighter(0.1, [(0.1, 0.125)]) == pytest.approx(0.1 * 0.1 / 0.125)
    assert tighter(0.1, [(0.1, 10.0)]) == pytest.approx(0.1 * LEAST_STEP)
    assert tighter(0.1, [(0.1, 0.1001)]) == pytest.approx(0.1 * MOST_STEP)
    secant = tighter(0.1, [(0.06, 0.12), (0.1, 0.15)])
    assert secant == pytest.approx(0.06 + (0.1 - 0.12) / ((0.15 - 0.12) / 0.04))


@pytest.fixture(scope="module")
def loose(data):
    """IDCA at κ = 0.1, plainly and holding κ on train: the paper's surrogate (|Î| = 10, a ramp
    of width 1) is loose on these data."""
    problem = _problem(data, 0.1)
    return problem, solve(problem, "idca"), solve_honouring(problem, "idca", "train")


def test_a_loose_surrogate_ends_exactly_feasible_on_train_with_the_refinement_not_without(loose):
    problem, plain, held = loose
    kappa = problem.constraint.kappa
    assert plain.metrics["train"]["constraint"] > kappa
    assert plain.last_surrogate().max_violation <= IDCAConfig().epsilon  # surrogate feasible
    assert held.metrics["train"]["constraint"] <= kappa
    assert held.status is RunStatus.CONVERGED
    search = honour_search(held.trajectory)
    assert search.split == "train" and search.rows[0].kappa_prime == kappa
    assert search.rows[0].train_value == pytest.approx(plain.metrics["train"]["constraint"])
    chosen = search.chosen
    assert chosen is search.rows[-1] and chosen.meets_kappa
    assert chosen.train_value == pytest.approx(held.metrics["train"]["constraint"])
    assert search.rows[1].refined and search.rows[1].levels > search.rows[0].levels
    assert "κ held on the training data after" in held.reason
    assert held.iterations == sum(row.iterations for row in search.rows)


def test_each_later_solve_starts_from_the_model_before_it(loose):
    _, plain, held = loose
    later = honour_search(held.trajectory).rows[1:]
    assert later and all(row.iterations < plain.iterations / 3 for row in later)
    steps = [r.iteration for r in held.trajectory if r.kind == "surrogate"]
    assert steps == sorted(steps)  # the solves' records run on, one after the other


def test_a_warm_start_refines_the_surrogate_to_its_model_before_the_first_solve(data, loose):
    """A continuation point starts from a neighbour held to a tighter κ; its first solve is
    under the surrogate refined to that model's scores, not the coarse one that would lead it
    away from there first."""
    _, _, tighter_model = loose  # held to κ = 0.1 on train
    cold = _problem(data, 0.2)
    assert first_solve(SolveSequence(cold, "idca", "train")) == (cold.constraint, "", None)
    warm = dataclasses.replace(cold, start=tighter_model.params)
    sequence = SolveSequence(warm, "idca", "train")
    holding = hold_on_train(sequence)
    first = sequence.solves[0]
    assert first.refined.startswith("ramp width τ 1 → ")  # Î of 10 is as dense as κ = 0.2 asks
    assert first.constraint.temperature < cold.constraint.temperature
    assert first.constraint.kappa == 0.2  # refined, not yet tightened
    assert holding.held and "by the first solve" not in holding.sentence
    assert "the surrogate refined (ramp width τ 1 → " in holding.sentence


def test_a_kappa_no_model_meets_on_train_ends_infeasible_with_the_closest_reported(data):
    problem = _problem(data, 0.1)
    sequence = SolveSequence(problem, "idca", "train")
    holding = hold_on_train(sequence, max_solves=2)
    assert not holding.held and len(sequence.solves) == 2
    assert holding.stop.code is StopCode.KAPPA_UNMET
    assert holding.stop.status is RunStatus.INFEASIBLE
    lowest = min(sequence.solves, key=lambda s: s.train_value)
    assert holding.chosen is lowest and lowest.train_value > problem.constraint.kappa
    assert "κ not held on the training data after 2 solves, the most allowed" in holding.sentence
    assert f"{lowest.train_value:.4f} > κ = 0.1" in holding.sentence


def test_a_budget_that_ends_before_kappa_holds_says_so(data):
    problem = _problem(data, 0.1)
    plain = solve(problem, "idca")
    budget = Budget(max_iterations=plain.iterations + 1)  # the first solve and a step more
    held = solve_honouring(problem, "idca", "train", budget=budget)
    assert held.metrics["train"]["constraint"] > 0.1
    assert held.status is RunStatus.BUDGET and held.stop.code is StopCode.ITERATION_BUDGET
    assert "the run's budget ended before κ held on the training data" in held.reason


def test_a_band_that_asks_for_it_lowers_the_solvers_tolerance(data):
    problem = _problem(data, 0.02)
    sequence = SolveSequence(problem, "idca", "train")
    hold_on_train(sequence, max_solves=2)
    refined = sequence.solves[1]
    band = 0.02 * (INTERVAL[1] - INTERVAL[0])  # the default ε is twice it
    assert refined.config.epsilon < IDCAConfig().epsilon and refined.config.epsilon <= band / 8
    assert f"epsilon {IDCAConfig().epsilon:g} →" in refined.refined


def test_a_family_without_a_resolution_holds_kappa_by_kappa_prime_alone(data):
    kappa = 0.01  # the group-loss gap is its own exact value, held to κ within IDCA's ε
    problem = _problem(data, kappa, family="group_loss_gap")
    sequence = SolveSequence(problem, "idca", "train")
    holding = hold_on_train(sequence, max_solves=3)
    first, *later = sequence.solves
    assert not first.holds(kappa) and later
    # no surrogate to refine: the first κ′ step lowers IDCA's ε to a share of κ, then κ′ alone
    tolerance = TOLERANCE_SHARE * kappa
    assert later[0].refined == f"epsilon {IDCAConfig().epsilon:g} → {tolerance:.2g}"
    assert not any(s.refined for s in later[1:])
    assert all(s.config.epsilon == tolerance for s in later)
    assert all(s.kappa_prime < kappa for s in later)
    assert holding.held and holding.chosen is sequence.solves[-1]


def _solve_at(sequence: SolveSequence, plain, kappa_prime: float, value: float, refined=""):
    spec = dataclasses.replace(sequence.problem.constraint, kappa=kappa_prime)
    sequence.solves.append(Solve(spec, refined, None, value, 0.5, value, 0.8, plain))
    return sequence.solves[-1]


@pytest.mark.parametrize("overshoot", [0.03, 0.06])
def test_a_kappa_prime_step_that_overshoots_bounds_the_next_and_its_start_goes_back(
    data, overshoot
):
    problem = _problem(data, 0.1, family="group_loss_gap")  # no resolution: κ′ steps alone
    plain = solve(problem, "idca", budget=Budget(max_iterations=3))
    sequence = SolveSequence(problem, "idca", "train")
    _solve_at(sequence, plain, 0.1, 0.13)
    best = _solve_at(sequence, plain, 0.08, 0.12)
    assert base_solve(sequence) is best  # no step overshot: the last
    _solve_at(sequence, plain, overshoot, 0.16)  # rose above 0.12: a step too far
    assert base_solve(sequence) is best
    constraint, refined, _ = next_solve(sequence)
    secant = tighter(0.1, [(0.08, 0.12), (0.1, 0.13)])  # the misses without the overshoot
    assert not refined and overshoot < constraint.kappa < best.kappa_prime
    expected = secant if secant > overshoot else 0.5 * (overshoot + best.kappa_prime)
    assert constraint.kappa == pytest.approx(expected)


def test_holding_takes_at_most_as_many_iterations_again_as_the_solvers_own_solve(data):
    problem = _problem(data, 0.05)
    sequence = SolveSequence(problem, "ssg", "train", config=SSGConfig(iterations=1000))
    holding = hold_on_train(sequence)
    first, *later = (s.solution for s in sequence.solves)
    assert later, "ssg's own surrogate met κ on train: the share is not exercised"
    assert first.iterations == 1000
    for index, solution in enumerate(later):  # half of what is left (ssg: no stopping rule)
        left = first.iterations - sum(s.iterations for s in later[:index])
        assert solution.iterations == left // 2
    assert sum(s.iterations for s in later) <= first.iterations
    capped = later[0].stop  # its share ends the solve, and is no budget of the run's
    assert capped.code is StopCode.SOLVE_SHARE
    assert "500 iterations given to this solve" in capped.text
    assert holding.stop.status is RunStatus.BUDGET and "budget" not in holding.stop.text
    again = SolveSequence(problem, "ssg", "train", config=SSGConfig(iterations=1000))
    hold_on_train(again)  # counted in iterations, the share gives the same models every time
    assert [s.train_value for s in again.solves] == [s.train_value for s in sequence.solves]


def test_a_held_solve_its_share_cut_short_runs_on_to_the_solvers_stopping_rule(data):
    """IDCA under κ = 0.3 whose first solve, at κ′ = 0.15, holds it, then a solve at κ′ = 0.1
    cut to 400 iterations, which holds it too: it runs on at that κ′ from its own model until
    IDCA's stopping rule ends it, and that model is reported."""
    problem = _problem(data, 0.3)
    sequence = SolveSequence(problem, "idca", "train")
    own = sequence.run(dataclasses.replace(problem.constraint, kappa=0.15))
    assert own.solution.status is RunStatus.CONVERGED and own.holds(0.3)
    tighter_constraint = dataclasses.replace(problem.constraint, kappa=0.1)
    cut = sequence.run(tighter_constraint, most=400)
    assert cut.solution.stop.code is StopCode.SOLVE_SHARE and cut.holds(0.3)
    holding = finish_held(sequence, Holding(cut, True, cut.solution.stop, "held"))
    finished = sequence.solves[-1]
    assert len(sequence.solves) == 3 and finished.constraint == tighter_constraint
    assert holding.chosen is finished and holding.stop.status is RunStatus.CONVERGED
    assert 0 < finished.solution.iterations <= own.solution.iterations
    assert finished.train_loss <= cut.train_loss  # it ran on from where it was cut
    assert f"its solve run on after {SHARE} cut it short" in holding.sentence


def test_a_solver_whose_own_solve_its_budget_ended_is_not_run_on(data):
    problem = _problem(data, 0.3)
    sequence = SolveSequence(problem, "ssg", "train", config=SSGConfig(iterations=600))
    own = sequence.run(problem.constraint)
    assert own.solution.status is RunStatus.BUDGET  # ssg runs all its T: no stopping rule
    cut = sequence.run(dataclasses.replace(problem.constraint, kappa=0.2), most=300)
    held = Holding(cut, True, cut.solution.stop, "held")
    assert finish_held(sequence, held) is held and len(sequence.solves) == 2


def test_the_solves_of_a_sequence_share_the_rows_the_model_scores(data, monkeypatch):
    """Each solve is the problem under another constraint; the splits' designs are built once
    for the run, not once per solve, and each solve still holds its own constraint."""
    built = []
    real = Rows.__init__
    monkeypatch.setattr(Rows, "__init__", lambda self, *a: built.append(a) or real(self, *a))
    problem = _problem(data, 0.05)
    sequence = SolveSequence(problem, "ssg", "train", config=SSGConfig(iterations=200))
    hold_on_train(sequence, max_solves=3)
    assert len(sequence.solves) > 1
    assert len(built) == len({id(args[0]) for args in built}) <= 3  # one per split at most
    tighter_spec = ConstraintSpec("pSP", 0.02, INTERVAL)
    inner = problem.under(tighter_spec, None)
    assert inner.constraint is tighter_spec and inner.bound.spec.kappa == 0.02
    assert inner.design() is problem.design() and problem.bound.spec.kappa == 0.05


def test_a_kappa_prime_step_hands_on_the_state_of_the_solve_it_starts_from(data, monkeypatch):
    """The state a solve ended with (its duals, for a solver that keeps them) goes to the next
    solve where only κ′ changed; a refined surrogate has other rows, and starts without it."""
    handed = []
    under = Problem.under

    def recording(self, constraint, start, start_state=None):
        handed.append(start_state)
        return under(self, constraint, start, start_state)

    monkeypatch.setattr(Problem, "under", recording)
    sequence = SolveSequence(_problem(data, 0.05), "ssg", "train", config=SSGConfig(iterations=300))
    hold_on_train(sequence, max_solves=4)
    solves = sequence.solves
    assert len(handed) == len(solves) >= 3 and handed[0] is None
    kinds = set()
    for index, (state, solve_) in enumerate(zip(handed, solves, strict=True)):
        earlier = solves[:index]
        if state is None:
            kinds.add("fresh")  # the first, or a surrogate no earlier solve had
            assert index == 0 or solve_.refined
        else:
            kinds.add("handed")
            assert not solve_.refined
            source = next(s for s in earlier if s.solution.trajectory[-1].state is state)
            assert (
                dataclasses.replace(source.constraint, kappa=solve_.kappa_prime)
                == solve_.constraint
            )
    assert kinds == {"fresh", "handed"}


@pytest.mark.parametrize(
    "solver", [n for n in solver_names() if solver_card(n).tolerance_option], ids=str
)
def test_a_declared_tolerance_is_an_option_holding_kappa_lowers(data, solver):
    """Every switching solver counts a row within its ε as feasible: holding κ lowers that ε
    where the band asks for less, and leaves a lower one as it is."""
    card = solver_card(solver)
    name = card.tolerance_option
    default = getattr(card.Config(), name)
    assert isinstance(default, float) and default > 0
    sequence = SolveSequence(_problem(data, 0.02), solver, "train")
    lowered, words = with_tolerance(sequence, None, default / 10)
    assert getattr(lowered, name) == default / 10 and words.startswith(f"{name} {default:g} →")
    assert with_tolerance(sequence, lowered, default) == (lowered, "")
