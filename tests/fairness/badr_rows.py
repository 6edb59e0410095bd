"""Random scores, group ids and labels or targets for the tests of paper 002's measures."""

import numpy as np


def random_rows(seed, n_groups, task, sizes=None):
    """Groups of different sizes; labels with both values in every group, or real targets with
    ties (a grid of half-units) on even seeds."""
    rng = np.random.default_rng(seed)
    sizes = sizes or [23, 9, 14, 6][:n_groups]
    groups = rng.permutation(np.repeat(np.arange(n_groups), sizes))
    scores = rng.normal(scale=1.5, size=groups.size)
    if task == "classification":
        y = rng.integers(0, 2, size=groups.size)
        for k in range(n_groups):
            rows = np.flatnonzero(groups == k)
            y[rows[:2]] = [0, 1]
    elif seed % 2 == 0:
        y = rng.integers(-4, 5, size=groups.size) / 2.0
    else:
        y = rng.normal(size=groups.size)
    return scores, groups, y
