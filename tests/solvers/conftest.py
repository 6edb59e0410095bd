"""Fixtures for solver tests (the data sets themselves are in solver_data.py)."""

from __future__ import annotations

import pytest
from solver_data import toy_prepared, two_groups

from engine.data.prepared import Prepared
from engine.solvers import run_clock


@pytest.fixture
def toy() -> Prepared:
    return toy_prepared()


@pytest.fixture(scope="module")
def data() -> Prepared:
    return two_groups()


class WallClock:
    """Wall time that moves only when a test charges it: a test of what the driver does with
    the time, not of how fast this machine is."""

    def __init__(self) -> None:
        self.time = 1000.0  # any start: the driver reads differences

    def __call__(self) -> float:
        return self.time

    def spend(self, seconds: float) -> None:
        self.time += seconds


@pytest.fixture
def wall(monkeypatch) -> WallClock:
    clock = WallClock()
    monkeypatch.setattr(run_clock, "now", clock)
    return clock
