"""Plotly figures of stored run data: pure functions, numbers in, `go.Figure` out (paper 003, §6.3).

Every figure uses the rank scale of paper 003: the rank of a score theta in group k is
Fbar_k(theta) = Pr(score > theta | group k), counted from the TOP and separately in each group
(Def. 4.1), so I = [alpha, beta) is "each group's top alpha to beta". The numbers come from
`engine.fairness` (exact metrics, strict ">"); this module only draws them. Group k has the same
colour in every figure; runs and solvers take their colours from a second palette.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots

from engine.errors import UserError
from engine.fairness import pdp_pairs, positive_rates, psp_pairs, psp_witness
from engine.fairness.distributions import (
    group_ccdf,
    rank_rank_curve,
    slice_bounds,
    suggested_interval,
)
from engine.runs.frontier import UNCONSTRAINED, Frontier, FrontierPoint, is_gap

TEMPLATE = "plotly_white"
MAX_CURVE_POINTS = 1500  # per trace: finer than a screen shows
GROUPS_FIGURE_HEIGHT = 300  # pixels
HISTOGRAM_BINS = 80
# Okabe-Ito: distinguishable with the common colour-vision deficiencies
GROUP_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
SERIES_COLOURS = (
    "#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#BCBD22",
    "#17BECF",
)  # fmt: skip
DOMINATED_COLOUR = "#B0B0B0"
UNCONSTRAINED_COLOUR = "#000000"
SCORE_AXIS = "score θ"
RANK_AXIS = "rank from the top F̄_k(θ)"
EXACT_METRICS = ("val.accuracy", "val.psp")


def group_colour(k: int) -> str:
    """The colour of group k, the same in every figure."""
    return GROUP_COLOURS[k % len(GROUP_COLOURS)]


def series_colour(i: int) -> str:
    """The colour of the i-th run or solver of a figure."""
    return SERIES_COLOURS[i % len(SERIES_COLOURS)]


def _percent(share: float) -> str:
    return f"{100 * share:.4g} %"


def _interval_text(alpha: float, beta: float) -> str:
    return f"I = top {_percent(alpha)} to {_percent(beta)} of each group"


def _kappa_text(kappa: float | None) -> str:
    return "" if kappa is None else f", κ = {kappa:g}"


def _inputs(
    scores: ArrayLike, groups: ArrayLike, group_names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, int]:
    scores, groups = np.asarray(scores, dtype=np.float64), np.asarray(groups)
    if groups.size and groups.max() >= len(group_names):
        raise UserError(f"group id {groups.max()} has no name; group_names has {len(group_names)}.")
    return scores, groups, len(group_names)


# ---- trajectories (paper 003, Figs. 10/11) -----------------------------------------------------


def _series(
    records: Sequence[dict[str, Any]], value: Callable[[dict[str, Any]], float | None]
) -> tuple[np.ndarray, np.ndarray]:
    """(iterations, values) of the records whose value is present."""
    kept = [(r["iteration"], value(r)) for r in records]
    kept = [(i, v) for i, v in kept if v is not None]
    points = np.array(kept, dtype=np.float64).reshape(-1, 2)
    return points[:, 0], points[:, 1]


def _field(key: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda record: record.get(key)


def _value(key: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda record: (record.get("values") or {}).get(key)


def _trajectory_trace(
    label: str, name: str, x: np.ndarray, y: np.ndarray, colour: str, dash: str
) -> go.Scatter:
    return go.Scatter(
        x=x,
        y=y,
        mode="lines",
        name=name,
        legendgroup=label,
        legendgrouptitle_text=label,
        line={"color": colour, "dash": dash},
        hovertemplate=f"{label}<br>iteration %{{x}}<br>{name} = %{{y:.4g}}<extra></extra>",
    )


def trajectory_figure(
    runs: Sequence[tuple[str, Sequence[dict[str, Any]]]],
    exact_metrics: Sequence[str] = EXACT_METRICS,
) -> go.Figure:
    """Panels over the iteration for each labelled run (store trajectory records):
    f0 and the largest surrogate constraint row from "surrogate" records, and the exact metrics
    `exact_metrics` (keys of `values`, e.g. "val.psp") from "exact" records only."""
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.07,
        subplot_titles=(
            "objective f0 (surrogate problem)",
            "max surrogate constraint g_i (≤ 0 is feasible)",
            "exact metrics (indicator-based, not surrogate)",
        ),
    )
    dashes = ("solid", "dash", "dot", "dashdot", "longdash")
    for i, (label, records) in enumerate(runs):
        surrogate = [r for r in records if r["kind"] == "surrogate"]
        exact = [r for r in records if r["kind"] == "exact"]
        panels = [
            (1, "f0 (surrogate)", _series(surrogate, _field("objective")), "solid"),
            (2, "max violation (surrogate)", _series(surrogate, _field("max_violation")), "solid"),
        ]
        for j, metric in enumerate(exact_metrics):
            series = _series(exact, _value(metric))
            panels.append((3, f"{metric} (exact)", series, dashes[j % len(dashes)]))
        for row, name, (x, y), dash in panels:
            if x.size:
                fig.add_trace(_trajectory_trace(label, name, x, y, series_colour(i), dash), row, 1)
    fig.add_hline(
        y=0.0, row=2, col=1, line_dash="dot", line_color="grey", exclude_empty_subplots=False
    )
    fig.update_yaxes(title_text="f0", row=1, col=1)
    fig.update_yaxes(title_text="max g_i (surrogate)", row=2, col=1)
    fig.update_yaxes(title_text="exact value", row=3, col=1)
    fig.update_xaxes(title_text="iteration", row=3, col=1)
    fig.update_layout(template=TEMPLATE, height=720, uirevision="trajectory", hovermode="x")
    return fig


# ---- per-group CCDF (paper 003, §6.3 item 1) ---------------------------------------------------


def thin_steps(
    x: np.ndarray, y: np.ndarray, max_points: int = MAX_CURVE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """At most `max_points` points of a monotone step curve, evenly spread along it (always
    keeping both ends): on screen the curve is the same, and the page gets far less data."""
    if len(x) <= max_points:
        return x, y
    keep = np.unique(np.linspace(0, len(x) - 1, max_points).round().astype(int))
    return x[keep], y[keep]


def _finite_lower(bound: float, floor: float) -> float:
    # Fbar_k^{-1}(1) = -inf (App. C): draw the slice down to `floor` instead
    return bound if np.isfinite(bound) else floor


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
    theta where the largest pSP gap is attained, drawn between the two clipped ranks (eq. 62)."""
    scores, groups, n_groups = _inputs(scores, groups, group_names)
    curves = group_ccdf(scores, groups, n_groups)
    bounds = slice_bounds(scores, groups, n_groups, alpha, beta)
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
    _add_psp_witness(fig, scores, groups, group_names, alpha, beta, kappa)
    fig.update_xaxes(title_text=SCORE_AXIS)
    fig.update_yaxes(title_text=RANK_AXIS, range=[-0.03, 1.03], tickformat=".0%")
    fig.update_layout(
        template=TEMPLATE,
        title=f"Per-group score CCDF: {_interval_text(alpha, beta)}{_kappa_text(kappa)}",
        hovermode="closest",
    )
    return fig


def _add_psp_witness(
    fig: go.Figure,
    scores: np.ndarray,
    groups: np.ndarray,
    group_names: Sequence[str],
    alpha: float,
    beta: float,
    kappa: float | None,
) -> None:
    """A vertical segment at the witness theta between the pair's ranks clipped to [alpha, beta]:
    its length divided by beta - alpha is the pSP (paper 003, eq. 62)."""
    witness = psp_witness(scores, groups, alpha, beta)
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
    fig.update_layout(
        template=TEMPLATE,
        title=(
            f"Rank–rank curve, {name_k} vs {name_k2}: {_interval_text(alpha, beta)}, "
            f"pSP = {pair_psp:.3f}{_kappa_text(kappa)}"
        ),
    )
    return fig


# ---- score densities (paper 003, Figs. 3-8) -----------------------------------------------------


def density_figure(
    models: Sequence[tuple[str, ArrayLike, ArrayLike]],
    group_names: Sequence[str],
    alpha: float,
    beta: float,
) -> go.Figure:
    """One panel per labelled model (label, scores, groups): per-group score histograms as
    densities, with each group's I-slice [Fbar_k^{-1}(beta), Fbar_k^{-1}(alpha)] shaded."""
    if not models:
        raise UserError("density_figure needs at least one model.")
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
        edges = np.histogram_bin_edges(scores, bins=HISTOGRAM_BINS)  # shared by the groups
        centres, widths = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
        for k, name in enumerate(group_names):
            members = scores[groups == k]
            density, _ = np.histogram(members, bins=edges, density=True)
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
                x0=_finite_lower(bounds[k, 1], float(members.min())),
                x1=bounds[k, 0],
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
    fig.update_layout(
        template=TEMPLATE,
        barmode="overlay",
        height=260 * len(models) + 120,
        title=f"Score densities per group; shaded: each group's I-slice ({_interval_text(alpha, beta)})",
    )
    return fig


# ---- accuracy-fairness frontier (paper 003, Fig. 1) ---------------------------------------------


def _point_text(point: FrontierPoint) -> str:
    kappa = "—" if point.kappa is None else f"{point.kappa:g}"
    alpha, beta = point.interval
    return (
        f"{point.solver}{' (dominated)' if point.dominated else ''}<br>"
        f"κ = {kappa}, I = [{_percent(alpha)}, {_percent(beta)})<br>"
        f"accuracy = {point.accuracy:.4f} ± {point.accuracy_ci:.4f}<br>"
        f"fairness = {point.fairness:.4f} ± {point.fairness_ci:.4f}<br>"
        f"{point.n} seed(s)"
    )


def _frontier_trace(
    points: Sequence[FrontierPoint], name: str, solver: str, colour: str
) -> go.Scatter:
    return go.Scatter(
        x=np.array([p.fairness for p in points]),
        y=np.array([p.accuracy for p in points]),
        error_x={"type": "data", "array": np.array([p.fairness_ci for p in points])},
        error_y={"type": "data", "array": np.array([p.accuracy_ci for p in points])},
        mode="markers",
        marker={
            "color": colour,
            "size": np.array([16 if p.unconstrained else 10 for p in points]),
            "symbol": ["star" if p.unconstrained else "circle" for p in points],
            "line": {"color": "white", "width": 1},
        },
        name=name,
        legendgroup=solver,
        customdata=[list(p.run_ids) for p in points],
        text=[_point_text(p) for p in points],
        hovertemplate="%{text}<extra></extra>",
    )


def frontier_figure(frontier: Frontier, show_dominated: bool = True) -> go.Figure:
    """Accuracy (y) against fairness (x), mean ± CI half-width over seeds on both axes: one colour
    per solver, dominated points grey, the unconstrained model a star. Each point's `customdata`
    is the list of its run ids."""
    fig = go.Figure()
    solvers = list(dict.fromkeys(p.solver for p in frontier.points))
    constrained = [s for s in solvers if s != UNCONSTRAINED]
    for solver in solvers:
        points = [p for p in frontier.points if p.solver == solver]
        colour = (
            UNCONSTRAINED_COLOUR
            if solver == UNCONSTRAINED
            else series_colour(constrained.index(solver))
        )
        front = [p for p in points if not p.dominated]
        dominated = [p for p in points if p.dominated]
        if front:
            fig.add_trace(_frontier_trace(front, solver, solver, colour))
        if dominated and show_dominated:
            name = f"{solver} (dominated)"
            fig.add_trace(_frontier_trace(dominated, name, solver, DOMINATED_COLOUR))
    metric = f"1 − {frontier.metric}" if is_gap(frontier.metric) else frontier.metric
    fig.update_xaxes(title_text=f"fairness = {metric} ({frontier.split} split)")
    fig.update_yaxes(title_text=f"accuracy ({frontier.split} split)")
    fig.update_layout(
        template=TEMPLATE,
        title=(
            f"Accuracy–fairness frontier: mean ± {_percent(frontier.confidence)} CI over seeds"
            + (f"; {len(frontier.skipped)} run(s) lacked a metric" if frontier.skipped else "")
        ),
        hovermode="closest",
    )
    return fig


# ---- interval helper (paper 003, App. B) --------------------------------------------------------


def interval_scan_figure(rows: Sequence[dict[str, Any]], metric: str = "psp") -> go.Figure:
    """Heat map of `metric` ("psp" or "pdp") over the scanned intervals (x = alpha, y = beta),
    from `engine.fairness.distributions.interval_scan`; intervals containing the positive rate p
    are ringed and App. B's choice (the most unfair of those) is starred."""
    if not rows:
        raise UserError("interval_scan_figure needs at least one scanned interval.")
    if metric not in ("psp", "pdp"):
        raise UserError(f"metric must be 'psp' or 'pdp', not {metric!r}.")
    alphas = np.unique([r["alpha"] for r in rows])
    betas = np.unique([r["beta"] for r in rows])
    z = np.full((betas.size, alphas.size), np.nan)
    other = np.full_like(z, np.nan)
    second = "pdp" if metric == "psp" else "psp"
    for r in rows:
        cell = np.searchsorted(betas, r["beta"]), np.searchsorted(alphas, r["alpha"])
        z[cell], other[cell] = r[metric], r[second]
    fig = go.Figure(
        go.Heatmap(
            x=alphas,
            y=betas,
            z=z,
            customdata=other,
            zmin=0.0,
            colorscale="Reds",
            colorbar={"title": {"text": metric}},
            name=metric,
            hovertemplate=(
                f"I = [%{{x:.1%}}, %{{y:.1%}})<br>{metric} = %{{z:.3f}}"
                f"<br>{second} = %{{customdata:.3f}}<extra></extra>"
            ),
        )
    )
    rate = rows[0]["positive_rate"]
    holding = [r for r in rows if r["contains_rate"]]
    if holding:
        fig.add_trace(
            go.Scatter(
                x=np.array([r["alpha"] for r in holding]),
                y=np.array([r["beta"] for r in holding]),
                mode="markers",
                marker={"symbol": "circle-open", "size": 9, "color": "black"},
                name=f"contains p = {rate:.1%}",
                hoverinfo="skip",
            )
        )
        alpha, beta = suggested_interval(rows, metric)
        best = next(r for r in holding if (r["alpha"], r["beta"]) == (alpha, beta))
        fig.add_trace(
            go.Scatter(
                x=np.array([alpha]),
                y=np.array([beta]),
                mode="markers",
                marker={"symbol": "star", "size": 16, "color": "#0072B2"},
                name=(
                    f"App. B choice: [{_percent(alpha)}, {_percent(beta)}), "
                    f"{metric} = {best[metric]:.3f}"
                ),
            )
        )
    fig.update_xaxes(title_text="α: top of I (rank from the top)", tickformat=".0%")
    fig.update_yaxes(title_text="β: bottom of I (rank from the top)", tickformat=".0%")
    fig.update_layout(
        template=TEMPLATE,
        title=f"Interval helper (App. B): positive rate p = {rate:.1%} of the model",
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


# ---- data summary ------------------------------------------------------------------------------


def groups_figure(summary: dict[str, Any]) -> go.Figure:
    """Each group's size and positive-label rate per split (from `Prepared.summary()`)."""
    names = [g["name"] for g in summary["groups"]]
    fig = make_subplots(rows=1, cols=2, subplot_titles=["rows per group", "positive-label rate"])
    for i, split in enumerate(("train", "val", "test")):
        sizes = np.array([g[split]["size"] for g in summary["groups"]])
        rates = np.array([np.nan if g[split]["label_rate"] is None else g[split]["label_rate"]
                          for g in summary["groups"]])  # fmt: skip
        colour = series_colour(i)
        fig.add_trace(go.Bar(x=names, y=sizes, name=split, marker_color=colour,
                             legendgroup=split), row=1, col=1)  # fmt: skip
        fig.add_trace(go.Bar(x=names, y=rates, name=split, marker_color=colour,
                             legendgroup=split, showlegend=False), row=1, col=2)  # fmt: skip
    fig.update_yaxes(tickformat=".0%", range=[0, 1], row=1, col=2)
    fig.update_layout(template=TEMPLATE, barmode="group", height=GROUPS_FIGURE_HEIGHT,
                      margin={"t": 40, "b": 20, "l": 40, "r": 20})  # fmt: skip
    return fig
