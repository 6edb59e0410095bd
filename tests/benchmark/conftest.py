"""Fixtures of the benchmark tests: the small CSV data set of tests/toy_tables.py."""

from __future__ import annotations

import pytest
from toy_tables import write_toy_csv

from engine.data.csv_source import CSVSpec


@pytest.fixture(scope="session")
def toy_csv(tmp_path_factory) -> CSVSpec:
    """The table, once per session (for studies shared by a module's tests)."""
    return write_toy_csv(tmp_path_factory.mktemp("toy"))


@pytest.fixture
def csv_spec(tmp_path) -> CSVSpec:
    return write_toy_csv(tmp_path)
