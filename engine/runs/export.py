"""The exported model (`engine.model_file`) of a run: of a stored one, from its spec, its saved
parameters and its data prepared again (from the cache when it is there), or of one just made.

A stored run's model is checked against the test scores the run saved: the data prepared again
must give them, or the data has changed since the run (a CSV file edited, say) and the model
would not be the one the run reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from engine import __version__
from engine.data.file_layout import source_layout
from engine.data.prepared import Prepared
from engine.data.sources import load_prepared
from engine.errors import UserError
from engine.model_file import ExportedModel, from_prepared
from engine.models import Params
from engine.runs.results import run_verdict
from engine.runs.spec import RunSpec
from engine.runs.store import Store
from engine.scoring import Rows, model_scores
from engine.verdict import Verdict

SCORE_TOLERANCE = 1e-9  # relative: the same sums, maybe in another order


def stored_run_model(store: Store, run_id: str) -> ExportedModel:
    """The exported model of a finished run in `store` (an id or an unambiguous prefix)."""
    row = store.run(run_id)
    if not row.has_model:
        raise UserError(f"run {row.id} is {row.status}: it has no model to export")
    if not (store.artifacts(row.id) / "params.npz").is_file():
        raise UserError(f"run {row.id} has no saved parameters in {store.artifacts(row.id)}")
    spec = row.spec
    prepared = load_prepared(spec.data, spec.prepare)
    params = store.load_params(row.id)
    model = run_model(
        spec, prepared, params, row.id, run_verdict(store, row), store.metrics(row.id), row.status
    )
    saved, _ = store.load_scores(row.id)
    _check_test_scores(model, prepared, saved, row.id)
    return model


def run_model(
    spec: RunSpec,
    prepared: Prepared,
    params: Params,
    run_id: str,
    verdict: Verdict,
    metrics: dict[str, dict[str, float | None]],
    status: str,
) -> ExportedModel:
    """The exported model of a run of `spec` on `prepared` data that ended with `params`."""
    about = run_about(spec, prepared, run_id, verdict, metrics, status)
    return from_prepared(
        prepared,
        spec.model,
        params,
        spec.objective.name,
        about=about,
        layout=source_layout(spec.data.kind),
    )


def run_about(
    spec: RunSpec,
    prepared: Prepared,
    run_id: str,
    verdict: Verdict,
    metrics: dict[str, dict[str, float | None]],
    status: str,
) -> dict[str, Any]:
    """Where a run's model comes from: the run, its data and preparation, solver and options,
    constraint with κ and I, seed, how it ended, the verdict with its findings in words and the
    exact test metrics with their 95 % intervals."""
    document = spec.to_dict()
    data = {k: v for k, v in document["data"].items() if k not in ("root", "allow_download")}
    if "path" in data:
        data["path"] = Path(data["path"]).name  # the file's name, not where it lay
    return {
        "run": run_id,
        "dataset": prepared.dataset_name,
        "data": data,
        "prepare": document["prepare"],
        "solver": spec.solver,
        "config": document["config"],
        "constraint": document["constraint"],
        "kappa": None if spec.constraint is None else spec.constraint.kappa,
        "interval": list(spec.interval),
        "seed": spec.seed,
        "objective": document.get("objective", {"name": spec.objective.name}),
        "status": status,
        "verdict": verdict.summary,
        "verdict_findings": list(verdict.findings),
        "test_metrics": metrics.get("test", {}),
        "engine_version": __version__,
    }


def _check_test_scores(
    model: ExportedModel, prepared: Prepared, saved: np.ndarray, run_id: str
) -> None:
    test = prepared.test
    rows = Rows(test.X, test.groups, prepared.n_groups, model.model.cross_terms)
    scores = model_scores(model.model, model.params, rows)
    same = scores.shape == saved.shape and np.allclose(
        scores, saved, rtol=SCORE_TOLERANCE, atol=SCORE_TOLERANCE
    )
    if not same:
        raise UserError(
            f"the data of run {run_id} has changed since it ran: its model no longer "
            "gives the test scores the run saved, so it cannot be exported as the "
            "run's model"
        )
