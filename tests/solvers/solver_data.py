"""Small two-group data sets for solver tests: a shift between groups makes them unfair."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.data.prepared import Prepared


def toy_prepared(n: int = 600, seed: int = 0, groups: int = 2) -> Prepared:
    rng = np.random.default_rng(seed)
    group = rng.integers(0, groups, n)
    x1 = rng.normal(size=n) + 0.8 * group
    x2 = rng.normal(size=n)
    label = (x1 + 0.5 * x2 + rng.normal(scale=0.8, size=n) > 0.4).astype(np.int8)
    frame = pd.DataFrame({"x1": x1, "x2": x2, "g": np.array(["a", "b", "c", "d"])[group]})
    dataset = Dataset(
        name="toy",
        frame=frame,
        label=label,
        numeric=("x1", "x2"),
        categorical=(),
        protected=("g",),
        label_name="y",
    )
    return prepare(dataset, PrepareOptions(grouping=(GroupingSpec("g"),), seed=seed))


def two_groups_frame(
    n: int = 600, seed: int = 0, slopes: tuple[float, float] = (1.0, 1.0)
) -> pd.DataFrame:
    """Two groups whose scores differ a lot when unconstrained (group shift in x and in y);
    `slopes` (group M, group F) sets how well y can be predicted in each. Columns x0..x3, sex
    and the label y."""
    rng = np.random.default_rng(seed)
    member = rng.random(n) < 0.45
    X = rng.normal(size=(n, 4)) + 0.8 * member[:, None]
    slope = np.where(member, slopes[1], slopes[0])
    logit = slope * (X @ np.array([1.0, -0.5, 0.8, 0.3])) + member - 0.8
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int8)
    return pd.DataFrame(
        {f"x{i}": X[:, i] for i in range(4)} | {"sex": np.where(member, "F", "M"), "y": y}
    )


def two_groups_flags(table) -> list[str]:
    """The command line's data flags for a `two_groups_frame` written to the CSV file `table`."""
    return [
        "--source",
        "csv",
        "--csv",
        str(table),
        "--label",
        "y",
        "--attribute",
        "sex",
        "--min-group-size",
        "10",
    ]


def two_groups(n: int = 600, seed: int = 0, slopes: tuple[float, float] = (1.0, 1.0)) -> Prepared:
    """`two_groups_frame`, prepared with sex as the protected attribute."""
    frame = two_groups_frame(n, seed, slopes)
    dataset = Dataset(
        name="toy",
        frame=frame.drop(columns="y"),
        label=frame["y"].to_numpy(),
        numeric=tuple(f"x{i}" for i in range(4)),
        categorical=("sex",),
        protected=("sex",),
        label_name="y",
    )
    return prepare(dataset, PrepareOptions(grouping=(GroupingSpec("sex"),), min_group_size=10))
