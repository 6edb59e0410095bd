"""A small data set with two numeric share columns, cut into overlapping subgroups (paper 001
§5.3's construction, on a toy scale)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.data.prepared import Prepared
from engine.data.subgroups import SubgroupSpec

SHARES = ("share_a", "share_b")


def subgroup_frame(n: int = 600, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Two shares in [0, 1] (the label depends on them, so subgroups differ in loss), a feature
    and a binary attribute g."""
    rng = np.random.default_rng(seed)
    a, b = rng.beta(1.0, 4.0, n), rng.beta(1.0, 2.0, n)
    x = rng.normal(size=n)
    y = (x + 2.0 * a - b + rng.normal(scale=0.7, size=n) > 0).astype(np.int8)
    frame = pd.DataFrame(
        {"x": x, "share_a": a, "share_b": b, "g": np.where(a > np.median(a), "high", "low")}
    )
    return frame, y


def subgroup_prepared(thresholds: int = 4, min_share: float = 0.05, seed: int = 0) -> Prepared:
    frame, y = subgroup_frame(seed=seed)
    dataset = Dataset(
        name="shares",
        frame=frame,
        label=y,
        numeric=("x", *SHARES),
        categorical=(),
        protected=("g", *SHARES),
        label_name="y",
    )
    options = PrepareOptions(
        grouping=(GroupingSpec("g"),),
        min_group_size=10,
        subgroups=SubgroupSpec(SHARES, thresholds, min_share),
    )
    return prepare(dataset, options)
