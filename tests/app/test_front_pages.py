"""The Frontier and Runs pages with a run that yields a front in the store: the Frontier page
offers it, draws it as a line of its own and lists its models; the Runs page shows its front
when it is selected."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from front_solver import NAME, register
from streamlit.testing.v1 import AppTest
from toy_tables import write_toy_csv

from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.fairness.constraint_spec import ConstraintSpec
from engine.models import ModelSpec
from engine.runs import RunSpec, Store
from engine.runs.submit import submit
from engine.runs.worker import execute_run
from engine.solvers import Budget

APP = str(Path(__file__).resolve().parents[2] / "app.py")
INTERVAL = (0.1, 0.5)
LABELS = ["λ = (0, 1)", "λ = (0.5, 0.5)", "λ = (1, 0)"]


@pytest.fixture
def front_run(app_home, tmp_path, monkeypatch) -> str:
    """A finished toy_front run, made in this process, in the pages' store."""
    register(monkeypatch)
    spec = RunSpec(
        data=write_toy_csv(tmp_path),
        prepare=PrepareOptions(grouping=(GroupingSpec("g"),)),
        model=ModelSpec(cross_terms=True),
        constraint=ConstraintSpec("pSP", 0.1, INTERVAL),
        interval=INTERVAL,
        solver=NAME,
        budget=Budget(),
    )
    store = Store(app_home)
    (run_id,) = submit([spec], store, start_runner=False)
    assert execute_run(str(store.home), run_id) == "converged"
    return run_id


def values(array) -> np.ndarray:
    """A figure's array as the page sends it: a list, or plotly's typed binary array."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
    return np.asarray(array)


def open_page(page: str) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=120)
    app.run()
    app.switch_page(page).run()
    assert not app.exception, app.exception
    return app


def test_the_frontier_page_draws_a_chosen_runs_front(front_run):
    app = open_page("pages/frontier.py")
    assert any("Press **Run sweep**" in i.value for i in app.info)  # nothing drawn unasked
    choice = app.multiselect(key="front_runs")
    assert choice.options == [f"{NAME} (κ = 0.1) [{front_run[:6]}]"]
    choice.set_value([front_run]).run()
    assert not app.exception, app.exception
    assert any("one run's front" in c.value for c in app.caption)
    (figure,) = app.get("plotly_chart")
    traces = json.loads(figure.proto.spec)["data"]
    line, diamond = [t for t in traces if t.get("legendgroup") == f"front {front_run}"]
    assert line["mode"] == "lines+markers" and len(values(line["x"])) == 3
    assert diamond["marker"]["symbol"] == "diamond" and len(values(diamond["x"])) == 1
    (table,) = [d.value for d in app.dataframe]
    assert table["label"].tolist() == [*LABELS, f"reported model = {LABELS[1]}"]
    assert table["reported"].tolist() == ["", "", "", "◆"]
    assert {"lambda.a", "lambda.b"} <= set(table.columns)


def test_the_runs_page_shows_a_selected_runs_front(front_run):
    app = open_page("pages/runs.py")
    app.session_state["runs_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app.run()
    assert not app.exception, app.exception
    assert any(
        f"**Front of {NAME} (κ = 0.1) [{front_run[:6]}]**: 3 models" in m.value
        for m in app.markdown
    )
    front = app.dataframe[-1].value
    assert front["label"].tolist() == [*LABELS, f"reported model = {LABELS[1]}"]
    assert front["dominated"].dtype == bool and front["score"].notna().all()


def test_every_solver_that_yields_a_front_says_what_its_front_is():
    """A solver that overrides `Solver.front` has words on its card for the pages, and a front's
    caption carries only its own solvers' words."""
    from engine.solvers.base import Solver
    from engine.solvers.catalogue import solver_card, solver_names
    from pages.shared.views import front_words

    yielding = [
        name for name in solver_names() if solver_card(name).load().front is not Solver.front
    ]
    assert {"badr_front", "fair_reg", "grid_search"} <= set(yielding)
    for name in yielding:
        assert solver_card(name).front_words, name
    grid = front_words(["grid_search", "grid_search"])
    assert "Lagrange multiplier" in grid and "badr" not in grid and grid.count("GridSearch") == 1
    assert "badr picks the fairest" in front_words(["badr_front"])
    assert front_words([]).startswith("Grey: dominated")
