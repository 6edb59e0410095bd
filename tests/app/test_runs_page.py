"""The Runs page through AppTest, on runs written straight into the store (no solver runs):
newest first, verdicts, cancel, a delete that asks first, re-runs (of interrupted runs in one
click; of finished runs only once confirmed), and exports of several runs."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from engine.data.adult import AdultSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.fairness.constraint_spec import ConstraintSpec
from engine.models import ModelSpec
from engine.runs import RunSpec, Store
from engine.status import StopCode, StopReason

APP = str(Path(__file__).resolve().parents[2] / "app.py")
INTERVAL = (0.05, 0.3)


@pytest.fixture
def store(app_home) -> Store:
    return Store(app_home)


@pytest.fixture
def runners(monkeypatch) -> list:
    """The stores a re-run asked to have a runner for (none is started: the runs stay queued)."""
    asked = []
    monkeypatch.setattr(
        "engine.runs.runner.ensure_runner", lambda home, *a, **k: asked.append(home)
    )
    return asked


@pytest.fixture
def downloads(monkeypatch) -> dict:
    """What each download button would give when clicked, by file name: the page makes the
    contents only on a click, so the test keeps the makers Streamlit is handed and calls them."""
    makers = {}
    register = MediaFileManager.add_deferred

    def keep(self, make, mimetype, coordinates, file_name=None, **kwargs):
        makers[file_name] = make
        return register(self, make, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    return makers


def add_run(
    store: Store,
    seed: int,
    family: str | None = "pSP",
    kappa: float = 0.05,
    value: float | None = None,
    end: StopCode | str = StopCode.CONVERGED,
    reason: str = "converged",
) -> str:
    """A run in the store as a worker would leave it: `value` is the exact constrained quantity
    on the test set; `end` "queued" or "running" leaves it there."""
    interval = INTERVAL if family in ("pSP", "pDP") else None
    spec = RunSpec(
        data=AdultSpec(),
        prepare=PrepareOptions(grouping=(GroupingSpec("sex"),), seed=seed),
        model=ModelSpec(cross_terms=True),
        constraint=None if family is None else ConstraintSpec(family, kappa, interval),
        interval=INTERVAL,
        solver="idca" if family else "unconstrained",
        seed=seed,
    )
    store.enqueue(spec.run_id, spec.to_dict())
    if end == "queued":
        return spec.run_id
    store.claim(spec.run_id, pid=1)
    if end == "running":
        return spec.run_id
    split = {"constraint": value, "accuracy": 0.82, "majority": 0.76, "auc": 0.88}
    store.finish(
        spec.run_id,
        StopReason(end, reason),
        iterations=10,
        seconds=1.0,
        metrics={"test": split, "train": split},
    )
    store.save_artifacts(spec.run_id, {"w": np.arange(3.0)}, np.zeros(4), np.zeros(4, int))
    return spec.run_id


def open_runs_page() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=60)
    app.switch_page("pages/runs.py").run()
    assert not app.exception, app.exception
    return app


def table(app: AppTest):
    return app.dataframe[0].value


def select(app: AppTest, rows: list[int]) -> AppTest:
    app.session_state["runs_table"] = {"selection": {"rows": rows, "columns": [], "cells": []}}
    app.run()
    assert not app.exception, app.exception
    return app


def texts(app: AppTest) -> str:
    return " ".join(
        e.value
        for kind in ("markdown", "caption", "success", "error", "info")
        for e in app.get(kind)
    )


def test_an_empty_store_says_so():
    app = open_runs_page()
    assert "No runs yet." in texts(app) and "No runs match" in texts(app)


def test_newest_first_with_one_column_per_quantity_and_the_verdict(store):
    misses = add_run(store, 0, kappa=0.05, value=0.08)
    meets = add_run(store, 1, kappa=0.1, value=0.04)
    gap = add_run(store, 2, family="EO", kappa=0.1, value=0.03)
    free = add_run(store, 3, family=None, value=0.2)
    app = open_runs_page()
    frame = table(app).set_index("id")
    assert list(frame.index) == [free, gap, meets, misses]
    assert frame.loc[misses, ["quantity", "κ", "I", "verdict", "test pSP"]].tolist() == [
        "pSP",
        0.05,
        "[5%, 30%)",
        "misses κ",
        0.08,
    ]
    assert frame.loc[meets, ["verdict", "test pSP"]].tolist() == ["meets κ", 0.04]
    assert frame.loc[gap, ["quantity", "I", "verdict", "test EO gap"]].tolist() == [
        "EO gap",
        "—",
        "meets κ",
        0.03,
    ]
    assert frame.loc[free, ["quantity", "I", "verdict"]].tolist() == ["—", "—", "no constraint"]
    # each column one quantity: a run that stores none of it (these store only their own
    # constrained value) has an empty cell, shown as "—", not its own quantity's value
    assert frame.loc[[free, gap], "test pSP"].isna().all()
    assert frame.loc[[free, meets, misses], "test EO gap"].isna().all()
    assert np.isnan(frame.loc[free, "κ"]) and app.dataframe[0].proto.placeholder == "—"
    assert frame.loc[misses, "model"] == "idca · linear+cross"
    assert frame.loc[misses, "data"] == "Adult · sex"


def test_chosen_runs_stand_side_by_side_one_column_each(store):
    """A column per chosen run, a row per quantity or score: each cell the run's stored value
    of that row to four places, "—" where it has none (κ as given, seconds to one place)."""
    misses = add_run(store, 0, kappa=0.05, value=0.08)
    gap = add_run(store, 2, family="EO", kappa=0.1, value=0.03)
    app = select(open_runs_page(), [0, 1])  # newest first: gap, misses
    compared = app.dataframe[1].value.set_index("")
    assert list(compared.columns) == [gap[:8], misses[:8]]
    assert compared.loc["model"].tolist() == ["idca · linear+cross"] * 2
    assert compared.loc["κ"].tolist() == ["0.1", "0.05"]
    assert compared.loc["test pSP"].tolist() == ["—", "0.0800"]
    assert compared.loc["test EO gap"].tolist() == ["0.0300", "—"]
    assert compared.loc["train pSP"].tolist() == ["—", "0.0800"]
    assert compared.loc["test accuracy"].tolist() == ["0.8200"] * 2
    assert compared.loc["majority rate (test)"].tolist() == ["0.7600"] * 2
    assert compared.loc["verdict"].tolist() == ["meets κ", "misses κ"]
    assert compared.loc["seconds"].tolist() == ["1.0"] * 2


def test_delete_asks_first_and_keeps_runs_that_are_still_going(store):
    done = [add_run(store, s, value=0.04) for s in range(2)]
    running = add_run(store, 2, end="running")
    app = select(open_runs_page(), [0, 1, 2])
    app.button(key="delete").click().run()
    assert "Delete **3 runs**" in texts(app) and "cannot be undone" in texts(app)
    named = [m.value for m in app.markdown if m.value.startswith("- `")]
    assert len(named) == 1 and all(f"`{r}`" in named[0] for r in (*done, running))
    assert "running" in named[0] and "idca" in named[0]
    assert len(store.runs()) == 3  # nothing is gone before the confirmation
    app.button(key="keep_runs").click().run()
    assert len(store.runs()) == 3 and not app.button(key="delete").disabled
    app.button(key="delete").click().run()
    app.button(key="confirm_delete").click().run()
    assert not app.exception
    assert [r.id for r in store.runs()] == [running] and not set(done) & set(table(app)["id"])
    assert "Deleted 2 runs." in texts(app)
    assert f"run {running} is running; cancel it first" in texts(app)


def test_cancel_shows_the_new_status_at_once(store):
    queued = add_run(store, 0, end="queued")
    app = select(open_runs_page(), [0])
    app.button(key="cancel").click().run()
    assert table(app).set_index("id").loc[queued, "status"] == "cancelled"
    assert "Cancelled 1 run." in texts(app)
    assert app.button(key="cancel").disabled  # nothing selected is going any more


def test_exports_cover_every_selected_run(store, downloads):
    ids = [add_run(store, s, value=0.04) for s in range(3)]
    app = select(open_runs_page(), [0, 2])
    chosen = {ids[2], ids[0]}  # newest first
    labels = {b.label for b in app.get("download_button")}
    assert {"Export JSON (2 runs)", "Export CSV (2 runs)", "Model files (.zip, 2 runs)"} <= labels
    documents = json.loads(downloads["run-2-runs.json"]())
    assert {d["id"] for d in documents} == chosen
    assert {line.split(",")[0] for line in downloads["run-2-runs.csv"]().splitlines()[1:]} == chosen
    with zipfile.ZipFile(io.BytesIO(downloads["models-2-runs.zip"]())) as archive:
        assert archive.namelist() == ["not-exported.txt"]  # placeholder parameters: no model
        refused = archive.read("not-exported.txt").decode().splitlines()
        assert {line.split(":")[0] for line in refused} == chosen


def test_the_selection_stays_on_its_runs_when_a_new_run_arrives_above(store):
    first = add_run(store, 0, value=0.04)
    app = select(open_runs_page(), [0])
    add_run(store, 1, value=0.04)
    app.run()
    assert table(app)["id"].tolist()[1] == first
    compared = app.dataframe[1].value
    assert list(compared.columns) == ["", first[:8]]  # one column per chosen run


def interrupted_run(store: Store, seed: int) -> str:
    return add_run(store, seed, end=StopCode.INTERRUPTED, reason="the process running it ended")


def test_interrupted_runs_are_named_and_one_click_queues_them_again(store, runners):
    done = add_run(store, 0, value=0.04)
    interrupted = [interrupted_run(store, s) for s in (1, 2)]
    app = open_runs_page()
    frame = table(app).set_index("id")
    assert frame.loc[interrupted, "status"].tolist() == ["interrupted"] * 2
    assert frame.loc[interrupted, "verdict"].tolist() == ["interrupted — re-run it"] * 2
    assert frame.loc[done, "verdict"] == "meets κ"
    (warning,) = app.warning
    assert warning.value.startswith("**2 runs interrupted**: the app or its runner stopped")
    app.button(key="rerun_interrupted").click().run()
    assert not app.exception, app.exception
    assert [store.run(r).status for r in interrupted] == ["queued", "queued"]
    assert store.metrics(interrupted[0]) == {} and store.run(done).status == "converged"
    assert runners == [store.home]
    assert "Queued 2 runs again." in texts(app) and not app.warning
    assert set(table(app).set_index("id").loc[interrupted, "status"]) == {"queued"}


def test_rerun_queues_runs_without_a_result_and_asks_before_replacing_one(store, runners):
    finished = add_run(store, 0, value=0.04)
    failed = add_run(store, 1, end=StopCode.WORKER_DIED, reason="the worker process died")
    running = add_run(store, 2, end="running")
    app = select(open_runs_page(), [0, 1, 2])  # newest first: running, failed, finished
    app.button(key="rerun").click().run()
    assert "**1 run with a result** is selected" in texts(app)  # asked, nothing queued yet
    assert store.run(failed).status == "failed" and runners == []
    app.button(key="keep_results").click().run()
    assert not app.exception, app.exception
    assert [store.run(r).status for r in (finished, failed, running)] == [
        "converged",
        "queued",
        "running",
    ]
    assert store.metrics(finished)["test"]["accuracy"] == 0.82
    assert "Queued 1 run again." in texts(app) and runners == [store.home]

    app = select(app, [table(app)["id"].tolist().index(finished)])
    app.button(key="rerun").click().run()
    app.button(key="confirm_rerun").click().run()
    assert store.run(finished).status == "queued" and store.metrics(finished) == {}


def test_rerun_is_off_for_runs_that_are_on_their_way(store, runners):
    add_run(store, 0, end="queued")
    app = select(open_runs_page(), [0])
    assert app.button(key="rerun").disabled
    assert "Queued or running: on its way already." in texts(app)
