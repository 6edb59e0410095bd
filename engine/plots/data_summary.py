"""The data summary's figure: each group's size and label rate per split."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.data.prepared import LABEL_STATISTIC_WORDS, summary_statistic
from engine.plots.style import TEMPLATE, series_colour

GROUPS_FIGURE_HEIGHT = 300  # pixels


def groups_figure(summary: dict[str, Any]) -> go.Figure:
    """Each group's size and positive-label rate (mean label, for a real-valued label) per
    split (from `Prepared.summary()`)."""
    names = [g["name"] for g in summary["groups"]]
    statistic = summary_statistic(summary)
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=["rows per group", LABEL_STATISTIC_WORDS[statistic]]
    )
    for i, split in enumerate(("train", "val", "test")):
        sizes = np.array([g[split]["size"] for g in summary["groups"]])
        rates = np.array(
            [
                np.nan if g[split][statistic] is None else g[split][statistic]
                for g in summary["groups"]
            ]
        )
        colour = series_colour(i)
        fig.add_trace(
            go.Bar(x=names, y=sizes, name=split, marker_color=colour, legendgroup=split),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Bar(
                x=names,
                y=rates,
                name=split,
                marker_color=colour,
                legendgroup=split,
                showlegend=False,
            ),
            row=1,
            col=2,
        )
    if statistic == "label_rate":
        fig.update_yaxes(tickformat=".0%", range=[0, 1], row=1, col=2)
    fig.update_layout(
        template=TEMPLATE,
        barmode="group",
        height=GROUPS_FIGURE_HEIGHT,
        margin={"t": 40, "b": 20, "l": 40, "r": 20},
    )
    return fig
