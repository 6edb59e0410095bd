"""Paper 002's seven unfairness measures against direct transcriptions of App. A / Table 3."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from badr_rows import random_rows

from engine.errors import UserError
from engine.fairness import (
    BADR_MEASURES,
    badr_demographic_parity,
    badr_disparate_mistreatment,
    badr_equal_opportunity,
    badr_equalized_odds,
    badr_group_variance,
    badr_hsic,
    badr_individual_fairness,
    badr_measure,
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


def brute_individual(scores, groups, y):
    """Berk et al.'s measure over every cross-group pair, as written in paper 002, App. A."""
    n = len(scores)
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            if groups[i] != groups[j]:
                weight = math.exp(-abs(y[i] - y[j]))
                total += weight * (scores[i] - scores[j]) ** 2
    sizes = np.bincount(groups)
    ordered = sum(
        sizes[s] * sizes[t] for s in range(len(sizes)) for t in range(len(sizes)) if s != t
    )
    return total / ordered


def one_hot_covariance_measure(scores, groups, ddof):
    """1/2 sum_s Cov(1[a = s], p)^2, the covariance taken with 1/(n - ddof)."""
    n = len(scores)
    pbar = mean(scores)
    total = 0.0
    for s in range(max(groups) + 1):
        share = sum(1 for a in groups if a == s) / n
        cov = sum(((a == s) - share) * (p - pbar) for a, p in zip(groups, scores, strict=True))
        total += (cov / (n - ddof)) ** 2
    return 0.5 * total


def paper_covariance_measure(scores, groups, ddof):
    """Paper 002's (Cov(a, p))^2 with the integer group id a taken as a number."""
    n = len(scores)
    abar, pbar = mean(groups), mean(scores)
    cross = sum((a - abar) * (p - pbar) for a, p in zip(groups, scores, strict=True))
    return (cross / (n - ddof)) ** 2


@pytest.mark.parametrize("seed", SEEDS)
def test_individual_fairness(make_case, seed):
    c = make_case(seed, labelled=True)
    got = badr_individual_fairness(c.scores, c.groups, c.y)
    assert got == pytest.approx(brute_individual(c.scores, c.groups, c.y), rel=1e-10, abs=1e-14)


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
    dm = one_hot_covariance_measure(c.scores, c.groups, ddof=0)
    hsic = one_hot_covariance_measure(c.scores, c.groups, ddof=1)
    assert badr_disparate_mistreatment(c.scores, c.groups) == pytest.approx(dm, rel=1e-10)
    assert badr_hsic(c.scores, c.groups) == pytest.approx(hsic, rel=1e-10)
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


def test_catalogue_names_and_fields():
    assert list(BADR_MEASURES) == [
        "dp",
        "dm",
        "eopp",
        "eodds",
        "group_variance",
        "individual",
        "hsic",
    ]
    both = {"classification", "regression"}
    assert {m.name: m.tasks for m in BADR_MEASURES.values()} == {
        "dp": both,
        "dm": both,
        "eopp": {"classification"},
        "eodds": {"classification"},
        "group_variance": both,
        "individual": both,
        "hsic": both,
    }
    assert {m.name for m in BADR_MEASURES.values() if m.smoothed} == {"dp", "eopp", "eodds"}
    exact = {m.name: m.exact for m in BADR_MEASURES.values() if m.exact is not None}
    assert exact == {"dp": "dp", "eopp": "eopp", "eodds": "eo", "group_variance": "group_loss_gap"}
    assert all(badr_measure(name) is measure for name, measure in BADR_MEASURES.items())


def test_unknown_measure_lists_the_names():
    with pytest.raises(UserError, match="unknown badr measure 'ddp'") as error:
        badr_measure("ddp")
    assert "dp, dm, eopp, eodds, group_variance, individual, hsic" in str(error.value)


@pytest.mark.parametrize("name", ["eopp", "eodds"])
def test_classification_only_measures_refuse_regression(name):
    scores, groups, y = random_rows(0, 2, "regression")
    with pytest.raises(UserError, match="defined for classification only") as error:
        badr_measure(name).value_and_grad(scores, groups, y, task="regression")
    assert "not for regression" in str(error.value)


def test_unknown_task_and_missing_targets_are_refused():
    scores, groups, y = random_rows(0, 2, "classification")
    with pytest.raises(UserError, match="task must be one of classification, regression"):
        badr_measure("dp").value(scores, groups, y, task="ranking")
    with pytest.raises(UserError, match="needs y"):
        badr_measure("individual").value(scores, groups, None)
    with pytest.raises(UserError, match="NaN or infinite"):
        badr_measure("individual").value(
            scores, groups, np.full(scores.size, np.nan), task="regression"
        )


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_groups", [2, 3, 4])
@pytest.mark.parametrize("scale", [1.0, 1e3])
def test_individual_fairness_on_real_targets(seed, n_groups, scale):
    """Real y, ties on even seeds, groups of different sizes; at scale 1e3 the weights between
    distinct targets are as small as exp(-500) and exp(y) itself would overflow."""
    scores, groups, y = random_rows(seed, n_groups, "regression")
    y = y * scale
    got = badr_measure("individual").value(scores, groups, y, task="regression")
    assert got == pytest.approx(brute_individual(scores, groups, y), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("seed", range(6))
def test_individual_fairness_has_one_value_for_binary_targets(seed):
    """The O(n) label-cell form and the sorted real-target form agree on 0/1 targets."""
    scores, groups, y = random_rows(seed, 3, "classification")
    measure = badr_measure("individual")
    as_labels = measure.value_and_grad(scores, groups, y)
    as_targets = measure.value_and_grad(scores, groups, y.astype(float), task="regression")
    assert as_targets[0] == pytest.approx(as_labels[0], rel=1e-12)
    np.testing.assert_allclose(as_targets[1], as_labels[1], rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rho", RHOS)
def test_regression_demographic_parity_uses_mean_scores(seed, rho):
    scores, groups, y = random_rows(seed, 3, "regression")
    means = [mean(s for s, g in zip(scores, groups, strict=True) if g == k) for k in range(3)]
    expected = smax([math.sqrt((m - mean(means)) ** 2 + 1e-6) for m in means], rho)
    dp = badr_measure("dp")
    assert dp.value(scores, groups, y, rho=rho, task="regression") == pytest.approx(
        expected, rel=1e-12
    )
    assert dp.value(scores, groups, None, rho=rho, task="regression") != pytest.approx(
        dp.value(scores, groups, None, rho=rho)
    )


def group_loss_variance(scores, groups, y, loss):
    per_group = [
        mean(loss(s, t) for s, g, t in zip(scores, groups, y, strict=True) if g == k)
        for k in range(max(groups) + 1)
    ]
    return mean((v - mean(per_group)) ** 2 for v in per_group)


def squared_hinge(p, y):
    """max(0, 1 - zeta p)^2 with zeta = 2y - 1, and its slope."""
    zeta = 2.0 * y - 1.0
    margin = np.maximum(0.0, 1.0 - zeta * p)
    return margin**2, -2.0 * zeta * margin


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_groups", [2, 3])
def test_group_variance_of_a_given_loss(seed, n_groups):
    scores, groups, y = random_rows(seed, n_groups, "classification")
    got = badr_measure("group_variance").value(scores, groups, y, loss=squared_hinge)
    hinge = group_loss_variance(scores, groups, y, lambda s, t: max(0.0, 1 - (2 * t - 1) * s) ** 2)
    assert got == pytest.approx(hinge, rel=1e-12)

    scores, groups, y = random_rows(seed, n_groups, "regression")
    got = badr_measure("group_variance").value(scores, groups, y, task="regression")
    squared = group_loss_variance(scores, groups, y, lambda s, t: 0.5 * (s - t) ** 2)
    assert got == pytest.approx(squared, rel=1e-12)


def test_a_loss_of_the_wrong_shape_is_refused():
    scores, groups, y = random_rows(0, 2, "classification")
    with pytest.raises(UserError, match="the loss must return two arrays"):
        badr_measure("group_variance").value(
            scores, groups, y, loss=lambda p, t: (np.mean(p), np.ones(p.size))
        )


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("name", ["dm", "hsic"])
def test_covariance_measures_are_the_papers_at_two_groups(seed, name):
    scores, groups, _ = random_rows(seed, 2, "classification")
    ddof = {"dm": 0, "hsic": 1}[name]
    got = badr_measure(name).value(scores, groups, None)
    assert got == pytest.approx(paper_covariance_measure(scores, groups, ddof), rel=1e-10)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("name", ["dm", "hsic"])
def test_covariance_measures_do_not_depend_on_group_numbering(seed, name):
    scores, groups, _ = random_rows(seed, 3, "classification")
    ddof = {"dm": 0, "hsic": 1}[name]
    measure = badr_measure(name)
    values, papers = [], []
    for relabel in itertools.permutations(range(3)):
        renamed = np.asarray(relabel)[groups]
        values.append(measure.value(scores, renamed, None))
        papers.append(paper_covariance_measure(scores, renamed, ddof))
    assert values == pytest.approx([values[0]] * len(values), rel=1e-12)
    assert max(papers) > 1.01 * min(papers)  # the integer-id formula does depend on it
