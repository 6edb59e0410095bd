"""App tests run against a private run store; its background runner is stopped afterwards."""

from __future__ import annotations

import pytest

from engine.runs.runner import stop_runners


@pytest.fixture(autouse=True)
def app_home(tmp_path, monkeypatch):
    home = tmp_path / "runs"
    monkeypatch.setenv("FAIRFRONT_HOME", str(home))
    yield home
    stop_runners(home)
