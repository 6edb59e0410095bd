"""Plotly figures of stored run data: pure functions, numbers in, `go.Figure` out (paper 003, §6.3).

Every figure uses the rank scale of paper 003: the rank of a score theta in group k is
Fbar_k(theta) = Pr(score > theta | group k), counted from the TOP and separately in each group
(Def. 4.1), so I = [alpha, beta) is "each group's top alpha to beta". The numbers come from
`engine.fairness` (exact metrics, strict ">"); this module only draws them. Group k has the same
colour in every figure; runs and solvers take their colours from a second palette. Titles are
short, with the details in a subtitle, so that they fit a half-width column.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots

from engine.data.prepared import LABEL_STATISTIC_WORDS, summary_statistic
from engine.errors import UserError
from engine.exact_trajectory import EXACT_MARKER_SIZE, exact_points
from engine.fairness import GapWitness, pdp_pairs, positive_rates, psp_pairs, psp_witness
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.distributions import (
    group_ccdf,
    rank_rank_curve,
    slice_bounds,
)
from engine.fairness.families import quantity_metric, quantity_name
from engine.runs.describe import interval_words
from engine.runs.results import constraint_of, measure_view, run_task, surrogate_epsilon

TEMPLATE = "plotly_white"
MAX_CURVE_POINTS = 1500  # per trace: finer than a screen shows
MAX_TRAJECTORY_POINTS = 1000  # per trace: a run of hours logs tens of thousands of records
GROUPS_FIGURE_HEIGHT = 300  # pixels
TITLE_MARGIN = 72  # pixels above the plot: one title line and one subtitle line
SUBTITLE_LINE = 15  # pixels more for each further subtitle line
TITLE_AT_TOP = {"y": 1.0, "yref": "container", "yanchor": "top", "pad": {"t": 10}}
# a legend under the plot: in half a laptop's width a legend beside it leaves the plot a sliver
LEGEND_BELOW = {"orientation": "h", "x": 0.0, "xanchor": "left", "y": -0.2, "yanchor": "top"}
LEGEND_ROOM = 110  # pixels under the plot for the axis title and a legend of two rows
SUBTITLE_WIDTH = 80  # characters of a subtitle line that fit a figure of the page
HISTOGRAM_BINS = 80
CENTRAL_MASS = (0.005, 0.995)  # the pooled score quantiles a score axis always shows
AXIS_MARGIN = 0.05  # of the shown score range, on each side
# Okabe-Ito: distinguishable with the common colour-vision deficiencies
GROUP_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
SERIES_COLOURS = (
    "#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#BCBD22",
    "#17BECF",
)  # fmt: skip
SCORE_AXIS = "score θ"
RANK_AXIS = "rank from the top F̄_k(θ)"
METRIC_NAMES = {"psp": "pSP", "pdp": "pDP", "sp": "SP", "dp": "DP gap", "auc": "AUC"}
TrajectoryAxis = Literal["iteration", "seconds", "data passes", "oracle calls"]
TRAJECTORY_AXES = ("iteration", "seconds", "data passes", "oracle calls")
# axes counted by the solvers (`engine.oracles.OracleCounts`, in their surrogate records' state):
# the sum of these entries so far. Paper 001 spec §5 counts oracle calls "because double-loop IPP
# methods differ in cost per iteration".
COUNTED_AXES = {
    "data passes": ("oracle.data_passes",),
    "oracle calls": ("oracle.objective_gradients", "oracle.constraint_gradients"),
}
AXIS_TITLES = {"oracle calls": "oracle calls (gradients of f0 and of the constraint rows)"}
KKT = "train.kkt"  # paper 001's KKT measure in the exact records, with its parts "train.kkt.<part>"
KKT_PARTS = ("stationarity", "complementarity", "feasibility")
MAX_STATE_ROWS = 8  # lines per state panel: paper 001's intersectional constraint has 535 rows
TRAJECTORY_HEIGHT = 720  # pixels, of the three panels every trajectory figure has
EXTRA_PANEL_HEIGHT = 170  # pixels per further panel
PANEL_GAP = 40  # pixels between panels
VERTICAL_MARGINS = 180  # pixels above and below the panels (the template's margins)


def group_colour(k: int) -> str:
    """The colour of group k, the same in every figure."""
    return GROUP_COLOURS[k % len(GROUP_COLOURS)]


def series_colour(i: int) -> str:
    """The colour of the i-th run or solver of a figure."""
    return SERIES_COLOURS[i % len(SERIES_COLOURS)]


def _interval_text(alpha: float, beta: float) -> str:
    return f"I = {interval_words(alpha, beta)}"


def _kappa_text(kappa: float | None) -> str:
    return "" if kappa is None else f", κ = {kappa:g}"


def wrapped(text: str, width: int = SUBTITLE_WIDTH) -> str:
    """`text` wrapped into lines of at most `width` characters joined by "<br>": Plotly does
    not wrap a subtitle, and a long one runs past the figure's edge."""
    return "<br>".join(textwrap.wrap(text, width, break_on_hyphens=False))


def titled(fig: go.Figure, title: str, subtitle: str = "", **layout: Any) -> None:
    """The house layout: white template, a short title, the details in a subtitle below it
    (lines split by "<br>"), and room above the plot for both."""
    fig.update_layout(
        template=TEMPLATE,
        # the title at the top of the figure, not centred in the room above the plot
        title={"text": title, "subtitle": {"text": subtitle}} | TITLE_AT_TOP,
        margin={"t": TITLE_MARGIN + SUBTITLE_LINE * subtitle.count("<br>")},
        **layout,
    )


def _inputs(
    scores: ArrayLike, groups: ArrayLike, group_names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, int]:
    scores, groups = np.asarray(scores, dtype=np.float64), np.asarray(groups)
    if groups.size and groups.max() >= len(group_names):
        raise UserError(f"group id {groups.max()} has no name; group_names has {len(group_names)}.")
    return scores, groups, len(group_names)


def _thinned(n: int, max_points: int) -> np.ndarray | slice:
    """The positions of at most `max_points` of n points, evenly spread (both ends kept)."""
    if n <= max_points:
        return slice(None)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def thin_steps(
    x: np.ndarray, y: np.ndarray, max_points: int = MAX_CURVE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """At most `max_points` points of a curve, evenly spread along it (always keeping both
    ends): on screen a step curve is the same, and the page gets far less data."""
    keep = _thinned(len(x), max_points)
    return x[keep], y[keep]


# ---- trajectories (paper 003, Figs. 10/11; paper 001 spec §5) -----------------------------------


@dataclass(frozen=True)
class TrajectoryRun:
    """One run's trajectory records (store format) and what it is held to: `quantity` names the
    exact constrained value ("EO gap"), read from the exact records' "train.<metric>" and
    "val.<metric>" (None: the run does not report it); `kappa` is its tolerance and `epsilon` the
    ε the solver holds its largest surrogate row to (None: no line is drawn)."""

    label: str
    records: Sequence[dict[str, Any]]
    quantity: str = "pSP"
    kappa: float | None = None
    epsilon: float | None = None
    metric: str | None = "constraint"


def trajectory_run(
    label: str,
    spec: dict[str, Any],
    records: Sequence[dict[str, Any]],
    view: ConstraintSpec | None = None,
) -> TrajectoryRun:
    """A stored run's trajectory, held to what its spec says; a run without a constraint shows
    the quantity of the constraint `view` where it reports it (by default pSP on I, which every
    classifier reports, or a regression's mean gap), as `engine.runs.results.run_verdict`
    does, except that a solver minimising a measure of its own shows that measure's exact
    counterpart (`measure_view`: paper 002's dp as the DP gap), as its verdict says."""
    family, kappa = constraint_of(spec)
    view = measure_view(spec) or view
    shown = family or (view.family if view is not None else None)
    epsilon = None if family is None else surrogate_epsilon(spec)
    task = run_task(spec)
    metric = quantity_metric(family, view, task)
    return TrajectoryRun(label, records, quantity_name(shown, task), kappa, epsilon, metric)


@dataclass(frozen=True)
class _RunView:
    """What the panels read from one run, gathered once: its surrogate and exact records, the
    entries of its surrogate records' state (in the order first recorded) and where a record
    sits on the figure's x axis."""

    run: TrajectoryRun
    surrogate: list[dict[str, Any]]
    exact: list[dict[str, Any]]
    state_keys: tuple[str, ...]
    at: Callable[[dict[str, Any]], float | None]


def _view(run: TrajectoryRun, x: TrajectoryAxis) -> _RunView:
    surrogate = [r for r in run.records if r["kind"] == "surrogate"]
    exact = [r for r in run.records if r["kind"] == "exact"]
    keys = tuple(dict.fromkeys(k for r in surrogate for k in (r.get("state") or {})))
    return _RunView(run, surrogate, exact, keys, _axis(surrogate, x))


def _count(record: dict[str, Any], entries: Sequence[str]) -> float | None:
    """The sum of a record's state `entries`, None unless it has them all."""
    state = record.get("state") or {}
    if not all(isinstance(state.get(key), int | float) for key in entries):
        return None
    return float(sum(state[key] for key in entries))


def _axis(
    surrogate: Sequence[dict[str, Any]], x: TrajectoryAxis
) -> Callable[[dict[str, Any]], float | None]:
    """A record's position on the axis `x`. The counted axes (`COUNTED_AXES`) come from the
    solvers' oracle counts in their surrogate records' state; the run's other records are placed
    between those by iteration. A run that counts nothing (stored before its solver counted) has
    no position on them."""
    if x not in COUNTED_AXES:
        return lambda record: record.get(x)
    counted = [(r["iteration"], _count(r, COUNTED_AXES[x])) for r in surrogate]
    counted = [(iteration, n) for iteration, n in counted if n is not None]
    if not counted:
        return lambda record: None
    iterations, counts = np.array(counted, dtype=np.float64).T
    return lambda record: float(np.interp(record["iteration"], iterations, counts))


def _field(key: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda record: record.get(key)


def _value(key: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda record: (record.get("values") or {}).get(key)


def _state(key: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda record: (record.get("state") or {}).get(key)


def _points(
    records: Sequence[dict[str, Any]],
    at: Callable[[dict[str, Any]], float | None],
    value: Callable[[dict[str, Any]], float | None],
    *more: Callable[[dict[str, Any]], float | None],
) -> np.ndarray:
    """Rows (x, value, *more) of the records that have a position and a value (a missing further
    value is NaN), thinned to a bounded number."""
    kept = [(at(r), value(r), *(m(r) for m in more)) for r in records]
    kept = [row for row in kept if row[0] is not None and row[1] is not None]
    points = np.array(kept, dtype=np.float64).reshape(-1, 2 + len(more))
    return points[_thinned(len(points), MAX_TRAJECTORY_POINTS)]


@dataclass(frozen=True)
class _Line:
    """One line of a panel: its name, its points (x, y, then the further values its hover
    shows, named by `parts`) and its dash."""

    name: str
    points: np.ndarray
    dash: str = "solid"
    parts: tuple[str, ...] = ()
    markers: bool = False  # exact records: markers, the line broken where they are not consecutive


@dataclass(frozen=True)
class _Panel:
    """A row of the figure: its y-axis title, its lines for one run, whether the axis is
    logarithmic, and a note for one run's panel ("" for none)."""

    title: str
    lines: Callable[[_RunView], list[_Line]]
    log: bool = False
    note: Callable[[_RunView], str] = lambda view: ""


def _objective_lines(view: _RunView) -> list[_Line]:
    return [_Line("f0 (surrogate)", _points(view.surrogate, view.at, _field("objective")))]


def _violation_lines(view: _RunView) -> list[_Line]:
    return [_Line("max surrogate row", _points(view.surrogate, view.at, _field("max_violation")))]


def _exact_lines(view: _RunView) -> list[_Line]:
    """The exact quantity on train and validation, from "exact" records only (the "final"
    record is the reported iterate, which need not be the last point of the path)."""
    run = view.run
    if run.metric is None:
        return []
    splits = (("train", "train", "solid"), ("validation", "val", "dash"))
    return [
        _Line(f"{split} {run.quantity} (exact)",
              exact_points(view.exact, view.at, _value(f"{key}.{run.metric}")), dash,
              markers=True)
        for split, key, dash in splits
    ]  # fmt: skip


def _kkt_lines(view: _RunView) -> list[_Line]:
    """Paper 001's common stationarity measure (spec §5, `engine.solvers.kkt`) on the training
    data, its three parts in the hover."""
    parts = [_value(f"{KKT}.{part}") for part in KKT_PARTS]
    points = exact_points(view.exact, view.at, _value(KKT), *parts)
    return [_Line("KKT", points, parts=KKT_PARTS, markers=True)]


def _kind_keys(view: _RunView, kind: str) -> list[str]:
    """The run's state entries of one kind ("dual.<row>"), in the order first recorded."""
    return [k for k in view.state_keys if k.startswith(f"{kind}.")]


def _magnitude(value: Any) -> float:
    """|value| of a number, −1 for anything else (a missing or non-finite value goes last)."""
    if isinstance(value, int | float) and np.isfinite(value):
        return abs(float(value))
    return -1.0


def _shown_keys(view: _RunView, kind: str) -> tuple[list[str], int]:
    """The entries of `kind` drawn, in the order first recorded, and how many the run has: all
    of them up to `MAX_STATE_ROWS`, else those with the largest |value| in the last record that
    has them."""
    keys = _kind_keys(view, kind)
    if len(keys) <= MAX_STATE_ROWS:
        return keys, len(keys)
    final: dict[str, Any] = {}
    for record in reversed(view.surrogate):
        state = record.get("state") or {}
        final |= {k: state[k] for k in keys if k in state and k not in final}
        if len(final) == len(keys):
            break
    largest = sorted(keys, key=lambda k: _magnitude(final.get(k)), reverse=True)
    kept = set(largest[:MAX_STATE_ROWS])
    return [k for k in keys if k in kept], len(keys)


def _vector_lines(view: _RunView, kind: str) -> list[_Line]:
    return [_Line(f"{kind} {key.removeprefix(kind + '.')}",
                  _points(view.surrogate, view.at, _state(key)))
            for key in _shown_keys(view, kind)[0]]  # fmt: skip


def _vector_note(view: _RunView, kind: str) -> str:
    shown, total = _shown_keys(view, kind)
    return (
        f"{len(shown)} of {total} rows shown (largest final |value|)" if len(shown) < total else ""
    )


def _scalar_lines(view: _RunView, key: str) -> list[_Line]:
    return [_Line(STATE_SCALARS[key].name, _points(view.surrogate, view.at, _state(key)))]


def _panels(views: Sequence[_RunView]) -> list[_Panel]:
    """The figure's rows: f0, the largest surrogate row, the exact quantity, then those the runs
    have data for: the KKT measure, one per kind of row-named state (`STATE_VECTORS`) and one per
    scalar state (`STATE_SCALARS`)."""
    quantities = " / ".join(dict.fromkeys(v.run.quantity for v in views)) or "constrained value"
    panels = [
        _Panel("objective f0<br>(surrogate)", _objective_lines),
        _Panel("max surrogate row<br>(surrogate)", _violation_lines),
        _Panel(f"{quantities}<br>(exact)", _exact_lines),
    ]
    if any(_value(KKT)(r) is not None for v in views for r in v.exact):
        panels.append(_Panel("KKT measure<br>(exact, train)", _kkt_lines, log=True))
    panels += [
        _Panel(title, partial(_vector_lines, kind=kind), note=partial(_vector_note, kind=kind))
        for kind, title in STATE_VECTORS.items()
        if any(_kind_keys(v, kind) for v in views)
    ]
    panels += [
        _Panel(scalar.title, partial(_scalar_lines, key=key), log=scalar.log)
        for key, scalar in STATE_SCALARS.items()
        if any(key in v.state_keys for v in views)
    ]
    return panels


FEW_POINTS = 3  # trajectory lines of at most this many points also mark them


def _trajectory_trace(label: str, line: _Line, colour: str, x: TrajectoryAxis) -> go.Scatter:
    parts = "".join(f"<br>{part} = %{{customdata[{j}]:.4g}}" for j, part in enumerate(line.parts))
    return go.Scatter(
        x=line.points[:, 0],
        y=line.points[:, 1],
        customdata=line.points[:, 2:] if line.parts else None,
        # a line of one point draws nothing: a short run's few records show as markers
        mode="lines+markers" if line.markers or len(line.points) <= FEW_POINTS else "lines",
        marker={"size": EXACT_MARKER_SIZE} if line.markers else None,
        name=line.name,
        legendgroup=label,
        legendgrouptitle_text=label,
        showlegend="(exact)" in line.name,  # the other lines are named by their axes
        line={"color": colour, "dash": line.dash},
        hovertemplate=f"{label}<br>{x} %{{x:,}}<br>{line.name} = %{{y:.4g}}{parts}<extra></extra>",
    )


def trajectory_figure(runs: Sequence[TrajectoryRun], x: TrajectoryAxis = "iteration") -> go.Figure:
    """One column per run over its own span of `x` (`TRAJECTORY_AXES`: iterations, solver
    seconds, or the data passes or oracle calls its solver counts), so a short run is not a stub
    beside a long one; rows: the surrogate objective f0, the largest surrogate constraint row
    against the solver's ε, the exact constrained quantity on train and validation against κ,
    then where the runs record them: paper 001's KKT measure, one row per kind of row-named
    solver state (`STATE_VECTORS`: duals, multipliers and slacks, a line per constraint row, at
    most `MAX_STATE_ROWS` of them; steps per branch) and one per scalar state (`STATE_SCALARS`).
    The y axes are shared along each row, so runs compare at a glance."""
    if x not in TRAJECTORY_AXES:
        raise UserError(f"trajectories run over {', '.join(map(repr, TRAJECTORY_AXES))}, "
                        f"not {x!r}.")  # fmt: skip
    views = [_view(run, x) for run in runs]
    panels = _panels(views)
    columns = max(len(runs), 1)
    height = TRAJECTORY_HEIGHT + EXTRA_PANEL_HEIGHT * (len(panels) - 3)
    fig = make_subplots(
        rows=len(panels),
        cols=columns,
        shared_xaxes="columns",
        shared_yaxes="rows",
        column_titles=[run.label for run in runs] or None,
        horizontal_spacing=min(0.04, 0.2 / columns),
        vertical_spacing=PANEL_GAP / (height - VERTICAL_MARGINS),
    )
    titled: dict[int, int] = {}  # row -> the first column with a line: its axis carries the title
    for col, view in enumerate(views, start=1):
        colour = series_colour(col - 1)
        for row, panel in enumerate(panels, start=1):
            for line in panel.lines(view):
                if len(line.points):
                    fig.add_trace(_trajectory_trace(view.run.label, line, colour, x), row=row,
                                  col=col)  # fmt: skip
                    titled.setdefault(row, col)
            if note := panel.note(view):
                _add_note(fig, row, col, note)
        _add_level(fig, 2, col, view.run.epsilon, "≤ ε = {:g} feasible (surrogate)")
        _add_level(fig, 3, col, view.run.kappa, "κ = {:g}")
    for row, panel in enumerate(panels, start=1):
        fig.update_yaxes(title_text=panel.title, row=row, col=titled.get(row, 1))
        if panel.log:
            fig.update_yaxes(type="log", row=row)
    fig.update_xaxes(title_text=AXIS_TITLES.get(x, x), row=len(panels))
    fig.update_layout(template=TEMPLATE, height=height, uirevision="trajectory", hovermode="x")
    return fig


# row-named solver state ("dual.<row>", "slack.<row>" in a record's state) drawn as extra panels
STATE_VECTORS = {"dual": "dual variables λ<br>(per constraint row)",
                 "mu": "auxiliary multipliers μ<br>(PLADA, per row)",
                 "u": "slacks u<br>(PLADA, per row)",
                 "slack": "slack variables<br>(per constraint row)",
                 "branch": "steps per branch<br>(switching)",
                 "lambda": "group weights λ<br>(paper 002, on the simplex)",
                 "group_loss": "group losses F_s(w)<br>(paper 002)"}  # fmt: skip


@dataclass(frozen=True)
class ScalarState:
    """A number in a solver's state drawn as a panel of its own: its name in the hover, the
    panel's axis title, and whether the axis is logarithmic (for a quantity that should go to 0
    or shrinks like 1/k)."""

    name: str
    title: str
    log: bool = False


STATE_SCALARS = {
    # paper 001, Thm 2 and App. D.2: ‖λ_k − μ_k‖ = α‖z_k‖ → 0
    "dual_gap": ScalarState("‖λ − μ‖", "‖λ − μ‖ → 0<br>(PLADA, Thm 2)", log=True),
    # paper 001, eq. (11): γ_k = min{γ0, ρδ_k/(‖λ_k − μ_k‖² + 1)}, δ_k ~ 1/k
    "gamma": ScalarState("γ_k", "step size γ_k<br>(PLADA, eq. 11)", log=True),
    # paper 002's upper level: the smoothed measure, and its stationarity ‖(λ_t − λ_{t+1})/γ‖
    "fair": ScalarState("measure", "unfairness measure<br>(paper 002, smoothed: surrogate)"),
    "stationarity": ScalarState(
        "‖(λ_t − λ_{t+1})/γ‖", "stationarity in λ<br>(paper 002)", log=True
    ),
}


def _add_note(fig: go.Figure, row: int, col: int, text: str) -> None:
    """A small grey note just above one panel, at its left."""
    fig.add_annotation(text=text, row=row, col=col, xref="x domain", yref="y domain", x=0.0,
                       y=1.0, xanchor="left", yanchor="bottom", showarrow=False,
                       font={"size": 10, "color": "#555555"})  # fmt: skip


def _add_level(fig: go.Figure, row: int, col: int, level: float | None, label: str) -> None:
    """A dashed horizontal line at `level` in one panel, labelled `label.format(level)` (nothing
    for None); drawn while the panel is still empty, so it is there when the first point is."""
    if level is not None:
        fig.add_hline(y=level, row=row, col=col, line_dash="dash", line_color="grey",
                      annotation_text=label.format(level), annotation_position="top right",
                      exclude_empty_subplots=False)  # fmt: skip


# ---- per-group CCDF (paper 003, §6.3 item 1) ---------------------------------------------------


def _finite_lower(bound: float, floor: float) -> float:
    # Fbar_k^{-1}(1) = -inf (App. C): draw the slice down to `floor` instead
    return bound if np.isfinite(bound) else floor


def score_axis_range(scores: np.ndarray, keep: Sequence[float] = ()) -> tuple[float, float]:
    """The score axis: the pooled central mass (`CENTRAL_MASS` quantiles), widened to show every
    finite value of `keep` and by a small margin; a few outlying scores then leave the curves
    readable instead of squashing them into a corner."""
    low, high = np.quantile(scores, CENTRAL_MASS)
    kept = [float(v) for v in keep if np.isfinite(v)]
    low, high = min([float(low), *kept]), max([float(high), *kept])
    margin = AXIS_MARGIN * (high - low) or AXIS_MARGIN
    return low - margin, high + margin


def _note_outliers(fig: go.Figure, scores: np.ndarray, shown: tuple[float, float]) -> None:
    """Say how many scores the clipped axis leaves out, and the extreme scores."""
    beyond = int(np.count_nonzero((scores < shown[0]) | (scores > shown[1])))
    if beyond:
        fig.add_annotation(
            text=(f"{beyond:,} score{'s' if beyond > 1 else ''} beyond the axis: "
                  f"min {scores.min():.4g}, max {scores.max():.4g}"),
            xref="paper", yref="paper", x=0.0, y=1.0, xanchor="left", yanchor="bottom",
            showarrow=False, font={"size": 11, "color": "#555555"},
        )  # fmt: skip


def _inner_bounds(bounds: np.ndarray, alpha: float, beta: float) -> list[float]:
    """The I-slice bounds that are real thresholds: rank 0 is the group's top score and rank 1
    its bottom, which are where outliers live, not where the band is."""
    inner = list(bounds[:, 0]) if alpha > 0 else []
    return inner + (list(bounds[:, 1]) if beta < 1 else [])


def cdf_figure(
    scores: ArrayLike,
    groups: ArrayLike,
    group_names: Sequence[str],
    alpha: float,
    beta: float,
    threshold: float = 0.0,
    kappa: float | None = None,
) -> go.Figure:
    """Each group's rank Fbar_k(theta) against theta, the rank band [alpha, beta] shaded, each
    group's I-slice bounds Fbar_k^{-1}(alpha), Fbar_k^{-1}(beta), the decision threshold, and the
    theta where the largest pSP gap is attained, drawn between the two clipped ranks (eq. 62).
    The score axis shows the central mass (`score_axis_range`) and says how many scores lie
    beyond it."""
    scores, groups, n_groups = _inputs(scores, groups, group_names)
    curves = group_ccdf(scores, groups, n_groups)
    bounds = slice_bounds(scores, groups, n_groups, alpha, beta)
    witness = psp_witness(scores, groups, alpha, beta)
    left_edge = curves[0][0][0]
    fig = go.Figure()
    fig.add_hrect(
        y0=alpha,
        y1=beta,
        fillcolor="grey",
        opacity=0.15,
        line_width=0,
        layer="below",
        name="rank band [α, β]",
        annotation_text=_interval_text(alpha, beta),
        annotation_position="top left",
    )
    for k, ((theta, ranks), name) in enumerate(zip(curves, group_names, strict=True)):
        theta, ranks = thin_steps(theta, ranks)
        fig.add_trace(
            go.Scatter(
                x=theta,
                y=ranks,
                mode="lines",
                line={"shape": "hv", "color": group_colour(k)},
                name=name,
                legendgroup=name,
                hovertemplate=f"{name}<br>θ = %{{x:.4g}}<br>F̄(θ) = %{{y:.3f}}<extra></extra>",
            )
        )
        top, bottom = bounds[k, 0], _finite_lower(bounds[k, 1], left_edge)
        fig.add_trace(
            go.Scatter(
                x=np.array([top, bottom]),
                y=np.array([alpha, beta]),
                mode="markers",
                marker={"color": group_colour(k), "size": 10, "symbol": "diamond"},
                name=f"{name}: I-slice bounds",
                legendgroup=name,
                showlegend=False,
                hovertemplate=f"{name} I-slice bound<br>θ = %{{x:.4g}} at rank %{{y:.2f}}<extra></extra>",
            )
        )
    fig.add_vline(
        x=threshold,
        line_dash="dash",
        line_color="black",
        annotation_text=f"θ̂ = {threshold:g}",
        annotation_position="bottom right",
    )
    _add_psp_witness(fig, scores, groups, group_names, alpha, beta, kappa, witness)
    shown = score_axis_range(
        scores, [threshold, witness.theta, *_inner_bounds(bounds, alpha, beta)]
    )
    _note_outliers(fig, scores, shown)
    fig.update_xaxes(title_text=SCORE_AXIS, range=list(shown))
    fig.update_yaxes(title_text=RANK_AXIS, range=[-0.03, 1.03], tickformat=".0%")
    titled(fig, "Per-group score CCDF", f"{_interval_text(alpha, beta)}{_kappa_text(kappa)}",
            hovermode="closest", legend=LEGEND_BELOW)  # fmt: skip
    fig.update_layout(margin={"b": LEGEND_ROOM})
    return fig


def _add_psp_witness(
    fig: go.Figure,
    scores: np.ndarray,
    groups: np.ndarray,
    group_names: Sequence[str],
    alpha: float,
    beta: float,
    kappa: float | None,
    witness: GapWitness,
) -> None:
    """A vertical segment at the witness theta between the pair's ranks clipped to [alpha, beta]:
    its length divided by beta - alpha is the pSP (paper 003, eq. 62)."""
    k, k2 = witness.pair
    ranks = np.clip(positive_rates(scores, groups, witness.theta)[[k, k2]], alpha, beta)
    label = f"pSP = {witness.value:.3f}{_kappa_text(kappa)}"
    fig.add_trace(
        go.Scatter(
            x=np.full(2, witness.theta),
            y=ranks,
            mode="lines+markers",
            line={"color": "black", "width": 3},
            marker={"color": "black", "size": 7},
            name=f"largest pSP gap: {group_names[k]} vs {group_names[k2]}",
            hovertemplate=f"θ = %{{x:.4g}}<br>clipped rank %{{y:.3f}}<br>{label}<extra></extra>",
        )
    )
    fig.add_annotation(
        x=witness.theta, y=float(ranks.mean()), text=label, showarrow=True, ax=60, ay=-30
    )


# ---- rank-rank curve (paper 003, Fig. 2) --------------------------------------------------------


def _band_polygon(alpha: float, beta: float, kappa: float) -> tuple[np.ndarray, np.ndarray]:
    """Closed polygon of {(x, y) in [alpha, beta]^2 : |y - x| <= kappa (beta - alpha)}."""
    width = beta - alpha
    d = min(kappa * width, width)
    x = np.array([alpha, alpha, beta - d, beta, beta, alpha + d, alpha])
    y = np.array([alpha, alpha + d, beta, beta, beta - d, alpha, alpha])
    return x, y


def rank_rank_figure(
    scores: ArrayLike,
    groups: ArrayLike,
    group_names: Sequence[str],
    alpha: float,
    beta: float,
    kappa: float,
    pair: tuple[int, int] = (0, 1),
    threshold: float = 0.0,
) -> go.Figure:
    """Paper 003 Fig. 2: (Fbar_k(theta), Fbar_k'(theta)) as theta falls, the box [alpha, beta]^2,
    the band |y - x| <= kappa (beta - alpha) inside it, and the point at the decision threshold.
    pSP <= kappa exactly when the curve clipped to the box stays in the band; with the threshold
    point (x, y) clipped to the box, pDP = |x - y| / (beta - alpha) (eq. 20)."""
    scores, groups, _ = _inputs(scores, groups, group_names)
    k, k2 = pair
    x, y = thin_steps(*rank_rank_curve(scores, groups, k, k2))
    name_k, name_k2 = group_names[k], group_names[k2]
    band_x, band_y = _band_polygon(alpha, beta, kappa)
    tolerance = kappa * (beta - alpha)
    rates = positive_rates(scores, groups, threshold)
    pair_pdp = pdp_pairs(scores, groups, alpha, beta, threshold)[k, k2]
    pair_psp = psp_pairs(scores, groups, alpha, beta)[k, k2]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=band_x,
            y=band_y,
            fill="toself",
            fillcolor="rgba(0, 158, 115, 0.18)",
            line={"width": 0},
            mode="lines",
            name=f"band |y − x| ≤ κ(β − α) = {tolerance:.3g}",
            hoverinfo="skip",
        )
    )
    fig.add_shape(
        type="rect", x0=alpha, x1=beta, y0=alpha, y1=beta, line={"color": "grey"}, name="I × I"
    )
    fig.add_trace(
        go.Scatter(
            x=np.array([0.0, 1.0]),
            y=np.array([0.0, 1.0]),
            mode="lines",
            line={"color": "grey", "dash": "dot"},
            name="equal ranks",
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="lines",
            line={"color": "black"},
            name="rank–rank curve",
            hovertemplate=f"F̄_{name_k} = %{{x:.3f}}<br>F̄_{name_k2} = %{{y:.3f}}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=rates[[k]],
            y=rates[[k2]],
            mode="markers",
            marker={"color": "#D55E00", "size": 12, "symbol": "x"},
            name=f"θ̂ = {threshold:g}: pDP = {pair_pdp:.3f}",
            hovertemplate=(
                f"θ̂ = {threshold:g}<br>F̄_{name_k} = %{{x:.3f}}<br>F̄_{name_k2} = %{{y:.3f}}"
                f"<br>pDP = {pair_pdp:.3f}<extra></extra>"
            ),
        )
    )
    fig.update_xaxes(title_text=f"rank from the top in {name_k}: F̄(θ)", range=[0, 1])
    fig.update_yaxes(
        title_text=f"rank from the top in {name_k2}: F̄(θ)", range=[0, 1], scaleanchor="x"
    )
    detail = f"pSP = {pair_psp:.3f}{_kappa_text(kappa)} on {_interval_text(alpha, beta)}"
    titled(fig, "Rank–rank curve", f"{name_k} vs {name_k2}<br>{detail}", legend=LEGEND_BELOW)
    fig.update_layout(margin={"b": LEGEND_ROOM})
    return fig


# ---- score densities (paper 003, Figs. 3-8) -----------------------------------------------------


def density_figure(
    models: Sequence[tuple[str, ArrayLike, ArrayLike]],
    group_names: Sequence[str],
    alpha: float,
    beta: float,
) -> go.Figure:
    """One panel per labelled model (label, scores, groups): per-group score histograms as
    densities, with each group's I-slice [Fbar_k^{-1}(beta), Fbar_k^{-1}(alpha)] shaded. The
    bins span the models' pooled central mass (`score_axis_range`); a density counts every
    member of its group, so the mass beyond the axis is missing from the bars, not spread over
    them, and the outliers are noted."""
    if not models:
        raise UserError("density_figure needs at least one model.")
    pooled = np.concatenate([np.asarray(s, dtype=float) for _, s, _ in models])
    shown = score_axis_range(pooled[np.isfinite(pooled)])
    edges = np.linspace(*shown, HISTOGRAM_BINS + 1)  # shared by the groups and the models
    centres, widths = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    fig = make_subplots(
        rows=len(models),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=[label for label, _, _ in models],
    )
    for row, (label, model_scores, model_groups) in enumerate(models, start=1):
        scores, groups, n_groups = _inputs(model_scores, model_groups, group_names)
        bounds = slice_bounds(scores, groups, n_groups, alpha, beta)
        for k, name in enumerate(group_names):
            members = scores[groups == k]
            counts, _ = np.histogram(members, bins=edges)
            density = counts / (max(members.size, 1) * widths)
            fig.add_trace(
                go.Bar(
                    x=centres,
                    y=density,
                    width=widths,
                    name=name,
                    legendgroup=name,
                    showlegend=row == 1,
                    marker_color=group_colour(k),
                    opacity=0.55,
                    hovertemplate=f"{name} ({label})<br>θ ≈ %{{x:.3g}}<br>density %{{y:.3f}}<extra></extra>",
                ),
                row=row,
                col=1,
            )
            fig.add_vrect(
                x0=max(_finite_lower(bounds[k, 1], float(members.min())), shown[0]),
                x1=min(bounds[k, 0], shown[1]),
                fillcolor=group_colour(k),
                opacity=0.15,
                line_width=0,
                layer="below",
                name=f"{label}: {name} I-slice",
                row=row,
                col=1,
            )
        fig.update_yaxes(title_text="density", row=row, col=1)
    fig.update_xaxes(title_text=SCORE_AXIS, row=len(models), col=1)
    fig.update_xaxes(range=list(shown))
    _note_outliers(fig, pooled, shown)
    titled(fig, "Score densities per group",
            f"shaded: each group's I-slice, {_interval_text(alpha, beta)}",
            barmode="overlay", height=260 * len(models) + 120)  # fmt: skip
    return fig


# ---- data summary ------------------------------------------------------------------------------


def groups_figure(summary: dict[str, Any]) -> go.Figure:
    """Each group's size and positive-label rate (mean label, for a real-valued label) per
    split (from `Prepared.summary()`)."""
    names = [g["name"] for g in summary["groups"]]
    statistic = summary_statistic(summary)
    fig = make_subplots(rows=1, cols=2, subplot_titles=["rows per group",
                                                        LABEL_STATISTIC_WORDS[statistic]])  # fmt: skip
    for i, split in enumerate(("train", "val", "test")):
        sizes = np.array([g[split]["size"] for g in summary["groups"]])
        rates = np.array([np.nan if g[split][statistic] is None else g[split][statistic]
                          for g in summary["groups"]])  # fmt: skip
        colour = series_colour(i)
        fig.add_trace(go.Bar(x=names, y=sizes, name=split, marker_color=colour,
                             legendgroup=split), row=1, col=1)  # fmt: skip
        fig.add_trace(go.Bar(x=names, y=rates, name=split, marker_color=colour,
                             legendgroup=split, showlegend=False), row=1, col=2)  # fmt: skip
    if statistic == "label_rate":
        fig.update_yaxes(tickformat=".0%", range=[0, 1], row=1, col=2)
    fig.update_layout(template=TEMPLATE, barmode="group", height=GROUPS_FIGURE_HEIGHT,
                      margin={"t": 40, "b": 20, "l": 40, "r": 20})  # fmt: skip
    return fig
