"""A small CSV data set with two groups, a and b (as tests/runs/conftest.py's `csv_spec`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.data.csv_source import CSVSpec


def write_toy_csv(folder: Path) -> CSVSpec:
    """800 rows: two numeric features, the protected column g (a or b) and the label y."""
    rng = np.random.default_rng(0)
    n = 800
    group = rng.integers(0, 2, n)
    x1 = rng.normal(size=n) + 0.8 * group
    x2 = rng.normal(size=n)
    y = (x1 + 0.5 * x2 + rng.normal(scale=0.8, size=n) > 0.4).astype(int)
    path = folder / "toy.csv"
    pd.DataFrame({"x1": x1, "x2": x2, "g": np.where(group, "b", "a"), "y": y}).to_csv(
        path, index=False
    )
    return CSVSpec(path=str(path), label="y", protected=("g",))


@pytest.fixture(scope="session")
def toy_csv(tmp_path_factory) -> CSVSpec:
    """The table, once per session (for studies shared by a module's tests)."""
    return write_toy_csv(tmp_path_factory.mktemp("toy"))


@pytest.fixture
def csv_spec(tmp_path) -> CSVSpec:
    return write_toy_csv(tmp_path)
