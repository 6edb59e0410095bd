"""Reading runs back: verdicts, comparison rows, frontier inputs and exportable documents."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Iterable
from typing import Any

from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import quantity_metric, quantity_name, reported_metric
from engine.runs.frontier import PAPER_003_AXES, PAPER_004_AXES, RunResult
from engine.runs.spec import constraint_from_dict
from engine.runs.store import RunRow, Store
from engine.solvers.catalogue import solver_card
from engine.solvers.options import config_from_dict
from engine.verdict import Verdict, judge


def constraint_of(spec: dict[str, Any]) -> tuple[str | None, float | None]:
    """The family and κ of a stored run spec (None, None without a constraint)."""
    constraint = spec.get("constraint")
    if not constraint:
        return None, None
    return constraint["family"], constraint["kappa"]


def thresholded(spec: dict[str, Any]) -> bool:
    """Whether a stored run's objective fits its scores to the decision threshold; paper 004's
    pairwise AUC loss (eq. 3) only ranks them (`engine.verdict.judge`)."""
    return spec.get("objective", {}).get("name") != "pairwise_auc"


def surrogate_epsilon(spec: dict[str, Any]) -> float | None:
    """The ε the run's solver holds its surrogate constraint rows to (its `epsilon` option, the
    card's default unless set), or None for a solver without one (or options this version
    cannot read)."""
    try:
        config = config_from_dict(solver_card(spec["solver"]).Config, spec.get("config", {}))
    except UserError:
        return None
    value = getattr(config, "epsilon", None)
    return float(value) if isinstance(value, int | float) else None


def surrogate_tolerance(spec: dict[str, Any]) -> float:
    """The ε of `surrogate_epsilon`, 0 for a solver without one (its rows must be ≤ 0)."""
    return surrogate_epsilon(spec) or 0.0


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
    family, kappa = constraint_of(row.spec)
    shown = family or (view.family if view is not None else None)
    metrics = store.metrics(row.id) if metrics is None else metrics
    return judge(row.status, metrics, quantity_name(shown), kappa,
                 reason=row.reason, surrogate_violation=store.last_surrogate_violation(row.id),
                 tolerance=surrogate_tolerance(row.spec),
                 value_metric=quantity_metric(family, view),
                 thresholded=thresholded(row.spec))  # fmt: skip


def frontier_axes(specs: Iterable[dict[str, Any]]) -> tuple[str, str]:
    """The score and spread a frontier of runs with these stored specs shows unless told:
    paper 004's test AUC with standard errors (Sec. 6) when one of them trains its pairwise AUC
    objective, which only ranks the scores (accuracy at the threshold says nothing about it), or
    holds one of its AUC gaps; else paper 003's accuracy with confidence intervals."""
    paper_004 = any(not thresholded(s) or constraint_of(s)[0] == "auc_gap" for s in specs)
    return PAPER_004_AXES if paper_004 else PAPER_003_AXES


def sweep_view(specs: Iterable[dict[str, Any]]) -> ConstraintSpec | None:
    """The constraint that the constrained runs among these stored specs share, κ and I aside:
    the quantity their reference (a run without constraint) is measured by. None when they hold
    none, or several (e.g. two auc_gap variants)."""
    held = [constraint_from_dict(s["constraint"]) for s in specs if s.get("constraint")]
    kinds = {dataclasses.replace(c, kappa=0.0, interval=None) for c in held}
    return held[0] if len(kinds) == 1 else None


def run_result(row: RunRow, store: Store, view: ConstraintSpec | None = None) -> RunResult:
    """A stored run as a frontier input. A run without constraint gets, as its "constraint"
    metric, the exact value of `view`'s quantity (`reference_values`), so the unconstrained
    reference sits on the same axis as the runs under `view`."""
    family, kappa = constraint_of(row.spec)
    metrics = store.metrics(row.id)
    if family is None and view is not None:
        reference = reference_values(view, metrics)
        metrics = {split: {**values, "constraint": reference.get(split)}
                   for split, values in metrics.items()}  # fmt: skip
    return RunResult(
        run_id=row.id,
        solver=row.spec["solver"],
        kappa=kappa,
        interval=tuple(row.spec["interval"]),
        seed=int(row.spec["seed"]),
        metrics=metrics,
    )


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
    """The sweep's finished runs that keep a reported iterate; its runs without constraint carry
    the quantity of the constraint its other runs share (`sweep_view`)."""
    rows = store.runs(sweep_id=sweep_id)
    view = sweep_view(r.spec for r in rows)
    return [run_result(r, store, view) for r in rows if r.has_model]


def run_document(store: Store, run_id: str) -> dict[str, Any]:
    row = store.run(run_id)
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
        "spec": row.spec,
        "metrics": store.metrics(row.id),
        "trajectory": store.records(row.id),
    }


def export_run(store: Store, run_id: str, fmt: str) -> str:
    """One run as JSON (everything) or CSV (see `export_runs`)."""
    return export_runs(store, [run_id], fmt)


def export_runs(store: Store, run_ids: list[str], fmt: str) -> str:
    """Runs as JSON (one document, or a list of them for several runs), or as CSV: one line per
    trajectory record, led by the run id, its verdict and κ, with the final exact metrics as
    `final.<split>.<metric>` columns on every line of that run."""
    documents = [run_document(store, run_id) for run_id in run_ids]
    if fmt == "json":
        return json.dumps(documents[0] if len(documents) == 1 else documents, indent=1)
    rows = []
    for document in documents:
        head = {"run": document["id"], "solver": document["spec"]["solver"],
                "verdict": document["verdict"]["label"], "kappa": document["verdict"]["kappa"]}  # fmt: skip
        final = {f"final.{split}.{name}": value for split, values in document["metrics"].items()
                 for name, value in values.items()}  # fmt: skip
        for record in document["trajectory"] or [{}]:
            row = dict(head)
            row.update({k: record.get(k) for k in ("seq", "iteration", "seconds", "kind",
                                                   "objective", "max_violation")})  # fmt: skip
            row.update({f"value.{k}": v for k, v in record.get("values", {}).items()})
            row.update(final)
            rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def metrics_rows(
    store: Store, run_ids: list[str], view: ConstraintSpec | None = None
) -> list[dict[str, Any]]:
    """One compact row per run for comparison tables, test first: the verdict, the constrained
    quantity (named by its family; for a run without constraint, the constraint `view`'s where
    it is reported) beside κ on test and train, accuracy against the majority class, AUC, and
    how the run ended."""
    rows = []
    for run_id in run_ids:
        row = store.run(run_id)
        metrics = store.metrics(run_id)
        verdict = run_verdict(store, row, view, metrics)
        test, train = verdict.check("test"), verdict.check("train")
        rows.append({
            "run": run_id,
            "solver": row.spec["solver"],
            "verdict": verdict.summary,
            "quantity": verdict.quantity,
            "κ": verdict.kappa,
            "test value": test.value if test else None,
            "train value": train.value if train else None,
            "test accuracy": metrics.get("test", {}).get("accuracy"),
            "majority": metrics.get("test", {}).get("majority"),
            "test AUC": metrics.get("test", {}).get("auc"),
            "status": row.status,
            "seconds": row.seconds,
        })  # fmt: skip
    return rows
