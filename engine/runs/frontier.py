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

A point whose scores take few distinct values on the split (at most
`engine.verdict.FEW_DISTINCT_SCORES` in every run: a randomised classifier scored by its
probability, such as fairlearn's) is marked `few_scores`: its ties have no order, so a fairness
axis on ranks (pSP) measures it coarsely, and the plot and the tables say so beside it.

A run that honours κ (`engine.solvers.honour`) reports the model of the loosest inner κ′ whose
exact value met κ on the split it honours κ on (validation or train), so its point is that
model's. Runs that honour κ on a split and runs that do not are never averaged together: the
split is part of a point's key (`honour`), and the text frontier says it under its table.

A point is dominated when another point on the same interval has score ≥ and fairness ≥ its
own, one of them strictly. Points on different intervals are never compared: pSP on [5%, 30%)
and pSP on [5%, 90%) measure different things.

A run may yield a set of models, its front (e.g. paper 002's weighted-sum front: one model
w*(λ) per grid point λ of the group weights, §5 (a)). Each model of a run's front comes in as a
RunResult of its own with `front_of` the run's id, and becomes a frontier point of its own:

- it is never averaged with other points, not even with the same model of the same run on
  another seed (n = 1, no spread): a front is one run's curve;
- it is dominated when another model of the same front has score ≥ and fairness ≥ its own, one
  of them strictly: a front is filtered on its own, and neither dominates nor is dominated by
  the sweep's other points;
- it keeps its `label` ("λ = (0.25, 0.75)") and `coordinates`.

The model the run reports comes in the same way, marked `chosen`: a point of the front beside
its models (at the same place as one of them when it is one of them), filtered with them.

The other runs' points are what they would be without the fronts. `Frontier.ordinary` holds
them, `Frontier.fronts` the fronts by run, each in its run's order. Everything here is pure: no
files, no plotting.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.solvers.honour_rules import SPLIT_WORDS
from engine.verdict import FEW_DISTINCT_SCORES, few_scores

GAP_METRICS = frozenset({"psp", "pdp", "sp", "dp", "constraint"})
SCORE_METRICS = frozenset({"accuracy", "auc"})
SCORE_NAMES = {"accuracy": "accuracy", "auc": "AUC"}  # the scores a frontier's y axis can show
SPREADS = ("ci", "se")  # Student-t confidence half-width, standard error of the mean
PAPER_003_AXES = ("accuracy", "ci")  # paper 003, Fig. 1
PAPER_004_AXES = ("auc", "se")  # paper 004, Sec. 6: test AUC, standard errors over five seeds
DOMINATED_MARK = "·"
UNCONSTRAINED_MARK = "*"
MISSED_MARK = "!"
FEW_SCORES_MARK = "≈"
CHOSEN_MARK = "◆"

Interval = tuple[float, float]
GroupKey = tuple[str, float | None, Interval, str | None]


@dataclass(frozen=True)
class RunResult:
    """One finished run: its place in the sweep and its exact metrics, `metrics[split][name]`.

    A metric value is None when it could not be computed. `kappa` is None for the unconstrained
    solver. A model of a run's front has `front_of` set to its run's id (its `run_id` too), its
    `label` and `coordinates`; the model the run reports comes as one more, `chosen`. `honour`
    is the split the run honours κ on ("val" or "train"), None for a run solved at κ alone.
    """

    run_id: str
    solver: str
    kappa: float | None
    interval: Interval
    seed: int
    metrics: dict[str, dict[str, float | None]]
    front_of: str | None = None
    label: str = ""
    coordinates: dict[str, float | None] = field(default_factory=dict)
    chosen: bool = False
    honour: str | None = None


@dataclass(frozen=True)
class FrontierPoint:
    """The runs of one (solver, κ, interval), averaged over seeds: the frontier's score (y) and
    fairness (x) with their spreads, `*_spread` (None with one seed: one seed says nothing about
    the spread). `constraint` is the mean exact constrained quantity on the split and
    `meets_kappa` whether it is ≤ κ (None without κ or value). `distinct_scores` is the largest
    number of distinct scores of its runs on the split (None when a run does not report it).

    A point of a run's front (`front_of` is the run's id) is that one model, n = 1, with its
    `label` and its `coordinates` as (name, value) pairs, or the model the run reports
    (`chosen`); it is never `unconstrained` (the reference star). `honour` is the split its
    runs honour κ on, None when they solve at κ alone."""

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
    distinct_scores: int | None = None
    front_of: str | None = None
    label: str = ""
    coordinates: tuple[tuple[str, float | None], ...] = ()
    chosen: bool = False
    honour: str | None = None

    @property
    def few_scores(self) -> bool:
        """Whether its scores take few distinct values (module docstring)."""
        return few_scores(self.distinct_scores)


@dataclass(frozen=True)
class Frontier:
    """Frontier points, sorted by solver, interval and κ descending (unconstrained first), then
    the runs' fronts, each in its run's order; and the ids of the runs left out because the
    score or the metric was missing on the split (a run once, however many of its front's
    models lack it). `score` names the y axis, `spread` what ± stands for (`confidence` is the
    level of "ci")."""

    points: tuple[FrontierPoint, ...]
    skipped: tuple[str, ...]
    metric: str
    split: str
    confidence: float
    score: str = "accuracy"
    spread: str = "ci"

    @property
    def ordinary(self) -> tuple[FrontierPoint, ...]:
        """The points of runs that yield one model, averaged over seeds."""
        return tuple(p for p in self.points if p.front_of is None)

    @property
    def fronts(self) -> dict[str, tuple[FrontierPoint, ...]]:
        """Each run's front by the run's id, in the run's order."""
        fronts: dict[str, list[FrontierPoint]] = {}
        for point in self.points:
            if point.front_of is not None:
                fronts.setdefault(point.front_of, []).append(point)
        return {run_id: tuple(points) for run_id, points in fronts.items()}


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
    """Group the runs by (solver, κ, interval, honoured split), average each group's `score`
    and fairness over its seeds with their `spread`, mark the dominated and the unconstrained
    points, and count the runs that lack a needed metric. The models of a run's front are
    points of their own, marked dominated within their front only (module docstring)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    _check_choice("score", score, tuple(SCORE_NAMES))
    _check_choice("spread", spread, SPREADS)
    gap = is_gap(metric)
    groups: dict[GroupKey, list[tuple[str, float, float, float | None, int | None]]] = {}
    fronts: list[FrontierPoint] = []
    skipped: list[str] = []
    for run in results:
        if run.front_of is not None and run.front_of != run.run_id:
            raise ValueError(f"a model of run {run.front_of}'s front came as run {run.run_id}")
        values = _read(run, split, score, metric)
        if values is None:
            if run.front_of is None or run.run_id not in skipped:
                skipped.append(run.run_id)
            continue
        y, value = values
        fairness = 1.0 - value if gap else value
        constraint = run.metrics.get(split, {}).get("constraint")
        constraint = None if _missing(constraint) else float(constraint)
        distinct = run.metrics.get(split, {}).get("distinct_scores")
        distinct = None if _missing(distinct) else int(distinct)
        if run.front_of is not None:
            fronts.append(_front_point(run, y, fairness, constraint, distinct))
            continue
        key = (run.solver, run.kappa, (float(run.interval[0]), float(run.interval[1])), run.honour)
        groups.setdefault(key, []).append((run.run_id, y, fairness, constraint, distinct))
    points = [_point(key, runs, spread, confidence) for key, runs in groups.items()]
    points = _mark_dominated(points)
    points.sort(key=_display_order)
    points += _mark_dominated_within_fronts(fronts)
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


def front_table(points: Iterable[FrontierPoint]) -> list[dict[str, Any]]:
    """One flat row per point of a run's front, for printing or CSV: the run, the model's label
    and coordinates (a dict), its score and fairness, the constrained value against κ, whether
    another model of its front dominates it and whether it is the model the run reports."""
    return [
        {
            "run": p.front_of,
            "solver": p.solver,
            "label": p.label,
            "coordinates": dict(p.coordinates),
            "score": p.score,
            "fairness": p.fairness,
            "kappa": p.kappa,
            "constraint": p.constraint,
            "meets_kappa": p.meets_kappa,
            "dominated": p.dominated,
            "chosen": p.chosen,
        }
        for p in points
    ]


def coordinates_text(coordinates: Iterable[tuple[str, float | None]]) -> str:
    """A front model's coordinates in one line: "lambda.A = 0.25, beta = 1"."""
    return ", ".join(f"{name} = {'—' if value is None else format(value, 'g')}"
                     for name, value in coordinates)  # fmt: skip


def honoured_splits(points: Iterable[FrontierPoint]) -> list[str]:
    """The splits the points' runs honour κ on, in order of first appearance."""
    return list(dict.fromkeys(p.honour for p in points if p.honour is not None))


def honour_words(split: str) -> str:
    """What a point of runs that honour κ on `split` is, in one sentence."""
    words = SPLIT_WORDS[split]
    return (
        f"κ honoured on {words}: each run reports the model of the loosest inner κ′ ≤ κ "
        f"whose exact constrained value on {words} met κ, or, when none did, the loosest "
        f"within the sampling noise of {words} of the closest"
    )


def format_frontier(frontier: Frontier) -> str:
    """Aligned text for the command line, in the frontier's order, with a legend for the marks;
    the title names the score, the fairness axis and what ± stands for. Each run's front
    follows, one model a line in its run's order."""
    axis = f"1 − {frontier.metric}" if is_gap(frontier.metric) else frontier.metric
    score = SCORE_NAMES[frontier.score]
    title = (
        f"{score} vs fairness = {axis} on the {frontier.split} split, "
        f"mean ± {spread_name(frontier.spread, frontier.confidence)} over seeds"
    )
    lines = [title]
    ordinary, fronts = frontier.ordinary, frontier.fronts
    if ordinary:
        header = ("", "solver", "κ", "I", "n", score, "fairness")
        rows = [header, *(_text_row(p) for p in ordinary)]
        widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
        lines += [_align(row, widths) for row in rows]
        lines.append(
            f"{UNCONSTRAINED_MARK} unconstrained   {DOMINATED_MARK} dominated   "
            f"{MISSED_MARK} misses κ (exact constrained value on {frontier.split} > κ)"
        )
        lines += [honour_words(split) for split in honoured_splits(ordinary)]
        if any(p.few_scores for p in ordinary):
            lines.append(f"{FEW_SCORES_MARK} few distinct scores (≤ {FEW_DISTINCT_SCORES}, e.g. "
                         "a randomised classifier's probabilities): ties have no order, so "
                         "measures on ranks such as pSP are coarse")  # fmt: skip
    elif not fronts:
        lines.append(f"no run has both {score} and {frontier.metric} on the {frontier.split} split")
    lines += [format_front(frontier, run_id) for run_id in fronts]
    if frontier.skipped:
        lines.append(f"skipped {len(frontier.skipped)} run(s) with a missing metric")
    return "\n".join(lines)


def format_front(frontier: Frontier, run_id: str, quantity: str | None = None) -> str:
    """One run's front as aligned text: a title line, then one model a line in the run's order
    (its label, coordinates, score, fairness and the metric's own value, named `quantity` or by
    the metric), then a legend for the marks."""
    points = frontier.fronts.get(run_id, ())
    score, name = SCORE_NAMES[frontier.score], quantity or frontier.metric
    members = sum(1 for p in points if not p.chosen)
    title = f"front of run {run_id}"
    if not points:
        return f"{title}: no model has both {score} and {name} on the {frontier.split} split"
    gap = is_gap(frontier.metric)
    header = ("", "model", "coordinates", score, "fairness", name)
    rows = [header, *(
        (_front_mark(p), p.label, coordinates_text(p.coordinates), f"{p.score:.4f}",
         f"{p.fairness:.4f}", f"{1.0 - p.fairness if gap else p.fairness:.4f}")
        for p in points)]  # fmt: skip
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    legend = [(CHOSEN_MARK, "the model the run reports", any(p.chosen for p in points)),
              (DOMINATED_MARK, "dominated within its front", any(p.dominated for p in points)),
              (MISSED_MARK, "misses κ", any(p.meets_kappa is False for p in points)),
              (FEW_SCORES_MARK, f"few distinct scores (≤ {FEW_DISTINCT_SCORES}): pSP is coarse",
               any(p.few_scores for p in points))]  # fmt: skip
    return "\n".join([
        f"{title} ({points[0].solver}): {members} models, on the {frontier.split} split",
        *(_align(row, widths, left={0, 1, 2}) for row in rows),
        "   ".join(f"{mark} {words}" for mark, words, shown in legend if shown),
    ])  # fmt: skip


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
    runs: list[tuple[str, float, float, float | None, int | None]],
    spread: str,
    confidence: float,
) -> FrontierPoint:
    solver, kappa, interval, honour = key
    run_ids, scores, fairnesses, constraints, distincts = zip(*runs, strict=True)
    score, score_spread = mean_and_spread(scores, spread, confidence)
    fairness, fairness_spread = mean_and_spread(fairnesses, spread, confidence)
    known = [c for c in constraints if c is not None]
    constraint = float(np.mean(known)) if len(known) == len(constraints) else None
    meets = None if kappa is None or constraint is None else constraint <= kappa
    distinct = None if None in distincts else max(distincts)
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
        distinct_scores=distinct,
        honour=honour,
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


def _front_point(
    run: RunResult, score: float, fairness: float, constraint: float | None, distinct: int | None
) -> FrontierPoint:
    meets = None if run.kappa is None or constraint is None else constraint <= run.kappa
    return FrontierPoint(
        solver=run.solver,
        kappa=run.kappa,
        interval=(float(run.interval[0]), float(run.interval[1])),
        n=1,
        score=score,
        score_spread=None,
        fairness=fairness,
        fairness_spread=None,
        run_ids=(run.run_id,),
        dominated=False,
        unconstrained=False,
        constraint=constraint,
        meets_kappa=meets,
        distinct_scores=distinct,
        front_of=run.front_of,
        label=run.label,
        coordinates=tuple(
            (name, None if v is None else float(v)) for name, v in run.coordinates.items()
        ),  # fmt: skip
        chosen=run.chosen,
        honour=run.honour,
    )


def _mark_dominated_within_fronts(points: list[FrontierPoint]) -> list[FrontierPoint]:
    """The points of the fronts, each front together in its run's order, marked dominated
    within their own front."""
    by_front: dict[str, list[FrontierPoint]] = {}
    for point in points:
        by_front.setdefault(point.front_of, []).append(point)
    marked = []
    for front in by_front.values():
        mask = pareto_mask([p.fairness for p in front], [p.score for p in front])
        marked += [replace(p, dominated=not bool(on_front))
                   for p, on_front in zip(front, mask, strict=True)]  # fmt: skip
    return marked


def _display_order(point: FrontierPoint) -> tuple[str, Interval, bool, float]:
    kappa_down = -point.kappa if point.kappa is not None else 0.0
    return point.solver, point.interval, point.kappa is not None, kappa_down


def _text_row(point: FrontierPoint) -> tuple[str, ...]:
    mark = (
        (UNCONSTRAINED_MARK if point.unconstrained else "")
        + (DOMINATED_MARK if point.dominated else "")
        + (MISSED_MARK if point.meets_kappa is False else "")
        + (FEW_SCORES_MARK if point.few_scores else "")
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


def _front_mark(point: FrontierPoint) -> str:
    return (
        (CHOSEN_MARK if point.chosen else "")
        + (DOMINATED_MARK if point.dominated else "")
        + (MISSED_MARK if point.meets_kappa is False else "")
        + (FEW_SCORES_MARK if point.few_scores else "")
    )


def with_spread(value: float, spread: float | None) -> str:
    """The value with its spread ("0.8312 ± 0.0041"), alone when there is none (one seed)."""
    return f"{value:.4f}" if spread is None else f"{value:.4f} ± {spread:.4f}"


def _align(
    row: tuple[str, ...], widths: list[int], left: frozenset[int] | set[int] = frozenset({0, 1})
) -> str:
    cells = [
        cell.ljust(width) if c in left else cell.rjust(width)
        for c, (cell, width) in enumerate(zip(row, widths, strict=True))
    ]
    return "  ".join(cells).rstrip()
