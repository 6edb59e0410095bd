"""A small random sample of the bundled Adult data, grouped by sex, for tests that need real
features (one-hot categories and numeric columns) but only seconds of fitting."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.data.adult import load_adult
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.data.prepared import Prepared


def adult_sample(n: int = 1500, seed: int = 0) -> Prepared:
    """`n` rows of Adult drawn without replacement (adult.test's rows stay the test split),
    prepared as the app prepares Adult."""
    dataset = load_adult()
    rows = np.sort(np.random.default_rng(seed).choice(len(dataset.frame), n, replace=False))
    sample = replace(
        dataset,
        frame=dataset.frame.iloc[rows].reset_index(drop=True),
        label=dataset.label[rows],
        fixed_test=dataset.fixed_test[rows],
    )
    return prepare(sample, PrepareOptions(grouping=(GroupingSpec("sex"),)))
