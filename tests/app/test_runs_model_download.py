"""The Runs page's "Download model": the model file of a finished run, which loads and scores
the run's data as the run did; several runs give a zip of such files."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest
from toy_tables import write_toy_csv

from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.model_file import read_model
from engine.models import ModelSpec
from engine.runs import RunSpec, Store
from engine.runs.worker import execute_run
from engine.solvers import Budget

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def files(monkeypatch) -> dict:
    """What each download button gives, by file name: its bytes, or the function that makes
    them on a click."""
    given = {}
    add, add_deferred = MediaFileManager.add, MediaFileManager.add_deferred

    def keep(self, data, mimetype, coordinates, file_name=None, **kwargs):
        given[file_name] = data
        return add(self, data, mimetype, coordinates, file_name, **kwargs)

    def keep_deferred(self, make, mimetype, coordinates, file_name=None, **kwargs):
        given[file_name] = make
        return add_deferred(self, make, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add", keep)
    monkeypatch.setattr(MediaFileManager, "add_deferred", keep_deferred)
    return given


def finished_run(store: Store, folder: Path, seed: int) -> str:
    spec = RunSpec(
        data=write_toy_csv(folder),
        prepare=PrepareOptions(grouping=(GroupingSpec("g"),), seed=seed),
        model=ModelSpec(cross_terms=True),
        constraint=None,
        interval=(0.0, 1.0),
        solver="unconstrained",
        budget=Budget(max_iterations=20),
        seed=seed,
    )
    store.enqueue(spec.run_id, spec.to_dict())
    assert execute_run(str(store.home), spec.run_id) in ("budget", "converged")
    return spec.run_id


def open_with_selected(rows: list[int]) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=60)
    app.switch_page("pages/runs.py").run()
    app.session_state["runs_table"] = {"selection": {"rows": rows, "columns": [], "cells": []}}
    app.run()
    assert not app.exception, app.exception
    return app


def test_download_model_gives_the_runs_model_file(app_home, tmp_path, files):
    store = Store(app_home)
    run_id = finished_run(store, tmp_path, seed=0)
    app = open_with_selected([0])
    assert "Download model" in {b.label for b in app.get("download_button")}
    model = read_model(files[f"model-{run_id}.npz"])
    assert model.about["run"] == run_id and model.about["solver"] == "unconstrained"
    scores = model.scores(pd.read_csv(tmp_path / "toy.csv"))
    test_scores, _ = store.load_scores(run_id)
    assert np.isin(test_scores, scores).all()  # the run's test rows are among the file's rows


def test_a_run_whose_data_is_gone_says_why_it_has_no_model_file(app_home, tmp_path, files):
    store = Store(app_home)
    finished_run(store, tmp_path, seed=0)
    (tmp_path / "toy.csv").unlink()
    app = open_with_selected([0])
    assert "Download model" not in {b.label for b in app.get("download_button")}
    assert any("No model file: CSV file not found" in c.value for c in app.caption)


def test_several_runs_give_a_zip_of_model_files(app_home, tmp_path, files):
    store = Store(app_home)
    ids = [finished_run(store, tmp_path, seed) for seed in (0, 1)]
    app = open_with_selected([0, 1])
    assert "Model files (.zip, 2 runs)" in {b.label for b in app.get("download_button")}
    with zipfile.ZipFile(io.BytesIO(files["models-2-runs.zip"]())) as archive:
        assert set(archive.namelist()) == {f"model-{r}.npz" for r in ids}
        for run_id in ids:
            assert read_model(archive.read(f"model-{run_id}.npz")).about["run"] == run_id
