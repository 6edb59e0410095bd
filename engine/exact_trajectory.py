"""A run's exact records as a trajectory: markers, joined by lines only where the records are
consecutive.

The driver records exact metrics on a schedule (`engine.solvers.run_clock`): the spacing of its
exact records changes slowly, so two that are much farther apart than the records beside them
have a stretch between them that nothing measured (a long call of the solver, a record that
came late). A straight line across it would draw a trajectory that was never seen: the start
and the end of a run that recorded nothing in between are two points, not a line. So the line
breaks

- where the solve changes, in a run that holds κ (`engine.solvers.solve_sequence`: each solve
  is its own path, under its own constraint, although its records run on from the last);
- across a spacing more than `GAP_FACTOR` times each spacing beside it in the solve, and across
  a solve's only spacing (two records alone show no schedule to be consecutive on).

Spacings are read in the records' own seconds, whatever the figure's x axis, as the schedule
keeps them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from engine.solvers.records import SOLVE

GAP_FACTOR = 4.0  # a spacing this many times those beside it is a gap
MAX_EXACT_POINTS = 1000  # per line: an old run of hours recorded thousands of them
EXACT_MARKER_SIZE = 5  # pixels: dense enough records read as a line of dots

Reading = Callable[[dict[str, Any]], float | None]


def consecutive(records: Sequence[dict[str, Any]]) -> np.ndarray:
    """For each record after the first, whether it is consecutive with the one before (see the
    module's text): booleans, one fewer than the records."""
    if len(records) < 2:
        return np.zeros(0, dtype=bool)
    seconds = np.array([float(r.get("seconds") or 0.0) for r in records])
    solves = [(r.get("state") or {}).get(SOLVE) for r in records]
    joined = np.array([a == b for a, b in zip(solves[:-1], solves[1:], strict=True)])
    spacing = np.diff(seconds)
    for start, stop in _runs(joined):  # the spacings within one solve: [start, stop)
        joined[start:stop] = _regular(spacing[start:stop])
    return joined


def _runs(joined: np.ndarray) -> list[tuple[int, int]]:
    """The stretches of True in `joined`, as [start, stop) pairs."""
    edges = np.diff(np.concatenate([[0], joined.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True))


def _regular(spacing: np.ndarray) -> np.ndarray:
    """Whether each spacing of one solve's records is no gap: at most `GAP_FACTOR` times the
    longer of the spacings beside it; a lone spacing is a gap."""
    if len(spacing) < 2:
        return np.zeros(len(spacing), dtype=bool)
    before = np.concatenate([[0.0], spacing[:-1]])
    after = np.concatenate([spacing[1:], [0.0]])
    return spacing <= GAP_FACTOR * np.maximum(before, after)


def exact_points(
    records: Sequence[dict[str, Any]],
    at: Reading,
    value: Reading,
    *more: Reading,
    max_points: int = MAX_EXACT_POINTS,
) -> np.ndarray:
    """Rows (x, value, *more) of the exact `records` that have a position and a value (a missing
    further value is NaN), at most `max_points` of them evenly spread, with a row of NaN
    between two that are not consecutive (`consecutive`): Plotly breaks a line there and keeps
    the markers."""
    kept = [r for r in records if at(r) is not None and value(r) is not None]
    if len(kept) > max_points:
        kept = [
            kept[i]
            for i in np.unique(np.linspace(0, len(kept) - 1, max_points).round()).astype(int)
        ]
    rows = np.array([(at(r), value(r), *(m(r) for m in more)) for r in kept], dtype=np.float64)
    rows = rows.reshape(-1, 2 + len(more))
    breaks = np.flatnonzero(~consecutive(kept)) + 1  # a NaN row before each of these
    return np.insert(rows, breaks, np.nan, axis=0)
