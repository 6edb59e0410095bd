"""A run store in a temporary folder, a small CSV data set, and run specs on it."""

from __future__ import annotations

import pytest
from toy_tables import write_toy_csv

from engine.data.csv_source import CSVSpec
from engine.runs import Store
from engine.runs.runner import stop_runners


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "home")
    yield store
    stop_runners(store.home)  # the detached runner and its workers


@pytest.fixture
def csv_spec(tmp_path) -> CSVSpec:
    return write_toy_csv(tmp_path)
