"""An estimator's fit as a run: its parameters as a `RunSpec` whose data is given prepared
(`RunSpec.data` None), checked before any data is read, and trained through the one path from
a spec to a model (`engine.runs.execute`) that the app's runs and the command line's take.

`tune=True` runs the solver's paper protocol (`engine.solvers.tuning`) in this process on the
fit's own split: one trial per setting of its grid, each within the fit's budget; the setting
the plan's rule picks on validation, then the model to report: the chosen trial's, or where the
trials hold options shorter than a full run (IDCA's 50 outer iterations), a run of the chosen
setting at full length. The trials are specs like the run store's (`engine.runs.tuning`), but
keep the fit's honoured split, and all solve the fit's one Problem.
"""

from __future__ import annotations

import dataclasses
import numbers
import warnings
from typing import TYPE_CHECKING, Any

from sklearn.exceptions import ConvergenceWarning

from engine.data.prepare import PrepareOptions
from engine.estimator_data import InputError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import check_constraint, set_options
from engine.models import ModelSpec
from engine.objectives import DEFAULT_OBJECTIVE, objective_to_dict, objective_type
from engine.options import config_from_dict
from engine.runs.spec import RunSpec
from engine.solvers.budget import Budget
from engine.solvers.catalogue import solver_card
from engine.solvers.honour_rules import HONOUR_OFF, HONOUR_SPLITS, check_honour, run_honour
from engine.solvers.tuning import Choice, pick, trial_outcome
from engine.status import RunStatus, StopCode
from engine.task import Task

if TYPE_CHECKING:
    from engine.data.prepared import Prepared
    from engine.estimator import FairFrontEstimator
    from engine.problem import Problem
    from engine.solvers.records import Solution

BUDGET_STOPS = frozenset({StopCode.TIME_BUDGET, StopCode.ITERATION_BUDGET})
SPEC_FIELDS = ("pairs", "surrogate", "temperature", "grid_size", "grid")
SPLIT = "val"  # the split tuning chooses on


def fit_spec(estimator: FairFrontEstimator, task: Task) -> RunSpec:
    """The estimator's parameters as a run for a label of `task`, checked before any data is
    read: the solver and its options, the model, the objective, the constraint and their
    combination. Its preparation and seed are the fit's to set once it has read the rows."""
    card = solver_card(estimator.solver)
    config = config_from_dict(card.Config, estimator.solver_options)
    model = ModelSpec(
        kind=estimator.model,
        cross_terms=bool(estimator.cross_terms),
        hidden=_widths(estimator.hidden),
        activation=estimator.activation,
    )
    name = estimator.objective or (
        card.default_objective if task is Task.CLASSIFICATION else DEFAULT_OBJECTIVE[task]
    )
    objective = objective_type(name)()
    interval = _interval(estimator.interval)
    constraint = None
    if estimator.constraint is not None:
        fields, options = _constraint_settings(estimator.constraint_options)
        kappa = _number("kappa", estimator.kappa)
        options = set_options(estimator.constraint, options)
        constraint = ConstraintSpec(
            estimator.constraint, kappa, interval, options=options, **fields
        )
        check_constraint(constraint)
    family = constraint.family if constraint else None
    variant = constraint.option("variant", None) if constraint else None
    card.check_combination(model, family, objective.name, variant)
    budget = Budget(max_iterations=estimator.max_iter, max_seconds=estimator.max_seconds)
    if estimator.hold_kappa not in (*HONOUR_SPLITS, HONOUR_OFF, None):
        raise InputError(
            f"hold_kappa is 'train', 'val', 'off' or None, not {estimator.hold_kappa!r}"
        )
    honour = run_honour(estimator.hold_kappa, [card.name], family)
    if honour is not None:
        check_honour(card.name, family, honour)
    return RunSpec(
        data=None,
        prepare=PrepareOptions(grouping=()),  # the fit's, once it has read the rows
        model=model,
        constraint=constraint,
        interval=interval,
        solver=card.name,
        config=dataclasses.asdict(config),
        budget=budget,
        objective=objective,
        honour=honour,
    )


def judged_fields(spec: RunSpec) -> dict[str, Any]:
    """The fields of `RunSpec.to_dict` that an exported model's `about` names: the objective
    and the honoured split always, and no data source (a fit's spec has none)."""
    return {
        "solver": spec.solver,
        "config": dict(spec.config),
        "constraint": spec.constraint.to_dict() if spec.constraint else None,
        "interval": list(spec.interval),
        "objective": objective_to_dict(spec.objective),
        "honour": spec.honour,
    }


def train(prepared: Prepared, spec: RunSpec, tune: bool) -> tuple[Solution, RunSpec, Choice | None]:
    """The fit's run on its prepared rows, tuned first when asked (the spec then holds the
    chosen options); a budget that ended it, or a run that ended without converging, is warned
    of, at the caller of `fit`."""
    from engine.runs.execute import build_problem, execute  # the solvers, once fitting

    problem = build_problem(spec, prepared=prepared)
    choice = None
    if tune:
        solution, choice, spec = tuned_solution(spec, problem)
    else:
        solution = execute(spec, problem)
    if solution.stop.code in BUDGET_STOPS:
        warnings.warn(
            f"{spec.solver} stopped by its budget ({solution.reason}); raise max_iter or "
            "max_seconds for a model that may still change",
            ConvergenceWarning,
            stacklevel=3,
        )
    elif solution.status in (RunStatus.DIVERGED, RunStatus.FAILED):
        warnings.warn(
            f"{spec.solver} {solution.status}: {solution.reason}", UserWarning, stacklevel=3
        )
    return solution, spec, choice


def tuned_solution(spec: RunSpec, problem: Problem) -> tuple[Solution, Choice, RunSpec]:
    """The reported solution, the choice among the trials and the spec with the chosen
    options; every trial solves `problem`, the spec's own."""
    from engine.runs.execute import execute

    plan = spec.card.tuning
    if plan is None:
        raise InputError(f"{spec.solver} declares no tuning: its paper gives no grid (tune=False)")
    if len(problem.data.val) == 0:
        raise InputError("tune=True chooses on validation: validation_fraction must be > 0")
    kappa = problem.constraint.kappa if problem.constraint is not None else None
    trials, solutions = [], []
    for setting in plan.settings():
        trial = dataclasses.replace(spec, config={**spec.config, **plan.fixed, **setting})
        solution = execute(trial, problem)
        validation = solution.metrics.get(SPLIT, {})
        trials.append(trial_outcome(plan, setting, str(solution.status), validation, kappa))
        solutions.append(solution)
    choice = pick(plan, trials, constrained=kappa is not None)
    if choice.chosen is None:
        raise InputError(f"tuning {spec.solver}: {choice.words()}")
    chosen = dataclasses.replace(spec, config={**spec.config, **trials[choice.chosen].setting})
    if not plan.fixed:  # the chosen trial is the full run
        return solutions[choice.chosen], choice, chosen
    return execute(chosen, problem), choice, chosen


def _widths(hidden: object) -> tuple[int, ...]:
    widths = (hidden,) if isinstance(hidden, numbers.Integral) else tuple(hidden)
    if not all(isinstance(h, numbers.Integral) for h in widths):
        raise InputError(f"hidden is the MLP's layer widths, whole numbers, not {hidden!r}")
    return tuple(int(h) for h in widths)


def _interval(interval: object) -> tuple[float, float]:
    try:
        alpha, beta = (_number("interval", v) for v in interval)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise InputError(f"interval is two numbers (α, β), not {interval!r}") from None
    return alpha, beta


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a number, not {value!r}")
    return float(value)


def _constraint_settings(options: dict | None) -> tuple[dict, dict]:
    """`constraint_options` split into ConstraintSpec fields and the family's own options."""
    options = dict(options or {})
    fields = {k: v for k, v in options.items() if k in SPEC_FIELDS}
    return fields, {k: v for k, v in options.items() if k not in SPEC_FIELDS}
