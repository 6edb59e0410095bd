"""The one driver loop every solver runs under: budget, throttled logging, exact metrics off the
hot path, saved iterates, cancellation, and a clean stop on NaN/inf."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping

import numpy as np
import torch

from engine import fairness
from engine.data.prepared import SPLITS
from engine.errors import UserError
from engine.fairness.constraints import BoundConstraint
from engine.models import Params
from engine.problem import Problem
from engine.solvers.base import FrontPoint, Snapshot, Solver, StepInfo, aux_tensors
from engine.solvers.catalogue import solver_card
from engine.solvers.kkt import kkt_terms, multipliers_from_state
from engine.solvers.minibatch import MinibatchSolver
from engine.solvers.options import Budget
from engine.solvers.records import FRONT, FRONT_COORDINATE, IterationRecord, Solution
from engine.status import StopCode, StopReason
from engine.task import Task

# the run's clock counts solver work only: surrogate records (a full-data pass), exact metrics,
# saved iterates' evaluations and a solver's judging of its own iterates on validation
# (`Solver.evaluation_seconds`) are timed and taken out of it, so minibatch solvers are not
# charged for logging
LOG_EVERY_SECONDS = 0.1  # at most ~10 surrogate records per second reach `log`
EXACT_EVERY_SECONDS = 1.0  # exact train/val metrics of the candidate, about once a second
# on large data a record's full-data pass can take longer than those gaps: the gap after a record
# is then this many times the record's own time, so each kind takes at most 1/(1 + this) of the
# run and both together about a tenth, up to a longest gap (a first record may pay one-off costs
# such as compiling a kernel)
RECORD_SHARE = {"surrogate": 19.0, "exact": 19.0}
LONGEST_GAP = {"surrogate": 2.0, "exact": 60.0}
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
) -> Solution:
    """Run one solver on one problem until it converges, the budget ends, it is cancelled, a step
    fails, or it produces a non-finite value (status "diverged", with the iteration; the
    trajectory and the best iterate so far are kept). The end is a `StopReason` (engine.status).

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

    started = time.perf_counter()
    evaluation = 0.0  # seconds spent on exact metrics, not charged to the solver
    instance = card.load()(problem, config, np.random.default_rng(seed))
    iterations, last_log, last_exact = 0, -math.inf, started
    log_gap, exact_gap = LOG_EVERY_SECONDS, EXACT_EVERY_SECONDS
    logged = 0  # the iteration of the last surrogate record
    info = StepInfo(iterations=0, objective=math.nan)
    next_save = budget.save_every or math.inf
    next_save_time = budget.save_seconds or math.inf
    saving = budget.save_every is not None or budget.save_seconds is not None
    constraints = _split_constraints(problem) if saving else {}
    while True:
        elapsed = time.perf_counter() - started - evaluation
        if budget.max_iterations is not None and iterations >= budget.max_iterations:
            stop = StopReason(StopCode.ITERATION_BUDGET,
                              f"iteration budget of {budget.max_iterations} reached")  # fmt: skip
            break
        if budget.max_seconds is not None and elapsed >= budget.max_seconds:
            stop = StopReason(StopCode.TIME_BUDGET,
                              f"time budget of {budget.max_seconds:g} s reached")  # fmt: skip
            break
        if should_stop is not None and should_stop():
            stop = StopReason(StopCode.CANCELLED, "cancelled")
            break
        left = math.inf if budget.max_iterations is None else budget.max_iterations - iterations
        judged = instance.evaluation_seconds()
        info = instance.advance(int(min(left, BATCH, next_save - iterations)))
        evaluation += instance.evaluation_seconds() - judged
        iterations += info.iterations
        now = time.perf_counter()
        solver_seconds = now - started - evaluation
        if not math.isfinite(info.objective):
            stop = StopReason(
                StopCode.NON_FINITE, f"non-finite objective at iteration {iterations}"
            )
            break
        if info.done or now - last_log >= log_gap:
            record = _surrogate_record(iterations, solver_seconds, info, instance)
            emit(record)
            spent = time.perf_counter() - now
            last_log, logged = now + spent, iterations
            log_gap = _gap("surrogate", LOG_EVERY_SECONDS, spent)
            evaluation += spent  # the full-data view is logging, not solving
            if not _finite(record):
                stop = StopReason(StopCode.NON_FINITE,
                                  f"non-finite constraint value at iteration {iterations}")  # fmt: skip
                break
        if now - last_exact >= exact_gap:
            paused = time.perf_counter()
            candidate = instance.candidate()
            emit(_exact_record(problem, candidate, iterations, solver_seconds, info.state))
            last_exact = time.perf_counter()
            exact_gap = _gap("exact", EXACT_EVERY_SECONDS, last_exact - paused)
            evaluation += last_exact - paused
        if iterations >= next_save or solver_seconds >= next_save_time:
            paused = time.perf_counter()
            iterate = _iterate(instance)
            emit(_iterate_record(problem, constraints, iterate, iterations, solver_seconds))
            evaluation += time.perf_counter() - paused
            if budget.save_every:
                next_save = (iterations // budget.save_every + 1) * budget.save_every
            if budget.save_seconds:
                next_save_time = (solver_seconds // budget.save_seconds + 1) * budget.save_seconds
        if info.done:
            stop = StopReason(info.stop, info.reason)
            break
    seconds = time.perf_counter() - started - evaluation
    if iterations > logged and stop.code is not StopCode.NON_FINITE:  # end where it stopped
        emit(_surrogate_record(iterations, seconds, info, instance))
    snapshots = instance.snapshots()
    params = instance.select(snapshots)
    note = instance.selection_note()
    if note:
        stop = StopReason(stop.code, f"{stop.text}; {note}")
    # the front's models are evaluated after `seconds` was taken: off the run's clock
    front = [_front_member(problem, point) for point in instance.front()]
    for index, member in enumerate(front):
        emit(_front_record(member, index, seconds))
    metrics = problem.report(params)
    emit(_final_record(metrics, iterations, seconds))
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
    )


def with_intervals(problem: Problem, solution: Solution) -> Solution:
    """`solution` with the 95 % intervals of its model's exact held-out values
    (`Problem.interval_report`) beside its metrics and in its final record: computed once, for
    the model a run reports, after its clock has stopped."""
    intervals = problem.interval_report(solution.params)
    if not intervals:
        return solution
    metrics = {split: values | intervals.get(split, {})
               for split, values in solution.metrics.items()}  # fmt: skip
    trajectory = list(solution.trajectory)
    if trajectory and trajectory[-1].kind == "final":
        final = trajectory[-1]
        trajectory[-1] = dataclasses.replace(final, values=final.values | _flatten(intervals))
    return dataclasses.replace(solution, metrics=metrics, trajectory=trajectory)


def _gap(kind: str, shortest: float, spent: float) -> float:
    """The wait after a record of `kind` that took `spent` seconds (`RECORD_SHARE`)."""
    return min(max(shortest, RECORD_SHARE[kind] * spent), LONGEST_GAP[kind])


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
        kind="surrogate",
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
    return {key: value for key, value in state.items()
            if key.partition(".")[2] not in rows or key.partition(".")[2] in kept}  # fmt: skip


def _exact_record(
    problem: Problem, params, iteration: int, seconds: float, state: Mapping[str, float | str]
) -> IterationRecord:
    """Exact metrics on train and validation and, under a constraint, each row with the exact
    indicator (or loss) in place of the surrogate on the training data ("train.row.<row>", κ
    subtracted, the `RECORDED_ROWS` largest; spec 001 §5: surrogate feasibility is not true
    feasibility) and the KKT measure there (paper 001's common stationarity measure,
    `engine.solvers.kkt`) with the solver's duals when it has them, the least-squares
    multipliers otherwise."""
    values = _flatten(problem.report(params, splits=("train", "val")))
    if problem.constraint is not None:
        h = problem.scores(params)
        # a solver that keeps no auxiliary variables (the unconstrained one under pSP) is held
        # to the family's starting values of them, as its surrogate rows are
        aux = aux_tensors(params) or problem.bound.aux_init(torch.from_numpy(h))
        rows = problem.bound.exact_rows(h, aux)
        values |= {f"train.row.{problem.bound.rows[r]}": float(rows[r]) for r in _largest(rows)}
        terms = kkt_terms(problem, params, multipliers_from_state(problem, state))
        values |= {f"train.{name}": value for name, value in terms.state().items()}
    return IterationRecord(iteration=iteration, seconds=seconds, kind="exact", values=values)


def _iterate(instance: Solver) -> Params:
    """The iterate paper 000 saves: a minibatch solver's current x_k (SSw's candidate is its
    random output x_τ instead), the candidate of any other solver."""
    return instance.current() if isinstance(instance, MinibatchSolver) else instance.candidate()


def _split_constraints(problem: Problem) -> dict[str, BoundConstraint | None]:
    """The constraint bound to each non-empty split's groups and labels; None for a problem
    without a constraint or a split that lacks a group."""
    return {split: _bound_on(problem, split) for split in ITERATE_SPLITS
            if len(problem.data.split(split))}  # fmt: skip


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
        return {f"group.{name}.loss": float(loss)
                for name, loss in zip(problem.data.group_names, losses, strict=True)}  # fmt: skip
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
        values |= {f"{split}.row.{row}": v for row, v in rows.items()}
    train_rows = [v for k, v in values.items() if k.startswith("train.row.") and v is not None]
    return IterationRecord(
        iteration=iteration,
        seconds=seconds,
        kind="iterate",
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
        kind=FRONT,
        values=_flatten(member["metrics"]) | coordinates,
        state={"label": member["label"]},
    )


def _final_record(metrics: dict, iteration: int, seconds: float) -> IterationRecord:
    return IterationRecord(
        iteration=iteration, seconds=seconds, kind="final", values=_flatten(metrics)
    )


def _flatten(metrics: dict[str, dict]) -> dict[str, float | None]:
    return {f"{split}.{name}": v for split in SPLITS if split in metrics
            for name, v in metrics[split].items()}  # fmt: skip


def _snapshot_summary(snapshot: Snapshot) -> dict:
    return {"iteration": snapshot.iteration, "outer": snapshot.outer, "metrics": snapshot.metrics}
