"""The difference bound b FairFront gives fairlearn's moments for κ (`difference_bound`): with
two groups, fairlearn's constraints |r_a − r̄| ≤ b (r̄ the share-weighted mean rate) hold exactly
when the gap between the groups is ≤ κ; with more groups they imply it; each family's groups are
compared within its own events."""

from __future__ import annotations

import numpy as np
import pytest

from engine.solvers.fairlearn.fairlearn_reductions import difference_bound

DRAWS = 4000


def groups_of(counts: np.ndarray) -> np.ndarray:
    """Group ids, `counts[g]` samples of group g."""
    return np.repeat(np.arange(len(counts)), counts)


def draw(rng: np.random.Generator, n_groups: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Random group sizes, rates and κ, the rates' gap spread around κ so that both sides of it
    are drawn often."""
    counts = rng.integers(1, 1000, size=n_groups)
    kappa = rng.uniform(0.001, 0.3)
    rates = rng.uniform(0.0, 1.0 - 2 * kappa) + kappa * rng.uniform(0.0, 2.0, size=n_groups)
    return counts, rates, kappa


def within_fairlearns_bound(counts: np.ndarray, rates: np.ndarray, bound) -> bool:
    """fairlearn's constraints: each group's rate within `bound` (a number, or one per group)
    of the mean rate of all samples."""
    mean = counts @ rates / counts.sum()
    return bool(np.all(np.abs(rates - mean) <= bound))


def test_with_two_groups_fairlearns_constraints_are_the_gap_within_kappa():
    rng = np.random.default_rng(0)
    outcomes = []
    for _ in range(DRAWS):
        counts, rates, kappa = draw(rng, 2)
        gap = np.ptp(rates)
        if abs(gap - kappa) < 1e-9:  # on the boundary rounding decides
            continue
        shares = counts / counts.sum()
        bound = difference_bound("DP", kappa, groups_of(counts), np.zeros(counts.sum()))
        assert bound == pytest.approx(kappa * (1.0 - shares.min()), rel=1e-12)
        per_group = within_fairlearns_bound(counts, rates, kappa * (1.0 - shares))
        assert (gap <= kappa) == per_group == within_fairlearns_bound(counts, rates, bound)
        outcomes.append(gap <= kappa)
    assert 0.2 < np.mean(outcomes) < 0.8  # both sides drawn


@pytest.mark.parametrize("n_groups", [3, 5])
def test_with_more_groups_fairlearns_constraints_imply_the_gap_within_kappa(n_groups):
    rng = np.random.default_rng(n_groups)
    held, past_kappa_at_kappa = 0, 0
    for _ in range(DRAWS):
        counts, rates, kappa = draw(rng, n_groups)
        groups, labels = groups_of(counts), np.zeros(counts.sum())
        bound = difference_bound("DP", kappa, groups, labels)
        assert bound == kappa / 2
        if within_fairlearns_bound(counts, rates, bound):
            held += 1
            assert np.ptp(rates) <= kappa + 1e-12
        # κ itself as the bound, as fairlearn is used without the translation, is not enough
        past_kappa_at_kappa += (
            within_fairlearns_bound(counts, rates, kappa) and np.ptp(rates) > kappa
        )
    assert held > DRAWS / 50 and past_kappa_at_kappa > 0


def test_each_family_compares_the_groups_within_its_events():
    # group 0: 30 positives, 70 negatives; group 1: 10 positives, 190 negatives
    groups = groups_of(np.array([100, 200]))
    y = np.concatenate([np.ones(30), np.zeros(70), np.ones(10), np.zeros(190)])
    kappa = 0.06
    assert difference_bound("DP", kappa, groups, y) == pytest.approx(kappa * (1 - 100 / 300))
    assert difference_bound("EOpp", kappa, groups, y) == pytest.approx(kappa * (1 - 10 / 40))
    # EO: the smaller of the positives' bound and the negatives' (1 − 70/260 < 1 − 10/40)
    assert difference_bound("EO", kappa, groups, y) == pytest.approx(kappa * (1 - 70 / 260))
    # a third group among the negatives only: two groups among the positives, three among the
    # negatives, whose κ/2 is the smaller
    third = np.concatenate([groups, np.full(50, 2)])
    labels = np.concatenate([y, np.zeros(50)])
    assert difference_bound("EOpp", kappa, third, labels) == pytest.approx(kappa * (1 - 10 / 40))
    assert difference_bound("EO", kappa, third, labels) == pytest.approx(kappa / 2)
