"""Small random samples of real data sets, for tests that need real features (one-hot
categories and numeric columns) but only seconds of fitting: the bundled Adult data grouped by
sex, and the classic data sets of ../shared/data."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.data.adult import load_adult
from engine.data.classic import CLASSIC, load_classic
from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.data.prepared import Prepared


def sample_of(dataset: Dataset, grouping: GroupingSpec, n: int, seed: int = 0) -> Prepared:
    """`n` rows of `dataset` drawn without replacement (all of them when it has fewer; a fixed
    test split's rows stay in it), prepared as the app prepares it."""
    size = len(dataset.frame)
    rows = np.sort(np.random.default_rng(seed).choice(size, min(n, size), replace=False))
    fixed = {} if dataset.fixed_test is None else {"fixed_test": dataset.fixed_test[rows]}
    sample = replace(
        dataset,
        frame=dataset.frame.iloc[rows].reset_index(drop=True),
        label=dataset.label[rows],
        **fixed,
    )
    return prepare(sample, PrepareOptions(grouping=(grouping,)))


def adult_sample(n: int = 1500, seed: int = 0) -> Prepared:
    """`n` rows of Adult grouped by sex (adult.test's rows stay the test split)."""
    return sample_of(load_adult(), GroupingSpec("sex"), n, seed)


def classic_sample(kind: str, mode: str, n: int, seed: int = 0) -> Prepared:
    """`n` rows of a classic data set of ../shared/data grouped by its first protected
    attribute in grouping `mode`."""
    return sample_of(load_classic(kind), GroupingSpec(CLASSIC[kind].protected[0], mode), n, seed)
