"""Fixtures for solver tests (the data sets themselves are in solver_data.py)."""

from __future__ import annotations

import pytest
from solver_data import toy_prepared, two_groups

from engine.data.prepared import Prepared


@pytest.fixture
def toy() -> Prepared:
    return toy_prepared()


@pytest.fixture(scope="module")
def data() -> Prepared:
    return two_groups()
