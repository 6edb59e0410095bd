"""Paper 002's seven unfairness measures against direct transcriptions of App. A / Table 3."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.errors import UserError
from engine.fairness import (
    badr_demographic_parity,
    badr_disparate_mistreatment,
    badr_equal_opportunity,
    badr_equalized_odds,
    badr_group_variance,
    badr_hsic,
    badr_individual_fairness,
)

SEEDS = range(30)
RHOS = [1.0, 0.3, 4.0]


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def smax(values, rho):
    return math.log(sum(math.exp(rho * v) for v in values)) / rho


def smin(values, rho):
    return -smax([-v for v in values], rho)


def mean(values):
    values = list(values)
    return sum(values) / len(values)


def members(c, k, label=None):
    return [
        (s, yy)
        for s, g, yy in zip(c.scores, c.groups, c.y, strict=True)
        if g == k and (label is None or yy == label)
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_individual_fairness(make_case, seed):
    c = make_case(seed, labelled=True)
    n = len(c.scores)
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            if c.groups[i] != c.groups[j]:
                weight = math.exp(-abs(c.y[i] - c.y[j]))
                total += weight * (c.scores[i] - c.scores[j]) ** 2
    sizes = np.bincount(c.groups)
    ordered = sum(
        sizes[s] * sizes[t] for s in range(c.n_groups) for t in range(c.n_groups) if s != t
    )
    got = badr_individual_fairness(c.scores, c.groups, c.y)
    assert got == pytest.approx(total / ordered, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rho", RHOS)
def test_smoothed_parity_measures(make_case, seed, rho):
    c = make_case(seed, labelled=True)
    groups = range(c.n_groups)
    p = [mean(sigmoid(rho * s) for s, _ in members(c, k)) for k in groups]
    pbar = mean(p)
    dp = smax([math.sqrt((ps - pbar) ** 2 + 1e-6) for ps in p], rho)
    tpr = [mean(sigmoid(rho * s) for s, _ in members(c, k, 1)) for k in groups]
    fpr = [mean(sigmoid(rho * s) for s, _ in members(c, k, 0)) for k in groups]
    eopp = smax(tpr, rho) - smin(tpr, rho)
    eodds = 0.5 * (smax(tpr, rho) - smin(tpr, rho) + smax(fpr, rho) - smin(fpr, rho))
    assert badr_demographic_parity(c.scores, c.groups, rho) == pytest.approx(dp, rel=1e-12)
    assert badr_equal_opportunity(c.scores, c.groups, c.y, rho) == pytest.approx(eopp, rel=1e-12)
    assert badr_equalized_odds(c.scores, c.groups, c.y, rho) == pytest.approx(eodds, rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_covariance_measures_and_group_variance(make_case, seed):
    c = make_case(seed, labelled=True)
    n = len(c.scores)
    abar, pbar = mean(c.groups), mean(c.scores)
    cross = sum((a - abar) * (p - pbar) for a, p in zip(c.groups, c.scores, strict=True))
    assert badr_disparate_mistreatment(c.scores, c.groups) == pytest.approx((cross / n) ** 2)
    assert badr_hsic(c.scores, c.groups) == pytest.approx((cross / (n - 1)) ** 2)
    losses = [
        mean(math.log(1 + math.exp(-(2 * yy - 1) * s)) for s, yy in members(c, k))
        for k in range(c.n_groups)
    ]
    variance = mean((v - mean(losses)) ** 2 for v in losses)
    assert badr_group_variance(c.scores, c.groups, c.y) == pytest.approx(variance, abs=1e-14)


@pytest.mark.parametrize("n_groups", [2, 3, 5])
def test_offsets_at_perfect_parity(n_groups):
    """Identical groups: EOpp = EOdds = 2 ln G / rho and DP = 1e-3 + ln G / rho (smoothing)."""
    block_scores = np.array([-1.0, 0.5, 2.0, 0.0])
    block_y = np.array([1, 0, 1, 0])
    scores = np.tile(block_scores, n_groups)
    y = np.tile(block_y, n_groups)
    groups = np.repeat(np.arange(n_groups), 4)
    rho = 2.0
    log_g = math.log(n_groups)
    assert badr_equal_opportunity(scores, groups, y, rho) == pytest.approx(2 * log_g / rho)
    assert badr_equalized_odds(scores, groups, y, rho) == pytest.approx(2 * log_g / rho)
    assert badr_demographic_parity(scores, groups, rho) == pytest.approx(1e-3 + log_g / rho)
    assert badr_individual_fairness(scores, groups, y) > 0  # pairs across groups still differ
    assert badr_group_variance(scores, groups, y) == pytest.approx(0.0, abs=1e-15)
    assert badr_disparate_mistreatment(scores, groups) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("seed", range(10))
def test_sample_permutation_and_large_scores(make_case, seed):
    c = make_case(seed, labelled=True)
    perm = np.random.default_rng(seed).permutation(c.y.size)
    for fn in (badr_individual_fairness, badr_equalized_odds, badr_group_variance):
        assert fn(c.scores[perm], c.groups[perm], c.y[perm]) == pytest.approx(
            fn(c.scores, c.groups, c.y)
        )
    huge = c.scores * 1e3
    assert np.isfinite(badr_equalized_odds(huge, c.groups, c.y, 5.0))
    assert np.isfinite(badr_demographic_parity(huge, c.groups, 5.0))


@pytest.mark.parametrize("rho", [0.0, -1.0, float("nan")])
def test_rho_must_be_positive(rho):
    with pytest.raises(UserError, match="rho"):
        badr_demographic_parity([0.1, 0.2], [0, 1], rho)
