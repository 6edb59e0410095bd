"""The interval helper's rank profile says, at each pooled rank, how much of each group is above
the threshold, checked against counting on small data; its figure draws those numbers."""

from __future__ import annotations

import numpy as np
import pytest

from engine.fairness import psp
from engine.fairness.distributions import rank_profile
from engine.plots.intervals import rank_profile_figure


def sample(seed: int, n: int = 400, groups: int = 3, ties: bool = False):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n)
    h = rng.normal(size=n) + 0.4 * g
    return (np.round(h, 1) if ties else h), g


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", [False, True])
def test_each_groups_share_above_the_pooled_threshold_is_counted(seed, ties):
    h, g = sample(seed, ties=ties)
    profile = rank_profile(h, g, points=41)
    ordered = np.sort(h)[::-1]
    for j, r in enumerate(profile.ranks):
        count = int(np.rint(r * h.size))
        theta = ordered[count] if count < h.size else -np.inf
        assert np.sum(h > theta) <= count  # ties may hold some back
        for k in range(3):
            assert profile.rates[k, j] == pytest.approx(np.mean(h[g == k] > theta))
        assert profile.gap[j] == pytest.approx(
            profile.rates[:, j].max() - profile.rates[:, j].min()
        )
    assert np.all(profile.rates[:, 0] == 0) and np.all(profile.rates[:, -1] == 1)
    assert profile.positive_rate == pytest.approx(np.mean(h > 0))


@pytest.mark.parametrize("seed", range(4))
def test_the_largest_gap_bounds_psp_on_every_interval_from_above(seed):
    """pSP on I compares two groups' ranks at one threshold, clipped to I and scaled by its
    width; at a pooled rank the profile's gap is the unclipped difference there, so the gap's
    largest value over a fine grid is at least pSP·(β − α) up to the grid's resolution."""
    h, g = sample(seed, n=300, groups=2)
    profile = rank_profile(h, g, points=2001)
    for alpha, beta in [(0.05, 0.3), (0.0, 0.5), (0.4, 0.9)]:
        assert profile.gap.max() >= psp(h, g, alpha, beta) * (beta - alpha) - 2 / 300


def test_the_figure_draws_a_line_per_group_the_gap_the_positive_rate_and_the_band():
    h, g = sample(1)
    profile = rank_profile(h, g)
    names = ["a", "b", "c"]
    fig = rank_profile_figure(profile, names, interval=(0.05, 0.3))
    lines = {t.name: t for t in fig.data}
    for k, name in enumerate(names):
        assert list(lines[name].y) == pytest.approx(list(profile.rates[k]))
    assert list(lines["largest gap between groups"].y) == pytest.approx(list(profile.gap))
    (rate,) = [s for s in fig.layout.shapes if s.type == "line"]
    assert rate.x0 == rate.x1 == pytest.approx(profile.positive_rate)
    (band,) = [s for s in fig.layout.shapes if s.type == "rect"]
    assert (band.y0, band.y1) == (0.05, 0.3)
    assert not [s for s in rank_profile_figure(profile, names).layout.shapes if s.type == "rect"]
