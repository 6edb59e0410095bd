"""Bands over runs (paper 000, Figs. 1-2) against a direct computation bin by bin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.benchmark.bands import band, run_on_grid
from engine.errors import UserError


def direct(trajectories, width):
    """Per bin k: each run's mean of the points with round-half-up(t / width) = k, else its
    value of the latest earlier bin with a point, within the run's first..last bin; then the
    mean and quartiles over the runs that have a value."""
    per_run = []
    for run in trajectories:
        by_bin: dict[int, list[float]] = {}
        for t, v in run:
            by_bin.setdefault(math.floor(t / width + 0.5), []).append(v)
        per_run.append(by_bin)
    occupied = [k for by_bin in per_run for k in by_bin]
    rows = []
    for k in range(min(occupied), max(occupied) + 1):
        values = []
        for by_bin in per_run:
            if by_bin and min(by_bin) <= k <= max(by_bin):
                source = max(b for b in by_bin if b <= k)
                values.append(sum(by_bin[source]) / len(by_bin[source]))
        if values:
            q1, median, q3 = np.quantile(values, [0.25, 0.5, 0.75])
            rows.append((k * width, np.mean(values), q1, median, q3, len(values)))
    return np.array(rows)


def random_runs(seed: int) -> list[list[tuple[float, float]]]:
    """3..8 runs of different lengths and start times, irregular saves (several per bin, gaps)."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(int(rng.integers(3, 9))):
        start, length = rng.uniform(0, 2), rng.uniform(0.5, 8)
        times = np.sort(rng.uniform(start, start + length, size=int(rng.integers(1, 40))))
        values = rng.normal(size=times.size)
        runs.append([(float(t), float(v)) for t, v in zip(times, values, strict=True)])
    return runs


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("width", [0.5, 0.25, 1.0])
def test_band_matches_the_direct_computation(seed, width):
    runs = random_runs(seed)
    got = band(runs, width)
    want = direct(runs, width)
    np.testing.assert_allclose(got.seconds, want[:, 0])
    for column, values in enumerate([got.mean, got.q1, got.median, got.q3], start=1):
        np.testing.assert_allclose(values, want[:, column], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got.runs, want[:, 5])
    assert np.all(got.q1 <= got.median) and np.all(got.median <= got.q3)


def test_rounding_to_the_nearest_bin_averages_and_carries_forward():
    # 0.24 -> 0 s; 0.25 and 0.74 -> 0.5 s (averaged); nothing near 1 s: 0.5 s's value carries on
    bins, values = run_on_grid([(0.24, 1.0), (0.25, 2.0), (0.74, 4.0), (1.6, 7.0)])
    np.testing.assert_array_equal(bins, [0, 1, 2, 3])
    np.testing.assert_allclose(values, [1.0, 3.0, 3.0, 7.0])


def test_points_in_any_order_give_the_same_grid():
    points = [(0.1, 1.0), (2.2, 5.0), (0.9, 3.0), (0.2, 2.0)]
    for got, want in zip(run_on_grid(points[::-1]), run_on_grid(points), strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_bin_with_one_run_is_that_run():
    short = [(0.0, 1.0), (0.5, 1.0), (1.0, 1.0)]
    long = [(0.0, 3.0), (0.5, 3.0), (1.0, 3.0), (1.5, 6.0), (2.0, 8.0)]
    result = band([short, long])
    np.testing.assert_array_equal(result.runs, [2, 2, 2, 1, 1])
    for values in (result.mean, result.q1, result.median, result.q3):
        np.testing.assert_allclose(values[3:], [6.0, 8.0])  # not dragged by the ended run
    np.testing.assert_allclose(result.mean[:3], 2.0)
    np.testing.assert_allclose(result.q1[:3], 1.5)
    np.testing.assert_allclose(result.q3[:3], 2.5)


def test_bins_no_run_reaches_are_left_out():
    result = band([[(0.0, 1.0)], [(3.0, 2.0)]])
    np.testing.assert_allclose(result.seconds, [0.0, 3.0])
    np.testing.assert_array_equal(result.runs, [1, 1])


def test_runs_without_points_are_ignored():
    assert band([[], [], []]).seconds.size == 0
    np.testing.assert_allclose(band([[], [(0.5, 2.0)]]).mean, [2.0])


@pytest.mark.parametrize(
    ("runs", "width"),
    [
        ([[(0.0, 1.0)]], 0.0),
        ([[(0.0, 1.0)]], -0.5),
        ([[(0.0, float("nan"))]], 0.5),
        ([[(float("inf"), 1.0)]], 0.5),
        ([[(0.0, 1.0, 2.0)]], 0.5),
    ],
)
def test_bad_inputs_are_refused(runs, width):
    with pytest.raises(UserError):
        band(runs, width)
