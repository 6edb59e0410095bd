"""App tests run against a private run store; its background runner is stopped afterwards."""

from __future__ import annotations

import os
import signal
import time

import pytest

from engine.runs.runner import runner_pid


@pytest.fixture(autouse=True)
def app_home(tmp_path, monkeypatch):
    home = tmp_path / "runs"
    monkeypatch.setenv("FAIRFRONT_HOME", str(home))
    yield home
    pid = runner_pid(home) if home.exists() else None
    if pid is not None:
        os.killpg(pid, signal.SIGKILL)
        time.sleep(0.2)
