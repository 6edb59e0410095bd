"""Fixtures for command-line tests: a tiny CSV table and a run store that starts no runner."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from cli_table import write_table


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
