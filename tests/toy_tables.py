"""A small CSV data set shared by the tests of runs, studies and saved iterates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from engine.data.csv_source import CSVSpec


def write_toy_csv(folder: Path, n: int = 800) -> CSVSpec:
    """`n` rows: two numeric features, the protected column g (a or b, the groups shifted in x1)
    and the label y, in folder/toy.csv."""
    rng = np.random.default_rng(0)
    group = rng.integers(0, 2, n)
    x1 = rng.normal(size=n) + 0.8 * group
    x2 = rng.normal(size=n)
    y = (x1 + 0.5 * x2 + rng.normal(scale=0.8, size=n) > 0.4).astype(int)
    path = folder / "toy.csv"
    frame = pd.DataFrame({"x1": x1, "x2": x2, "g": np.where(group, "b", "a"), "y": y})
    frame.to_csv(path, index=False)
    return CSVSpec(path=str(path), label="y", protected=("g",))
