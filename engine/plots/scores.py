"""Figures of a model's scores by group (paper 003, §6.3): the per-group CCDF with the interval
band, the rank–rank curve and the score densities.

Every figure uses the rank scale of paper 003: the rank of a score theta in group k is
Fbar_k(theta) = Pr(score > theta | group k), counted from the TOP and separately in each group
(Def. 4.1), so I = [alpha, beta) is "each group's top alpha to beta". The numbers come from
`engine.fairness` (exact metrics, strict ">"); this module only draws them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots

from engine.errors import UserError
from engine.fairness import GapWitness, pdp_pairs, positive_rates, psp_pairs, psp_witness
from engine.fairness.distributions import (
    group_ccdf,
    rank_rank_curve,
    slice_bounds,
)
from engine.plots.style import (
    LEGEND_BELOW,
    LEGEND_ROOM,
    checked_inputs,
    group_colour,
    interval_text,
    kappa_text,
    thin_steps,
    titled,
)

HISTOGRAM_BINS = 80
CENTRAL_MASS = (0.005, 0.995)  # the pooled score quantiles a score axis always shows
AXIS_MARGIN = 0.05  # of the shown score range, on each side
SCORE_AXIS = "score θ"
RANK_AXIS = "rank from the top F̄_k(θ)"


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
            text=(
                f"{beyond:,} score{'s' if beyond > 1 else ''} beyond the axis: "
                f"min {scores.min():.4g}, max {scores.max():.4g}"
            ),
            xref="paper",
            yref="paper",
            x=0.0,
            y=1.0,
            xanchor="left",
            yanchor="bottom",
            showarrow=False,
            font={"size": 11, "color": "#555555"},
        )


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
    scores, groups, n_groups = checked_inputs(scores, groups, group_names)
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
        annotation_text=interval_text(alpha, beta),
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
    titled(
        fig,
        "Per-group score CCDF",
        f"{interval_text(alpha, beta)}{kappa_text(kappa)}",
        hovermode="closest",
        legend=LEGEND_BELOW,
    )
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
    label = f"pSP = {witness.value:.3f}{kappa_text(kappa)}"
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
    scores, groups, _ = checked_inputs(scores, groups, group_names)
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
    detail = f"pSP = {pair_psp:.3f}{kappa_text(kappa)} on {interval_text(alpha, beta)}"
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
        scores, groups, n_groups = checked_inputs(model_scores, model_groups, group_names)
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
    titled(
        fig,
        "Score densities per group",
        f"shaded: each group's I-slice, {interval_text(alpha, beta)}",
        barmode="overlay",
        height=260 * len(models) + 120,
    )
    return fig
