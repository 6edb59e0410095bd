"""What makes the app quick to open and to rerun: the pages and the background runner import no
solver (torch), the server preloads what the pages use, and figures are built once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from engine.data import sources
from engine.models import ModelSpec
from engine.runs import RunSpec, Store
from engine.status import StopCode, StopReason
from pages.shared import data_controls, data_summary, views
from pages.shared.preload import preload, prepare_default_data

PROJECT = Path(__file__).resolve().parents[2]


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running `code`."""
    code = f"import sys; {code}; print(' '.join(sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    return set(result.stdout.split())


def test_what_the_pages_use_imports_no_solver():
    loaded = modules_after(
        "import pages.shared.data_controls, pages.shared.data_summary, "
        "pages.shared.views, pages.shared.problem_controls, engine.report, "
        "engine.runs.submit, engine.runs.frontier, engine.runs.results"
    )
    assert "torch" not in loaded and "scipy.stats" not in loaded
    assert "pandas" in loaded and "plotly" in loaded
    assert "engine.solvers.catalogue" in loaded and "engine.solvers.paper003.idca" not in loaded


def test_the_runs_of_the_default_view_are_described_without_solvers():
    code = (
        "from pages.shared import data_controls, problem_controls as pc; "
        "from engine.models import ModelSpec; from engine.solvers import Budget; "
        "spec, prepare = data_controls.default_data(); "
        "solvers = ('idca', 'ssg', 'penalty', 'unconstrained'); "
        "problem = pc.Problem((0.05, 0.3), 0.05, 'pSP', solvers, {}, "
        "ModelSpec(cross_terms=True), Budget(max_seconds=5.0)); "
        "specs = pc.run_specs(spec, prepare, problem); "
        "assert [s.solver for s in specs] == list(solvers), specs"
    )
    assert "torch" not in modules_after(code)


def test_the_runner_process_imports_no_solver():
    loaded = modules_after("import engine.runs, engine.runs.runner, engine.runs.store")
    assert "torch" not in loaded and "pandas" not in loaded


def test_preloading_imports_no_solver():
    code = (
        "from pages.shared import preload, data_controls; "
        "data_controls.prepared_data = lambda *args: None; preload.preload()"
    )
    loaded = modules_after(code)
    assert "pages.shared.problem_controls" in loaded and "torch" not in loaded


def test_preloading_prepares_the_default_data_for_the_page(monkeypatch):
    calls = []
    monkeypatch.setattr(data_controls, "prepared_data", lambda *args: calls.append(args))
    preload()
    spec, options = data_controls.default_data()
    assert calls == [(spec, options)]


def test_setup_prepares_the_default_data_for_a_first_start(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRFRONT_CACHE", str(tmp_path))
    prepare_default_data()

    def refuse(*args, **kwargs):
        raise AssertionError("prepared again instead of read from the cache")

    monkeypatch.setattr(sources, "prepare", refuse)
    prepared = sources.load_prepared(*data_controls.default_data())
    assert prepared.group_names == ("Female", "Male")


def test_groups_table_in_markdown():
    summary = {
        "groups": [
            {
                "name": "A|B",
                "train": {"size": 1200, "label_rate": 0.25},
                "val": {"size": 10, "label_rate": None},
                "test": {"size": 0, "label_rate": None},
            },
        ]
    }
    lines = data_summary.groups_markdown(summary).split("\n")
    assert len(lines) == 3 and lines[0].startswith("| group | train size")
    assert lines[2] == "| A\\|B | 1,200 | 25.0% | 10 | — | 0 | — |"


def test_figures_are_built_once_and_shared_across_reruns(tmp_path):
    prepared = data_controls.prepared_data(*data_controls.default_data())
    summary = prepared.summary()
    first = data_summary._groups_figure(prepared.key, summary)
    assert data_summary._groups_figure(prepared.key, summary) is first

    store = Store(tmp_path / "runs")
    rng = np.random.default_rng(0)
    data, prepare = data_controls.default_data()
    spec = RunSpec(data, prepare, ModelSpec(), None, (0.05, 0.3), "unconstrained").to_dict()
    store.enqueue("r1", spec)
    store.claim("r1", 1)
    store.save_artifacts("r1", {}, rng.normal(size=400), rng.integers(0, 2, 400))
    store.finish("r1", StopReason(StopCode.CONVERGED, "converged"))
    figures = views.score_figures(store, "r1", None, ("a", "b"), (0.05, 0.3), 0.05)
    assert views.score_figures(store, "r1", None, ("a", "b"), (0.05, 0.3), 0.05) is figures
    store.enqueue("r1", spec, force=True)  # a new result of the same run draws anew
    store.claim("r1", 1)
    store.finish("r1", StopReason(StopCode.CONVERGED, "converged"))
    assert views.score_figures(store, "r1", None, ("a", "b"), (0.05, 0.3), 0.05) is not figures
