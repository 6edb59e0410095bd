"""Fixtures for command-line tests: a tiny CSV table and a run store that starts no runner."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from cli_table import write_table

from engine.runs import Store
from engine.runs.worker import execute_run
from engine.status import StopCode, StopReason


@pytest.fixture(scope="module")
def tiny_csv(tmp_path_factory) -> Path:
    return write_table(tmp_path_factory.mktemp("table"))


@pytest.fixture
def quiet_store(tmp_path, monkeypatch) -> Path:
    """$FAIRFRONT_HOME in a temporary folder, where queued runs stay queued: no background
    runner process is started (a test runs them in-process with `execute_run`)."""
    home = tmp_path / "runs"
    monkeypatch.setenv("FAIRFRONT_HOME", str(home))
    submit = importlib.import_module("engine.runs.submit")  # `engine.runs.submit` is a function
    monkeypatch.setattr(submit, "ensure_runner", lambda *args, **kwargs: None)
    return home


@pytest.fixture
def inline_runner(monkeypatch):
    """Queued runs are executed at once in this process instead of by a background runner; a
    run whose spec `fail(spec)` picks ends failed instead."""
    chosen = {"fail": lambda spec: False}

    def run_queued(home, workers, idle_exit) -> None:
        store = Store(home)
        for run_id in store.queued(10**6):
            if chosen["fail"](store.run(run_id).spec):
                store.claim(run_id, os.getpid())
                store.finish(run_id, StopReason(StopCode.USER_ERROR, "the test broke it"))
            else:
                execute_run(str(home), run_id)

    submit = importlib.import_module("engine.runs.submit")  # `engine.runs.submit` is a function
    monkeypatch.setattr(submit, "ensure_runner", run_queued)
    return chosen
