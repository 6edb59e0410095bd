"""Accuracy–fairness frontiers from finished runs (paper 003, Fig. 1).

A sweep is a grid of runs that differ in the tolerance κ, the interval I = [α, β), the solver and
the seed. The runs that differ only in the seed make one frontier point: mean accuracy (y) and
mean fairness (x) over the seeds, each with a Student-t confidence half-width.

Fairness grows to the right, so a metric that measures a gap is turned around:

    metric                                     kind    fairness
    psp, pdp, sp, dp, any name ending "_gap"   gap     1 − value
    accuracy, auc                              score   value

Any other name is refused rather than guessed.

A point meets κ when the mean over its seeds of the exact constrained quantity (the metric
"constraint": pSP for pSP runs, the EO gap for EO runs, ...) on the split is ≤ κ; a point that
misses κ is drawn differently, whatever metric is on the axis.

A point is dominated when another point on the same interval has accuracy ≥ and fairness ≥ its
own, one of them strictly. Points on different intervals are never compared: pSP on [5%, 30%)
and pSP on [5%, 90%) measure different things. Everything here is pure: no files, no plotting.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

GAP_METRICS = frozenset({"psp", "pdp", "sp", "dp", "constraint"})
SCORE_METRICS = frozenset({"accuracy", "auc"})
DOMINATED_MARK = "·"
UNCONSTRAINED_MARK = "*"
MISSED_MARK = "!"

Interval = tuple[float, float]
GroupKey = tuple[str, float | None, Interval]


@dataclass(frozen=True)
class RunResult:
    """One finished run: its place in the sweep and its exact metrics, `metrics[split][name]`.

    A metric value is None when it could not be computed. `kappa` is None for the unconstrained
    solver.
    """

    run_id: str
    solver: str
    kappa: float | None
    interval: Interval
    seed: int
    metrics: dict[str, dict[str, float | None]]


@dataclass(frozen=True)
class FrontierPoint:
    """The runs of one (solver, κ, interval), averaged over seeds; `*_ci` are half-widths
    (None with one seed: no interval can be given). `constraint` is the mean exact constrained
    quantity on the split and `meets_kappa` whether it is ≤ κ (None without κ or value)."""

    solver: str
    kappa: float | None
    interval: Interval
    n: int
    accuracy: float
    accuracy_ci: float | None
    fairness: float
    fairness_ci: float | None
    run_ids: tuple[str, ...]
    dominated: bool
    unconstrained: bool
    constraint: float | None = None
    meets_kappa: bool | None = None


@dataclass(frozen=True)
class Frontier:
    """Frontier points, sorted by solver, interval and κ descending (unconstrained first), and
    the ids of the runs left out because accuracy or the metric was missing on the split."""

    points: tuple[FrontierPoint, ...]
    skipped: tuple[str, ...]
    metric: str
    split: str
    confidence: float


def is_gap(metric: str) -> bool:
    """True when lower is fairer (fairness = 1 − value), False when higher is better."""
    if metric in GAP_METRICS or metric.endswith("_gap"):
        return True
    if metric in SCORE_METRICS:
        return False
    known = ", ".join(sorted(GAP_METRICS | SCORE_METRICS))
    raise ValueError(f"unknown metric {metric!r}: use one of {known} or a name ending in '_gap'")


def frontier(
    results: Iterable[RunResult],
    metric: str = "psp",
    split: str = "test",
    confidence: float = 0.95,
) -> Frontier:
    """Group the runs by (solver, κ, interval), average each group over its seeds, mark the
    dominated and the unconstrained points, and count the runs that lack a needed metric."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    gap = is_gap(metric)
    groups: dict[GroupKey, list[tuple[str, float, float, float | None]]] = {}
    skipped: list[str] = []
    for run in results:
        values = _read(run, split, metric)
        if values is None:
            skipped.append(run.run_id)
            continue
        accuracy, value = values
        fairness = 1.0 - value if gap else value
        constraint = run.metrics.get(split, {}).get("constraint")
        constraint = None if _missing(constraint) else float(constraint)
        key = (run.solver, run.kappa, (float(run.interval[0]), float(run.interval[1])))
        groups.setdefault(key, []).append((run.run_id, accuracy, fairness, constraint))
    points = _mark_dominated([_point(key, runs, confidence) for key, runs in groups.items()])
    points.sort(key=_display_order)
    return Frontier(tuple(points), tuple(skipped), metric, split, confidence)


def frontier_points(
    results: Iterable[RunResult],
    metric: str = "psp",
    split: str = "test",
    confidence: float = 0.95,
) -> list[FrontierPoint]:
    """The points of `frontier(...)`; call `frontier` to learn which runs were skipped."""
    return list(frontier(results, metric, split, confidence).points)


def pareto_mask(xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray) -> np.ndarray:
    """True where no other point has x ≥ and y ≥ with one strictly greater (higher is better).

    Equal points do not dominate each other. Sorting by x descending, then y descending, makes
    this O(n log n): a point is dominated by an earlier x-group whose best y is ≥ its y, or by a
    point of its own x-group with a larger y.
    """
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"xs and ys must be 1-D and of equal length, not {x.shape} and {y.shape}")
    if x.size == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((-y, -x))
    x_sorted, y_sorted = x[order], y[order]
    new_group = np.concatenate([[True], x_sorted[1:] != x_sorted[:-1]])
    group = np.cumsum(new_group) - 1
    group_best = y_sorted[new_group]
    best_before = np.concatenate([[-np.inf], np.maximum.accumulate(group_best)[:-1]])
    dominated = (y_sorted <= best_before[group]) | (y_sorted < group_best[group])
    mask = np.empty(x.size, dtype=bool)
    mask[order] = ~dominated
    return mask


def mean_and_half_width(
    values: Sequence[float], confidence: float
) -> tuple[float, float | None]:
    """Sample mean and the Student-t half-width of its confidence interval (None for one value:
    one seed says nothing about the spread)."""
    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if data.size == 1:
        return mean, None
    from scipy import stats  # imported here: scipy.stats takes about a second to import

    t = stats.t.ppf(0.5 + confidence / 2.0, df=data.size - 1)
    return mean, float(t * data.std(ddof=1) / math.sqrt(data.size))


def frontier_table(points: Iterable[FrontierPoint]) -> list[dict[str, Any]]:
    """One flat row per point, for printing or CSV (κ is None for the unconstrained model)."""
    return [
        {
            "solver": p.solver,
            "kappa": p.kappa,
            "alpha": p.interval[0],
            "beta": p.interval[1],
            "n": p.n,
            "accuracy": p.accuracy,
            "accuracy_ci": p.accuracy_ci,
            "fairness": p.fairness,
            "fairness_ci": p.fairness_ci,
            "constraint": p.constraint,
            "meets_kappa": p.meets_kappa,
            "dominated": p.dominated,
            "unconstrained": p.unconstrained,
        }
        for p in points
    ]


def format_frontier(frontier: Frontier) -> str:
    """Aligned text for the command line, in the frontier's order, with a legend for the marks."""
    axis = f"1 − {frontier.metric}" if is_gap(frontier.metric) else frontier.metric
    title = (
        f"accuracy vs fairness = {axis} on the {frontier.split} split, "
        f"mean ± {100 * frontier.confidence:g} % CI over seeds"
    )
    lines = [title]
    if frontier.points:
        header = ("", "solver", "κ", "I", "n", "accuracy", "fairness")
        rows = [header, *(_text_row(p) for p in frontier.points)]
        widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
        lines += [_align(row, widths) for row in rows]
        lines.append(f"{UNCONSTRAINED_MARK} unconstrained   {DOMINATED_MARK} dominated   "
                     f"{MISSED_MARK} misses κ (exact constrained value on {frontier.split} > κ)")
    else:
        lines.append(
            f"no run has both accuracy and {frontier.metric} on the {frontier.split} split"
        )
    if frontier.skipped:
        lines.append(f"skipped {len(frontier.skipped)} run(s) with a missing metric")
    return "\n".join(lines)


def _read(run: RunResult, split: str, metric: str) -> tuple[float, float] | None:
    row = run.metrics.get(split, {})
    accuracy, value = row.get("accuracy"), row.get(metric)
    if _missing(accuracy) or _missing(value):
        return None
    return float(accuracy), float(value)


def _missing(value: float | None) -> bool:
    return value is None or not math.isfinite(value)


def _point(
    key: GroupKey, runs: list[tuple[str, float, float, float | None]], confidence: float
) -> FrontierPoint:
    solver, kappa, interval = key
    run_ids, accuracies, fairnesses, constraints = zip(*runs, strict=True)
    accuracy, accuracy_ci = mean_and_half_width(accuracies, confidence)
    fairness, fairness_ci = mean_and_half_width(fairnesses, confidence)
    known = [c for c in constraints if c is not None]
    constraint = float(np.mean(known)) if len(known) == len(constraints) else None
    meets = None if kappa is None or constraint is None else constraint <= kappa
    return FrontierPoint(
        solver=solver,
        kappa=kappa,
        interval=interval,
        n=len(runs),
        accuracy=accuracy,
        accuracy_ci=accuracy_ci,
        fairness=fairness,
        fairness_ci=fairness_ci,
        run_ids=tuple(run_ids),
        dominated=False,
        unconstrained=kappa is None,
        constraint=constraint,
        meets_kappa=meets,
    )


def _mark_dominated(points: list[FrontierPoint]) -> list[FrontierPoint]:
    by_interval: dict[Interval, list[int]] = {}
    for i, point in enumerate(points):
        by_interval.setdefault(point.interval, []).append(i)
    marked = list(points)
    for indices in by_interval.values():
        fairness = [points[i].fairness for i in indices]
        accuracy = [points[i].accuracy for i in indices]
        for i, on_front in zip(indices, pareto_mask(fairness, accuracy), strict=True):
            marked[i] = replace(points[i], dominated=not bool(on_front))
    return marked


def _display_order(point: FrontierPoint) -> tuple[str, Interval, bool, float]:
    kappa_down = -point.kappa if point.kappa is not None else 0.0
    return point.solver, point.interval, point.kappa is not None, kappa_down


def _text_row(point: FrontierPoint) -> tuple[str, ...]:
    mark = (
        (UNCONSTRAINED_MARK if point.unconstrained else "")
        + (DOMINATED_MARK if point.dominated else "")
        + (MISSED_MARK if point.meets_kappa is False else "")
    )
    kappa = "—" if point.kappa is None else f"{point.kappa:g}"
    alpha, beta = point.interval
    return (
        mark,
        point.solver,
        kappa,
        f"[{100 * alpha:g}%, {100 * beta:g}%)",
        str(point.n),
        with_half_width(point.accuracy, point.accuracy_ci),
        with_half_width(point.fairness, point.fairness_ci),
    )


def with_half_width(value: float, half_width: float | None) -> str:
    """"0.8312 ± 0.0041", or the value alone when there is no interval (one seed)."""
    return f"{value:.4f}" if half_width is None else f"{value:.4f} ± {half_width:.4f}"


def _align(row: tuple[str, ...], widths: list[int]) -> str:
    left = {0, 1}
    cells = [
        cell.ljust(width) if c in left else cell.rjust(width)
        for c, (cell, width) in enumerate(zip(row, widths, strict=True))
    ]
    return "  ".join(cells).rstrip()
