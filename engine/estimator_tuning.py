"""`tune=True` of the estimators: the solver's paper protocol (`engine.solvers.tuning`) run in
this process on the fit's own split, one trial per setting of its grid, each within the fit's
budget; the setting the plan's rule picks on validation, then the model to report: the chosen
trial's, or where the trials hold options shorter than a full run (IDCA's 50 outer
iterations), a run of the chosen setting at full length."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from engine.estimator_data import InputError
from engine.solvers.catalogue import solver_card
from engine.solvers.tuning import Choice, pick, trial_outcome

if TYPE_CHECKING:
    from engine.problem import Problem
    from engine.solvers.records import Solution

SPLIT = "val"


def tuned_solution(
    problem: Problem, solver: str, config: Any, honour: str | None, budget, seed: int
) -> tuple[Solution, Choice, Any]:
    """The reported solution, the choice among the trials and the chosen configuration."""
    from engine.solvers.honour import solve_run

    plan = solver_card(solver).tuning
    if plan is None:
        raise InputError(f"{solver} declares no tuning: its paper gives no grid (tune=False)")
    if len(problem.data.val) == 0:
        raise InputError("tune=True chooses on validation: validation_fraction must be > 0")
    kappa = problem.constraint.kappa if problem.constraint is not None else None
    trials, solutions = [], []
    for setting in plan.settings():
        trial_config = dataclasses.replace(config, **plan.fixed, **setting)
        solution = solve_run(problem, solver, honour, trial_config, budget, seed=seed)
        validation = solution.metrics.get(SPLIT, {})
        trials.append(trial_outcome(plan, setting, str(solution.status), validation, kappa))
        solutions.append(solution)
    choice = pick(plan, trials, constrained=kappa is not None)
    if choice.chosen is None:
        raise InputError(f"tuning {solver}: {choice.words()}")
    chosen = dataclasses.replace(config, **trials[choice.chosen].setting)
    if not plan.fixed:  # the chosen trial is the full run
        return solutions[choice.chosen], choice, chosen
    return solve_run(problem, solver, honour, chosen, budget, seed=seed), choice, chosen

