"""A finer surrogate fitted to a model's scores (`engine.fairness.refine`), checked against
brute-force computations of what each refinement should do."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.fairness import psp
from engine.fairness.constraints import ConstraintSpec
from engine.fairness.families import family_entry
from engine.fairness.refine import (
    LEAST_RAMP_ROWS,
    LEVELS_PER_BAND,
    MOST_ADDED_RANKS,
    RANK_SPACING,
    SHARE_OF_BAND,
    TOLERANCE_SHARE,
    refine_psp,
    refine_rate_gap,
)

INTERVAL = (0.1, 0.5)


def _two_groups(n: int, shift: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two groups of `n` scores; the second's top half is shifted up by `shift`, so their ranks
    part in the top of the score range."""
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=n), rng.normal(size=n)
    b = np.where(b > 0, b + shift, b)
    return np.concatenate([a, b]), np.repeat([0, 1], n)


def _violated_levels(h, groups, alpha, beta, band):
    """Brute force of Lemma 5.1 on a fine grid of p: the p whose condition fails (no shared
    threshold puts both groups' ranks in [p, p + band])."""
    thresholds = np.concatenate([[-np.inf], np.unique(h)])
    ranks = np.stack([(h[groups == k][:, None] > thresholds).mean(axis=0) for k in (0, 1)])
    failing = []
    for p in np.linspace(alpha, beta - band, 400, endpoint=False):
        inside = ((ranks >= p - 1e-12) & (ranks <= p + band + 1e-12)).all(axis=0)
        if not inside.any():
            failing.append(p)
    return np.array(failing)


def test_psp_adds_dense_levels_and_the_ranks_where_the_exact_gap_exceeds_kappa():
    h, groups = _two_groups(4000, 0.4)
    kappa = 0.1
    spec = ConstraintSpec("pSP", kappa, INTERVAL)
    alpha, beta = INTERVAL
    band = kappa * (beta - alpha)
    assert psp(h, groups, alpha, beta) > kappa  # the scores break κ
    refinement = refine_psp(spec, kappa, h, groups, np.zeros_like(groups))
    finer = refinement.spec
    levels = finer.rank_levels()
    dense = int(np.ceil(LEVELS_PER_BAND * (1 - kappa) / kappa))
    assert finer.grid_size == dense and refinement.levels == (10, levels.size)
    added = np.array(finer.ranks)
    assert 0 < added.size <= MOST_ADDED_RANKS
    assert np.all((added >= alpha) & (added < beta - band))
    grid = dataclasses.replace(finer, ranks=()).rank_levels()
    for p in added:  # each at least a quarter band from every other level
        others = np.concatenate([grid, added[added != p]])
        assert np.min(np.abs(others - p)) >= RANK_SPACING * band - 1e-12
    # every added rank is one whose condition fails, and they cover where it fails most
    failing = _violated_levels(h, groups, alpha, beta, band)
    assert failing.size
    assert all(np.min(np.abs(failing - p)) <= (beta - alpha) / 400 + 1e-9 for p in added)


def test_psp_narrows_the_ramp_to_half_a_band_of_each_groups_scores_at_its_levels():
    rng = np.random.default_rng(1)
    h = np.concatenate([rng.normal(0, 0.2, 5000), rng.normal(0.05, 0.3, 5000)])
    groups = np.repeat([0, 1], 5000)
    spec = ConstraintSpec("pSP", 0.2, INTERVAL, grid_size=20)
    refinement = refine_psp(spec, 0.2, h, groups, np.zeros_like(groups))
    band = 0.2 * (INTERVAL[1] - INTERVAL[0])
    levels = refinement.spec.rank_levels()
    widths = []
    for k in (0, 1):
        scores = h[groups == k]
        for p in levels:
            q = 1 - p
            half = 0.5 * max(SHARE_OF_BAND * band, LEAST_RAMP_ROWS / scores.size)
            widths.append(
                np.quantile(scores, min(q + half, 1)) - np.quantile(scores, max(q - half, 0))
            )
    assert refinement.spec.temperature == pytest.approx(min(widths))
    assert refinement.temperature == (1.0, refinement.spec.temperature)
    assert refinement.tolerance == pytest.approx(TOLERANCE_SHARE * band)
    assert "ramp width τ 1 →" in refinement.words


def test_a_ramp_is_never_narrowed_below_what_holds_a_few_rows_of_each_group():
    rng = np.random.default_rng(2)
    small = 60  # few rows: half a band of them is less than one row
    h = np.concatenate([rng.normal(size=small), rng.normal(size=small)])
    groups = np.repeat([0, 1], small)
    spec = ConstraintSpec("pSP", 0.2, INTERVAL)
    refinement = refine_psp(spec, 0.2, h, groups, np.zeros_like(groups))
    tau = refinement.spec.temperature
    for k in (0, 1):
        scores = h[groups == k]
        for p in refinement.spec.rank_levels():  # at every level, the ramp holds ≥ a few rows
            assert np.sum(np.abs(scores - np.quantile(scores, 1 - p)) <= tau) >= LEAST_RAMP_ROWS - 2


def test_psp_is_left_alone_when_its_surrogate_is_as_fine_as_the_scores_ask():
    rng = np.random.default_rng(3)
    h = rng.normal(size=6000)
    groups = rng.integers(0, 2, 6000)  # the same distribution: no violated rank
    kappa = 0.2
    dense = int(np.ceil(LEVELS_PER_BAND * (1 - kappa) / kappa))
    fine = ConstraintSpec("pSP", kappa, INTERVAL, grid_size=dense, temperature=1e-6)
    assert psp(h, groups, *INTERVAL) <= kappa
    assert refine_psp(fine, kappa, h, groups, np.zeros_like(groups)) is None
    coarse = dataclasses.replace(fine, temperature=1.0)
    assert refine_psp(coarse, kappa, h, groups, np.zeros_like(groups)) is not None


def test_rate_gaps_narrow_their_sigmoid_in_the_cells_they_compare():
    rng = np.random.default_rng(4)
    n = 4000
    y = rng.integers(0, 2, n)
    groups = rng.integers(0, 2, n)
    h = rng.normal(0, 0.5, n) + 0.3 * y
    spec = ConstraintSpec("EO", 0.05, surrogate="sigmoid", threshold=0.1)
    refinement = refine_rate_gap(spec, 0.05, h, groups, y)
    widths = []
    for k in (0, 1):
        for label in (1, 0):
            cell = h[(groups == k) & (y == label)]
            q = np.mean(cell <= 0.1)
            half = 0.5 * max(SHARE_OF_BAND * 0.05, LEAST_RAMP_ROWS / cell.size)
            widths.append(np.quantile(cell, q + half) - np.quantile(cell, q - half))
    # the sigmoid σ(x/τ) rises as a ramp of width 4τ
    assert refinement.spec.temperature == pytest.approx(min(widths) / 4)
    assert "sigmoid temperature" in refinement.words


def test_families_without_a_resolution_refine_by_kappa_prime_alone():
    assert family_entry("group_loss_gap").refine is None
    assert family_entry("auc_gap").refine is None
    assert family_entry("pSP").refine is refine_psp


def test_added_ranks_keep_a_specs_id_only_when_there_are_none():
    spec = ConstraintSpec("pSP", 0.1, INTERVAL)
    assert "ranks" not in spec.to_dict()
    with_ranks = dataclasses.replace(spec, ranks=(0.3, 0.2, 0.3))
    assert with_ranks.ranks == (0.2, 0.3) and with_ranks.to_dict()["ranks"] == (0.2, 0.3)
    assert set(with_ranks.rank_levels()) == set(spec.rank_levels()) | {0.2, 0.3}
