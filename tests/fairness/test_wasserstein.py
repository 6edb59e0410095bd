"""Exact W1 against the integral of |difference of quantile functions| over p in (0, 1)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from engine.fairness import wasserstein_gap, wasserstein_pairs


def quantile(sorted_values, p: Fraction):
    """Left-continuous empirical quantile: the smallest x with F(x) >= p."""
    n = len(sorted_values)
    index = -(-p.numerator * n // p.denominator)  # ceil(p * n)
    return sorted_values[index - 1]


def brute_w1(a, b) -> float:
    a, b = sorted(a.tolist()), sorted(b.tolist())
    cuts = sorted(
        {Fraction(i, len(a)) for i in range(len(a) + 1)}
        | {Fraction(j, len(b)) for j in range(len(b) + 1)}
    )
    total = 0.0
    for lo, hi in itertools.pairwise(cuts):
        mid = (lo + hi) / 2  # both quantile functions are constant on (lo, hi]
        total += float(hi - lo) * abs(quantile(a, mid) - quantile(b, mid))
    return total


@pytest.mark.parametrize("seed", range(40))
def test_w1_matches_quantile_integral(make_case, seed):
    c = make_case(seed)
    expected = np.zeros((c.n_groups, c.n_groups))
    for k, k2 in itertools.combinations(range(c.n_groups), 2):
        d = brute_w1(c.scores[c.groups == k], c.scores[c.groups == k2])
        expected[k, k2] = expected[k2, k] = d
    np.testing.assert_allclose(wasserstein_pairs(c.scores, c.groups), expected, atol=1e-12)
    assert wasserstein_gap(c.scores, c.groups) == pytest.approx(expected.max(), abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_shift_and_scale(make_case, seed):
    c = make_case(seed)
    base = wasserstein_pairs(c.scores, c.groups)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(c.scores.size)
    np.testing.assert_allclose(wasserstein_pairs(c.scores[perm], c.groups[perm]), base)
    np.testing.assert_allclose(wasserstein_pairs(2.5 * c.scores - 4.0, c.groups), 2.5 * base)
    relabel = rng.permutation(c.n_groups)
    got = wasserstein_pairs(c.scores, relabel[c.groups])
    np.testing.assert_allclose(got[np.ix_(relabel, relabel)], base)


def test_shifting_one_group_moves_w1_by_the_shift():
    rng = np.random.default_rng(3)
    a = rng.normal(size=30)
    scores = np.concatenate([a, a + 0.75])
    groups = np.repeat([0, 1], 30)
    assert wasserstein_gap(scores, groups) == pytest.approx(0.75)
