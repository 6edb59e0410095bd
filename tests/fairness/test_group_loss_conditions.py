"""Paper 000, Table 1's group-loss gaps (accuracy equality, equal opportunity, equalised odds)
against their definitions computed by brute force, and their closed-form batch rows."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec, GroupLossGap, bind
from engine.fairness.constraints.batch_rows import AutogradRows

DELTA = 0.01
rng = np.random.default_rng(11)
N = 90
GROUPS = rng.choice(["a", "b", "c"], N)
Y = rng.integers(0, 2, N)
SCORES = rng.normal(size=N)


def mean_loss(mask: np.ndarray) -> float:
    """Mean BCE-with-logits over the samples in `mask` (paper 000, eq. 12), by a loop."""
    return float(
        np.mean([np.log1p(np.exp(-(2 * Y[i] - 1) * SCORES[i])) for i in np.flatnonzero(mask)])
    )


def brute_gap(condition: str, pairs: str) -> float:
    names = sorted(set(GROUPS))
    labels = {"none": [None], "positive": [1], "odds": [1, 0]}[condition]

    def loss(group: str | None, label: int | None) -> float:
        mask = np.ones(N, dtype=bool) if group is None else group == GROUPS
        return mean_loss(mask & (label == Y)) if label is not None else mean_loss(mask)

    if pairs == "all":
        return max(
            sum(abs(loss(a, v) - loss(b, v)) for v in labels)
            for a, b in itertools.combinations(names, 2)
        )
    means = {v: np.mean([loss(g, v) for g in names]) for v in labels}
    return max(sum(abs(loss(g, v) - means[v]) for v in labels) for g in names)


@pytest.mark.parametrize("condition", ["none", "positive", "odds"])
@pytest.mark.parametrize("pairs", ["all", "vs_mean"])
def test_the_exact_gap_and_the_rows_are_table_1s_definition(condition, pairs):
    spec = ConstraintSpec("group_loss_gap", DELTA, pairs=pairs, options={"condition": condition})
    bound = bind(spec, groups=GROUPS, y=Y)
    expected = brute_gap(condition, pairs)
    assert bound.exact(SCORES) == pytest.approx(expected, rel=1e-12)
    rows = bound.surrogate(torch.from_numpy(SCORES)).numpy()
    assert rows.max() + DELTA == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(bound.exact_rows(SCORES), rows, atol=1e-12)
    assert len(bound.rows) == len(set(bound.rows)) == len(rows)
    parts = bound.dc
    plus, minus = parts.plus(torch.from_numpy(SCORES)), parts.minus(torch.from_numpy(SCORES))
    np.testing.assert_allclose((plus - minus).numpy(), rows, atol=1e-12)
    assert bound.label_cells == (condition != "none")


@pytest.mark.parametrize("condition", ["none", "positive", "odds"])
def test_the_closed_form_batch_rows_equal_autograd(condition):
    spec = ConstraintSpec("group_loss_gap", DELTA, options={"condition": condition})
    ids = np.searchsorted(["a", "b", "c"], GROUPS)
    bound = GroupLossGap.bind_ids(spec, ids=ids, names=("a", "b", "c"), y=Y)
    batch = np.arange(40)
    closed = bound.batch_rows(ids[batch], Y[batch])
    generic = AutogradRows(bound.with_ids(ids[batch], Y[batch]))
    h = SCORES[batch]
    v = rng.normal(size=bound.m)
    (c1, pull1), (c2, pull2) = closed.linearise(h, {}), generic.linearise(h, {})
    np.testing.assert_allclose(c1, c2, atol=1e-12)
    np.testing.assert_allclose(pull1(v)[0], pull2(v)[0], atol=1e-12)


def test_a_group_without_positives_is_refused_in_words():
    spec = ConstraintSpec("group_loss_gap", DELTA, options={"condition": "positive"})
    y = np.where(GROUPS == "b", 0, Y)
    with pytest.raises(UserError, match="group 'b' has no positives"):
        bind(spec, groups=GROUPS, y=y)
    with pytest.raises(UserError, match="condition must be one of"):
        bind(
            ConstraintSpec("group_loss_gap", DELTA, options={"condition": "odd"}),
            groups=GROUPS,
            y=Y,
        )
