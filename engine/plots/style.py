"""The house style every figure shares: the white template, a short title with the details in a
subtitle, group and series colours (group k has the same colour in every figure; runs and solvers
take theirs from a second palette), and curves thinned to what a screen shows."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from engine.errors import UserError
from engine.runs.describe import interval_words

TEMPLATE = "plotly_white"
MAX_CURVE_POINTS = 1500  # per trace: finer than a screen shows
TITLE_MARGIN = 72  # pixels above the plot: one title line and one subtitle line
SUBTITLE_LINE = 15  # pixels more for each further subtitle line
TITLE_AT_TOP = {"y": 1.0, "yref": "container", "yanchor": "top", "pad": {"t": 10}}
# a legend under the plot: in half a laptop's width a legend beside it leaves the plot a sliver
LEGEND_BELOW = {"orientation": "h", "x": 0.0, "xanchor": "left", "y": -0.2, "yanchor": "top"}
LEGEND_ROOM = 110  # pixels under the plot for the axis title and a legend of two rows
SUBTITLE_WIDTH = 80  # characters of a subtitle line that fit a figure of the page
# Okabe-Ito: distinguishable with the common colour-vision deficiencies
GROUP_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
METRIC_NAMES = {"psp": "pSP", "pdp": "pDP", "sp": "SP", "dp": "DP gap", "auc": "AUC"}
SERIES_COLOURS = (
    "#1F77B4",
    "#FF7F0E",
    "#2CA02C",
    "#D62728",
    "#9467BD",
    "#8C564B",
    "#E377C2",
    "#BCBD22",
    "#17BECF",
)


def group_colour(k: int) -> str:
    """The colour of group k, the same in every figure."""
    return GROUP_COLOURS[k % len(GROUP_COLOURS)]


def series_colour(i: int) -> str:
    """The colour of the i-th run or solver of a figure."""
    return SERIES_COLOURS[i % len(SERIES_COLOURS)]


def interval_text(alpha: float, beta: float) -> str:
    return f"I = {interval_words(alpha, beta)}"


def kappa_text(kappa: float | None) -> str:
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


def checked_inputs(
    scores: ArrayLike, groups: ArrayLike, group_names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, int]:
    scores, groups = np.asarray(scores, dtype=np.float64), np.asarray(groups)
    if groups.size and groups.max() >= len(group_names):
        raise UserError(f"group id {groups.max()} has no name; group_names has {len(group_names)}.")
    return scores, groups, len(group_names)


def thinned_positions(n: int, max_points: int) -> np.ndarray | slice:
    """The positions of at most `max_points` of n points, evenly spread (both ends kept)."""
    if n <= max_points:
        return slice(None)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def thin_steps(
    x: np.ndarray, y: np.ndarray, max_points: int = MAX_CURVE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """At most `max_points` points of a curve, evenly spread along it (always keeping both
    ends): on screen a step curve is the same, and the page gets far less data."""
    keep = thinned_positions(len(x), max_points)
    return x[keep], y[keep]
