"""The Benchmark page through AppTest: a small study fills in its bands, table, criteria and
probabilities; bad settings are refused in words."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.runs import FINAL, Store
from engine.solvers.catalogue import solver_card

pytestmark = pytest.mark.slow  # tests of several seconds each, started first (conftest.py)

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def open_benchmark() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=120)
    app.run()
    app.switch_page("pages/benchmark.py").run()
    assert not app.exception, app.exception
    return app


def errors(app: AppTest) -> str:
    return " ".join(e.value for e in app.error)


def test_bad_settings_are_refused_with_the_reason():
    app = open_benchmark()
    app.sidebar.number_input(key="bench_runs").set_value(0).run()
    assert not app.exception and "at least one run per solver" in errors(app)
    app.sidebar.number_input(key="bench_runs").set_value(2).run()
    app.sidebar.text_area(key="bench_grid").set_value("option.nonsense=1,2").run()
    assert not app.exception and "nonsense" in errors(app)
    app.sidebar.text_area(key="bench_grid").set_value("").run()
    app.sidebar.selectbox(key="family").set_value("quad_inter").run()
    for name in ("idca", "sgd_penalty"):
        box = app.sidebar.checkbox(key=f"solver:{name}")
        assert box.disabled and "quad_inter" in box.help


def test_a_small_study_fills_in_bands_table_and_criteria(app_home):
    app = open_benchmark()
    app.sidebar.number_input(key="seconds").set_value(2.0).run()
    app.sidebar.number_input(key="bench_runs").set_value(2).run()
    app.sidebar.number_input(key="bench_save_seconds").set_value(0.2).run()
    app.sidebar.button(key="bench_run").click().run()
    assert not app.exception
    store = Store(app_home)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        runs = store.runs()
        if runs and all(r.status in FINAL for r in runs):
            break
        time.sleep(0.5)
    assert len(runs) == 4 and all(r.has_model for r in runs), [
        (r.status, r.error, r.spec.solver) for r in runs
    ]
    app.run()
    assert not app.exception
    charts = {c.proto.id for c in app.get("plotly_chart")}
    assert len(charts) >= 3
    table = app.table[0].value  # one row per solver and split, the loss in its unit
    assert len(table) == 4 and any(str(c).startswith("loss (") for c in table.columns)


def test_a_reference_solver_listed_first_leaves_the_others_their_constraint():
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["family"] = "group_loss_gap"
    app.query_params["solvers"] = ["sgd", "ssl_alm"]
    app.run()
    app.switch_page("pages/benchmark.py").run()
    assert not app.exception and not app.error, errors(app)
    assert app.sidebar.button(key="bench_run").label == "Run study (10 runs)"


def wait_until_ended(store: Store, count: int, timeout: float = 180) -> list:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = store.runs()
        if len(runs) >= count and all(r.status in FINAL for r in runs):
            return runs
        time.sleep(0.5)
    raise AssertionError(f"runs did not end: {[(r.spec.solver, r.status) for r in runs]}")


def test_a_tuned_study_runs_each_solver_with_the_options_its_trials_chose(app_home):
    """IDCA tunes T and ε on 50 outer iterations (paper 003 G.2.2), the reference does not;
    the study's IDCA runs then take the chosen T and ε, at their full length."""
    app = open_benchmark()
    app.sidebar.number_input(key="seconds").set_value(1.0).run()
    app.sidebar.number_input(key="bench_runs").set_value(2).run()
    app.sidebar.checkbox(key="bench_tune").check().run()
    assert app.session_state["solvers"] == ["idca", "unconstrained"]
    grid = solver_card("idca").tuning.settings()
    assert app.sidebar.button(key="bench_run").label == "Tune, then run the study"
    app.sidebar.button(key="bench_run").click().run()
    store = Store(app_home)
    trials = wait_until_ended(store, len(grid))
    assert all(r.spec.config["outer_iterations"] == 50 for r in trials)
    app.run()  # the trials have ended: the study is queued with the chosen options
    assert not app.exception
    runs = wait_until_ended(store, len(grid) + 4)
    (line,) = [e.label for e in app.expander if e.label.startswith("Tuned idca")]
    idca = [r for r in runs if r.spec.solver == "idca"]
    study = [r for r in idca if r.spec.config["outer_iterations"] != 50]  # at full length
    assert sorted(r.spec.seed for r in study) == [0, 1]
    for run in study:
        chosen = {name: run.spec.config[name] for name in ("inner_iterations", "epsilon")}
        assert chosen in grid
        assert (
            f"inner_iterations = {chosen['inner_iterations']}, epsilon = {chosen['epsilon']},"
            in line
        )
