"""Group CCDFs, I-slice bounds, rank-rank curves and the App. B interval scan (paper 003) against
brute-force counting on small random data with ties."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness import pdp, psp
from engine.fairness.distributions import (
    candidate_intervals,
    group_ccdf,
    interval_scan,
    rank_rank_curve,
    slice_bounds,
    suggested_interval,
)

SEEDS = range(24)
INTERVALS = [(0.0, 0.1), (0.05, 0.3), (0.2, 0.4), (0.5, 1.0), (0.0, 1.0), (0.7, 1.0), (0.25, 0.75)]


def rank(group_scores: np.ndarray, theta: float) -> float:
    """Def. 4.1 by counting: the share of the group strictly above theta."""
    return float(np.sum(group_scores > theta)) / group_scores.size


def brute_inverse(group_scores: np.ndarray, p: float) -> float:
    """inf{theta : rank(theta) <= p} (App. C). The rank only changes at the group's scores and
    equals 1 below them all, so the infimum is -inf for p >= 1 and otherwise a group score."""
    if p >= 1.0:
        return -np.inf
    return min(s for s in group_scores if rank(group_scores, s) <= p)


@pytest.mark.parametrize("seed", SEEDS)
def test_group_ccdf_points_are_the_counted_ranks(make_case, seed):
    c = make_case(seed)
    curves = group_ccdf(c.scores, c.groups, c.n_groups)
    assert len(curves) == c.n_groups
    for k, (theta, ranks) in enumerate(curves):
        members = c.scores[c.groups == k]
        assert theta.shape == ranks.shape
        assert np.all(np.diff(theta) > 0)
        assert theta[0] < c.scores.min() and ranks[0] == 1.0
        assert theta[-1] > c.scores.max() and ranks[-1] == 0.0
        assert set(np.unique(members)) <= set(theta)
        np.testing.assert_array_equal(ranks, [rank(members, t) for t in theta])
        # a step plot holds each value until the next threshold: check between the points
        middles = (theta[:-1] + theta[1:]) / 2
        np.testing.assert_array_equal(ranks[:-1], [rank(members, t) for t in middles])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("alpha", "beta"), INTERVALS)
def test_slice_bounds_follow_the_inverse_ccdf(make_case, seed, alpha, beta):
    c = make_case(seed)
    bounds = slice_bounds(c.scores, c.groups, c.n_groups, alpha, beta)
    assert bounds.shape == (c.n_groups, 2)
    for k in range(c.n_groups):
        members = c.scores[c.groups == k]
        expected = [brute_inverse(members, alpha), brute_inverse(members, beta)]
        np.testing.assert_array_equal(bounds[k], expected)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("alpha", "beta"), INTERVALS)
def test_slice_bounds_enclose_the_i_slice(make_case, seed, alpha, beta):
    c = make_case(seed)
    bounds = slice_bounds(c.scores, c.groups, c.n_groups, alpha, beta)
    for k in range(c.n_groups):
        members = c.scores[c.groups == k]
        top, bottom = bounds[k]
        assert bottom <= top
        for s in members:
            if alpha <= rank(members, s) < beta:  # s is in the group's I-slice (Def. 4.2)
                assert bottom <= s <= top
        # the rank definition: at the bound the rank is <= p, just below it the rank is > p
        for p, bound in ((alpha, top), (beta, bottom)):
            if np.isfinite(bound):
                assert rank(members, bound) <= p
                assert rank(members, np.nextafter(bound, -np.inf)) > p


@pytest.mark.parametrize("seed", SEEDS)
def test_rank_rank_curve_counts_both_groups_as_theta_falls(make_case, seed):
    c = make_case(seed)
    thetas = [*np.unique(c.scores)[::-1], -np.inf]
    for k, k2 in [(0, 1), (1, 0), (0, c.n_groups - 1)]:
        x, y = rank_rank_curve(c.scores, c.groups, k, k2)
        a, b = c.scores[c.groups == k], c.scores[c.groups == k2]
        np.testing.assert_array_equal(x, [rank(a, t) for t in thetas])
        np.testing.assert_array_equal(y, [rank(b, t) for t in thetas])
        assert (x[0], y[0]) == (0.0, 0.0) and (x[-1], y[-1]) == (1.0, 1.0)
        assert np.all(np.diff(x) >= 0) and np.all(np.diff(y) >= 0)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("threshold", [0.0, -0.5, 0.3])
def test_interval_scan_matches_the_exact_metrics(make_case, seed, threshold):
    c = make_case(seed)
    rows = interval_scan(c.scores, c.groups, threshold, INTERVALS)
    overall = rank(c.scores, threshold)
    assert [(r["alpha"], r["beta"]) for r in rows] == INTERVALS
    for row, (alpha, beta) in zip(rows, INTERVALS, strict=True):
        assert row["positive_rate"] == pytest.approx(overall, abs=1e-15)
        expected_rates = [rank(c.scores[c.groups == k], threshold) for k in range(c.n_groups)]
        np.testing.assert_allclose(row["group_rates"], expected_rates, atol=1e-15)
        assert row["contains_rate"] == (alpha <= overall < beta or (beta == 1.0 and overall == 1))
        assert row["psp"] == psp(c.scores, c.groups, alpha, beta)
        assert row["pdp"] == pdp(c.scores, c.groups, alpha, beta, threshold)


def test_candidate_intervals_cover_the_grid():
    grid = np.linspace(0.0, 1.0, 21)
    expected = {(a, b) for a in grid for b in grid if b - a >= 0.1 - 1e-9}
    found = candidate_intervals()
    assert len(found) == len(set(found)) == len(expected)
    for alpha, beta in found:
        assert any(np.isclose(alpha, a) and np.isclose(beta, b) for a, b in expected)
        assert 0.0 <= alpha < beta <= 1.0


def test_candidate_intervals_respect_the_minimum_width():
    found = candidate_intervals(steps=10, width_steps=3)
    assert min(b - a for a, b in found) == pytest.approx(0.3)
    assert (0.0, 1.0) in found and (0.7, 1.0) in found and (0.0, 0.2) not in found
    with pytest.raises(UserError):
        candidate_intervals(steps=10, width_steps=11)


@pytest.mark.parametrize("seed", SEEDS)
def test_suggested_interval_is_the_most_unfair_one_containing_p(make_case, seed):
    c = make_case(seed)
    rows = interval_scan(c.scores, c.groups, 0.0, candidate_intervals(steps=10))
    holding = [(r["psp"], (r["alpha"], r["beta"])) for r in rows if r["contains_rate"]]
    choice = suggested_interval(rows)
    assert holding, "every p in [0, 1] lies in some interval of the full grid"
    best = max(value for value, _ in holding)
    assert choice in [interval for value, interval in holding if value == best]


def test_suggested_interval_is_none_when_no_interval_contains_p():
    scores = np.array([2.0, 3.0, 1.0, 4.0])  # everyone above 0: p = 1
    rows = interval_scan(scores, np.array([0, 0, 1, 1]), 0.0, [(0.0, 0.5), (0.2, 0.9)])
    assert not any(r["contains_rate"] for r in rows)
    assert suggested_interval(rows) is None


def test_wrong_group_count_and_ids_are_refused():
    scores, groups = np.array([0.1, 0.2, 0.3]), np.array([0, 1, 1])
    with pytest.raises(UserError):
        group_ccdf(scores, groups, 3)
    with pytest.raises(UserError):
        slice_bounds(scores, groups, 1, 0.0, 0.5)
    with pytest.raises(UserError):
        rank_rank_curve(scores, groups, 0, 2)
    with pytest.raises(UserError):
        slice_bounds(scores, groups, 2, 0.5, 0.5)
