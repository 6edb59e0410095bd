"""A run store in a temporary folder, a small CSV data set, and run specs on it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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
    rng = np.random.default_rng(0)
    n = 800
    group = rng.integers(0, 2, n)
    x1 = rng.normal(size=n) + 0.8 * group
    x2 = rng.normal(size=n)
    y = (x1 + 0.5 * x2 + rng.normal(scale=0.8, size=n) > 0.4).astype(int)
    path = tmp_path / "toy.csv"
    pd.DataFrame({"x1": x1, "x2": x2, "g": np.where(group, "b", "a"), "y": y}).to_csv(
        path, index=False
    )
    return CSVSpec(path=str(path), label="y", protected=("g",))
