"""Frontiers as text and rows: aligned tables for the command line, flat rows for CSV and the
pages, and the sentences that go under them (`engine.runs.frontier` makes the points)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from engine.model_quality import FEW_DISTINCT_SCORES
from engine.runs.frontier import (
    CANNOT_TELL_MARK,
    CHOSEN_MARK,
    DEGENERATE_MARK,
    DOMINATED_MARK,
    FEW_SCORES_MARK,
    MISSED_MARK,
    NOT_CONVERGED_MARK,
    SCORE_NAMES,
    UNCONSTRAINED_MARK,
    Frontier,
    FrontierPoint,
    is_gap,
    spread_name,
)
from engine.verdict import KappaState

# what a point's marks say, and which points have them (`point_marks`)
MARK_WORDS: dict[str, tuple[str, Callable[[FrontierPoint], bool]]] = {
    MISSED_MARK: ("! misses κ", lambda p: p.state is KappaState.MISSES),
    CANNOT_TELL_MARK: ("? cannot tell at this size", lambda p: p.state is KappaState.CANNOT_TELL),
    DEGENERATE_MARK: (
        "⊘ degenerate or near the majority class",
        lambda p: p.degenerate is not None,
    ),
    NOT_CONVERGED_MARK: ("† not converged", lambda p: p.unconverged > 0),
}


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
            "score_low": None if p.score_band is None else p.score_band[0],
            "score_high": None if p.score_band is None else p.score_band[1],
            "fairness_low": None if p.fairness_band is None else p.fairness_band[0],
            "fairness_high": None if p.fairness_band is None else p.fairness_band[1],
            "constraint": p.constraint,
            "state": None if p.state is None else str(p.state),
            "meets_kappa": p.meets_kappa,
            "dominated": p.dominated,
            "unconstrained": p.unconstrained,
            "degenerate": None if p.degenerate is None else str(p.degenerate[0]),
            "unconverged": p.unconverged,
            "marks": point_marks(p),
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
    return ", ".join(
        f"{name} = {'—' if value is None else format(value, 'g')}" for name, value in coordinates
    )


def honoured_splits(points: Iterable[FrontierPoint]) -> list[str]:
    """The splits the points' runs honour κ on, in order of first appearance."""
    return list(dict.fromkeys(p.honour for p in points if p.honour is not None))


def honour_words(split: str) -> str:
    """What a point of runs that hold κ on `split` is, in one sentence."""
    if split == "train":
        return (
            "κ held on the training data: each run reports its first model whose exact "
            "value on train met κ (else the closest)"
        )
    return (
        "κ held on the training data and honoured on validation: each run reports the "
        "model of the loosest inner κ′ whose exact value on validation met κ, or, when none "
        "did, the loosest within the sampling noise of validation of the closest"
    )


def format_frontier(frontier: Frontier, quantity: str | None = None) -> str:
    """Aligned text for the command line, in the frontier's order, with a legend for the marks;
    the title names the score, the fairness axis (by `quantity`, the name of what its metric
    holds, when given: the quantity a sweep's "constraint" is) and what the bands are
    (`with_band`). Each run's front follows, one model a line in its run's order."""
    name = quantity or frontier.metric
    axis = f"1 − {name}" if is_gap(frontier.metric) else name
    score = SCORE_NAMES[frontier.score]
    title = (
        f"{score} vs fairness = {axis} on the {frontier.split} split, with 95 % bands: one "
        f"seed's held-out interval, or over seeds the mean ± "
        f"{spread_name(frontier.spread, frontier.confidence)}"
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
            f"{MISSED_MARK} misses κ (its interval on {frontier.split} lies above κ)   "
            f"{CANNOT_TELL_MARK} cannot tell at this size (κ lies inside its interval)   "
            f"{DEGENERATE_MARK} degenerate or near the majority class   "
            f"{NOT_CONVERGED_MARK} not converged"
        )
        lines += [honour_words(split) for split in honoured_splits(ordinary)]
        if any(p.few_scores for p in ordinary):
            lines.append(
                f"{FEW_SCORES_MARK} few distinct scores (≤ {FEW_DISTINCT_SCORES}, e.g. "
                "a randomised classifier's probabilities): ties have no order, so "
                "measures on ranks such as pSP are coarse"
            )
    elif not fronts:
        lines.append(f"no run has both {score} and {name} on the {frontier.split} split")
    lines += [format_front(frontier, run_id, quantity) for run_id in fronts]
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
    rows = [
        header,
        *(
            (
                _front_mark(p),
                p.label,
                coordinates_text(p.coordinates),
                f"{p.score:.4f}",
                f"{p.fairness:.4f}",
                f"{1.0 - p.fairness if gap else p.fairness:.4f}",
            )
            for p in points
        ),
    ]
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    legend = [
        (CHOSEN_MARK, "the model the run reports", any(p.chosen for p in points)),
        (DOMINATED_MARK, "dominated within its front", any(p.dominated for p in points)),
        (MISSED_MARK, "misses κ", any(p.meets_kappa is False for p in points)),
        (
            FEW_SCORES_MARK,
            f"few distinct scores (≤ {FEW_DISTINCT_SCORES}): pSP is coarse",
            any(p.few_scores for p in points),
        ),
    ]
    return "\n".join(
        [
            f"{title} ({points[0].solver}): {members} models, on the {frontier.split} split",
            *(_align(row, widths, left={0, 1, 2}) for row in rows),
            "   ".join(f"{mark} {words}" for mark, words, shown in legend if shown),
        ]
    )


def state_mark(point: FrontierPoint) -> str:
    """ "!" for a point that misses κ, "?" for one the split cannot tell, "" otherwise."""
    if point.state is KappaState.MISSES:
        return MISSED_MARK
    return CANNOT_TELL_MARK if point.state is KappaState.CANNOT_TELL else ""


def point_marks(point: FrontierPoint, dominated: bool = True) -> str:
    """The marks of `MARK_WORDS` a point has, after its dominated mark (unless `dominated` is
    False): what the text table, the page's table and the figure's labels show beside it."""
    marks = "".join(mark for mark, (_, has) in MARK_WORDS.items() if has(point))
    return (DOMINATED_MARK if dominated and point.dominated else "") + marks


def _text_row(point: FrontierPoint) -> tuple[str, ...]:
    mark = (
        (UNCONSTRAINED_MARK if point.unconstrained else "")
        + point_marks(point)
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
        with_band(point.score, point.score_band),
        with_band(point.fairness, point.fairness_band),
    )


def _front_mark(point: FrontierPoint) -> str:
    return (
        (CHOSEN_MARK if point.chosen else "")
        + (DOMINATED_MARK if point.dominated else "")
        + state_mark(point)
        + (FEW_SCORES_MARK if point.few_scores else "")
    )


def with_band(value: float, band: tuple[float, float] | None) -> str:
    """The value with its 95 % band ("0.8312 [0.8238, 0.8386]"), alone without one."""
    return f"{value:.4f}" if band is None else f"{value:.4f} [{band[0]:.4f}, {band[1]:.4f}]"


def _align(
    row: tuple[str, ...], widths: list[int], left: frozenset[int] | set[int] = frozenset({0, 1})
) -> str:
    cells = [
        cell.ljust(width) if c in left else cell.rjust(width)
        for c, (cell, width) in enumerate(zip(row, widths, strict=True))
    ]
    return "  ".join(cells).rstrip()
