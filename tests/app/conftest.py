"""App tests run against a private run store; its background runner is stopped afterwards."""

from __future__ import annotations

import pytest

from engine.runs.runner import WORKERS_CAP, stop_runners


@pytest.fixture(autouse=True)
def app_home(tmp_path, monkeypatch):
    """The store, and a runner of one worker for it: each worker process imports torch and
    warms the solvers up, seconds of processor time, and a test's few short runs need no second
    one (the runner's two workers are tested in tests/runs)."""
    home = tmp_path / "runs"
    monkeypatch.setenv("FAIRFRONT_HOME", str(home))
    monkeypatch.setenv(WORKERS_CAP, "1")
    yield home
    stop_runners(home)
