"""Paper 000: Table 2 criteria in both normalisations, Table 1 group-loss gaps, by plain loops."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness import (
    group_losses,
    group_rates,
    inaccuracy,
    independence,
    loss_accuracy_equality_gap,
    loss_accuracy_equality_pairs,
    loss_equal_opportunity_gap,
    loss_equal_opportunity_pairs,
    loss_equalized_odds_gap,
    loss_equalized_odds_pairs,
    separation,
    sufficiency,
    table2_criterion,
)

SEEDS = range(30)


def prob(event, given):
    """P(event | given) over the samples, from boolean lists."""
    chosen = [e for e, g in zip(event, given, strict=True) if g]
    return sum(chosen) / len(chosen)


def table2(per_group):
    """paper 000, Table 2: 1/m sum_i |P_i - 1/m sum_j P_j|."""
    m = len(per_group)
    mean = sum(per_group) / m
    return sum(abs(p - mean) for p in per_group) / m


def stats(c, threshold):
    yhat = [s > threshold for s in c.scores]
    pos = [yy == 1 for yy in c.y]
    in_group = [[g == k for g in c.groups] for k in range(c.n_groups)]
    ind = [prob(yhat, gk) for gk in in_group]
    tpr = [prob(yhat, [a and b for a, b in zip(gk, pos, strict=True)]) for gk in in_group]
    fpr = [prob(yhat, [a and not b for a, b in zip(gk, pos, strict=True)]) for gk in in_group]
    ppv = [prob(pos, [a and b for a, b in zip(gk, yhat, strict=True)]) for gk in in_group]
    fomr = [prob(pos, [a and not b for a, b in zip(gk, yhat, strict=True)]) for gk in in_group]
    return ind, tpr, fpr, ppv, fomr


def defined_case(make_case, seed, threshold):
    """A labelled case where every group has predicted positives and negatives (for Sf)."""
    for attempt in range(200):
        c = make_case(1000 * seed + attempt, labelled=True)
        ok = all(
            0 < np.sum(c.scores[c.groups == k] > threshold) < np.sum(c.groups == k)
            for k in range(c.n_groups)
        )
        if ok:
            return c
    raise AssertionError("no suitable random case")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("threshold", [0.0, -0.25])
def test_paper_convention(make_case, seed, threshold):
    c = defined_case(make_case, seed, threshold)
    ind, tpr, fpr, ppv, fomr = stats(c, threshold)
    kw = {"threshold": threshold, "convention": "paper"}
    assert independence(c.scores, c.groups, **kw) == pytest.approx(table2(ind))
    assert separation(c.scores, c.groups, c.y, **kw) == pytest.approx(
        0.5 * (table2(tpr) + table2(fpr))
    )
    assert sufficiency(c.scores, c.groups, c.y, **kw) == pytest.approx(
        0.5 * (table2(ppv) + table2(fomr))
    )
    wrong = sum((s > threshold) != (yy == 1) for s, yy in zip(c.scores, c.y, strict=True))
    assert inaccuracy(c.scores, c.y, threshold) == pytest.approx(wrong / len(c.y))


@pytest.mark.parametrize("seed", SEEDS)
def test_code_convention_two_groups(make_case, seed):
    c = defined_case(make_case, seed, 0.0)
    keep = c.groups < 2  # the released code's statistics compare exactly two groups
    scores, groups, y = c.scores[keep], c.groups[keep], c.y[keep]
    sub = type(c)(scores, groups, y, 2)
    ind, tpr, fpr, ppv, fomr = stats(sub, 0.0)
    npv = [1 - v for v in fomr]
    assert independence(scores, groups, convention="code") == pytest.approx(abs(ind[0] - ind[1]))
    assert separation(scores, groups, y, convention="code") == pytest.approx(
        abs(tpr[0] - tpr[1]) + abs(fpr[0] - fpr[1])
    )
    assert sufficiency(scores, groups, y, convention="code") == pytest.approx(
        abs(ppv[0] - ppv[1]) + abs(npv[0] - npv[1])
    )
    # the factor 2 / 4 between the released code and the paper's Table 2 (m = 2)
    for fn, factor in ((separation, 4), (sufficiency, 4)):
        assert fn(scores, groups, y, convention="code") == pytest.approx(
            factor * fn(scores, groups, y, convention="paper")
        )
    assert independence(scores, groups, convention="code") == pytest.approx(
        2 * independence(scores, groups, convention="paper")
    )


def test_code_convention_refuses_more_than_two_groups():
    with pytest.raises(UserError, match="two"):
        independence([0.1, 0.2, 0.3], [0, 1, 2], convention="code")
    with pytest.raises(UserError, match="convention"):
        independence([0.1, 0.2], [0, 1], convention="other")


def test_sufficiency_is_nan_when_a_group_has_no_predicted_positive():
    assert math.isnan(sufficiency([-1.0, 1.0, -1.0, -2.0], [0, 0, 1, 1], [0, 1, 1, 0]))
    rates = group_rates([-1.0, 1.0, -1.0, -2.0], [0, 0, 1, 1], [0, 1, 1, 0])
    assert math.isnan(rates.sufficiency[1, 0]) and not np.isnan(rates.sufficiency[0]).any()


def test_separation_refuses_a_group_without_positive_labels():
    scores, groups, y = [1.0, -1.0, 1.0, -1.0], [0, 0, 1, 1], [1, 0, 0, 0]
    with pytest.raises(UserError, match=r"group\(s\) \[1\]"):
        separation(scores, groups, y)
    rates = group_rates(scores, groups, y)  # the rates themselves mark the empty cell as NaN
    assert math.isnan(rates.separation[1, 0]) and rates.separation[1, 1] == 0.5


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("convention", ["paper", "code"])
def test_criteria_are_table2_criterion_of_the_group_rates(make_case, seed, convention):
    c = defined_case(make_case, seed, 0.0)
    keep = c.groups < 2 if convention == "code" else np.ones(c.y.size, dtype=bool)
    scores, groups, y = c.scores[keep], c.groups[keep], c.y[keep]
    rates = group_rates(scores, groups, y, threshold=0.0)
    kw = {"convention": convention}
    assert independence(scores, groups, **kw) == table2_criterion(rates.independence, **kw)
    assert separation(scores, groups, y, **kw) == table2_criterion(rates.separation, **kw)
    assert sufficiency(scores, groups, y, **kw) == table2_criterion(rates.sufficiency, **kw)


def bce(s, yy):
    p = 1 / (1 + math.exp(-s))
    return -(yy * math.log(p) + (1 - yy) * math.log(1 - p))


@pytest.mark.parametrize("seed", SEEDS)
def test_group_loss_gaps(make_case, seed):
    c = make_case(seed, labelled=True)
    n = c.n_groups

    def mean_loss(k, label=None):
        values = [
            bce(s, yy)
            for s, g, yy in zip(c.scores, c.groups, c.y, strict=True)
            if g == k and (label is None or yy == label)
        ]
        return sum(values) / len(values)

    acc, eop, eod = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    for a, b in itertools.product(range(n), repeat=2):
        acc[a, b] = abs(mean_loss(a) - mean_loss(b))
        eop[a, b] = abs(mean_loss(a, 1) - mean_loss(b, 1))
        eod[a, b] = sum(abs(mean_loss(a, v) - mean_loss(b, v)) for v in (0, 1))
    np.testing.assert_allclose(
        group_losses(c.scores, c.groups, c.y), [mean_loss(k) for k in range(n)], atol=1e-12
    )
    np.testing.assert_allclose(
        loss_accuracy_equality_pairs(c.scores, c.groups, c.y), acc, atol=1e-12
    )
    np.testing.assert_allclose(
        loss_equal_opportunity_pairs(c.scores, c.groups, c.y), eop, atol=1e-12
    )
    np.testing.assert_allclose(loss_equalized_odds_pairs(c.scores, c.groups, c.y), eod, atol=1e-12)
    assert loss_accuracy_equality_gap(c.scores, c.groups, c.y) == pytest.approx(acc.max())
    assert loss_equal_opportunity_gap(c.scores, c.groups, c.y) == pytest.approx(eop.max())
    assert loss_equalized_odds_gap(c.scores, c.groups, c.y) == pytest.approx(eod.max())


@pytest.mark.parametrize("seed", range(10))
def test_criteria_invariant_to_relabelling_and_permutation(make_case, seed):
    c = defined_case(make_case, seed, 0.0)
    rng = np.random.default_rng(seed)
    relabel = rng.permutation(c.n_groups)
    perm = rng.permutation(c.y.size)
    for fn in (separation, sufficiency, loss_equalized_odds_gap):
        base = fn(c.scores, c.groups, c.y)
        assert fn(c.scores, relabel[c.groups], c.y) == pytest.approx(base)
        assert fn(c.scores[perm], c.groups[perm], c.y[perm]) == pytest.approx(base)


def test_extreme_logits_do_not_overflow():
    losses = group_losses([800.0, -800.0], [0, 1], [0, 1])
    np.testing.assert_allclose(losses, [800.0, 800.0])
