"""Small random data sets with ties, tiny groups and 2..5 groups, for the brute-force checks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest


@dataclass(frozen=True)
class Case:
    scores: np.ndarray
    groups: np.ndarray
    y: np.ndarray
    n_groups: int


def random_case(seed: int, labelled: bool = False) -> Case:
    """2..5 groups of 1..12 members (2..12 when labelled), scores on a coarse grid so ties are common.

    With `labelled`, every group holds at least one positive and one negative label.
    """
    rng = np.random.default_rng(seed)
    n_groups = int(rng.integers(2, 6))
    low = 2 if labelled else 1
    sizes = rng.choice([low, low + 1, 3, 5, 12], size=n_groups)
    groups = np.repeat(np.arange(n_groups), sizes)
    if seed % 3 == 0:
        scores = rng.normal(size=groups.size)  # almost surely no ties
    else:
        scores = rng.integers(-3, 4, size=groups.size) / 2.0  # ties, including at 0
    y = rng.integers(0, 2, size=groups.size)
    if labelled:
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        y[starts] = 1
        y[starts + 1] = 0
    perm = rng.permutation(groups.size)
    return Case(scores[perm], groups[perm], y[perm], n_groups)


@pytest.fixture
def make_case():
    return random_case
