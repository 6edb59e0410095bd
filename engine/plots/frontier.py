"""The score–fairness frontier as a Plotly figure (paper 003, Fig. 1; paper 004, Fig. 1): the
points of `engine.runs.frontier` drawn so that κ and I can be chosen by looking.

- One series per (solver, interval), each its own colour, with its own Pareto line through its
  eligible non-dominated points (a point that misses κ or is degenerate is never on one).
- The unconstrained reference of each interval is a black star; always predicting the majority
  class is a dashed line (on an accuracy axis).
- Every point has its 95 % band on both axes; its marker says what the split says of it: a
  filled circle, an open circle with a dot when the split cannot tell whether it meets κ, an
  open red circle when it misses κ, a grey cross when it is degenerate or cannot be told from
  the majority class; dominated points are grey. Its label is κ with the same marks as the text
  table (`engine.runs.frontier_text.point_marks`), placed where it collides with no other label
  or marker (the hover has it otherwise).
- The axes are fitted to the points, their bands and the reference lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from engine.errors import UserError
from engine.model_quality import FEW_DISTINCT_SCORES
from engine.plots.style import METRIC_NAMES, series_colour, titled, wrapped
from engine.runs.describe import percent_words
from engine.runs.frontier import (
    SCORE_NAMES,
    Frontier,
    FrontierPoint,
    is_gap,
    pareto_mask,
    spread_name,
)
from engine.runs.frontier_text import (
    MARK_WORDS,
    coordinates_text,
    honour_words,
    honoured_splits,
    point_marks,
    with_band,
)
from engine.verdict import KappaState

DOMINATED_COLOUR = "#B0B0B0"
UNCONSTRAINED_COLOUR = "#000000"
MISSED_COLOUR = "#E00000"
DEGENERATE_COLOUR = "#7F7F7F"
MISSED_NAME = "misses κ"
DEGENERATE_NAME = "degenerate or near the majority class"
FIGURE_HEIGHT = 620  # pixels
AXIS_MARGIN = 0.06  # of the shown range, on each side
# the plot area a label is placed in, roughly, and the size of a label's character and line
PLOT_PIXELS = (860.0, 440.0)
CHARACTER_PIXELS, LINE_PIXELS, MARKER_PIXELS = 6.5, 14.0, 12.0
SPREAD_WORDS = {"ci": "confidence interval", "se": "standard error"}
# where a label may go about its point, in order of preference: (plotly position, dx, dy) with
# (dx, dy) the label box's centre from the point in units of (its width, its height)
LABEL_PLACES = (
    ("top center", 0.0, 1.0),
    ("bottom center", 0.0, -1.0),
    ("middle right", 0.6, 0.0),
    ("middle left", -0.6, 0.0),
    ("top right", 0.6, 1.0),
    ("top left", -0.6, 1.0),
)


@dataclass(frozen=True)
class Series:
    """The points of one solver on one interval, and its colour."""

    solver: str
    interval: tuple[float, float]
    points: tuple[FrontierPoint, ...]
    colour: str


def frontier_figure(
    frontier: Frontier, quantity: str = "constrained value", show_dominated: bool = True
) -> go.Figure:
    """The frontier's score (y: accuracy or AUC) against fairness (x) as the module's text
    describes, `quantity` naming the constrained value ("EO gap") in the hover. A run that
    yields a front (`Frontier.fronts`) is drawn on the same axes as a line of its own colour
    with markers through its models, in the run's order, with the model the run reports as a
    diamond."""
    fig = go.Figure()
    shown = [p for p in frontier.ordinary if show_dominated or not p.dominated]
    series = frontier_series(frontier, shown)
    several = len({p.interval for p in frontier.ordinary}) > 1
    labels = _label_places(frontier, shown)
    for line in series:
        fig.add_traces(_pareto_line(line, several))
        kept = [p for p in line.points if p.eligible]
        if kept:
            colours = [DOMINATED_COLOUR if p.dominated else line.colour for p in kept]
            fig.add_trace(
                _points_trace(
                    kept,
                    _series_name(line, several),
                    line.solver,
                    colours,
                    quantity,
                    frontier.score,
                    labels,
                )
            )
    references = [p for p in shown if p.unconstrained and p.eligible]
    if references:
        fig.add_trace(
            _points_trace(
                references,
                "unconstrained reference",
                "reference",
                UNCONSTRAINED_COLOUR,
                quantity,
                frontier.score,
                labels,
            )
        )
    for name, colour, chosen in (
        (MISSED_NAME, MISSED_COLOUR, lambda p: p.degenerate is None and p.meets_kappa is False),
        (DEGENERATE_NAME, DEGENERATE_COLOUR, lambda p: p.degenerate is not None),
    ):
        marked = [p for p in shown if chosen(p)]
        if marked:
            fig.add_trace(
                _points_trace(marked, name, name, colour, quantity, frontier.score, labels)
            )
    for i, points in enumerate(frontier.fronts.values()):
        kept = [p for p in points if show_dominated or not p.dominated or p.chosen]
        colour = series_colour(len(series) + i)
        fig.add_traces(_front_traces(kept, colour, quantity, frontier.score) if kept else [])
    _add_majority(fig, frontier)
    x_range, y_range = fitted_ranges(frontier, shown)
    fig.update_xaxes(title_text=_fairness_axis(frontier, quantity), range=list(x_range))
    fig.update_yaxes(title_text=_score_axis(frontier), range=list(y_range))
    score = SCORE_NAMES[frontier.score]
    title = f"{score[:1].upper()}{score[1:]}–fairness frontier"  # "Accuracy", "AUC"
    titled(fig, title, _frontier_subtitle(frontier), hovermode="closest", height=FIGURE_HEIGHT)
    return fig


def frontier_series(frontier: Frontier, points: Sequence[FrontierPoint]) -> list[Series]:
    """The constrained points grouped by (solver, interval), in the frontier's order, each
    series with its own colour."""
    keys = list(dict.fromkeys((p.solver, p.interval) for p in points if not p.unconstrained))
    return [
        Series(
            solver,
            interval,
            tuple(
                p
                for p in points
                if (p.solver, p.interval) == (solver, interval) and not p.unconstrained
            ),
            series_colour(i),
        )
        for i, (solver, interval) in enumerate(keys)
    ]


def pareto_points(points: Sequence[FrontierPoint]) -> list[FrontierPoint]:
    """A series' Pareto line: its eligible points that no other eligible point of it dominates,
    left to right."""
    eligible = [p for p in points if p.eligible]
    if not eligible:
        return []
    mask = pareto_mask([p.fairness for p in eligible], [p.score for p in eligible])
    return sorted(
        (p for p, keep in zip(eligible, mask, strict=True) if keep), key=lambda p: p.fairness
    )


def fitted_ranges(
    frontier: Frontier, points: Sequence[FrontierPoint]
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The x and y ranges that hold every point with its band, the fronts' models and the
    majority line, with `AXIS_MARGIN` on each side."""
    every = [*points, *(p for front in frontier.fronts.values() for p in front)]
    xs = [v for p in every for v in (p.fairness, *(p.fairness_band or ()))]
    ys = [v for p in every for v in (p.score, *(p.score_band or ()))]
    if frontier.majority is not None and frontier.score == "accuracy":
        ys.append(frontier.majority)
    return _padded(xs), _padded(ys)


def _padded(values: list[float]) -> tuple[float, float]:
    finite = [v for v in values if np.isfinite(v)] or [0.0, 1.0]
    low, high = min(finite), max(finite)
    pad = AXIS_MARGIN * max(high - low, 0.01)
    return low - pad, high + pad


def _series_name(line: Series, several: bool) -> str:
    return f"{line.solver}, {_interval_words(line.interval)}" if several else line.solver


def _interval_words(interval: tuple[float, float]) -> str:
    return f"I = [{percent_words(interval[0])}, {percent_words(interval[1])})"


def _pareto_line(line: Series, several: bool) -> list[go.Scatter]:
    front = pareto_points(line.points)
    if len(front) < 2:
        return []
    return [
        go.Scatter(
            x=np.array([p.fairness for p in front]),
            y=np.array([p.score for p in front]),
            mode="lines",
            line={"color": line.colour, "width": 1.5},
            opacity=0.6,
            name=f"{_series_name(line, several)} front",
            legendgroup=line.solver,
            showlegend=False,
            customdata=[list(p.run_ids) for p in front],
            hoverinfo="skip",
        )
    ]


def point_label(point: FrontierPoint, several_intervals: bool = False) -> str:
    """A point's label: "κ 0.05" (the reference: "reference", with its interval when the
    frontier has several), its marks after it, and how many distinct scores it has when they
    are few."""
    if point.kappa is None:
        label = "reference" if point.unconstrained else point.solver
        if several_intervals and point.unconstrained:
            label += f" [{percent_words(point.interval[0])}, {percent_words(point.interval[1])})"
    else:
        label = f"κ {point.kappa:g}"
    marks = point_marks(point, dominated=False)
    label = f"{label} {marks}" if marks else label
    return f"{label} · {point.distinct_scores} scores" if point.few_scores else label


def _symbol(point: FrontierPoint) -> str:
    """A star for the reference, a cross for a degenerate point, an open circle for one that
    misses κ, a circle with a dot for one the split cannot tell, else a filled circle."""
    if point.unconstrained:
        return "star"
    if point.degenerate is not None:
        return "x"
    if point.state is KappaState.CANNOT_TELL:
        return "circle-open-dot"
    return "circle-open" if point.meets_kappa is False else "circle"


def _points_trace(
    points: Sequence[FrontierPoint],
    name: str,
    legendgroup: str,
    colour: str | list[str],
    quantity: str,
    score: str,
    labels: dict[int, tuple[str, str]],
) -> go.Scatter:
    """The points as markers with their labels where `labels` (by the point's id: its text and
    plotly position) placed them, and error bars on both coordinates; each point's `customdata`
    is the list of its run ids."""
    return go.Scatter(
        x=np.array([p.fairness for p in points]),
        y=np.array([p.score for p in points]),
        error_x=_error_bars([p.fairness for p in points], [p.fairness_band for p in points]),
        error_y=_error_bars([p.score for p in points], [p.score_band for p in points]),
        mode="markers+text",
        marker={
            "color": colour,
            "size": np.array([16 if p.unconstrained else 10 for p in points]),
            "symbol": [_symbol(p) for p in points],
            "line": {"color": "white", "width": [2 if not p.eligible else 1 for p in points]},
        },
        text=[labels.get(id(p), ("", ""))[0] for p in points],
        textposition=[labels.get(id(p), ("", "top center"))[1] for p in points],
        textfont={"size": 10},
        name=name,
        legendgroup=legendgroup,
        customdata=[list(p.run_ids) for p in points],
        hovertext=[_point_hover(p, quantity, score) for p in points],
        hoverinfo="text",
    )


def _label_places(
    frontier: Frontier, points: Sequence[FrontierPoint]
) -> dict[int, tuple[str, str]]:
    """Each point's label (`point_label`) and where it goes, a plotly text position, by the
    point's id; a point left out has no label (its hover has it).
    Greedy, in order of interest (the Pareto lines' points, then the others): a label takes the
    first place of `LABEL_PLACES` whose box overlaps no label placed before and no marker."""
    x_range, y_range = fitted_ranges(frontier, points)
    scale = (PLOT_PIXELS[0] / (x_range[1] - x_range[0]), PLOT_PIXELS[1] / (y_range[1] - y_range[0]))
    centres = [(p.fairness * scale[0], p.score * scale[1]) for p in points]
    boxes: list[tuple[float, float, float, float]] = []
    several = len({p.interval for p in frontier.ordinary}) > 1
    interest = sorted(
        range(len(points)), key=lambda i: (not points[i].eligible, points[i].dominated)
    )
    places: dict[int, tuple[str, str]] = {}
    for i in interest:
        text = point_label(points[i], several)
        width, height = CHARACTER_PIXELS * len(text), LINE_PIXELS
        x, y = centres[i]
        for place, dx, dy in LABEL_PLACES:
            cx = x + dx * (width + MARKER_PIXELS)
            cy = y + dy * (height + MARKER_PIXELS) / 2
            box = (cx - width / 2, cx + width / 2, cy - height / 2, cy + height / 2)
            clear = not any(_overlap(box, other) for other in boxes) and not any(
                _overlap(box, _marker_box(c)) for j, c in enumerate(centres) if j != i
            )
            if clear:
                boxes.append(box)
                places[id(points[i])] = text, place
                break
    return places


def _marker_box(centre: tuple[float, float]) -> tuple[float, float, float, float]:
    half = MARKER_PIXELS / 2
    return centre[0] - half, centre[0] + half, centre[1] - half, centre[1] + half


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def _point_hover(point: FrontierPoint, quantity: str, score: str) -> str:
    lines = [
        f"{point.solver}{' (dominated)' if point.dominated else ''}",
        f"{'unconstrained' if point.kappa is None else f'κ = {point.kappa:g}'}, "
        f"{_interval_words(point.interval)}",
        f"{SCORE_NAMES[score]} = {with_band(point.score, point.score_band)}",
        f"fairness = {with_band(point.fairness, point.fairness_band)}",
        f"{point.n} seed{'s' if point.n > 1 else ''}"
        + (
            " (bands: the held-out 95 % interval)"
            if point.n == 1
            else " (bands: mean ± the spread over seeds)"
        ),
    ]
    if point.state is not None and point.constraint is not None:
        relation = {KappaState.MEETS: "≤", KappaState.MISSES: ">"}.get(point.state, "vs")
        lines.insert(
            1, f"{point.state}: {quantity} = {point.constraint:.4f} {relation} κ = {point.kappa:g}"
        )
    if point.degenerate is not None:
        label, words = point.degenerate
        lines.append(f"{label}: {words}")
    if point.unconverged:
        lines.append(
            f"not converged: {point.unconverged} of {point.n} run(s) ended on a budget or otherwise"
        )
    if point.few_scores:
        lines.append(
            f"only {point.distinct_scores} distinct scores: ties have no order, so "
            "measures on ranks (pSP) are coarse"
        )
    return "<br>".join(lines)


def _error_bars(
    values: Sequence[float], bands: Sequence[tuple[float, float] | None]
) -> dict[str, Any]:
    """Asymmetric bars to each point's 95 % band; none at all when no point has one."""
    if all(band is None for band in bands):
        return {"visible": False}
    above = [np.nan if b is None else b[1] - v for v, b in zip(values, bands, strict=True)]
    below = [np.nan if b is None else v - b[0] for v, b in zip(values, bands, strict=True)]
    return {
        "type": "data",
        "symmetric": False,
        "visible": True,
        "array": np.array(above),
        "arrayminus": np.array(below),
        "thickness": 1,
    }


def _add_majority(fig: go.Figure, frontier: Frontier) -> None:
    """A dashed line at the accuracy of always predicting the majority class."""
    if frontier.majority is None or frontier.score != "accuracy":
        return
    fig.add_hline(
        y=frontier.majority,
        line={"dash": "dash", "color": DEGENERATE_COLOUR, "width": 1},
        annotation_text=f"always the majority class: {frontier.majority:.4f}",
        annotation_position="bottom right",
        annotation_font_size=10,
    )


def _fairness_axis(frontier: Frontier, quantity: str) -> str:
    """The x-axis title, e.g. "fairness = 1 − EO gap (exact, test) ± 95 % CI"; the metric
    "constraint" is the family's own quantity."""
    metric = frontier.metric
    name = quantity if metric == "constraint" else METRIC_NAMES.get(metric, metric)
    value = f"1 − {name}" if is_gap(metric) else name
    return f"fairness = {value} (exact, {frontier.split}){_spread_suffix(frontier)}"


def _score_axis(frontier: Frontier) -> str:
    """The y-axis title, e.g. "AUC (exact, test) ± s.e."."""
    return f"{SCORE_NAMES[frontier.score]} (exact, {frontier.split}){_spread_suffix(frontier)}"


def _has_spread(frontier: Frontier) -> bool:
    return any(p.n > 1 for p in frontier.points)


def _has_interval(frontier: Frontier) -> bool:
    """Whether a point of one seed has the held-out interval of its run."""
    return any(p.n == 1 and p.score_band is not None for p in frontier.points)


def _spread_suffix(frontier: Frontier) -> str:
    """What follows an axis title: " ± s.e." or " ± 95 % CI" when points have several seeds,
    " ± 95 % interval" when they have one with its held-out interval, nothing otherwise."""
    if _has_spread(frontier):
        return f" ± {spread_name(frontier.spread, frontier.confidence)}"
    return " ± 95 % interval" if _has_interval(frontier) else ""


def _frontier_subtitle(frontier: Frontier) -> str:
    if _has_spread(frontier):
        bands = f"mean ± {spread_name(frontier.spread, frontier.confidence)} over seeds"
    elif _has_interval(frontier):
        bands = "one seed per point: bars are the held-out 95 % intervals of its run"
    else:
        bands = f"one seed per point: no {SPREAD_WORDS[frontier.spread]}"
    parts = [bands, "a line joins a solver's best trade-offs on one interval"]
    points = frontier.points
    marks = [words for mark, (words, shown) in MARK_WORDS.items() if any(shown(p) for p in points)]
    if marks:
        parts.append("labels: κ and " + ", ".join(marks))
    if frontier.fronts:
        parts.append("a line with markers is one run's front, ◆ the model it reports")
    if any(p.few_scores for p in points):
        parts.append(
            f"“n scores”: at most {FEW_DISTINCT_SCORES} distinct scores (a randomised "
            "classifier's probabilities), so pSP is coarse"
        )
    parts += [honour_words(split) for split in honoured_splits(frontier.ordinary)]
    if frontier.skipped:
        parts.append(f"{len(frontier.skipped)} run(s) lacked a metric")
    return wrapped("; ".join(parts))


def _front_hover(point: FrontierPoint, quantity: str, score: str) -> str:
    head = "the model the run reports" if point.chosen else "a model of the run's front"
    lines = [
        f"{point.label}{' (dominated within its front)' if point.dominated else ''}",
        f"{head} ({point.solver}, run {point.front_of[:8]})",
        f"{SCORE_NAMES[score]} = {point.score:.4f}",
        f"fairness = {point.fairness:.4f}",
    ]
    if point.coordinates:
        lines.insert(1, coordinates_text(point.coordinates))
    if point.meets_kappa is False:
        lines.append(f"{MISSED_NAME}: {quantity} = {point.constraint:.4f} > κ = {point.kappa:g}")
    if point.few_scores:
        lines.append(
            f"only {point.distinct_scores} distinct scores: ties have no order, so "
            "measures on ranks (pSP) are coarse"
        )
    return "<br>".join(lines)


def _front_colour(point: FrontierPoint, colour: str) -> str:
    if point.meets_kappa is False:
        return MISSED_COLOUR
    return DOMINATED_COLOUR if point.dominated else colour


def _front_traces(
    points: Sequence[FrontierPoint], colour: str, quantity: str, score: str
) -> list[go.Scatter]:
    """One run's front: a line with markers through its models in the run's order (dominated
    ones grey, those that miss κ open red circles), and the model the run reports as a
    diamond on top; each point's `customdata` is [run id, label] (the reported model's, [run
    id]: the model whose scores the store keeps)."""
    run_id = points[0].front_of
    name, group = f"{points[0].solver} front ({run_id[:6]})", f"front {run_id}"
    members = [p for p in points if not p.chosen]
    chosen = [p for p in points if p.chosen]
    traces = []
    if members:
        traces.append(
            go.Scatter(
                x=np.array([p.fairness for p in members]),
                y=np.array([p.score for p in members]),
                mode="lines+markers",
                line={"color": colour, "width": 1.5},
                marker={
                    "color": [_front_colour(p, colour) for p in members],
                    "size": 9,
                    "symbol": [
                        "circle-open" if p.meets_kappa is False else "circle" for p in members
                    ],
                    "line": {"color": "white", "width": 1},
                },
                name=name,
                legendgroup=group,
                customdata=[[run_id, p.label] for p in members],
                hovertext=[_front_hover(p, quantity, score) for p in members],
                hoverinfo="text",
            )
        )
    if chosen:
        traces.append(
            go.Scatter(
                x=np.array([p.fairness for p in chosen]),
                y=np.array([p.score for p in chosen]),
                mode="markers",
                marker={
                    "color": colour,
                    "size": 16,
                    "symbol": "diamond",
                    "line": {"color": "black", "width": 1.5},
                },
                name=f"{name}: reported model",
                legendgroup=group,
                showlegend=not members,
                customdata=[[run_id] for _ in chosen],
                hovertext=[_front_hover(p, quantity, score) for p in chosen],
                hoverinfo="text",
            )
        )
    return traces


def kappa_interval_figure(frontier: Frontier, solver: str, quantity: str) -> go.Figure:
    """The κ × I view of one solver's points: a cell per (κ, I) coloured by its score, with the
    score and the point's marks written in it (the same marks as the frontier's labels), so that
    κ and I can be chosen together by looking; an empty cell was not run or lacks a metric."""
    points = [p for p in frontier.ordinary if p.solver == solver and not p.unconstrained]
    if not points:
        raise UserError(f"no point of {solver} on this frontier")
    kappas = sorted({p.kappa for p in points}, reverse=True)
    intervals = sorted({p.interval for p in points})
    score = np.full((len(kappas), len(intervals)), np.nan)
    text = np.full(score.shape, "", dtype=object)
    hover = np.full(score.shape, "", dtype=object)
    for p in points:
        row, column = kappas.index(p.kappa), intervals.index(p.interval)
        score[row, column] = p.score
        marks = point_marks(p, dominated=False)
        text[row, column] = f"{p.score:.3f}{' ' + marks if marks else ''}"
        hover[row, column] = _point_hover(p, quantity, frontier.score)
    columns = [_interval_words(i).removeprefix("I = ") for i in intervals]
    rows = [f"κ = {k:g}" for k in kappas]
    fig = go.Figure(
        go.Heatmap(
            z=score,
            x=columns,
            y=rows,
            text=text,
            texttemplate="%{text}",
            hovertext=hover,
            hoverinfo="text",
            colorscale="Blues",
            colorbar={"title": {"text": SCORE_NAMES[frontier.score]}},
        )
    )
    fig.update_xaxes(title_text="interval I (each group's top α to β)", type="category")
    fig.update_yaxes(title_text="tolerance κ", type="category", autorange="reversed")
    subtitle = (
        f"{solver}: {SCORE_NAMES[frontier.score]} (exact, {frontier.split}) per κ and I; "
        "marks: " + ", ".join(words for words, _ in MARK_WORDS.values())
    )
    titled(fig, "κ × I", wrapped(subtitle), height=max(320, 120 + 45 * len(kappas)))
    return fig
