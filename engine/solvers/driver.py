"""The one driver loop every solver runs under: budget, throttled logging, exact metrics off the
hot path, saved iterates, cancellation, and a clean stop on NaN/inf."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import torch

from engine import fairness
from engine.data.prepared import SPLITS
from engine.errors import UserError
from engine.fairness.constraints import BoundConstraint
from engine.models import Params
from engine.problem import Problem
from engine.solvers import kkt, run_clock
from engine.solvers.base import FrontPoint, Snapshot, Solver, StepInfo, aux_tensors
from engine.solvers.budget import Budget, BudgetClock
from engine.solvers.catalogue import solver_card
from engine.solvers.kkt import kkt_terms
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.records import (
    FRONT_COORDINATE,
    IterationRecord,
    RecordKind,
    Solution,
    row_key,
    rows_of,
)
from engine.solvers.run_clock import (  # noqa: F401 (RECORD_SHARE: where tests tune it)
    EXACT_EVERY_SECONDS,
    LOG_EVERY_SECONDS,
    RECORD_SHARE,
    RunClock,
)
from engine.status import StopCode, StopReason
from engine.task import Task

# a run's time budget is wall time: records, saved iterates and evaluations spend it too, and the
# solver's own clock, which the records carry, is that time less them (`engine.solvers.run_clock`,
# with the records' schedule and shares)
# a saved iterate's evaluation (paper 000 §3: loss and the constraint rows on train and test)
ITERATE_SPLITS = ("train", "test")
ITERATE_METRICS = ("loss", "accuracy", "constraint")
BATCH = 25  # most iterations a solver may run in one call (a few ms), so logs and cancel keep up
# a surrogate record keeps the values (and row-named state such as "dual.<row>") of at most this
# many constraint rows, the largest at the time: paper 001's intersectional constraint has hundreds
# of rows, whose every value in every record would make a run's record tens of megabytes
RECORDED_ROWS = 100

Log = Callable[[IterationRecord], None]


def solve(
    problem: Problem,
    solver: str,
    config: object | None = None,
    budget: Budget | None = None,
    log: Log | None = None,
    seed: int = 0,
    should_stop: Callable[[], bool] | None = None,
    until: float | None = None,
) -> Solution:
    """Run one solver on one problem until it converges, the budget ends, it is cancelled, a step
    fails, or it produces a non-finite value (status "diverged", with the iteration; the
    trajectory and the best iterate so far are kept). The end is a `StopReason` (engine.status).

    A time budget is wall time (`engine.solvers.run_clock`): the loop ends early enough for the
    run's last records and final report to fit in it, by `until` (a `run_clock.now()` time)
    when given, for a solve that shares the budget with more work. Records: a surrogate one
    (the solver's view) often, an exact one (exact metrics of the candidate and the KKT
    measure, `exact_record`) where the run starts and at least `run_clock.EXACT_POINTS` times
    a run, each kind within its share of the run, and both at the iteration the run ends on,
    whatever ended it (a divergence aside, whose candidate may not be finite).

    With `budget.save_every` = N, the iterate after iterations N, 2N, 3N, ... is evaluated on
    every split at once (an "iterate" record, `_iterate_record`): no driver call runs past the
    next multiple of N, so the saves land on them exactly.

    A solver that yields a front (`Solver.front`) has each of its models evaluated on every
    split when the run has ended, off the run's clock: one "front" record per model, before the
    final record, and `Solution.front`."""
    card = solver_card(solver)
    card.check_problem(problem)
    torch.set_num_threads(1)  # solver steps are many small tensor ops: threads only add overhead
    config = config if config is not None else card.Config()
    budget = budget or Budget()
    records: list[IterationRecord] = []

    def emit(record: IterationRecord) -> None:
        records.append(record)
        if log is not None:
            log(record)

    clock = RunClock(budget.max_seconds, until, budget.clock is BudgetClock.SOLVER)
    instance = card.load()(problem, config, np.random.default_rng(seed))
    iterations, last_log, log_gap = 0, -math.inf, LOG_EVERY_SECONDS
    logged = exact_at = 0  # the iterations of the last surrogate and exact records
    info = StepInfo(iterations=0, objective=math.nan)
    next_save = budget.save_every or math.inf
    next_save_time = budget.save_seconds or math.inf
    saving = budget.save_every is not None or budget.save_seconds is not None
    constraints = _split_constraints(problem) if saving else {}

    def exact(iteration: int, seconds: float) -> None:
        """An exact record of the candidate, its cost charged to the records."""
        if problem.constraint is not None:  # once a problem: the measure's oracles
            paused = run_clock.now()
            kkt.prepare(problem)
            clock.charge(run_clock.now() - paused)
        paused = run_clock.now()
        # before its first step a solver's multipliers are only its starting values
        multipliers = instance.multipliers() if iteration else None
        with run_clock.one_thread():
            record = exact_record(problem, instance.candidate(), iteration, seconds, multipliers)
        emit(record)
        clock.charge(run_clock.now() - paused, "exact")

    exact(0, clock.solver_seconds())  # where the run starts
    last_exact, exact_gap = clock.elapsed(), clock.gap("exact", EXACT_EVERY_SECONDS)
    while True:
        if budget.max_iterations is not None and iterations >= budget.max_iterations:
            stop = StopReason(
                StopCode.ITERATION_BUDGET, f"iteration budget of {budget.max_iterations} reached"
            )
            break
        if clock.spent():
            stop = StopReason(
                StopCode.TIME_BUDGET, f"time budget of {budget.max_seconds:g} s reached"
            )
            break
        if should_stop is not None and should_stop():
            stop = StopReason(StopCode.CANCELLED, "cancelled")
            break
        left = math.inf if budget.max_iterations is None else budget.max_iterations - iterations
        due = last_exact + exact_gap - clock.elapsed()  # the next exact record
        asked = clock.iterations_that_fit(int(min(left, BATCH, next_save - iterations)), due)
        judged = instance.evaluation_seconds()
        called = run_clock.now()
        info = instance.advance(asked)
        judging = instance.evaluation_seconds() - judged  # the solver judging its iterates
        clock.charge(judging)
        clock.called(run_clock.now() - called - judging, info.iterations, asked)
        iterations += info.iterations
        solver_seconds = clock.solver_seconds()
        at = clock.elapsed()
        if not math.isfinite(info.objective):
            stop = StopReason(
                StopCode.NON_FINITE, f"non-finite objective at iteration {iterations}"
            )
            break
        if info.done or at - last_log >= log_gap:
            paused = run_clock.now()
            with run_clock.one_thread():
                record = _surrogate_record(iterations, solver_seconds, info, instance)
            emit(record)
            clock.charge(run_clock.now() - paused, "surrogate")  # the full-data view is logging
            last_log, logged = clock.elapsed(), iterations
            log_gap = clock.gap("surrogate", LOG_EVERY_SECONDS)
            if not _finite(record):
                stop = StopReason(
                    StopCode.NON_FINITE, f"non-finite constraint value at iteration {iterations}"
                )
                break
        if at - last_exact >= exact_gap:
            exact(iterations, solver_seconds)
            last_exact, exact_at = clock.elapsed(), iterations
            exact_gap = clock.gap("exact", EXACT_EVERY_SECONDS)
        if iterations >= next_save or solver_seconds >= next_save_time:
            paused = run_clock.now()
            iterate = _iterate(instance)
            with run_clock.one_thread():
                record = _iterate_record(problem, constraints, iterate, iterations, solver_seconds)
            emit(record)
            clock.charge(run_clock.now() - paused)
            if budget.save_every:
                next_save = (iterations // budget.save_every + 1) * budget.save_every
            if budget.save_seconds:
                next_save_time = (solver_seconds // budget.save_seconds + 1) * budget.save_seconds
        if info.done:
            stop = StopReason(info.stop, info.reason)
            break
    seconds = clock.solver_seconds()
    if stop.code is not StopCode.NON_FINITE:  # end where it stopped
        if iterations > logged:
            emit(_surrogate_record(iterations, seconds, info, instance))
        if iterations > exact_at:
            exact(iterations, seconds)
    snapshots = instance.snapshots()
    params = instance.select(snapshots)
    note = instance.selection_note()
    if note:
        stop = StopReason(stop.code, f"{stop.text}; {note}")
    # the front's models are evaluated after `seconds` was taken: off the solver's clock
    front = [_front_member(problem, point) for point in instance.front()]
    for index, member in enumerate(front):
        emit(_front_record(member, index, seconds))
    metrics = problem.report(params)
    emit(final_record(metrics, iterations, seconds))
    test_scores = problem.scores(params, "test") if len(problem.data.test) else np.zeros(0)
    return Solution(
        solver=card.name,
        config=dataclasses.asdict(config),
        stop=stop,
        iterations=iterations,
        seconds=seconds,
        params=params,
        metrics=metrics,
        trajectory=records,
        snapshots=[_snapshot_summary(s) for s in snapshots],
        group_names=problem.data.group_names,
        test_scores=test_scores,
        test_groups=problem.data.test.groups,
        front=front,
        wall_seconds=clock.elapsed(),
    )


# the wall seconds the last interval report took, by the held-out splits' sizes and the family:
# a bootstrap's cost hardly depends on the model, so the next run of such data keeps that much
# of its time budget for its own (`until_before_intervals`); a process's first such run keeps
# this much per held-out row (Adult's 24,000 took about a second on two busy cores)
INTERVAL_SECONDS: dict[tuple[int, int, str | None], float] = {}
FIRST_KEPT_PER_ROW = 4e-5  # seconds
MOST_KEPT_FOR_INTERVALS = 0.5  # of a time budget


def until_before_intervals(problem: Problem, budget: Budget | None, started: float) -> float | None:
    """When a run started at `started` (`run_clock.now()`) under `budget` must end its solving
    for its intervals (`with_intervals`) to fit in its wall budget too: as long before its end
    as the last ones on data of this size took (`FIRST_KEPT_PER_ROW` before any did; none for a
    regression, which has none), at most `MOST_KEPT_FOR_INTERVALS` of it; None without a wall-time
    budget."""
    if budget is None or budget.max_seconds is None or budget.clock is BudgetClock.SOLVER:
        return None
    seconds = budget.max_seconds
    rows = len(problem.data.val) + len(problem.data.test)
    guess = FIRST_KEPT_PER_ROW * rows if problem.data.task is Task.CLASSIFICATION else 0.0
    kept = INTERVAL_SECONDS.get(_interval_key(problem), guess)
    return started + seconds - min(kept, MOST_KEPT_FOR_INTERVALS * seconds)


def _interval_key(problem: Problem) -> tuple[int, int, str | None]:
    family = problem.constraint.family if problem.constraint is not None else None
    return len(problem.data.val), len(problem.data.test), family


def with_intervals(problem: Problem, solution: Solution) -> Solution:
    """`solution` with the 95 % intervals of its model's exact held-out values
    (`Problem.interval_report`) beside its metrics and in its final record: computed once, for
    the model a run reports, after its clock has stopped."""
    started = run_clock.now()
    intervals = problem.interval_report(solution.params)
    INTERVAL_SECONDS[_interval_key(problem)] = run_clock.now() - started
    if not intervals:
        return solution
    metrics = {
        split: values | intervals.get(split, {}) for split, values in solution.metrics.items()
    }
    trajectory = list(solution.trajectory)
    if trajectory and trajectory[-1].kind == RecordKind.FINAL:
        final = trajectory[-1]
        trajectory[-1] = dataclasses.replace(final, values=final.values | _flatten(intervals))
    return dataclasses.replace(solution, metrics=metrics, trajectory=trajectory)


def _finite(record: IterationRecord) -> bool:
    numbers = [record.objective, record.max_violation, *record.values.values()]
    return all(v is None or math.isfinite(v) for v in numbers)


def _surrogate_record(iteration: int, seconds: float, info: StepInfo, instance) -> IterationRecord:
    """The candidate's objective and surrogate rows (computed only when a record is due)."""
    objective, rows = instance.surrogate_view()
    values: dict[str, float | None] = {}
    state = dict(info.state)
    worst = None
    if rows is not None and rows.size:
        worst = float(np.max(rows))
        names = instance.problem.bound.rows
        kept = _largest(rows)
        values = {names[r]: float(rows[r]) for r in kept}
        if len(kept) < len(names):
            state = _rows_kept(state, frozenset(names), frozenset(values))
    return IterationRecord(
        iteration=iteration,
        seconds=seconds,
        kind=RecordKind.SURROGATE,
        objective=float(objective),
        max_violation=worst,
        values=values,
        state=state,
    )


def _largest(rows: np.ndarray) -> np.ndarray:
    """The indices of the `RECORDED_ROWS` largest rows, in row order (ties: the first)."""
    return np.sort(np.argsort(-rows, kind="stable")[:RECORDED_ROWS])


def _rows_kept(
    state: dict[str, float | str], rows: frozenset[str], kept: frozenset[str]
) -> dict[str, float | str]:
    """The state without the row-named entries ("dual.<row>") of the rows not kept."""
    return {
        key: value
        for key, value in state.items()
        if key.partition(".")[2] not in rows or key.partition(".")[2] in kept
    }


def exact_record(
    problem: Problem,
    params,
    iteration: int,
    seconds: float,
    multipliers: np.ndarray | None = None,
) -> IterationRecord:
    """Exact metrics on train and validation and, under a constraint, each row with the exact
    indicator (or loss) in place of the surrogate on the training data ("train.row.<row>", κ
    subtracted, the `RECORDED_ROWS` largest; spec 001 §5: surrogate feasibility is not true
    feasibility) and the KKT measure there (paper 001's common stationarity measure,
    `engine.solvers.kkt`) with the solver's duals when it has them, the least-squares
    multipliers otherwise. The training scores are computed once, for the metrics and the
    rows."""
    h = kkt.train_scores(problem, params)
    report = {"train": problem.report_scores(h, "train")}
    if len(problem.data.val):
        report["val"] = problem.report_scores(problem.scores(params, "val"), "val")
    values = _flatten(report)
    if problem.constraint is not None:
        # a solver that keeps no auxiliary variables (the unconstrained one under pSP) is held
        # to the family's starting values of them, as its surrogate rows are
        aux = aux_tensors(params) or problem.bound.aux_init(torch.from_numpy(h))
        rows = problem.bound.exact_rows(h, aux)
        names = problem.bound.rows
        values |= {row_key("train", names[r]): float(rows[r]) for r in _largest(rows)}
        terms = kkt_terms(problem, params, multipliers)
        values |= {f"train.{name}": value for name, value in terms.state().items()}
    return IterationRecord(
        iteration=iteration, seconds=seconds, kind=RecordKind.EXACT, values=values
    )


def _iterate(instance: Solver) -> Params:
    """The iterate paper 000 saves: a minibatch solver's current x_k (SSw's candidate is its
    random output x_τ instead), the candidate of any other solver."""
    return instance.current() if isinstance(instance, MinibatchSolver) else instance.candidate()


def _split_constraints(problem: Problem) -> dict[str, BoundConstraint | None]:
    """The constraint bound to each non-empty split's groups and labels; None for a problem
    without a constraint or a split that lacks a group."""
    return {
        split: _bound_on(problem, split)
        for split in ITERATE_SPLITS
        if len(problem.data.split(split))
    }


def _bound_on(problem: Problem, split: str) -> BoundConstraint | None:
    if problem.constraint is None:
        return None
    try:
        return problem.constraint_on(split)
    except UserError:  # a group without rows in this split
        return None


def _per_group(problem: Problem, h: np.ndarray, split: str) -> dict[str, float]:
    """Each group's mean loss and positive rate, "group.<name>.loss" and
    "group.<name>.positive_rate" (paper 000 §6: per-group loss curves and positive rates); none
    on a split that lacks a group."""
    part = problem.data.split(split)
    if len(np.unique(part.groups)) < problem.data.n_groups:
        return {}
    if problem.data.task is Task.REGRESSION:  # the objective's own loss; no positive rate
        per_row, _ = problem.objective.per_sample(h, part.y)
        losses = np.bincount(part.groups, weights=per_row) / np.bincount(part.groups)
        return {
            f"group.{name}.loss": float(loss)
            for name, loss in zip(problem.data.group_names, losses, strict=True)
        }
    losses = fairness.group_losses(h, part.groups, part.y)
    rates = fairness.positive_rates(h, part.groups, problem.threshold)
    out = {}
    for name, loss, rate in zip(problem.data.group_names, losses, rates, strict=True):
        out |= {f"group.{name}.loss": float(loss), f"group.{name}.positive_rate": float(rate)}
    return out


def _iterate_record(
    problem: Problem,
    constraints: dict[str, BoundConstraint | None],
    params: Params,
    iteration: int,
    seconds: float,
) -> IterationRecord:
    """A saved iterate evaluated on the train and test sets (paper 000 §3: "every saved iterate
    is re-evaluated on the full train/test sets (loss, C1, C2)"), from one scores pass per split:
    "split.metric" for `ITERATE_METRICS` of `Problem.report_scores`, each group's loss and
    positive rate ("split.group.<name>.loss", `_per_group`) and "split.row.<row>" for
    each exact constraint row (g ≤ 0 feasible; paper 000's C1, C2 are the group-loss-gap rows),
    None where a split lacks a group. The objective is the train loss, the largest violation the
    largest train row."""
    aux = aux_tensors(params)
    values: dict[str, float | None] = {}
    for split, bound in constraints.items():
        h = problem.scores(params, split)
        report = problem.report_scores(h, split, only=ITERATE_METRICS)
        values |= {f"{split}.{name}": v for name, v in report.items()}
        values |= {f"{split}.{key}": v for key, v in _per_group(problem, h, split).items()}
        if problem.constraint is None:
            continue
        rows = dict.fromkeys(problem.bound.rows)
        if bound is not None:
            scores = torch.from_numpy(h)
            rows = bound.named(bound.exact_rows(scores, aux or bound.aux_init(scores)))
        values |= {row_key(split, row): v for row, v in rows.items()}
    train_rows = [v for v in rows_of(values, "train").values() if v is not None]
    return IterationRecord(
        iteration=iteration,
        seconds=seconds,
        kind=RecordKind.ITERATE,
        objective=values.get("train.loss"),
        max_violation=max(train_rows) if train_rows else None,
        values=values,
    )


def _front_member(problem: Problem, point: FrontPoint) -> dict:
    """One model of the run's front with its exact metrics on every split (`Solution.front`)."""
    return {
        "label": point.label,
        "coordinates": {name: float(value) for name, value in point.coordinates.items()},
        "metrics": problem.report(point.params),
    }


def _front_record(member: dict, index: int, seconds: float) -> IterationRecord:
    """A model of the front as a record (kind "front", `IterationRecord`): its exact metrics
    "split.metric", its coordinates "coord.<name>", its label in the state."""
    coordinates = {f"{FRONT_COORDINATE}{name}": v for name, v in member["coordinates"].items()}
    return IterationRecord(
        iteration=index,
        seconds=seconds,
        kind=RecordKind.FRONT,
        values=_flatten(member["metrics"]) | coordinates,
        state={"label": member["label"]},
    )


def final_record(metrics: dict, iteration: int, seconds: float) -> IterationRecord:
    """The record a run ends with: its model's exact metrics by split, "split.metric"."""
    return IterationRecord(
        iteration=iteration, seconds=seconds, kind=RecordKind.FINAL, values=_flatten(metrics)
    )


def _flatten(metrics: dict[str, dict]) -> dict[str, float | None]:
    return {
        f"{split}.{name}": v
        for split in SPLITS
        if split in metrics
        for name, v in metrics[split].items()
    }


def _snapshot_summary(snapshot: Snapshot) -> dict:
    return {"iteration": snapshot.iteration, "outer": snapshot.outer, "metrics": snapshot.metrics}
