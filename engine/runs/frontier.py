"""Score–fairness frontiers from finished runs (paper 003, Fig. 1; paper 004, Sec. 6).

A sweep is a grid of runs that differ in the tolerance κ, the interval I = [α, β), the solver and
the seed. The runs that differ only in the seed make one frontier point: the mean score (y) and
the mean fairness (x) over the seeds, each with its spread over the seeds.

The score is accuracy (paper 003) or ROC AUC (paper 004, whose pairwise AUC objective only ranks
the scores, so that accuracy at the threshold says nothing about it). The spread is the
Student-t confidence half-width of the mean ("ci") or its standard error s/√n ("se", the error
bars of paper 004, Sec. 6).

Fairness grows to the right, so a metric that measures a gap is turned around:

    metric                                     kind    fairness
    psp, pdp, sp, dp, any name ending "_gap"   gap     1 − value
    accuracy, auc                              score   value

Any other name is refused rather than guessed.

A point meets κ when the mean over its seeds of the exact constrained quantity (the metric
"constraint": pSP for pSP runs, the EO gap for EO runs, ...) on the split is ≤ κ; a point that
misses κ is drawn differently, whatever metric is on the axis.

A point is dominated when another point on the same interval has score ≥ and fairness ≥ its
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
SCORE_NAMES = {"accuracy": "accuracy", "auc": "AUC"}  # the scores a frontier's y axis can show
SPREADS = ("ci", "se")  # Student-t confidence half-width, standard error of the mean
PAPER_003_AXES = ("accuracy", "ci")  # paper 003, Fig. 1
PAPER_004_AXES = ("auc", "se")  # paper 004, Sec. 6: test AUC, standard errors over five seeds
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
    """The runs of one (solver, κ, interval), averaged over seeds: the frontier's score (y) and
    fairness (x) with their spreads, `*_spread` (None with one seed: one seed says nothing about
    the spread). `constraint` is the mean exact constrained quantity on the split and
    `meets_kappa` whether it is ≤ κ (None without κ or value)."""

    solver: str
    kappa: float | None
    interval: Interval
    n: int
    score: float
    score_spread: float | None
    fairness: float
    fairness_spread: float | None
    run_ids: tuple[str, ...]
    dominated: bool
    unconstrained: bool
    constraint: float | None = None
    meets_kappa: bool | None = None


@dataclass(frozen=True)
class Frontier:
    """Frontier points, sorted by solver, interval and κ descending (unconstrained first), and
    the ids of the runs left out because the score or the metric was missing on the split.
    `score` names the y axis, `spread` what ± stands for (`confidence` is the level of "ci")."""

    points: tuple[FrontierPoint, ...]
    skipped: tuple[str, ...]
    metric: str
    split: str
    confidence: float
    score: str = "accuracy"
    spread: str = "ci"


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
    score: str = "accuracy",
    spread: str = "ci",
) -> Frontier:
    """Group the runs by (solver, κ, interval), average each group's `score` and fairness over
    its seeds with their `spread`, mark the dominated and the unconstrained points, and count
    the runs that lack a needed metric."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    _check_choice("score", score, tuple(SCORE_NAMES))
    _check_choice("spread", spread, SPREADS)
    gap = is_gap(metric)
    groups: dict[GroupKey, list[tuple[str, float, float, float | None]]] = {}
    skipped: list[str] = []
    for run in results:
        values = _read(run, split, score, metric)
        if values is None:
            skipped.append(run.run_id)
            continue
        y, value = values
        fairness = 1.0 - value if gap else value
        constraint = run.metrics.get(split, {}).get("constraint")
        constraint = None if _missing(constraint) else float(constraint)
        key = (run.solver, run.kappa, (float(run.interval[0]), float(run.interval[1])))
        groups.setdefault(key, []).append((run.run_id, y, fairness, constraint))
    points = [_point(key, runs, spread, confidence) for key, runs in groups.items()]
    points = _mark_dominated(points)
    points.sort(key=_display_order)
    return Frontier(tuple(points), tuple(skipped), metric, split, confidence, score, spread)


def frontier_points(
    results: Iterable[RunResult],
    metric: str = "psp",
    split: str = "test",
    confidence: float = 0.95,
    score: str = "accuracy",
    spread: str = "ci",
) -> list[FrontierPoint]:
    """The points of `frontier(...)`; call `frontier` to learn which runs were skipped."""
    return list(frontier(results, metric, split, confidence, score, spread).points)


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


def mean_and_spread(
    values: Sequence[float], spread: str = "ci", confidence: float = 0.95
) -> tuple[float, float | None]:
    """Sample mean and its spread: the standard error s/√n (s with n − 1 degrees of freedom) for
    "se", the Student-t half-width t·s/√n of its `confidence` interval for "ci"; None for one
    value (one seed says nothing about the spread)."""
    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if data.size == 1:
        return mean, None
    standard_error = float(data.std(ddof=1) / math.sqrt(data.size))
    if spread == "se":
        return mean, standard_error
    from scipy import stats  # imported here: scipy.stats takes about a second to import

    return mean, float(stats.t.ppf(0.5 + confidence / 2.0, df=data.size - 1) * standard_error)


def spread_name(spread: str, confidence: float = 0.95) -> str:
    """What ± stands for: "95 % CI" or "s.e."."""
    return "s.e." if spread == "se" else f"{100 * confidence:g} % CI"


def frontier_table(points: Iterable[FrontierPoint]) -> list[dict[str, Any]]:
    """One flat row per point, for printing or CSV (κ is None for the unconstrained model)."""
    return [
        {
            "solver": p.solver,
            "kappa": p.kappa,
            "alpha": p.interval[0],
            "beta": p.interval[1],
            "n": p.n,
            "score": p.score,
            "score_spread": p.score_spread,
            "fairness": p.fairness,
            "fairness_spread": p.fairness_spread,
            "constraint": p.constraint,
            "meets_kappa": p.meets_kappa,
            "dominated": p.dominated,
            "unconstrained": p.unconstrained,
        }
        for p in points
    ]


def format_frontier(frontier: Frontier) -> str:
    """Aligned text for the command line, in the frontier's order, with a legend for the marks;
    the title names the score, the fairness axis and what ± stands for."""
    axis = f"1 − {frontier.metric}" if is_gap(frontier.metric) else frontier.metric
    score = SCORE_NAMES[frontier.score]
    title = (
        f"{score} vs fairness = {axis} on the {frontier.split} split, "
        f"mean ± {spread_name(frontier.spread, frontier.confidence)} over seeds"
    )
    lines = [title]
    if frontier.points:
        header = ("", "solver", "κ", "I", "n", score, "fairness")
        rows = [header, *(_text_row(p) for p in frontier.points)]
        widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
        lines += [_align(row, widths) for row in rows]
        lines.append(
            f"{UNCONSTRAINED_MARK} unconstrained   {DOMINATED_MARK} dominated   "
            f"{MISSED_MARK} misses κ (exact constrained value on {frontier.split} > κ)"
        )
    else:
        lines.append(f"no run has both {score} and {frontier.metric} on the {frontier.split} split")
    if frontier.skipped:
        lines.append(f"skipped {len(frontier.skipped)} run(s) with a missing metric")
    return "\n".join(lines)


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"unknown {name} {value!r}: use one of {', '.join(allowed)}")


def _read(run: RunResult, split: str, score: str, metric: str) -> tuple[float, float] | None:
    row = run.metrics.get(split, {})
    y, value = row.get(score), row.get(metric)
    if _missing(y) or _missing(value):
        return None
    return float(y), float(value)


def _missing(value: float | None) -> bool:
    return value is None or not math.isfinite(value)


def _point(
    key: GroupKey,
    runs: list[tuple[str, float, float, float | None]],
    spread: str,
    confidence: float,
) -> FrontierPoint:
    solver, kappa, interval = key
    run_ids, scores, fairnesses, constraints = zip(*runs, strict=True)
    score, score_spread = mean_and_spread(scores, spread, confidence)
    fairness, fairness_spread = mean_and_spread(fairnesses, spread, confidence)
    known = [c for c in constraints if c is not None]
    constraint = float(np.mean(known)) if len(known) == len(constraints) else None
    meets = None if kappa is None or constraint is None else constraint <= kappa
    return FrontierPoint(
        solver=solver,
        kappa=kappa,
        interval=interval,
        n=len(runs),
        score=score,
        score_spread=score_spread,
        fairness=fairness,
        fairness_spread=fairness_spread,
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
        score = [points[i].score for i in indices]
        for i, on_front in zip(indices, pareto_mask(fairness, score), strict=True):
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
        with_spread(point.score, point.score_spread),
        with_spread(point.fairness, point.fairness_spread),
    )


def with_spread(value: float, spread: float | None) -> str:
    """The value with its spread ("0.8312 ± 0.0041"), alone when there is none (one seed)."""
    return f"{value:.4f}" if spread is None else f"{value:.4f} ± {spread:.4f}"


def _align(row: tuple[str, ...], widths: list[int]) -> str:
    left = {0, 1}
    cells = [
        cell.ljust(width) if c in left else cell.rjust(width)
        for c, (cell, width) in enumerate(zip(row, widths, strict=True))
    ]
    return "  ".join(cells).rstrip()
