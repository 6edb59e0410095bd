"""Bad user input fails with a UserError that names the problem."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness import GroupTable, demographic_parity_gap, psp, roc_auc, wasserstein_gap


@pytest.mark.parametrize(
    ("scores", "groups", "match"),
    [
        ([0.1, 0.2, 0.3], [0, 1], "must match"),
        ([0.1, 0.2, 0.3], [0, 2, 2], r"\[1\] have no samples"),
        ([0.1, 0.2, 0.3], [0, -1, 1], "negative"),
        ([0.1, 0.2, 0.3], [0.0, 1.5, 1.0], "integer"),
        ([0.1, float("nan"), 0.3], [0, 1, 1], "NaN"),
        ([0.1, np.inf, 0.3], [0, 1, 1], "infinite"),
        ([], [], "empty"),
        ([[0.1, 0.2]], [[0, 1]], "1-D"),
        ([0.1, 0.2, 0.3], [0, 0, 0], "at least 2"),
        (["a", "b"], [0, 1], "numbers"),
    ],
)
def test_bad_scores_or_groups(scores, groups, match):
    with pytest.raises(UserError, match=match):
        demographic_parity_gap(scores, groups)
    with pytest.raises(UserError):
        psp(scores, groups, 0.0, 0.5)
    with pytest.raises(UserError):
        wasserstein_gap(scores, groups)


@pytest.mark.parametrize(("y", "match"), [([0, 1], "must match"), ([0, 2, 1], r"0/1")])
def test_bad_labels(y, match):
    with pytest.raises(UserError, match=match):
        roc_auc([0.1, 0.2, 0.3], y)


def test_labels_accept_bool_and_groups_accept_whole_floats():
    assert roc_auc([0.1, 0.2, 0.3], [False, True, True]) == 1.0
    assert demographic_parity_gap([0.1, 0.2], np.array([0.0, 1.0])) == 0.0


def test_table_counts_every_sample_once():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 5, size=50).astype(float)
    groups = rng.integers(0, 3, size=50)
    y = rng.integers(0, 2, size=50)
    groups[:3] = [0, 1, 2]
    table = GroupTable.build(scores, groups, y)
    assert table.counts.sum() == 50
    np.testing.assert_array_equal(table.values, np.unique(scores))
    np.testing.assert_array_equal(table.group_sizes, np.bincount(groups))
    for j, v in enumerate(table.values):
        for k in range(3):
            for label in (0, 1):
                expected = np.sum((scores == v) & (groups == k) & (y == label))
                assert table.counts[k, label, j] == expected
