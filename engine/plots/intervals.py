"""The interval helper's figures (paper 003, App. B): where in the rank range the groups of a
model, usually the unconstrained one, differ, so that an interval I = [α, β) can be chosen by
looking.

- `rank_profile_figure`: each group's own rank against the pooled rank, their largest gap, the
  positive rate and the band [α, β) that pSP on I looks at;
- `interval_scan_figure`: App. B's heat map of pSP (or pDP) over candidate intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from engine.errors import UserError
from engine.fairness.distributions import RankProfile, suggested_interval
from engine.plots.style import group_colour, titled, wrapped
from engine.runs.describe import percent_words

GAP_COLOUR = "#000000"


def rank_profile_figure(
    profile: RankProfile, group_names: Sequence[str], interval: tuple[float, float] | None = None
) -> go.Figure:
    """Each group's share above a threshold (its own rank F̄_k) against the share of everyone
    above it (the pooled rank), the largest gap between groups as a shaded line, the positive
    rate as a dashed vertical line and, with `interval`, the band [α, β) of group ranks that pSP
    on I compares (paper 003, Def. 4.2: each curve clipped to it)."""
    fig = go.Figure()
    for k, rates in enumerate(profile.rates):
        name = group_names[k] if k < len(group_names) else f"group {k}"
        fig.add_trace(
            go.Scatter(
                x=profile.ranks,
                y=rates,
                mode="lines",
                name=name,
                line={"color": group_colour(k), "width": 2},
                hovertemplate=f"{name}<br>top %{{x:.0%}} of everyone: %{{y:.1%}} of the group"
                "<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=profile.ranks,
            y=profile.gap,
            mode="lines",
            name="largest gap between groups",
            line={"color": GAP_COLOUR, "width": 1, "dash": "dot"},
            fill="tozeroy",
            fillcolor="rgba(0, 0, 0, 0.08)",
            hovertemplate="top %{x:.0%} of everyone: groups differ by %{y:.1%}<extra></extra>",
        )
    )
    fig.add_vline(
        x=profile.positive_rate,
        line={"dash": "dash", "color": "#555555", "width": 1},
        annotation_text=f"positive rate {profile.positive_rate:.0%}",
        annotation_position="top right",
        annotation_font_size=10,
    )
    subtitle = "where the groups' own ranks differ most is where an interval I has most to correct"
    if interval is not None:
        alpha, beta = interval
        fig.add_hrect(y0=alpha, y1=beta, fillcolor="#0072B2", opacity=0.1, line_width=0)
        subtitle = (
            f"the band: group ranks [{percent_words(alpha)}, {percent_words(beta)}) that "
            f"pSP on I compares; {subtitle}"
        )
    widest = int(np.argmax(profile.gap))
    fig.add_annotation(
        x=profile.ranks[widest],
        y=profile.gap[widest],
        text=f"largest gap {profile.gap[widest]:.0%}",
        showarrow=True,
        arrowhead=2,
        ax=30,
        ay=-30,
        font={"size": 10},
    )
    fig.update_xaxes(
        title_text="share of everyone above the threshold (pooled rank from the top)",
        tickformat=".0%",
        range=[0, 1],
    )
    fig.update_yaxes(title_text="share of the group above it (F̄_k)", tickformat=".0%", range=[0, 1])
    titled(
        fig, "Where the groups differ", wrapped(subtitle), legend={"orientation": "h", "y": -0.25}
    )
    return fig


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
                    f"App. B choice: [{percent_words(alpha)}, {percent_words(beta)}), "
                    f"{metric} = {best[metric]:.3f}"
                ),
            )
        )
    fig.update_xaxes(title_text="α: top of I (rank from the top)", tickformat=".0%")
    fig.update_yaxes(title_text="β: bottom of I (rank from the top)", tickformat=".0%")
    titled(
        fig,
        "Interval helper (App. B)",
        f"positive rate p = {rate:.1%} of the model",
        legend={"orientation": "h", "y": -0.2},
    )
    return fig
