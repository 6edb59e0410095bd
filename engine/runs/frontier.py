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

Every point carries the 95 % bands of both coordinates (`score_band`, `fairness_band`): with
one seed, the held-out interval of its run's values (`engine.fairness.intervals`, stored beside
its metrics), so a single seed is not shown as exact; with several, mean ± the spread over the
seeds. Its `state` against κ is that of the verdict (`engine.verdict.KappaState`): one run's
constrained value judged by its interval on the split; over several seeds, their mean judged by
its Student-t confidence interval over the seeds. A point that misses κ is drawn differently,
whatever metric is on the axis.

A point whose scores take few distinct values on the split (at most
`engine.model_quality.FEW_DISTINCT_SCORES` in every run: a randomised classifier scored by its
probability, such as fairlearn's) is marked `few_scores`: its ties have no order, so a fairness
axis on ranks (pSP) measures it coarsely, and the plot and the tables say so beside it.

A run that honours κ (`engine.solvers.honour`) reports the model of the loosest inner κ′ whose
exact value met κ on the split it honours κ on (validation or train), so its point is that
model's. Runs that honour κ on a split and runs that do not are never averaged together: the
split is part of a point's key (`honour`), and the text frontier says it under its table.

A point whose model is no better than a constant one on the split, or that the split cannot
tell from always predicting the majority class (`engine.verdict.majority_finding`), carries
which and why in `degenerate`; `unconverged` counts its runs that ended on a budget or otherwise not converged
(their `status`, where known). A point that misses κ or is degenerate is not `eligible`: it is
never on a Pareto line and dominates no other point.

A point is dominated when an eligible point on the same interval has score ≥ and fairness ≥
its own, one of them strictly. Points on different intervals are never compared: pSP on [5%,
30%) and pSP on [5%, 90%) measure different things.

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

import numpy as np

from engine.model_quality import HIGH, LOW, few_scores
from engine.status import RunStatus
from engine.verdict import KappaState, Label, SplitCheck, majority_finding

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
CANNOT_TELL_MARK = "?"
DEGENERATE_MARK = "⊘"
NOT_CONVERGED_MARK = "†"

Interval = tuple[float, float]
Band = tuple[float, float]  # a coordinate's 95 % band, (low, high)
GroupKey = tuple[str, float | None, Interval, str | None]


@dataclass(frozen=True)
class RunResult:
    """One finished run: its place in the sweep and its exact metrics, `metrics[split][name]`.

    A metric value is None when it could not be computed. `kappa` is None for the unconstrained
    solver. A model of a run's front has `front_of` set to its run's id (its `run_id` too), its
    `label` and `coordinates`; the model the run reports comes as one more, `chosen`. `honour`
    is the split the run honours κ on ("val" or "train"), None for a run solved at κ alone;
    `status` how it ended, where known.
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
    status: RunStatus | None = None


@dataclass(frozen=True)
class FrontierPoint:
    """The runs of one (solver, κ, interval), averaged over seeds: the frontier's score (y) and
    fairness (x) with their spreads over seeds, `*_spread` (None with one seed: one seed says
    nothing about the spread), and their 95 % bands, `*_band` (module docstring; None where a
    run has no interval). `constraint` is the mean exact constrained quantity on the split and
    `state` where the split puts it against κ (None without κ or value). `distinct_scores` is
    the largest number of distinct scores of its runs on the split (None when a run does not
    report it).

    A point of a run's front (`front_of` is the run's id) is that one model, n = 1, with its
    `label` and its `coordinates` as (name, value) pairs, or the model the run reports
    (`chosen`); it is never `unconstrained` (the reference star). `honour` is the split its
    runs honour κ on, None when they solve at κ alone. `degenerate` says whether it is no better
    than a constant model, or cannot be told from the majority class, on the split, and why
    (`engine.verdict.majority_finding` of one of its runs; None for neither); `unconverged`
    counts its runs that did not end converged."""

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
    state: KappaState | None = None
    distinct_scores: int | None = None
    front_of: str | None = None
    label: str = ""
    coordinates: tuple[tuple[str, float | None], ...] = ()
    chosen: bool = False
    honour: str | None = None

    score_band: Band | None = None
    fairness_band: Band | None = None
    degenerate: tuple[Label, str] | None = None
    unconverged: int = 0

    @property
    def eligible(self) -> bool:
        """Whether it may stand on a Pareto line: it neither misses κ nor is degenerate."""
        return self.degenerate is None and self.meets_kappa is not False

    @property
    def few_scores(self) -> bool:
        """Whether its scores take few distinct values (module docstring)."""
        return few_scores(self.distinct_scores)

    @property
    def meets_kappa(self) -> bool | None:
        """True when the split shows it within κ, False when it shows it above; None when the
        split cannot tell, or there is no κ."""
        if self.state is None or self.state is KappaState.CANNOT_TELL:
            return None
        return self.state is KappaState.MEETS


@dataclass(frozen=True)
class Frontier:
    """Frontier points, sorted by solver, interval and κ descending (unconstrained first), then
    the runs' fronts, each in its run's order; and the ids of the runs left out because the
    score or the metric was missing on the split (a run once, however many of its front's
    models lack it). `score` names the y axis, `spread` what ± stands for (`confidence` is the
    level of "ci"). `majority` is the accuracy of always predicting the majority class on the
    split (the mean over the runs that report it; None when none does)."""

    points: tuple[FrontierPoint, ...]
    skipped: tuple[str, ...]
    metric: str
    split: str
    confidence: float
    score: str = "accuracy"
    spread: str = "ci"
    majority: float | None = None

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
    groups: dict[GroupKey, list[_Measured]] = {}
    fronts: list[FrontierPoint] = []
    skipped: list[str] = []
    majorities: list[float] = []
    for run in results:
        if run.front_of is not None and run.front_of != run.run_id:
            raise ValueError(f"a model of run {run.front_of}'s front came as run {run.run_id}")
        values = _read(run, split, score, metric)
        if values is None:
            if run.front_of is None or run.run_id not in skipped:
                skipped.append(run.run_id)
            continue
        measured = _measure(run, split, score, metric, values, gap)
        majority = _number(run.metrics.get(split, {}).get("majority"))
        if majority is not None and run.front_of is None:
            majorities.append(majority)
        if run.front_of is not None:
            fronts.append(_front_point(run, measured))
            continue
        key = (run.solver, run.kappa, (float(run.interval[0]), float(run.interval[1])), run.honour)
        groups.setdefault(key, []).append(measured)
    points = [_point(key, runs, spread, confidence) for key, runs in groups.items()]
    points = _mark_dominated(points)
    points.sort(key=_display_order)
    points += _mark_dominated_within_fronts(fronts)
    majority = float(np.mean(majorities)) if majorities else None
    return Frontier(
        tuple(points), tuple(skipped), metric, split, confidence, score, spread, majority
    )


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


@dataclass(frozen=True)
class _Measured:
    """One run's coordinates on a split: score and fairness with their 95 % bands, the exact
    constrained value and its state against κ, and its number of distinct scores."""

    run_id: str
    score: float
    fairness: float
    score_band: Band | None
    fairness_band: Band | None
    constraint: float | None
    state: KappaState | None
    distinct: int | None
    degenerate: tuple[Label, str] | None
    converged: bool | None


def _measure(
    run: RunResult,
    split: str,
    score: str,
    metric: str,
    values: tuple[float, float],
    gap: bool,
) -> _Measured:
    row = run.metrics.get(split, {})
    y, value = values
    constraint = _number(row.get("constraint"))
    band = _band(row, metric, value)
    fairness_band = (1.0 - band[1], 1.0 - band[0]) if band and gap else band
    check = SplitCheck(
        split,
        constraint,
        run.kappa,
        None,
        _number(row.get("constraint" + LOW)),
        _number(row.get("constraint" + HIGH)),
    )
    distinct = _number(row.get("distinct_scores"))
    converged = None if run.status is None else run.status is RunStatus.CONVERGED
    return _Measured(
        run.run_id,
        y,
        1.0 - value if gap else value,
        _band(row, score, y),
        fairness_band,
        constraint,
        check.state,
        None if distinct is None else int(distinct),
        majority_finding(row, thresholded=score == "accuracy"),
        converged,
    )


def _band(row: dict[str, float | None], metric: str, value: float) -> Band | None:
    """The stored 95 % interval of `metric`, or of the metric it holds under another name (the
    constrained value "constraint" that is "psp" of a pSP run, or a reference run's "psp" shown
    as its "constraint"); None without one."""
    names = [metric] + [name[: -len(LOW)] for name in row if name.endswith(LOW)]
    for name in names:
        low, high = _number(row.get(name + LOW)), _number(row.get(name + HIGH))
        if low is not None and high is not None and (name == metric or row.get(name) == value):
            return low, high
    return None


def _number(value: float | None) -> float | None:
    return None if _missing(value) else float(value)


def _point(key: GroupKey, runs: list[_Measured], spread: str, confidence: float) -> FrontierPoint:
    solver, kappa, interval, honour = key
    score, score_spread = mean_and_spread([r.score for r in runs], spread, confidence)
    fairness, fairness_spread = mean_and_spread([r.fairness for r in runs], spread, confidence)
    known = [r.constraint for r in runs if r.constraint is not None]
    constraint, state = None, None
    if len(known) == len(runs):
        constraint, half = mean_and_spread(known, "ci", confidence)
        state = (
            runs[0].state
            if len(runs) == 1
            else SplitCheck(
                "seeds", constraint, kappa, None, *(_around(constraint, half) or (None, None))
            ).state
        )
    distincts = [r.distinct for r in runs]
    if len(runs) == 1:
        score_band, fairness_band = runs[0].score_band, runs[0].fairness_band
    else:
        score_band = _around(score, score_spread)
        fairness_band = _around(fairness, fairness_spread)
    return FrontierPoint(
        solver=solver,
        kappa=kappa,
        interval=interval,
        n=len(runs),
        score=score,
        score_spread=score_spread,
        fairness=fairness,
        fairness_spread=fairness_spread,
        run_ids=tuple(r.run_id for r in runs),
        dominated=False,
        unconstrained=kappa is None,
        constraint=constraint,
        state=None if kappa is None else state,
        distinct_scores=None if None in distincts else max(distincts),
        honour=honour,
        score_band=score_band,
        fairness_band=fairness_band,
        degenerate=next((r.degenerate for r in runs if r.degenerate), None),
        unconverged=sum(r.converged is False for r in runs),
    )


def _around(value: float, spread: float | None) -> Band | None:
    return None if spread is None else (value - spread, value + spread)


def _mark_dominated(points: list[FrontierPoint]) -> list[FrontierPoint]:
    by_interval: dict[Interval, list[int]] = {}
    for i, point in enumerate(points):
        by_interval.setdefault(point.interval, []).append(i)
    marked = list(points)
    for indices in by_interval.values():
        mine = [points[i] for i in indices]
        for i, dominated in zip(indices, dominated_mask(mine), strict=True):
            marked[i] = replace(points[i], dominated=bool(dominated))
    return marked


def dominated_mask(points: Sequence[FrontierPoint]) -> np.ndarray:
    """True where an eligible point of `points` has fairness ≥ and score ≥ the point's, one of
    them strictly: the eligible points among themselves (`pareto_mask`), each other point
    against them."""
    fairness = np.array([p.fairness for p in points], dtype=float)
    score = np.array([p.score for p in points], dtype=float)
    eligible = np.array([p.eligible for p in points], dtype=bool)
    dominated = np.zeros(len(points), dtype=bool)
    dominated[eligible] = ~pareto_mask(fairness[eligible], score[eligible])
    for i in np.flatnonzero(~eligible):
        at_least = (fairness[eligible] >= fairness[i]) & (score[eligible] >= score[i])
        better = (fairness[eligible] > fairness[i]) | (score[eligible] > score[i])
        dominated[i] = bool(np.any(at_least & better))
    return dominated


def _front_point(run: RunResult, measured: _Measured) -> FrontierPoint:
    return FrontierPoint(
        solver=run.solver,
        kappa=run.kappa,
        interval=(float(run.interval[0]), float(run.interval[1])),
        n=1,
        score=measured.score,
        score_spread=None,
        fairness=measured.fairness,
        fairness_spread=None,
        run_ids=(run.run_id,),
        dominated=False,
        unconstrained=False,
        constraint=measured.constraint,
        state=None if run.kappa is None else measured.state,
        distinct_scores=measured.distinct,
        front_of=run.front_of,
        label=run.label,
        coordinates=tuple(
            (name, None if v is None else float(v)) for name, v in run.coordinates.items()
        ),
        chosen=run.chosen,
        honour=run.honour,
        score_band=measured.score_band,
        fairness_band=measured.fairness_band,
        degenerate=measured.degenerate,
        unconverged=int(measured.converged is False),
    )


def _mark_dominated_within_fronts(points: list[FrontierPoint]) -> list[FrontierPoint]:
    """The points of the fronts, each front together in its run's order, marked dominated
    within their own front."""
    by_front: dict[str, list[FrontierPoint]] = {}
    for point in points:
        by_front.setdefault(point.front_of, []).append(point)
    marked = []
    for front in by_front.values():
        marked += [
            replace(p, dominated=bool(dominated))
            for p, dominated in zip(front, dominated_mask(front), strict=True)
        ]
    return marked


def _display_order(point: FrontierPoint) -> tuple[str, Interval, bool, float]:
    kappa_down = -point.kappa if point.kappa is not None else 0.0
    return point.solver, point.interval, point.kappa is not None, kappa_down
