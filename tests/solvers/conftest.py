"""Fixtures for solver tests (the data sets themselves are in solver_data.py)."""

from __future__ import annotations

import pytest
from solver_data import toy_prepared, two_groups
from wall_clock import WallClock

from engine.data.prepared import Prepared
from engine.solvers import run_clock


@pytest.fixture
def toy() -> Prepared:
    return toy_prepared()


@pytest.fixture(scope="module")
def data() -> Prepared:
    return two_groups()


@pytest.fixture
def wall(monkeypatch) -> WallClock:
    clock = WallClock()
    monkeypatch.setattr(run_clock, "now", clock)
    return clock
