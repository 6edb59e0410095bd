"""$FAIRFRONT_WORKERS caps the worker processes of the runners started from its environment: a
machine shared with other work keeps them smaller than the app or a command asks."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from engine.errors import UserError
from engine.runs import runner


def test_the_cap_lowers_the_workers_asked_for_and_never_raises_them(monkeypatch):
    monkeypatch.delenv(runner.WORKERS_CAP, raising=False)
    assert runner.capped_workers(2) == 2
    monkeypatch.setenv(runner.WORKERS_CAP, "1")
    assert runner.capped_workers(2) == 1
    monkeypatch.setenv(runner.WORKERS_CAP, " 4 ")
    assert runner.capped_workers(2) == 2
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv(runner.WORKERS_CAP, bad)
        with pytest.raises(UserError, match="FAIRFRONT_WORKERS must be a whole number ≥ 1"):
            runner.capped_workers(2)


def test_a_runner_started_under_the_cap_gets_the_capped_count(monkeypatch, tmp_path):
    started = []

    def popen(command, **_kwargs):
        started.append(command)
        return SimpleNamespace(pid=4321)

    monkeypatch.setattr(runner.subprocess, "Popen", popen)
    monkeypatch.setenv(runner.WORKERS_CAP, "1")
    runner.ensure_runner(tmp_path, workers=2)
    (command,) = started
    assert command[command.index("--workers") + 1] == "1"
    assert (tmp_path / runner.SPAWNED_NAME).read_text() == "4321\n"
