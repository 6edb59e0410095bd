"""Reading runs back: verdicts, frontier inputs (a run's front among them) and exportable
documents; `engine.runs.comparison` sets runs side by side in tables."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

from engine.errors import UserError
from engine.fairness.badr_measures import badr_measure
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import REPORTED_AS, quantity_metric, quantity_name, reported_metric
from engine.runs.frontier import PAPER_003_AXES, PAPER_004_AXES, Frontier, RunResult, frontier
from engine.runs.fronts import REPORTED, FrontMember, reported_member, run_front
from engine.runs.quantities import same_quantity
from engine.runs.spec import RunSpec
from engine.runs.store import RunRow, Store
from engine.solvers.records import Solution
from engine.status import RunStatus
from engine.task import Task
from engine.verdict import Verdict, judge


def surrogate_epsilon(spec: RunSpec) -> float | None:
    """The ε the run's solver holds its surrogate constraint rows to (its `epsilon` option, the
    card's default unless set), or None for a solver without one (or options this version
    cannot read)."""
    try:
        config = spec.options
    except UserError:
        return None
    value = getattr(config, "epsilon", None)
    return float(value) if isinstance(value, int | float) else None


def surrogate_tolerance(spec: RunSpec) -> float:
    """The ε of `surrogate_epsilon`, 0 for a solver without one (its rows must be ≤ 0)."""
    return surrogate_epsilon(spec) or 0.0


def measure_view(spec: RunSpec) -> ConstraintSpec | None:
    """For a classifier run of a solver that minimises an unfairness measure itself, without a
    constraint (paper 002: its card's `measure_option`), the family whose exact quantity is the
    measure's unsmoothed counterpart (the DP gap for dp): the view it is judged and plotted by.
    None for any other run, or a measure without one (dm, individual fairness, HSIC), or a
    run of a solver this version does not have (stored by an older one)."""
    try:
        card = spec.card
    except UserError:
        return None
    if card.measure_option is None or spec.constraint is not None:
        return None
    if spec.task is not Task.CLASSIFICATION:
        return None  # a regression's reported quantity, the mean gap, is already dp's
    exact = badr_measure(getattr(spec.options, card.measure_option)).exact
    family = next((f for f, metric in REPORTED_AS.items() if metric == exact), None)
    return None if family is None else ConstraintSpec(family, 1.0)


def run_verdict(
    store: Store,
    row: RunRow,
    view: ConstraintSpec | None = None,
    metrics: dict[str, dict[str, float | None]] | None = None,
) -> Verdict:
    """The verdict (engine.verdict) on a stored run, from its spec, status and exact metrics
    (`metrics`, when the caller has read them already). `view` is the constraint whose quantity
    a run without constraint shows (its reference value beside constrained runs of it); by
    default a run's own."""
    metrics = store.metrics(row.id) if metrics is None else metrics
    return spec_verdict(
        row.spec, row.status, metrics, row.reason, store.last_surrogate_violation(row.id), view
    )


def solution_verdict(spec: RunSpec, solution: Solution) -> Verdict:
    """The verdict on a run of `spec` made in this process (the command line's `run`, the
    estimator), judged as a stored one is."""
    last = solution.last_surrogate()
    return spec_verdict(
        spec,
        solution.status,
        solution.metrics,
        solution.reason,
        None if last is None else last.max_violation,
    )


def spec_verdict(
    spec: RunSpec,
    status: str,
    metrics: dict[str, dict[str, float | None]],
    reason: str,
    surrogate_violation: float | None,
    view: ConstraintSpec | None = None,
) -> Verdict:
    """The verdict on a run of `spec` that ended with `status` and these exact metrics, by
    its constraint (or `view`, or its measure's exact counterpart) and κ."""
    family = spec.family
    view = view or measure_view(spec)
    shown = family or (view.family if view is not None else None)
    return judge(
        status,
        metrics,
        quantity_name(shown, spec.task),
        spec.kappa,
        reason=reason,
        surrogate_violation=surrogate_violation,
        tolerance=surrogate_tolerance(spec),
        value_metric=quantity_metric(family, view, spec.task),
        thresholded=spec.thresholded,
    )


def frontier_axes(specs: Iterable[RunSpec]) -> tuple[str, str]:
    """The score and spread a frontier of runs of these specs shows unless told:
    paper 004's test AUC with standard errors (Sec. 6) when one of them trains its pairwise AUC
    objective, which only ranks the scores (accuracy at the threshold says nothing about it), or
    holds one of its AUC gaps; else paper 003's accuracy with confidence intervals."""
    paper_004 = any(not s.thresholded or s.family == "auc_gap" for s in specs)
    return PAPER_004_AXES if paper_004 else PAPER_003_AXES


def sweep_view(specs: Iterable[RunSpec]) -> ConstraintSpec | None:
    """The constraint that the constrained runs among these specs share, κ and I aside: the
    quantity their reference (a run without constraint) is measured by. None when they hold
    none, or several (e.g. two auc_gap variants)."""
    held = [s.constraint for s in specs if s.constraint is not None]
    kinds = {dataclasses.replace(c, kappa=0.0, interval=None) for c in held}
    return held[0] if len(kinds) == 1 else None


def run_result(row: RunRow, store: Store, view: ConstraintSpec | None = None) -> RunResult:
    """A stored run as a frontier input. A run without constraint gets, as its "constraint"
    metric, the exact value of `view`'s quantity (`reference_values`), so the unconstrained
    reference sits on the same axis as the runs under `view`."""
    return dataclasses.replace(
        _result(row.id, row.spec, store.metrics(row.id), view), status=RunStatus(row.status)
    )


def run_results(row: RunRow, store: Store, view: ConstraintSpec | None = None) -> list[RunResult]:
    """A stored run as frontier inputs: `run_result` for a run that yields one model, its front
    and its reported model for a run that yields a front (`front_results`)."""
    results = front_results(row.id, row.spec, run_front(store, row.id), store.metrics(row.id), view)
    return [dataclasses.replace(r, status=RunStatus(row.status)) for r in results]


def front_results(
    run_id: str,
    spec: RunSpec,
    members: Sequence[FrontMember],
    metrics: dict[str, dict[str, float | None]],
    view: ConstraintSpec | None = None,
) -> list[RunResult]:
    """The frontier inputs of a run of `spec`, front `members` and reported model of
    exact `metrics`: each model of the front (`front_of` the run, with its label and
    coordinates) in its order, then the reported model (`chosen`; "reported model = <label>",
    with that model's coordinates, when it is one of the front's, `reported_member`), all
    measured as `run_result` measures a run; the reported model alone when the front is
    empty."""
    reported = _result(run_id, spec, metrics, view)
    if not members:
        return [reported]
    front = [
        dataclasses.replace(
            reported,
            metrics=_measured(m.metrics, spec, view),
            front_of=run_id,
            label=m.label,
            coordinates=m.coordinates,
        )
        for m in members
    ]
    same = reported_member(members, metrics)
    label, coordinates = (
        (REPORTED, {}) if same is None else (f"{REPORTED} = {same.label}", same.coordinates)
    )
    return [
        *front,
        dataclasses.replace(
            reported, front_of=run_id, label=label, coordinates=coordinates, chosen=True
        ),
    ]


def front_frontier(
    run_id: str,
    spec: RunSpec,
    members: Sequence[FrontMember],
    metrics: dict[str, dict[str, float | None]],
    view: ConstraintSpec | None = None,
) -> Frontier:
    """The frontier of one run's own results (`front_results`) on the test split: its score
    axis (`frontier_axes`) against its constrained quantity (for a run without constraint, the
    quantity of `view`, by default the run's `measure_view` or else what every run of its task
    reports, pSP on I for a classifier, as `run_quantity` names it)."""
    view = view or measure_view(spec)
    metric = (
        "constraint"
        if spec.family is not None or view is not None
        else quantity_metric(None, task=spec.task)
    )
    score, spread = frontier_axes([spec])
    return frontier(
        front_results(run_id, spec, members, metrics, view),
        metric=metric,
        split="test",
        score=score,
        spread=spread,
    )


def run_front_frontier(store: Store, row: RunRow, view: ConstraintSpec | None = None) -> Frontier:
    """`front_frontier` of a stored run."""
    return front_frontier(row.id, row.spec, run_front(store, row.id), store.metrics(row.id), view)


def run_quantity(spec: RunSpec, view: ConstraintSpec | None = None) -> str:
    """The name of the quantity a run's frontier measures fairness by (`front_frontier`)."""
    view = view or measure_view(spec)
    return quantity_name(spec.family or (view.family if view is not None else None), spec.task)


def _result(
    run_id: str,
    spec: RunSpec,
    metrics: dict[str, dict[str, float | None]],
    view: ConstraintSpec | None,
) -> RunResult:
    """A run as a frontier input measured by `view` (`_measured`); a run held to another
    quantity than `view`'s comes without κ: its κ bounds a quantity the frontier does not
    show, so no point is judged against it."""
    return RunResult(
        run_id=run_id,
        solver=spec.solver,
        kappa=None if _held_elsewhere(spec, view) else spec.kappa,
        interval=spec.interval,
        seed=spec.seed,
        metrics=_measured(metrics, spec, view),
        honour=spec.honour,
    )


def _held_elsewhere(spec: RunSpec, view: ConstraintSpec | None) -> bool:
    """Whether a run of `spec` holds another quantity to κ than the constraint `view`."""
    own = spec.constraint
    return own is not None and view is not None and not same_quantity(own, view)


def _measured(
    metrics: dict[str, dict[str, float | None]],
    spec: RunSpec,
    view: ConstraintSpec | None,
) -> dict[str, dict[str, float | None]]:
    """A run's exact metrics; for a run measured by `view` that holds no constraint, or one of
    another quantity (e.g. the front of a DP run beside a pSP sweep), with the exact value of
    `view`'s quantity as its "constraint" metric (`reference_values`) and without its own
    constraint's interval: a "constraint" column then holds one quantity whatever the run."""
    if view is None or (spec.constraint is not None and not _held_elsewhere(spec, view)):
        return metrics
    reference = reference_values(view, metrics)
    return {
        split: {
            **{name: value for name, value in values.items() if not name.startswith("constraint_")},
            "constraint": reference.get(split),
        }
        for split, values in metrics.items()
    }


def reference_values(
    view: ConstraintSpec, metrics: dict[str, dict[str, float | None]]
) -> dict[str, float | None]:
    """Per split, the exact value of `view`'s quantity for the model of a run without
    constraint, from its stored `metrics`: the metric every run reports it under (e.g. pSP on
    I, paper 004's intra-group AUC gap); empty when there is none (e.g. pSP on another I)."""
    metric = reported_metric(view)
    if metric is None:
        return {}
    return {split: values.get(metric) for split, values in metrics.items()}


def sweep_results(store: Store, sweep_id: str) -> list[RunResult]:
    """The sweep's finished runs that keep a reported iterate, a run's front included
    (`run_results`); its runs without constraint carry the quantity of the constraint its other
    runs share (`sweep_view`)."""
    rows = store.runs(sweep_id=sweep_id)
    view = sweep_view(r.spec for r in rows)
    return [result for r in rows if r.has_model for result in run_results(r, store, view)]


def run_document(store: Store, run_id: str) -> dict[str, Any]:
    """Everything of a stored run: how it ended and its verdict, its spec as stored, its exact
    metrics, its front and its trajectory."""
    return _document(store, store.run(run_id))


def _document(store: Store, row: RunRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "status": row.status,
        "stop_code": row.stop_code,
        "reason": row.reason,
        "verdict": run_verdict(store, row).to_dict(),
        "error": row.error,
        "created": row.created,
        "started": row.started,
        "finished": row.finished,
        "iterations": row.iterations,
        "seconds": row.seconds,
        "spec": json.loads(row.spec_text),
        "metrics": store.metrics(row.id),
        "front": [member.to_dict() for member in run_front(store, row.id)],
        "trajectory": store.records(row.id),
    }


def export_run(store: Store, run_id: str, fmt: str) -> str:
    """One run as JSON (everything) or CSV (see `export_runs`)."""
    return export_runs(store, [run_id], fmt)


def export_runs(store: Store, run_ids: list[str], fmt: str) -> str:
    """Runs as JSON (one document, or a list of them for several runs), or as CSV: one line per
    trajectory record, led by the run id, its verdict and κ, with the final exact metrics as
    `final.<split>.<metric>` columns on every line of that run."""
    runs = [store.run(run_id) for run_id in run_ids]
    documents = [_document(store, row) for row in runs]
    if fmt == "json":
        return json.dumps(documents[0] if len(documents) == 1 else documents, indent=1)
    rows = []
    for run, document in zip(runs, documents, strict=True):
        head = {
            "run": document["id"],
            "solver": run.spec.solver,
            "verdict": document["verdict"]["label"],
            "kappa": document["verdict"]["kappa"],
        }
        final = {
            f"final.{split}.{name}": value
            for split, values in document["metrics"].items()
            for name, value in values.items()
        }
        for record in document["trajectory"] or [{}]:
            row = dict(head)
            row.update(
                {
                    k: record.get(k)
                    for k in ("seq", "iteration", "seconds", "kind", "objective", "max_violation")
                }
            )
            row.update({f"value.{k}": v for k, v in record.get("values", {}).items()})
            row.update(final)
            rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def interval_text(low: float | None, high: float | None) -> str:
    """A 95 % interval for a table cell, "0.012–0.047"; "" without one (None or NaN)."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return ""
    return f"{low:.3f}–{high:.3f}"
