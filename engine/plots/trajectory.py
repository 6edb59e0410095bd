"""Trajectory figures of stored runs (paper 003, Figs. 10/11; paper 001 spec §5): the surrogate
objective and largest row, the exact constrained quantity, paper 001's KKT measure and the
solver's own state, one column per run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.errors import UserError
from engine.exact_trajectory import EXACT_MARKER_SIZE, exact_points
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import quantity_metric, quantity_name
from engine.plots.style import TEMPLATE, series_colour, thinned_positions
from engine.runs.results import measure_view, surrogate_epsilon
from engine.runs.spec import RunSpec
from engine.solvers.card import StatePanel
from engine.solvers.catalogue import CARDS
from engine.solvers.records import RecordKind

MAX_TRAJECTORY_POINTS = 1000  # per trace: a run of hours logs tens of thousands of records
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


# row-named state several solvers record ("dual.<row>", "slack.<row>", "branch.<name>"); a
# solver's own state panels are declared on its card (`SolverCard.state_panels`)
SHARED_PANELS = (
    StatePanel("dual", "dual variables λ<br>(per constraint row)", per_row=True),
    StatePanel("slack", "slack variables<br>(per constraint row)", per_row=True),
    StatePanel("branch", "steps per branch<br>(switching)", per_row=True),
)


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
    panels: tuple[StatePanel, ...] = SHARED_PANELS  # the state panels it may have data for


def trajectory_run(
    label: str,
    spec: RunSpec,
    records: Sequence[dict[str, Any]],
    view: ConstraintSpec | None = None,
) -> TrajectoryRun:
    """A stored run's trajectory, held to what its spec says; a run without a constraint shows
    the quantity of the constraint `view` where it reports it (by default pSP on I, which every
    classifier reports, or a regression's mean gap), as `engine.runs.results.run_verdict`
    does, except that a solver minimising a measure of its own shows that measure's exact
    counterpart (`measure_view`: paper 002's dp as the DP gap), as its verdict says."""
    family, task = spec.family, spec.task
    view = measure_view(spec) or view
    shown = family or (view.family if view is not None else None)
    epsilon = None if family is None else surrogate_epsilon(spec)
    metric = quantity_metric(family, view, task)
    card = CARDS.get(spec.solver)  # None: a solver no longer offered
    panels = SHARED_PANELS + (card.state_panels if card is not None else ())
    return TrajectoryRun(
        label, records, quantity_name(shown, task), spec.kappa, epsilon, metric, panels
    )


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
    surrogate = [r for r in run.records if r["kind"] == RecordKind.SURROGATE]
    exact = [r for r in run.records if r["kind"] == RecordKind.EXACT]
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
    return points[thinned_positions(len(points), MAX_TRAJECTORY_POINTS)]


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
        _Line(
            f"{split} {run.quantity} (exact)",
            exact_points(view.exact, view.at, _value(f"{key}.{run.metric}")),
            dash,
            markers=True,
        )
        for split, key, dash in splits
    ]


def _kkt_lines(view: _RunView) -> list[_Line]:
    """Paper 001's common stationarity measure (spec §5, `engine.solvers.kkt`) on the training
    data, its three parts in the hover."""
    parts = [_value(f"{KKT}.{part}") for part in KKT_PARTS]
    points = exact_points(view.exact, view.at, _value(KKT), *parts)
    return [_Line("KKT", points, parts=KKT_PARTS, markers=True)]


def _kind_keys(view: _RunView, kind: str) -> list[str]:
    """The run's state entries of one kind ("dual.<row>"), in the order first recorded."""
    return [k for k in view.state_keys if k.startswith(f"{kind}.")]


def _has_state(view: _RunView, panel: StatePanel) -> bool:
    """Whether the run declares `panel` and has recorded its state."""
    if panel not in view.run.panels:
        return False
    return bool(_kind_keys(view, panel.key)) if panel.per_row else panel.key in view.state_keys


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


def _state_lines(view: _RunView, panel: StatePanel) -> list[_Line]:
    """The lines of a state panel the run declares: one per shown row, or its one number."""
    if not _has_state(view, panel):
        return []
    if not panel.per_row:
        return [_Line(panel.name, _points(view.surrogate, view.at, _state(panel.key)))]
    kind = panel.key
    return [
        _Line(
            f"{kind} {key.removeprefix(kind + '.')}", _points(view.surrogate, view.at, _state(key))
        )
        for key in _shown_keys(view, kind)[0]
    ]


def _state_note(view: _RunView, panel: StatePanel) -> str:
    if not (panel.per_row and _has_state(view, panel)):
        return ""
    shown, total = _shown_keys(view, panel.key)
    return (
        f"{len(shown)} of {total} rows shown (largest final |value|)" if len(shown) < total else ""
    )


def _panels(views: Sequence[_RunView]) -> list[_Panel]:
    """The figure's rows: f0, the largest surrogate row, the exact quantity, then those the runs
    have data for: the KKT measure, then each state panel the runs declare (the shared ones
    first, then each solver's own, `SolverCard.state_panels`) and have recorded."""
    quantities = " / ".join(dict.fromkeys(v.run.quantity for v in views)) or "constrained value"
    panels = [
        _Panel("objective f0<br>(surrogate)", _objective_lines),
        _Panel("max surrogate row<br>(surrogate)", _violation_lines),
        _Panel(f"{quantities}<br>(exact)", _exact_lines),
    ]
    if any(_value(KKT)(r) is not None for v in views for r in v.exact):
        panels.append(_Panel("KKT measure<br>(exact, train)", _kkt_lines, log=True))
    declared = dict.fromkeys(panel for view in views for panel in view.run.panels)
    panels += [
        _Panel(
            panel.title,
            partial(_state_lines, panel=panel),
            log=panel.log,
            note=partial(_state_note, panel=panel),
        )
        for panel in declared
        if any(_has_state(view, panel) for view in views)
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
    then where the runs record them: paper 001's KKT measure and a row per state panel (the
    duals, slacks and steps per branch several solvers record, then each solver's own from its
    card; a line per constraint row, at most `MAX_STATE_ROWS` of them). The y axes are shared
    along each row, so runs compare at a glance."""
    if x not in TRAJECTORY_AXES:
        raise UserError(
            f"trajectories run over {', '.join(map(repr, TRAJECTORY_AXES))}, not {x!r}."
        )
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
                    fig.add_trace(
                        _trajectory_trace(view.run.label, line, colour, x), row=row, col=col
                    )
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


def _add_note(fig: go.Figure, row: int, col: int, text: str) -> None:
    """A small grey note just above one panel, at its left."""
    fig.add_annotation(
        text=text,
        row=row,
        col=col,
        xref="x domain",
        yref="y domain",
        x=0.0,
        y=1.0,
        xanchor="left",
        yanchor="bottom",
        showarrow=False,
        font={"size": 10, "color": "#555555"},
    )


def _add_level(fig: go.Figure, row: int, col: int, level: float | None, label: str) -> None:
    """A dashed horizontal line at `level` in one panel, labelled `label.format(level)` (nothing
    for None); drawn while the panel is still empty, so it is there when the first point is."""
    if level is not None:
        fig.add_hline(
            y=level,
            row=row,
            col=col,
            line_dash="dash",
            line_color="grey",
            annotation_text=label.format(level),
            annotation_position="top right",
            exclude_empty_subplots=False,
        )
