"""pSP / pDP (paper 003) against brute force straight from Def. 4.2-4.3 and eq. (62)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness import (
    demographic_parity_gap,
    pdp,
    pdp_pairs,
    psp,
    psp_pairs,
    psp_witness,
)

INTERVALS = [(0.0, 0.1), (0.9, 1.0), (0.0, 1.0), (0.2, 0.4), (0.05, 0.3), (0.7, 1.0)]
SEEDS = range(30)


def conditional_above(group_scores: np.ndarray, theta: float, alpha: float, beta: float) -> float:
    """Eq. (62): Pr(h > theta | group, rank in I), rank = Pr(h > theta | group), strict '>'."""
    rank = np.mean(group_scores > theta)
    return (min(rank, beta) - min(rank, alpha)) / (beta - alpha)


def brute_psp_pairs(scores, groups, n_groups, alpha, beta):
    thetas = [-np.inf, *np.unique(scores)]
    out = np.zeros((n_groups, n_groups))
    for k, k2 in itertools.combinations(range(n_groups), 2):
        a, b = scores[groups == k], scores[groups == k2]
        out[k, k2] = out[k2, k] = max(
            abs(conditional_above(a, t, alpha, beta) - conditional_above(b, t, alpha, beta))
            for t in thetas
        )
    return out


def brute_pdp_pairs(scores, groups, n_groups, alpha, beta, threshold):
    out = np.zeros((n_groups, n_groups))
    for k, k2 in itertools.combinations(range(n_groups), 2):
        a, b = scores[groups == k], scores[groups == k2]
        gap = conditional_above(a, threshold, alpha, beta)
        gap -= conditional_above(b, threshold, alpha, beta)
        out[k, k2] = out[k2, k] = abs(gap)
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("alpha", "beta"), INTERVALS)
def test_psp_matches_brute_force(make_case, seed, alpha, beta):
    c = make_case(seed)
    expected = brute_psp_pairs(c.scores, c.groups, c.n_groups, alpha, beta)
    np.testing.assert_allclose(psp_pairs(c.scores, c.groups, alpha, beta), expected, atol=1e-12)
    assert psp(c.scores, c.groups, alpha, beta) == pytest.approx(expected.max(), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("alpha", "beta"), INTERVALS)
@pytest.mark.parametrize("threshold", [0.0, -0.5, 0.3])
def test_pdp_matches_brute_force(make_case, seed, alpha, beta, threshold):
    c = make_case(seed)
    expected = brute_pdp_pairs(c.scores, c.groups, c.n_groups, alpha, beta, threshold)
    got = pdp_pairs(c.scores, c.groups, alpha, beta, threshold)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert pdp(c.scores, c.groups, alpha, beta, threshold) == pytest.approx(expected.max())


def slice_probability(group_scores: np.ndarray, theta: float, alpha: float, beta: float) -> float:
    """Literal eq. (6): condition on the members whose own-group rank Fbar_k(h_i) lies in I."""
    ranks = np.array([np.mean(group_scores > h) for h in group_scores])
    inside = group_scores[(ranks >= alpha) & (ranks < beta)]
    return float(np.mean(inside > theta))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize(("alpha", "beta"), [(0.0, 0.5), (0.25, 0.75), (0.5, 1.0), (0.0, 1.0)])
def test_psp_is_ks_between_rank_slices_when_slices_are_exact(seed, alpha, beta):
    """Without ties and with alpha*n_k, beta*n_k whole, eq. (62) equals the literal Def. 4.2."""
    rng = np.random.default_rng(seed)
    n_groups = int(rng.integers(2, 5))
    groups = np.repeat(np.arange(n_groups), 4 * rng.integers(1, 4, size=n_groups))
    scores = rng.normal(size=groups.size)
    thetas = [-np.inf, *np.unique(scores)]
    expected = 0.0
    for k, k2 in itertools.combinations(range(n_groups), 2):
        a, b = scores[groups == k], scores[groups == k2]
        for t in thetas:
            gap = abs(slice_probability(a, t, alpha, beta) - slice_probability(b, t, alpha, beta))
            expected = max(expected, gap)
    assert psp(scores, groups, alpha, beta) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_full_interval_gives_ks_distance_and_dp(make_case, seed):
    c = make_case(seed)
    ks = 0.0
    for k, k2 in itertools.combinations(range(c.n_groups), 2):
        a, b = c.scores[c.groups == k], c.scores[c.groups == k2]
        for t in np.unique(c.scores):
            ks = max(ks, abs(np.mean(a <= t) - np.mean(b <= t)))
    assert psp(c.scores, c.groups, 0.0, 1.0) == pytest.approx(ks, abs=1e-12)
    assert pdp(c.scores, c.groups, 0.0, 1.0, 0.25) == pytest.approx(
        demographic_parity_gap(c.scores, c.groups, 0.25), abs=1e-12
    )


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("alpha", "beta"), INTERVALS)
def test_witness_attains_the_maximum(make_case, seed, alpha, beta):
    c = make_case(seed)
    w = psp_witness(c.scores, c.groups, alpha, beta)
    assert w.value == pytest.approx(psp(c.scores, c.groups, alpha, beta))
    k, k2 = w.pair
    assert 0 <= k < k2 < c.n_groups
    assert w.theta in set(c.scores.tolist())
    a, b = c.scores[c.groups == k], c.scores[c.groups == k2]
    gap = abs(
        conditional_above(a, w.theta, alpha, beta) - conditional_above(b, w.theta, alpha, beta)
    )
    assert gap == pytest.approx(w.value, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_invariances(make_case, seed):
    c = make_case(seed)
    rng = np.random.default_rng(1000 + seed)
    alpha, beta = 0.1, 0.6
    base = psp_pairs(c.scores, c.groups, alpha, beta)
    relabel = rng.permutation(c.n_groups)
    np.testing.assert_allclose(
        psp_pairs(c.scores, relabel[c.groups], alpha, beta)[np.ix_(relabel, relabel)], base
    )
    perm = rng.permutation(c.scores.size)
    np.testing.assert_allclose(psp_pairs(c.scores[perm], c.groups[perm], alpha, beta), base)
    monotone = np.exp(3.0 * c.scores) - 7.0
    np.testing.assert_allclose(psp_pairs(monotone, c.groups, alpha, beta), base)
    np.testing.assert_allclose(
        pdp_pairs(monotone, c.groups, alpha, beta, threshold=np.exp(0.0) - 7.0),
        pdp_pairs(c.scores, c.groups, alpha, beta, threshold=0.0),
    )


def test_identical_groups_are_fair_and_disjoint_groups_are_not():
    scores = np.array([0.1, 0.5, 0.9, 0.1, 0.5, 0.9])
    groups = np.array([0, 0, 0, 1, 1, 1])
    assert psp(scores, groups, 0.0, 1.0) == 0.0
    separated = np.array([0.0, 0.1, 0.2, 1.0, 1.1, 1.2])
    assert psp(separated, groups, 0.0, 1.0) == 1.0
    # within the top third of each group the single member is above any theta in between
    assert psp(separated, groups, 0.0, 1 / 3) == 1.0


@pytest.mark.parametrize(
    ("alpha", "beta"), [(0.5, 0.5), (0.6, 0.2), (-0.1, 0.5), (0.0, 1.5), (float("nan"), 0.5)]
)
def test_bad_interval_is_a_user_error(alpha, beta):
    with pytest.raises(UserError, match="alpha"):
        psp([0.0, 1.0], [0, 1], alpha, beta)
