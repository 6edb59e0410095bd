"""The benchmark figures hold the numbers they are given, counted trace by trace."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from engine.benchmark.bands import band
from engine.benchmark.figures import (
    SPIDER_AXES,
    band_figure,
    heatmap_figure,
    probability_figure,
    spider_figure,
)
from engine.errors import UserError
from engine.fairness.criteria import probabilities, probability_wasserstein
from engine.plots.style import TEMPLATE, series_colour

SOLVERS = ["SGD", "SSL-ALM", "SSw"]
QUANTITIES = ["loss", "C1"]
SPLITS = ["train", "test"]


def symmetric_runs(level: float, seed: int) -> list[list[tuple[float, float]]]:
    """Five runs spread symmetrically around a curve: the mean is the median, inside Q1–Q3."""
    rng = np.random.default_rng(seed)
    times = np.arange(0.0, 5.0, 0.5)
    curve = level + rng.normal(scale=0.1, size=times.size)
    spread = rng.uniform(0.01, 0.05, size=times.size)
    return [list(zip(times, curve + k * spread, strict=True)) for k in (-2, -1, 0, 1, 2)]


def bands():
    return {
        quantity: {
            solver: {
                split: band(symmetric_runs(r + c + 0.5 * s, r * 10 + c * 3 + s))
                for s, split in enumerate(SPLITS)
            }
            for c, solver in enumerate(SOLVERS)
        }
        for r, quantity in enumerate(QUANTITIES)
    }


def traces_of(fig: go.Figure, **meta) -> list:
    return [t for t in fig.data if all(t.meta.get(k) == v for k, v in meta.items())]


def test_band_figure_has_a_band_and_a_mean_per_panel_and_split():
    given = bands()
    fig = band_figure(given, bounds={"C1": 0.005})
    assert len(fig.data) == len(QUANTITIES) * len(SOLVERS) * len(SPLITS) * 2
    for quantity in QUANTITIES:
        for solver in SOLVERS:
            for split in SPLITS:
                one = given[quantity][solver][split]
                (mean,) = traces_of(fig, quantity=quantity, solver=solver, split=split, kind="mean")
                (polygon,) = traces_of(
                    fig, quantity=quantity, solver=solver, split=split, kind="band"
                )
                np.testing.assert_allclose(mean.x, one.seconds)
                np.testing.assert_allclose(mean.y, one.mean)
                assert mean.line.dash == ("solid" if split == "train" else "dash")
                assert mean.line.color == series_colour(SPLITS.index(split))
                assert polygon.fill == "toself"
                assert (polygon.xaxis, polygon.yaxis) == (mean.xaxis, mean.yaxis)
                # the closed polygon runs along Q3 forward in time and back along Q1
                n = one.seconds.size
                np.testing.assert_allclose(polygon.x[:n], mean.x)
                np.testing.assert_allclose(polygon.x[n:], mean.x[::-1])
                upper, lower = np.asarray(polygon.y[:n]), np.asarray(polygon.y[n:])[::-1]
                assert np.all(lower <= mean.y) and np.all(mean.y <= upper)
                assert np.any(lower < upper)


def test_band_figure_rows_share_y_and_bounds_are_drawn_at_plus_minus_delta():
    fig = band_figure(bands(), bounds={"C1": 0.005})
    lines = [shape for shape in fig.layout.shapes if shape.type == "line"]
    assert len(lines) == 2 * len(SOLVERS)  # only the C1 row, ±δ in each column
    assert sorted({shape.y0 for shape in lines}) == [-0.005, 0.005]
    assert {shape.yref for shape in lines} == {"y4", "y5", "y6"}  # row 2
    assert fig.layout.yaxis2.matches == "y" and fig.layout.yaxis6.matches == "y4"
    shown = [t.name for t in fig.data if t.showlegend is not False and t.meta["kind"] == "mean"]
    assert shown == SPLITS
    assert [a.text for a in fig.layout.annotations] == SOLVERS


def test_band_figure_leaves_a_panel_empty_for_a_solver_without_runs():
    given = {"loss": {"A": {"train": band(symmetric_runs(1.0, 0))}, "B": {}}}
    fig = band_figure(given)
    assert len(fig.data) == 2
    with pytest.raises(UserError):
        band_figure({"loss": {}})


def scores(seed: int, n: int = 60):
    rng = np.random.default_rng(seed)
    g = np.arange(n) % 3
    return rng.normal(loc=g - 1.0, scale=1.5), g


def test_probability_figure_overlays_each_groups_probabilities_per_solver():
    models = {f"solver {i}": scores(i) for i in range(4)}
    names = ["white", "black", "other"]
    fig = probability_figure(models, names, bins=20)
    assert len(fig.data) == 4 * 3
    assert fig.layout.barmode == "overlay"
    titles = [a.text for a in fig.layout.annotations]
    for i, (solver, (h, g)) in enumerate(models.items()):
        assert titles[i] == f"{solver}: Wd = {probability_wasserstein(h, g):.4f}"
        for k, name in enumerate(names):
            (trace,) = traces_of(fig, solver=solver, group=name)
            assert trace.histnorm == "probability density"
            assert trace.xbins.size == pytest.approx(1 / 20)
            np.testing.assert_allclose(trace.x, probabilities(h)[g == k])
    assert len({(t.xaxis, t.yaxis) for t in fig.data}) == 4  # one panel per solver


def test_probability_figure_refuses_unnamed_groups():
    with pytest.raises(UserError):
        probability_figure({"A": scores(0)}, ["a", "b"])


def test_spider_figure_closes_one_line_per_solver_and_split():
    values = {
        split: {
            solver: {axis: 0.01 * (i + 1) * (j + 1) + 0.1 * s for j, axis in enumerate(SPIDER_AXES)}
            for i, solver in enumerate(SOLVERS)
        }
        for s, split in enumerate(SPLITS)
    }
    values["test"]["SSw"]["Sf"] = None
    fig = spider_figure(values)
    assert len(fig.data) == len(SOLVERS) * len(SPLITS)
    assert all(isinstance(t, go.Scatterpolar) for t in fig.data)
    assert {t.subplot for t in fig.data} == {"polar", "polar2"}
    for trace in fig.data:
        given = values[trace.meta["split"]][trace.meta["solver"]]
        assert list(trace.theta) == [*SPIDER_AXES, SPIDER_AXES[0]]
        assert list(trace.r) == [given[a] for a in (*SPIDER_AXES, SPIDER_AXES[0])]
    largest = max(v for per in values.values() for d in per.values() for v in d.values() if v)
    assert fig.layout.polar.radialaxis.range == fig.layout.polar2.radialaxis.range
    assert fig.layout.polar.radialaxis.range[1] >= largest


def test_every_figure_uses_the_project_template():
    figures = [
        band_figure({"loss": {"A": {"train": band(symmetric_runs(1.0, 0))}}}),
        probability_figure({"A": scores(0)}, ["a", "b", "c"]),
        spider_figure({"train": {"A": dict.fromkeys(SPIDER_AXES, 0.1)}}),
        heatmap_figure("x", [1, 2], "y", [3], [[0.1, 0.2]], [[0.0, 0.1]]),
    ]
    for fig in figures:
        assert fig.layout.template == pio.templates[TEMPLATE]


def test_heatmap_figure_shows_loss_and_violation_side_by_side():
    taus, etas = [0.05, 0.01], [0.05, 0.01, 0.001]
    loss = np.array([[0.4376, 0.4240, np.nan], [0.4465, 0.4416, 0.45]])
    violation = np.array([[0.0194, 0.0112, np.nan], [0.0074, 0.0133, 0.0]])
    fig = heatmap_figure("η", etas, "τ", taus, loss, violation)
    assert [t.name for t in fig.data] == ["loss", "violation"]
    assert all(isinstance(t, go.Heatmap) and t.texttemplate for t in fig.data)
    np.testing.assert_allclose(np.asarray(fig.data[0].z, dtype=float), loss)
    np.testing.assert_allclose(np.asarray(fig.data[1].z, dtype=float), violation)
    assert list(fig.data[0].x) == ["0.05", "0.01", "0.001"]
    assert list(fig.data[1].y) == ["0.05", "0.01"]
    assert fig.data[0].xaxis != fig.data[1].xaxis
    fig.to_json()  # NaN cells serialise
    with pytest.raises(UserError):
        heatmap_figure("η", etas, "τ", taus, loss.T, violation)
