"""The Benchmark page through AppTest: a small study fills in its bands, table, criteria and
probabilities; bad settings are refused in words."""

from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from engine.runs import FINAL, Store

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
        (r.status, r.error, r.spec["solver"]) for r in runs
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
