"""Group rates, DP / EO / EOdds gaps and accuracy against plain loops over the samples."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness import (
    accuracy,
    demographic_parity_gap,
    demographic_parity_pairs,
    equal_opportunity_gap,
    equal_opportunity_pairs,
    equalized_odds_gap,
    equalized_odds_pairs,
    false_positive_rates,
    positive_rates,
    true_positive_rates,
)

SEEDS = range(30)
THRESHOLDS = [0.0, -0.5, 0.25, 10.0]


def share_above(values, threshold):
    return sum(1 for v in values if v > threshold) / len(values)


def loop_rates(c, threshold, label=None):
    out = []
    for k in range(c.n_groups):
        keep = [
            s
            for s, g, yy in zip(c.scores, c.groups, c.y, strict=True)
            if g == k and (label is None or yy == label)
        ]
        out.append(share_above(keep, threshold))
    return np.array(out)


def loop_pairs(per_group):
    n = len(per_group)
    out = np.zeros((n, n))
    for k, k2 in itertools.product(range(n), repeat=2):
        out[k, k2] = abs(per_group[k] - per_group[k2])
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_rates_and_gaps(make_case, seed, threshold):
    c = make_case(seed, labelled=True)
    pr, tpr, fpr = (loop_rates(c, threshold, label) for label in (None, 1, 0))
    np.testing.assert_allclose(positive_rates(c.scores, c.groups, threshold), pr)
    np.testing.assert_allclose(true_positive_rates(c.scores, c.groups, c.y, threshold), tpr)
    np.testing.assert_allclose(false_positive_rates(c.scores, c.groups, c.y, threshold), fpr)
    np.testing.assert_allclose(
        demographic_parity_pairs(c.scores, c.groups, threshold), loop_pairs(pr)
    )
    np.testing.assert_allclose(
        equal_opportunity_pairs(c.scores, c.groups, c.y, threshold), loop_pairs(tpr)
    )
    eodds = np.maximum(loop_pairs(tpr), loop_pairs(fpr))
    np.testing.assert_allclose(equalized_odds_pairs(c.scores, c.groups, c.y, threshold), eodds)
    assert demographic_parity_gap(c.scores, c.groups, threshold) == pytest.approx(np.ptp(pr))
    assert equal_opportunity_gap(c.scores, c.groups, c.y, threshold) == pytest.approx(np.ptp(tpr))
    assert equalized_odds_gap(c.scores, c.groups, c.y, threshold) == pytest.approx(eodds.max())


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_accuracy(make_case, seed, threshold):
    c = make_case(seed, labelled=True)
    right = sum(1 for s, yy in zip(c.scores, c.y, strict=True) if (s > threshold) == (yy == 1))
    assert accuracy(c.scores, c.y, threshold) == pytest.approx(right / len(c.y))


@pytest.mark.parametrize("seed", SEEDS)
def test_invariances(make_case, seed):
    c = make_case(seed, labelled=True)
    rng = np.random.default_rng(seed)
    base = equalized_odds_pairs(c.scores, c.groups, c.y, 0.0)
    relabel = rng.permutation(c.n_groups)
    got = equalized_odds_pairs(c.scores, relabel[c.groups], c.y, 0.0)
    np.testing.assert_allclose(got[np.ix_(relabel, relabel)], base)
    perm = rng.permutation(c.y.size)
    np.testing.assert_allclose(
        equalized_odds_pairs(c.scores[perm], c.groups[perm], c.y[perm], 0.0), base
    )
    np.testing.assert_allclose(equalized_odds_pairs(c.scores**3 + 2.0, c.groups, c.y, 2.0), base)


def test_strict_threshold():
    assert positive_rates([0.0, 0.0, 1.0], [0, 0, 0], 0.0).tolist() == [1 / 3]


def test_group_without_positives_is_a_user_error():
    with pytest.raises(UserError, match=r"group\(s\) \[1\]"):
        equal_opportunity_gap([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], [1, 0, 0, 0])
    # positives are not needed for the false-positive rate
    assert false_positive_rates([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], [1, 0, 0, 0]).tolist() == [
        1.0,
        1.0,
    ]
