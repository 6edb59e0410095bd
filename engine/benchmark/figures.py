"""Plotly figures of paper 000's benchmark: numbers in, `go.Figure` out.

- `band_figure`: quantities against the solvers' own time, mean and Q1–Q3 band over runs (Figs. 1-2).
- `probability_figure`: per-group histograms of the predicted probability σ(h) (Fig. 3).
- `spider_figure`: Ind, Sp, Sf, Ina, DifAcc per solver, train and test (Fig. 4).
- `heatmap_figure`: final validation loss and violation over a 2-D hyper-parameter grid
  (Tables 5-12).
Every trace carries its solver, split and quantity in `meta`, so its data can be found again.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots

from engine.benchmark.bands import Band
from engine.errors import UserError
from engine.fairness.criteria import probabilities, probability_wasserstein
from engine.plots.style import TEMPLATE, group_colour, series_colour

TIME_AXIS = "solver time (s)"  # evaluations of saved iterates are off it (`BudgetClock.SOLVER`)
PROBABILITY_AXIS = "predicted probability σ(h)"
SPIDER_AXES = ("Ind", "Sp", "Sf", "Ina", "DifAcc")  # paper 000, Fig. 4
SPIDER_RADIAL_TICKS = 4  # at most this many labelled rings: a laptop's spider keeps them apart
SPIDER_TITLE_SHIFT = 24  # px: a criterion's label stands about this far out of its circle
BAND_OPACITY = 0.2
PANELS_PER_ROW = 3
PROBABILITY_BINS = 50


def _translucent(colour: str, opacity: float) -> str:
    """ "#RRGGBB" as an rgba() string with the given opacity."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {opacity})"


def _first_seen(keys: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(keys))


# ---- trajectories (paper 000, Figs. 1-2) -------------------------------------------------------


def _band_traces(band: Band, colour: str, dash: str, meta: dict[str, str]) -> list[go.Scatter]:
    """The Q1–Q3 band as one closed polygon (Q3 forward in time, Q1 back) and the mean line."""
    split = meta["split"]
    polygon = go.Scatter(
        x=np.concatenate([band.seconds, band.seconds[::-1]]),
        y=np.concatenate([band.q3, band.q1[::-1]]),
        fill="toself",
        fillcolor=_translucent(colour, BAND_OPACITY),
        line={"width": 0},
        mode="lines",
        name=f"{split} Q1–Q3",
        legendgroup=split,
        showlegend=False,
        hoverinfo="skip",
        meta={**meta, "kind": "band"},
    )
    mean = go.Scatter(
        x=band.seconds,
        y=band.mean,
        mode="lines",
        line={"color": colour, "dash": dash},
        name=split,
        legendgroup=split,
        customdata=np.stack([band.q1, band.median, band.q3, band.runs], axis=1),
        hovertemplate=(
            f"{meta['solver']}, {split}<br>t = %{{x:g}} s<br>mean %{{y:.4g}}"
            "<br>Q1 %{customdata[0]:.4g}, median %{customdata[1]:.4g}, Q3 %{customdata[2]:.4g}"
            "<br>%{customdata[3]} runs<extra></extra>"
        ),
        meta={**meta, "kind": "mean"},
    )
    return [polygon, mean]


def band_figure(
    bands: Mapping[str, Mapping[str, Mapping[str, Band]]],
    bounds: Mapping[str, float] | None = None,
    dashed: Collection[str] = ("test", "val"),
) -> go.Figure:
    """`bands[quantity][solver][series]` drawn one row per quantity and one column per solver
    (paper 000, Figs. 1-2): per series (a split, or a group) the mean line (the `dashed` ones
    dashed: held-out splits) over its
    Q1–Q3 band; dotted lines at ±δ in the rows of `bounds[quantity] = δ`; y shared along a row."""
    quantities = list(bands)
    solvers = _first_seen(s for per_solver in bands.values() for s in per_solver)
    splits = _first_seen(
        split for per_solver in bands.values() for per in per_solver.values() for split in per
    )
    if not solvers:
        raise UserError("band_figure needs at least one solver's band.")
    fig = make_subplots(
        rows=len(quantities),
        cols=len(solvers),
        shared_xaxes=True,
        shared_yaxes="rows",
        column_titles=solvers,
        horizontal_spacing=min(0.04, 0.2 / len(solvers)),
        vertical_spacing=min(0.06, 0.3 / len(quantities)),
    )
    legend_shown: set[str] = set()
    for row, quantity in enumerate(quantities, start=1):
        for col, solver in enumerate(solvers, start=1):
            for split, band in bands[quantity].get(solver, {}).items():
                meta = {"quantity": quantity, "solver": solver, "split": split}
                colour = series_colour(splits.index(split))
                dash = "dash" if split in dashed else "solid"
                polygon, mean = _band_traces(band, colour, dash, meta)
                mean.showlegend = split not in legend_shown
                legend_shown.add(split)
                fig.add_traces([polygon, mean], rows=row, cols=col)
            if bounds and quantity in bounds:
                delta = bounds[quantity]
                for level in (delta, -delta):
                    fig.add_hline(
                        y=level,
                        row=row,
                        col=col,
                        line_dash="dot",
                        line_color="grey",
                        exclude_empty_subplots=False,
                    )
        fig.update_yaxes(title_text=quantity, row=row, col=1)
    fig.update_xaxes(title_text=TIME_AXIS, row=len(quantities))
    fig.update_layout(template=TEMPLATE, height=240 * len(quantities) + 120, hovermode="closest")
    return fig


# ---- predicted probabilities per group (paper 000, Fig. 3) -------------------------------------


def probability_figure(
    models: Mapping[str, tuple[ArrayLike, ArrayLike]],
    group_names: Sequence[str],
    bins: int = PROBABILITY_BINS,
) -> go.Figure:
    """One panel per solver of `models[solver] = (scores h, group ids g)`: each group's
    histogram of σ(h) as a probability density on `bins` equal bins of [0, 1], overlaid; the
    panel title gives Wd, the largest exact W1 distance between two groups' σ(h) (paper 000,
    Fig. 3, Table 4)."""
    if not models:
        raise UserError("probability_figure needs at least one solver's scores.")
    titles = []
    panels = []
    for solver, (h, g) in models.items():
        groups = np.asarray(g)
        if groups.size and groups.max() >= len(group_names):
            raise UserError(
                f"group id {groups.max()} has no name; group_names has {len(group_names)}."
            )
        titles.append(f"{solver}: Wd = {probability_wasserstein(h, groups):.4f}")
        panels.append((solver, probabilities(h), groups))
    cols = min(len(models), PANELS_PER_ROW)
    rows = math.ceil(len(models) / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=titles,
        shared_xaxes=True,
        horizontal_spacing=0.06,
        vertical_spacing=0.12,
    )
    for i, (solver, probability, groups) in enumerate(panels):
        for k, name in enumerate(group_names):
            trace = go.Histogram(
                x=probability[groups == k],
                xbins={"start": 0.0, "end": 1.0, "size": 1.0 / bins},
                histnorm="probability density",
                name=name,
                legendgroup=name,
                showlegend=i == 0,
                marker_color=group_colour(k),
                opacity=0.55,
                meta={"solver": solver, "group": name},
                hovertemplate=f"{name} ({solver})<br>σ(h) %{{x}}<br>density %{{y:.3f}}<extra></extra>",
            )
            fig.add_trace(trace, row=i // cols + 1, col=i % cols + 1)
    fig.update_xaxes(range=[0.0, 1.0])
    fig.update_xaxes(title_text=PROBABILITY_AXIS, row=rows)
    fig.update_yaxes(title_text="density", col=1)
    fig.update_layout(template=TEMPLATE, barmode="overlay", height=280 * rows + 100)
    return fig


# ---- criteria per solver (paper 000, Fig. 4) ---------------------------------------------------


def spider_figure(
    values: Mapping[str, Mapping[str, Mapping[str, float | None]]],
    axes: Sequence[str] = SPIDER_AXES,
) -> go.Figure:
    """`values[split][solver][criterion]` (e.g. means over runs) as one polar panel per split
    and one closed line per solver over the criteria `axes` (paper 000, Fig. 4: smaller is
    better). A missing or None criterion leaves a gap in the solver's line; the panels share
    one radial range."""
    splits = list(values)
    if not splits:
        raise UserError("spider_figure needs the criteria of at least one split.")
    solvers = _first_seen(s for per_solver in values.values() for s in per_solver)
    # room between the panels for one's right and the next one's left criterion
    fig = make_subplots(
        rows=1,
        cols=len(splits),
        specs=[[{"type": "polar"}] * len(splits)],
        subplot_titles=splits,
        horizontal_spacing=0.28 / len(splits),
    )
    largest = 0.0
    for col, split in enumerate(splits, start=1):
        for i, solver in enumerate(solvers):
            if solver not in values[split]:
                continue
            given = values[split][solver]
            r = [given.get(axis) for axis in axes]
            largest = max([largest, *(v for v in r if v is not None)])
            fig.add_trace(
                go.Scatterpolar(
                    r=[*r, r[0]],
                    theta=[*axes, axes[0]],
                    mode="lines+markers",
                    name=solver,
                    legendgroup=solver,
                    showlegend=col == 1,
                    line={"color": series_colour(i)},
                    meta={"solver": solver, "split": split},
                    hovertemplate=f"{solver}, {split}<br>%{{theta}} = %{{r:.4g}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    # the first criterion on top, the others clockwise; the radial axis halfway between the first
    # two spokes with at most SPIDER_RADIAL_TICKS labels, horizontal (a radial axis's tickangle is
    # taken from its own direction): on the slanted axis, the labels of ticks ~35 px apart on a
    # ~120 px radius stand ~25 px apart vertically, clear of each other and of the criteria
    between = 90 - 180 / len(axes)
    fig.update_polars(
        angularaxis={"rotation": 90, "direction": "clockwise", "tickfont": {"size": 13}},
        radialaxis={
            "range": [0.0, 1.05 * largest or 1.0],
            "nticks": SPIDER_RADIAL_TICKS,
            "angle": between,
            "tickangle": between,
            "tickfont": {"size": 11},
        },
    )
    fig.update_annotations(yshift=SPIDER_TITLE_SHIFT)  # the split's title above its top criterion
    fig.update_layout(
        template=TEMPLATE,
        height=440,
        margin={"l": 40, "r": 40, "t": 70, "b": 30},
        legend={"orientation": "h", "x": 0.5, "xanchor": "center", "y": -0.06, "yanchor": "top"},
    )
    return fig


# ---- hyper-parameter grids (paper 000, Tables 5-12) --------------------------------------------


def _ticks(values: Sequence[Any]) -> list[str]:
    return [f"{v:g}" if isinstance(v, int | float) else str(v) for v in values]


def heatmap_figure(
    x_name: str,
    x_values: Sequence[Any],
    y_name: str,
    y_values: Sequence[Any],
    loss: ArrayLike,
    violation: ArrayLike,
) -> go.Figure:
    """Final validation loss and constraint violation (each a (len(y_values), len(x_values))
    array of means over runs, NaN for an untried setting) as two annotated heat maps side by
    side over the grid of two hyper-parameters (paper 000, Tables 5-12)."""
    shape = (len(y_values), len(x_values))
    panels = []
    for name, z, scale in (("loss", loss, "Blues"), ("violation", violation, "Reds")):
        z = np.asarray(z, dtype=np.float64)
        if z.shape != shape:
            raise UserError(
                f"the {name} grid has shape {z.shape}; the grid of {y_name} × "
                f"{x_name} needs {shape}."
            )
        panels.append((name, z, scale))
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.16,
        subplot_titles=[f"final validation {name}" for name, _, _ in panels],
    )
    for col, (name, z, scale) in enumerate(panels, start=1):
        fig.add_trace(
            go.Heatmap(
                x=_ticks(x_values),
                y=_ticks(y_values),
                z=z,
                colorscale=scale,
                zmin=0.0 if name == "violation" else None,
                texttemplate="%{z:.4g}",
                colorbar={"x": 0.42 if col == 1 else 1.0, "title": {"text": name}},
                name=name,
                meta={"quantity": name},
                hovertemplate=(
                    f"{x_name} = %{{x}}<br>{y_name} = %{{y}}<br>{name} = %{{z:.4g}}<extra></extra>"
                ),
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text=x_name, type="category", row=1, col=col)
        fig.update_yaxes(title_text=y_name, type="category", row=1, col=col)
    fig.update_layout(template=TEMPLATE, height=120 + 40 * max(len(y_values), 4))
    return fig
