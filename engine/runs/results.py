"""Reading finished runs back as frontier inputs and as exportable documents."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from engine.runs.frontier import RunResult
from engine.runs.store import RunRow, Store


def run_result(row: RunRow, store: Store) -> RunResult:
    spec = row.spec
    constraint = spec.get("constraint")
    return RunResult(
        run_id=row.id,
        solver=spec["solver"],
        kappa=None if constraint is None else constraint["kappa"],
        interval=tuple(spec["interval"]),
        seed=int(spec["seed"]),
        metrics=store.metrics(row.id),
    )


def sweep_results(store: Store, sweep_id: str) -> list[RunResult]:
    """The sweep's finished runs (done or diverged: both keep a reported iterate)."""
    rows = store.runs(sweep_id=sweep_id)
    return [run_result(r, store) for r in rows if r.status in ("done", "diverged")]


def run_document(store: Store, run_id: str) -> dict[str, Any]:
    row = store.run(run_id)
    return {
        "id": row.id,
        "status": row.status,
        "reason": row.reason,
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
    """The run as JSON (everything), or as CSV (one line per trajectory record, with the final
    exact metrics as `final.<split>.<metric>` columns on every line)."""
    document = run_document(store, run_id)
    if fmt == "json":
        return json.dumps(document, indent=1)
    final = {f"final.{split}.{name}": value for split, values in document["metrics"].items()
             for name, value in values.items()}  # fmt: skip
    rows = []
    for record in document["trajectory"]:
        row = {k: record[k] for k in ("seq", "iteration", "seconds", "kind", "objective",
                                      "max_violation")}  # fmt: skip
        row.update({f"value.{k}": v for k, v in record["values"].items()})
        row.update(final)
        rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row)) or ["seq", *final]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows or [final])
    return out.getvalue()


def metrics_rows(store: Store, run_ids: list[str]) -> list[dict[str, Any]]:
    """One row per run for comparison tables: solver, κ beside the realised exact values."""
    rows = []
    for run_id in run_ids:
        row = store.run(run_id)
        metrics = store.metrics(run_id)
        constraint = row.spec.get("constraint")
        entry: dict[str, Any] = {
            "run": run_id,
            "solver": row.spec["solver"],
            "status": row.status,
            "κ": None if constraint is None else constraint["kappa"],
        }
        for split in ("train", "test"):
            for name in ("psp", "pdp", "accuracy", "auc", "dp"):
                entry[f"{split} {name}"] = metrics.get(split, {}).get(name)
        entry["iterations"] = row.iterations
        entry["seconds"] = row.seconds
        rows.append(entry)
    return rows
