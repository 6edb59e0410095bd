"""A reference run at a new interval I reuses the model of the same reference at another I.

A reference solver (its card's `constrained` is False: the unconstrained one, SGD, paper 002's
weighted fits) trains on its objective alone; I = [α, β) is in its spec only because every run
reports pSP and pDP on I. So two reference runs whose specs differ only in I train the same
model: every sweep the user runs at a new I would train it again for nothing. A run whose
spec differs from a finished run's only in I (and in the interval of a kept constraint, which a
reference does not train on either: a benchmark keeps the sweep's constraint to report it) takes
that run's model instead, and computes what depends on I exactly as a trained run would: its
metrics on every split (`Problem.report`), the 95 % intervals of the held-out ones
(`engine.solvers.driver.with_intervals`), its stored test scores, an exact record of the model
at the run's end and its final record. Its trajectory keeps the source's records with every
value that depends on I left out (`interval_free`); its stop reason says whose model it is, and
its seconds are those its evaluation took.

Not reused: a source that failed, was cancelled or interrupted, or diverged (only a run that
converged or spent its budget, `REUSED`), whose model file is missing or unreadable, that
yields a front (its other models are not stored, so their metrics cannot be computed at the new
I), or that differs in anything but I: data, preparation, model, objective, solver, options,
budget, seed, warm start, honoured split or engine version.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import __version__
from engine.models import Params
from engine.problem import Problem
from engine.runs.reference_key import TRAINED_IN, TRAINED_REASON, reference_key
from engine.runs.spec import RunSpec
from engine.runs.store import RunRow, Store
from engine.solvers import kkt, run_clock
from engine.solvers.driver import Log, exact_record, final_record, with_intervals
from engine.solvers.records import IterationRecord, RecordKind, Solution
from engine.status import RunStatus, StopCode, StopReason

# the ends whose model is reused: a model the solver finished with. A diverged run's last finite
# iterate is trained again (the user may have changed something the spec does not see)
REUSED = (RunStatus.CONVERGED, RunStatus.BUDGET)

# the exact metrics of `Problem.report_scores` defined on I (paper 003, Def. 4.2, 4.3): pSP and
# pDP on I. Every other metric (loss, accuracy, AUC, full SP and DP, EO, ...) is not.
METRICS_ON_I = frozenset({"psp", "pdp"})
# the values read from the constraint, which a kept constraint defines on its own interval: its
# exact value, its rows ("row.<row>") and the KKT measure under it ("kkt", "kkt.<part>")
CONSTRAINT_METRIC = "constraint"
CONSTRAINT_PREFIXES = ("row.", "kkt.")
CONSTRAINT_NAMES = frozenset({CONSTRAINT_METRIC, "kkt"})
# a held-out value's interval, "<metric>_low" ... (`engine.fairness.intervals.interval_metrics`)
INTERVAL_SUFFIXES = ("_low", "_high", "_resolves", "_rows")


@dataclass(frozen=True)
class ReferenceSource:
    """A finished reference run whose model a run at another I takes: `run_id` the run whose
    model file is read, `trained_in` the run that trained that model (`run_id` itself unless it
    reused one too), `stop` how the training ended (the status the reusing run takes), its
    `iterations` and the model's `params`. `constraint_changed` when the runs' constraints differ
    (in their interval): then what is read from the constraint depends on I too."""

    run_id: str
    trained_in: str
    stop: StopReason
    iterations: int
    params: Params
    constraint_changed: bool

    @property
    def words(self) -> str:
        """The reusing run's stop reason, for people (the pages show it as the run's reason)."""
        return (
            f"reuses the model trained in run {self.trained_in} because the reference does "
            f"not depend on I (only its reported metrics do); its training ended: "
            f"{self.stop.text}"
        )


def reference_source(spec: RunSpec, store: Store) -> ReferenceSource | None:
    """The finished run of `store` whose model the reference run `spec` takes instead of
    training (see the module's text for what that takes); None when `spec` is not a reference
    or no run fits. Of several that fit, a run that trained its model comes before one that
    reused it, the newest first."""
    key = reference_key(spec)
    if key is None:
        return None
    candidates = sorted(
        (row for status in REUSED for row in store.runs(status=status)),
        key=lambda row: row.created,
        reverse=True,
    )
    found: list[ReferenceSource] = []
    for row in candidates:
        other = None if row.id == spec.run_id else _same_but_interval(row, spec, key)
        if other is None:
            continue
        source = _source(store, row, other.constraint != spec.constraint)
        if source is not None and source.trained_in == row.id:
            return source
        if source is not None:
            found.append(source)
    return found[0] if found else None


def reused_solution(
    spec: RunSpec,
    problem: Problem,
    source: ReferenceSource,
    store: Store,
    log: Log | None = None,
) -> Solution:
    """The solution of the run `spec` on its `problem` (at its own I) that takes the model of
    `source` without training: the source's trajectory without what depends on I, then an
    exact record and the final record of the model at this I, each passed to `log`; its metrics
    on every split with the held-out values' intervals, as `engine.solvers.honour.solve_run`
    reports them; its seconds (and wall seconds) are those this evaluation took. The exact
    record is the driver's own (`exact_record`), so it is the one a trained run ends with; it
    takes the place of the source's record where the run ended when that is of the same model."""
    started = run_clock.now()
    params = source.params
    stored = store.records(source.run_id)
    trained = [interval_free(record, source.constraint_changed) for record in stored]
    trajectory = [record for record in trained if record is not None]
    finals = [record for record in stored if record["kind"] == RecordKind.FINAL]
    at = finals[-1]["seconds"] if finals else (trajectory[-1].seconds if trajectory else 0.0)
    marks = {TRAINED_IN: source.trained_in, TRAINED_REASON: source.stop.text}
    if problem.constraint is not None:
        kkt.prepare(problem)
    exact = exact_record(problem, params, source.iterations, at)
    ended = next((r for r in reversed(trajectory) if r.kind == RecordKind.EXACT), None)
    if ended is not None and _same_model(ended, exact):  # the end's record, now whole at this I
        trajectory.remove(ended)
    metrics = problem.report(params)
    final = dataclasses.replace(final_record(metrics, source.iterations, at), state=marks)
    trajectory += [dataclasses.replace(exact, state=marks), final]
    test_scores = problem.scores(params, "test") if len(problem.data.test) else np.zeros(0)
    solution = Solution(
        solver=spec.solver,
        config=dataclasses.asdict(spec.options),
        stop=StopReason(source.stop.code, source.words),
        iterations=source.iterations,
        seconds=0.0,
        params=params,
        metrics=metrics,
        trajectory=trajectory,
        snapshots=[],
        group_names=problem.data.group_names,
        test_scores=test_scores,
        test_groups=problem.data.test.groups,
    )
    solution = with_intervals(problem, solution)
    if log is not None:
        for record in solution.trajectory:
            log(record)
    seconds = run_clock.now() - started
    return dataclasses.replace(solution, seconds=seconds, wall_seconds=seconds)


def interval_free(record: dict[str, Any], constraint_changed: bool) -> IterationRecord | None:
    """A stored record of a source run without the values that depend on I (None for a record
    that is all about I or about the source's own reuse: its final record, its honour and front
    records, and the records a reusing run added). `constraint_changed`: the values read from
    the constraint go too (a surrogate record's rows, its largest row, and the state named after
    a row, such as "dual.<row>"; an iterate's largest train row)."""
    state = dict(record.get("state") or {})
    if (
        record["kind"] in (RecordKind.FINAL, RecordKind.FRONT, RecordKind.HONOUR)
        or TRAINED_IN in state
    ):
        return None
    values = dict(record.get("values") or {})
    worst = record.get("max_violation")
    if record["kind"] == RecordKind.SURROGATE:  # its values are the constraint's rows
        if constraint_changed:
            rows = frozenset(values)
            state = {k: v for k, v in state.items() if k.partition(".")[2] not in rows}
            values, worst = {}, None
    else:  # "split.metric" values
        values = {
            k: v
            for k, v in values.items()
            if not depends_on_interval(k.partition(".")[2], constraint_changed)
        }
        if constraint_changed and record["kind"] == RecordKind.ITERATE:
            worst = None  # the largest train row
    return IterationRecord(
        iteration=record["iteration"],
        seconds=record["seconds"],
        kind=record["kind"],
        objective=record.get("objective"),
        max_violation=worst,
        values=values,
        state=state,
    )


def depends_on_interval(metric: str, constraint_changed: bool) -> bool:
    """Whether a split's value `metric` (e.g. "psp", "accuracy_low", "row.a-b", "kkt") depends
    on I: a metric defined on I or its interval, and, when the constraint changed with I, what
    is read from the constraint."""
    base = next((metric.removesuffix(s) for s in INTERVAL_SUFFIXES if metric.endswith(s)), metric)
    if base in METRICS_ON_I:
        return True
    return constraint_changed and (
        base in CONSTRAINT_NAMES or metric.startswith(CONSTRAINT_PREFIXES)
    )


def _same_model(kept: IterationRecord, exact: IterationRecord) -> bool:
    """Whether the source's exact record `kept` (without its values on I) is of the model that
    `exact` records at the same iteration: the candidate where the run ended, when the solver
    reports it (a solver that selects another iterate reports one that differs)."""
    if kept.iteration != exact.iteration:
        return False
    for name, value in kept.values.items():
        other = exact.values.get(name)
        if (value is None) != (other is None):
            return False
        if value is not None and not np.isclose(value, other, rtol=1e-9, atol=1e-12):
            return False
    return True


def _same_but_interval(row: RunRow, spec: RunSpec, key: str) -> RunSpec | None:
    """The spec of the stored run `row` when it is `spec` at another I, made by this engine
    version; None otherwise."""
    other = row.spec
    if other.solver != spec.solver or other.seed != spec.seed:
        return None  # most runs of a store are told apart here, before computing a reference key
    if row.engine_version != __version__:
        return None
    return other if reference_key(other) == key else None


def _source(store: Store, row: RunRow, constraint_changed: bool) -> ReferenceSource | None:
    """`row` as the source of a reference's model (`constraint_changed`: their constraints
    differ in their interval), or None when its model cannot be used: no stop code, a front,
    or a model file that is missing or unreadable."""
    if row.stop_code is None or store.records(row.id, kind=RecordKind.FRONT):
        return None
    try:
        params = store.load_params(row.id)
    except (OSError, ValueError, KeyError):
        return None
    finals = store.records(row.id, kind=RecordKind.FINAL)
    marks = finals[-1].get("state", {}) if finals else {}
    trained_in = str(marks.get(TRAINED_IN, row.id))
    reason = str(marks.get(TRAINED_REASON, row.reason))
    return ReferenceSource(
        run_id=row.id,
        trained_in=trained_in,
        stop=StopReason(StopCode(row.stop_code), reason),
        iterations=int(row.iterations or 0),
        params=params,
        constraint_changed=constraint_changed,
    )
