"""ROC-AUC and paper 004's AUC fairness gaps against loops over all pairs (ties count 1/2)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness import (
    group_auc_gap,
    group_auc_pairs,
    group_roc_aucs,
    inter_group_auc_gap,
    inter_group_auc_pairs,
    intra_group_auc_gap,
    intra_group_auc_pairs,
    roc_auc,
)

SEEDS = range(30)


def pair_auc(a, b) -> float:
    wins = sum(1.0 if x > z else 0.5 if x == z else 0.0 for x in a for z in b)
    return wins / (len(a) * len(b))


def cell(c, group, label=None):
    keep = (c.groups == group) & ((c.y == label) if label is not None else True)
    return c.scores[keep]


@pytest.mark.parametrize("seed", SEEDS)
def test_roc_auc(make_case, seed):
    c = make_case(seed, labelled=True)
    expected = pair_auc(c.scores[c.y == 1], c.scores[c.y == 0])
    assert roc_auc(c.scores, c.y) == pytest.approx(expected, abs=1e-12)
    within = [pair_auc(cell(c, k, 1), cell(c, k, 0)) for k in range(c.n_groups)]
    np.testing.assert_allclose(group_roc_aucs(c.scores, c.groups, c.y), within, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_fairness_gaps(make_case, seed):
    c = make_case(seed, labelled=True)
    n = c.n_groups
    group, inter, intra = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    for k, k2 in itertools.product(range(n), repeat=2):
        group[k, k2] = abs(pair_auc(cell(c, k), cell(c, k2)) - 0.5)
        inter[k, k2] = abs(
            pair_auc(cell(c, k, 1), cell(c, k2, 0)) - pair_auc(cell(c, k2, 1), cell(c, k, 0))
        )
        intra[k, k2] = abs(
            pair_auc(cell(c, k, 1), cell(c, k, 0)) - pair_auc(cell(c, k2, 1), cell(c, k2, 0))
        )
    np.testing.assert_allclose(group_auc_pairs(c.scores, c.groups), group, atol=1e-12)
    np.testing.assert_allclose(inter_group_auc_pairs(c.scores, c.groups, c.y), inter, atol=1e-12)
    np.testing.assert_allclose(intra_group_auc_pairs(c.scores, c.groups, c.y), intra, atol=1e-12)
    assert group_auc_gap(c.scores, c.groups) == pytest.approx(group.max(), abs=1e-12)
    assert inter_group_auc_gap(c.scores, c.groups, c.y) == pytest.approx(inter.max(), abs=1e-12)
    assert intra_group_auc_gap(c.scores, c.groups, c.y) == pytest.approx(intra.max(), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_rank_invariances(make_case, seed):
    c = make_case(seed, labelled=True)
    rng = np.random.default_rng(seed)
    fns = [
        lambda s, g, y: group_auc_pairs(s, g),
        inter_group_auc_pairs,
        intra_group_auc_pairs,
    ]
    monotone = np.arctan(c.scores * 5.0) + 1e3
    perm = rng.permutation(c.y.size)
    relabel = rng.permutation(c.n_groups)
    for fn in fns:
        base = fn(c.scores, c.groups, c.y)
        np.testing.assert_allclose(fn(monotone, c.groups, c.y), base, atol=1e-12)
        np.testing.assert_allclose(fn(c.scores[perm], c.groups[perm], c.y[perm]), base)
        got = fn(c.scores, relabel[c.groups], c.y)
        np.testing.assert_allclose(got[np.ix_(relabel, relabel)], base, atol=1e-12)
    assert roc_auc(monotone, c.y) == pytest.approx(roc_auc(c.scores, c.y))


def test_all_ties_give_one_half():
    assert roc_auc([1.0, 1.0, 1.0, 1.0], [0, 1, 0, 1]) == 0.5


def test_missing_label_cell_is_a_user_error():
    with pytest.raises(UserError, match=r"group\(s\) \[1\]"):
        inter_group_auc_gap([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], [0, 1, 1, 1])
    with pytest.raises(UserError):
        roc_auc([0.1, 0.2], [1, 1])
