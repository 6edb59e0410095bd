"""The HTML report reads like a report: settings in words, verdicts, numbers or "—", trajectories."""

from __future__ import annotations

import html
import json
import math

import pytest

from engine.data.csv_source import CSVSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.fairness.constraint_spec import ConstraintSpec
from engine.models import ModelSpec
from engine.plots.scores import cdf_figure
from engine.report import ReportRun, html_report, store_report
from engine.runs import RunSpec, Store
from engine.runs.results import run_verdict
from engine.solvers.paper003.cards import IDCAConfig
from engine.status import StopCode, StopReason
from engine.verdict import judge

INTERVAL = (0.05, 0.3)


def run_spec(solver: str, kappa: float | None) -> RunSpec:
    constraint = None if kappa is None else ConstraintSpec("pSP", kappa, INTERVAL)
    return RunSpec(
        data=CSVSpec(path="/data/toy.csv", label="y", protected=("g",)),
        prepare=PrepareOptions(grouping=(GroupingSpec("g"),)),
        model=ModelSpec(cross_terms=True),
        constraint=constraint,
        interval=INTERVAL,
        solver=solver,
    )


def records(constrained: bool) -> list[dict]:
    metric = "constraint" if constrained else "psp"
    out = []
    for i in range(5):
        out.append(
            {
                "iteration": i,
                "seconds": 0.1 * i,
                "kind": "surrogate",
                "objective": 1.0 / (i + 1),
                "max_violation": 0.01 - 0.005 * i,
                "values": {},
                "state": {},
            }
        )
        out.append(
            {
                "iteration": i,
                "seconds": 0.1 * i,
                "kind": "exact",
                "objective": None,
                "max_violation": None,
                "state": {},
                "values": {f"train.{metric}": 0.1 - 0.01 * i, f"val.{metric}": 0.12 - 0.01 * i},
            }
        )
    return out


def metrics(value: float) -> dict[str, dict[str, float | None]]:
    row = {
        "accuracy": 0.81,
        "majority": 0.75,
        "auc": None,
        "score_std": 0.9,
        "positive_rate": 0.2,
        "psp": value,
        "constraint": value,
    }
    return {"test": row, "train": dict(row, constraint=value - 0.01)}


@pytest.fixture
def finished_runs(tmp_path) -> tuple[Store, list[str]]:
    """A linear pSP run that misses κ and the unconstrained reference, finished in a store."""
    store = Store(tmp_path / "home")
    ids = []
    for spec, value in ((run_spec("idca", 0.05), 0.08), (run_spec("unconstrained", None), 0.3)):
        store.enqueue(spec.run_id, spec.to_dict())
        store.claim(spec.run_id, pid=1)
        store.append_records(spec.run_id, records(spec.constraint is not None), first_seq=0)
        store.finish(
            spec.run_id,
            StopReason(StopCode.CONVERGED, "converged"),
            iterations=5,
            seconds=0.5,
            metrics=metrics(value),
        )
        ids.append(spec.run_id)
    return store, ids


def text_part(page: str) -> str:
    """The body before the first figure (which embeds plotly.js, full of other words)."""
    return page.split("<body>")[1].split("<h2>Trajectories")[0]


def test_report_of_stored_runs(finished_runs):
    store, ids = finished_runs
    extra = cdf_figure([0.1, -0.2, 0.3, 0.5], [0, 1, 1, 0], ["F", "M"], *INTERVAL)
    page = store_report(store, ids, "Adult by sex", [("extra", extra)])
    text = text_part(page)
    assert "hidden" not in text and "[64]" not in text and "{" not in text
    assert "linear with group cross-terms" in text and text.count("cross-terms") == 1
    assert "pSP ≤ κ = 0.05 on I = each group&#x27;s top 5 % to 30 %" in text
    assert "nan" not in text.lower()
    assert "<td>0.0500</td>" in text  # κ in the metrics table, a number
    assert "<td>—</td>" in text  # the reference's κ and every missing AUC
    for run_id in ids:
        verdict = run_verdict(store, store.run(run_id))
        for finding in verdict.findings:
            assert html.escape(finding) in text
        assert f"<div class='verdict {verdict.level}'>" in text
        assert f"<span class='badge'>{verdict.label}</span>" in text
    assert page.count('class="plotly-graph-div"') == 2  # the trajectories and the extra figure
    epsilon = f"≤ ε = {IDCAConfig().epsilon:g} feasible (surrogate)"  # IDCA's default ε
    for drawn in ("train pSP (exact)", epsilon):  # the trajectories
        assert json.dumps(drawn)[1:-1] in page  # as plotly writes it: non-ASCII escaped


def test_shared_settings_are_said_once_and_the_rest_per_run(finished_runs):
    store, ids = finished_runs
    text = text_part(store_report(store, ids, "report"))
    configuration = text.split("<h2>Configuration</h2>")[1].split("<h2>Verdicts</h2>")[0]
    assert "toy.csv" in configuration and "idca" not in configuration
    verdicts = text.split("<h2>Verdicts</h2>")[1]
    assert verdicts.count("toy.csv") == 0 and "idca: IDCA" in verdicts
    assert "none (unconstrained)" in verdicts


def test_missing_numbers_print_a_dash():
    verdict = judge("converged", {"test": {"constraint": 0.01, "accuracy": 0.9}}, "EO gap", 0.05)
    rows = [{"run": "a", "κ": math.nan, "test AUC": None, "test accuracy": 0.9}]
    page = html_report("t", [("model", "linear")], [ReportRun("a", verdict)], rows, [])
    assert "nan" not in page.lower() and page.count("<td>—</td>") == 2
    assert "<td>0.9000</td>" in page and "Meets κ on the test set" in page
