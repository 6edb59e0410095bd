"""Mean and Q1–Q3 band over runs of a quantity against wall-clock time (paper 000, Figs. 1, 2, 5).

Paper 000 plots "the mean values ... at each timestamp, rounded to the nearest 0.5 seconds, over
10 runs", the band "between the first and third quartiles". With a bin width w (0.5 s):

- Bin k holds the times that round to k·w, [(k − ½)·w, (k + ½)·w), a half-way time rounding up;
  its timestamp is k·w. Rounding to the nearest, not flooring, is the paper's wording.
- A run's value in bin k is the mean of its points rounded into the bin. A bin inside the run's
  span that holds none of its points takes the run's value of the nearest earlier bin: the last
  saved iterate is the model the run has at that time. (The paper's code fills such bins from
  the next saved iterate instead, which looks ahead in time.)
- A run contributes only to the bins from its first point's to its last point's: a run that
  ended early (a solver saving rarely, a run stopped by hand) neither holds the band at its last
  value nor pulls it anywhere afterwards. `Band.runs` says how many runs each bin summarises.
- Over the contributing runs: the mean, and Q1, median, Q3 interpolated linearly between order
  statistics (numpy's default quantile). A bin no run contributes to is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from engine.errors import UserError

BIN_SECONDS = 0.5  # paper 000, Figs. 1-2: "rounded to the nearest 0.5 seconds"


@dataclass(frozen=True)
class Band:
    """Per bin, ascending in time: the bin's timestamp k·w, the statistics over the runs that
    contribute to it, and how many do."""

    seconds: np.ndarray
    mean: np.ndarray
    q1: np.ndarray
    median: np.ndarray
    q3: np.ndarray
    runs: np.ndarray


def run_on_grid(points: ArrayLike, width: float = BIN_SECONDS) -> tuple[np.ndarray, np.ndarray]:
    """(bins k, values) of one run, for every bin from its first point's to its last point's:
    the mean of its points in a bin, carried forward over bins without a point. `points` is a
    sequence of (seconds, value) pairs, in any order."""
    if not (np.isfinite(width) and width > 0):
        raise UserError(f"the bin width must be a positive number of seconds, got {width}.")
    array = np.asarray(points, dtype=np.float64)
    if array.size == 0:
        return np.empty(0, dtype=np.int64), np.empty(0)
    if array.ndim != 2 or array.shape[1] != 2:
        raise UserError(f"a run's points must be (seconds, value) pairs, got shape {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise UserError("a run's points contain NaN or infinite seconds or values.")
    bins = np.floor(array[:, 0] / width + 0.5).astype(np.int64)
    first = int(bins.min())
    span = int(bins.max()) - first + 1
    sums = np.bincount(bins - first, weights=array[:, 1], minlength=span)
    counts = np.bincount(bins - first, minlength=span)
    filled = counts > 0
    # the nearest bin at or before each bin that holds a point (the first bin always does)
    source = np.maximum.accumulate(np.where(filled, np.arange(span), 0))
    means = np.divide(sums, counts, out=np.zeros(span), where=filled)
    return np.arange(first, first + span), means[source]


def band(trajectories: Sequence[ArrayLike], width: float = BIN_SECONDS) -> Band:
    """Mean, Q1, median and Q3 over runs per bin of `width` seconds (paper 000, Figs. 1-2);
    each trajectory is one run's (seconds, value) points. Runs without points are ignored."""
    grids = [grid for grid in (run_on_grid(run, width) for run in trajectories) if grid[0].size]
    if not grids:
        empty = np.empty(0)
        return Band(empty, empty, empty, empty, empty, np.empty(0, dtype=np.int64))
    low = min(int(bins[0]) for bins, _ in grids)
    high = max(int(bins[-1]) for bins, _ in grids)
    table = np.full((len(grids), high - low + 1), np.nan)  # NaN: the run does not contribute
    for row, (bins, values) in zip(table, grids, strict=True):
        row[bins - low] = values
    runs = np.count_nonzero(~np.isnan(table), axis=0)
    kept = runs > 0
    table = table[:, kept]
    q1, median, q3 = np.nanquantile(table, [0.25, 0.5, 0.75], axis=0)
    seconds = np.arange(low, high + 1)[kept] * width
    return Band(seconds, np.nanmean(table, axis=0), q1, median, q3, runs[kept])
