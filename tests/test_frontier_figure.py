"""The frontier figure draws every point where it is, with its band and its marks, one series per
(solver, interval) with its own Pareto line, and references to read the points against."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from frontier_sample import sweep_results

from engine.errors import UserError
from engine.plots.frontier import (
    DEGENERATE_COLOUR,
    DEGENERATE_NAME,
    DOMINATED_COLOUR,
    MISSED_COLOUR,
    MISSED_NAME,
    fitted_ranges,
    frontier_figure,
    kappa_interval_figure,
    point_label,
)
from engine.runs.frontier import FrontierPoint, RunResult, frontier
from engine.status import RunStatus
from engine.verdict import Label

TWO_INTERVALS = ((0.05, 0.3), (0.1, 0.4))


def markers(fig) -> list:
    return [t for t in fig.data if "markers" in t.mode]


def plotted_points(fig) -> dict[tuple[str, ...], tuple]:
    """Run ids → (x, y, error x, error y, colour, symbol, trace name, text, hover) per marker."""
    out = {}
    for t in markers(fig):
        for i, ids in enumerate(t.customdata):
            errors = [
                None if not e.visible else (e.array[i], e.arrayminus[i])
                for e in (t.error_x, t.error_y)
            ]
            colour = t.marker.color if isinstance(t.marker.color, str) else t.marker.color[i]
            out[tuple(ids)] = (
                t.x[i],
                t.y[i],
                *errors,
                colour,
                t.marker.symbol[i],
                t.name,
                t.text[i],
                t.hovertext[i],
            )
    return out


def bars(plotted: tuple | None, value: float, band: tuple[float, float] | None) -> bool:
    """Whether a marker's (above, below) error bars reach the point's 95 % band (none: no band,
    or no bar at all when no point of the trace has one)."""
    if band is None:
        return plotted is None or all(np.isnan(plotted))
    return plotted == pytest.approx((band[1] - value, value - band[0]))


def brute_pareto(points: list[FrontierPoint]) -> list[tuple[float, float]]:
    """The eligible points no other eligible point beats on one coordinate without losing on
    the other, left to right."""
    eligible = [p for p in points if p.degenerate is None and p.meets_kappa is not False]
    return sorted(
        (p.fairness, p.score)
        for p in eligible
        if not any(
            q.fairness >= p.fairness
            and q.score >= p.score
            and (q.fairness, q.score) != (p.fairness, p.score)
            for q in eligible
        )
    )


def with_degenerate(runs: list[RunResult], kappa: float) -> list[RunResult]:
    """The runs, those of IDCA at `kappa` made no better than the majority rate."""
    return [
        replace(r, metrics={"test": r.metrics["test"] | {"accuracy": 0.6}})
        if r.solver == "idca" and r.kappa == kappa
        else r
        for r in runs
    ]


@pytest.mark.parametrize("seed", range(6))
def test_every_point_is_drawn_once_where_it_is_with_its_band_and_marks(seed):
    runs = with_degenerate(sweep_results(seed, majority=0.65), kappa=0.05)
    result = frontier(runs)
    assert any(p.meets_kappa is False for p in result.points)
    assert any(p.degenerate is not None for p in result.points)
    points = plotted_points(frontier_figure(result, quantity="EO gap"))
    assert len(points) == len(result.points)
    series_colours = {}
    for p in result.points:
        x, y, error_x, error_y, colour, symbol, name, text, hover = points[p.run_ids]
        assert (x, y) == (p.fairness, p.score)
        assert bars(error_x, p.fairness, p.fairness_band)
        assert bars(error_y, p.score, p.score_band)
        assert text == "" or text.startswith("reference" if p.unconstrained else f"κ {p.kappa:g}")
        assert (symbol == "star") == p.unconstrained
        if p.degenerate is not None:
            assert (name, colour, symbol) == (DEGENERATE_NAME, DEGENERATE_COLOUR, "x")
            assert f"{Label.DEGENERATE}: accuracy 0.6000 is not above" in hover
            assert text == "" or "⊘" in text
        elif p.meets_kappa is False:
            assert (name, colour, symbol) == (MISSED_NAME, MISSED_COLOUR, "circle-open")
            assert f"misses κ: EO gap = {p.constraint:.4f} > κ = {p.kappa:g}" in hover
            assert text == "" or "!" in text
        elif not p.unconstrained:
            assert name == p.solver and (colour == DOMINATED_COLOUR) == p.dominated
            if not p.dominated:
                series_colours.setdefault(p.solver, set()).add(colour)
    assert all(len(colours) == 1 for colours in series_colours.values())
    assert len({c for colours in series_colours.values() for c in colours}) == len(series_colours)


@pytest.mark.parametrize("seed", range(4))
def test_each_solver_and_interval_is_a_series_with_its_own_pareto_line(seed):
    runs = with_degenerate(sweep_results(seed, intervals=TWO_INTERVALS, majority=0.65), 0.1)
    result = frontier(runs)
    fig = frontier_figure(result)
    lines = [t for t in fig.data if t.mode == "lines"]
    names = set()
    for solver in ("idca", "penalty"):
        for interval in TWO_INTERVALS:
            mine = [p for p in result.points if (p.solver, p.interval) == (solver, interval)]
            name = f"{solver}, I = [{100 * interval[0]:g} %, {100 * interval[1]:g} %)"
            names.add(name)
            drawn = [t for t in lines if t.name == f"{name} front"]
            front = brute_pareto(mine)
            if len(front) < 2:
                assert not drawn
                continue
            (line,) = drawn
            assert list(zip(line.x, line.y, strict=True)) == front
            on_line = {tuple(ids) for ids in line.customdata}
            assert all(p.run_ids not in on_line for p in mine if not p.eligible)
    traces = {t.name: t for t in markers(fig)}
    assert names <= set(traces)
    colours = {
        name: {c for c in traces[name].marker.color if c != DOMINATED_COLOUR}
        | {t.line.color for t in lines if t.name == f"{name} front"}
        for name in names
    }
    assert all(len(c) <= 1 for c in colours.values())
    used = [c for c in colours.values() if c]
    assert len(set.union(*used)) == len(used)  # one colour per series, each its own


def test_a_point_that_misses_kappa_or_is_degenerate_dominates_nothing():
    good = RunResult(
        "a",
        "idca",
        0.1,
        (0.05, 0.3),
        0,
        {"test": {"accuracy": 0.80, "psp": 0.1, "constraint": 0.05, "majority": 0.6}},
    )
    missed = RunResult(
        "b",
        "idca",
        0.05,
        (0.05, 0.3),
        0,
        {"test": {"accuracy": 0.85, "psp": 0.05, "constraint": 0.2, "majority": 0.6}},
    )
    degenerate = RunResult(
        "c",
        "idca",
        0.2,
        (0.05, 0.3),
        0,
        {"test": {"accuracy": 0.6, "psp": 0.0, "constraint": 0.0, "majority": 0.6}},
    )
    result = frontier([good, missed, degenerate])
    by_id = {p.run_ids[0]: p for p in result.points}
    assert not by_id["a"].dominated and by_id["a"].eligible
    assert not by_id["b"].eligible and not by_id["c"].eligible
    assert by_id["c"].degenerate[0] is Label.DEGENERATE
    assert result.majority == pytest.approx(0.6)


def test_near_the_majority_class_is_marked_when_the_interval_reaches_it():
    row = {
        "accuracy": 0.62,
        "accuracy_low": 0.58,
        "accuracy_high": 0.66,
        "psp": 0.1,
        "constraint": 0.05,
        "majority": 0.6,
    }
    near = frontier([RunResult("a", "idca", 0.1, (0.05, 0.3), 0, {"test": row})]).points[0]
    assert near.degenerate[0] is Label.NEAR_MAJORITY and not near.eligible
    clear = frontier(
        [RunResult("a", "idca", 0.1, (0.05, 0.3), 0, {"test": row | {"accuracy_low": 0.61}})]
    ).points[0]
    assert clear.degenerate is None and clear.eligible


def test_runs_that_did_not_converge_are_counted_and_marked():
    runs = [
        replace(r, status=RunStatus.BUDGET if r.seed == 0 else RunStatus.CONVERGED)
        for r in sweep_results(1)
    ]
    result = frontier(runs)
    assert all(p.unconverged == 1 for p in result.points)
    assert all("†" in point_label(p) for p in result.points)
    unknown = frontier(sweep_results(1))  # no status: nothing said
    assert all(p.unconverged == 0 and "†" not in point_label(p) for p in unknown.points)


@pytest.mark.parametrize("seed", range(3))
def test_the_axes_hold_every_point_its_band_and_the_majority_line(seed):
    result = frontier(sweep_results(seed, majority=0.5))
    fig = frontier_figure(result)
    x_range, y_range = fig.layout.xaxis.range, fig.layout.yaxis.range
    assert (tuple(x_range), tuple(y_range)) == fitted_ranges(result, result.points)
    for p in result.points:
        low, high = p.fairness_band or (p.fairness, p.fairness)
        assert x_range[0] < low <= high < x_range[1]
        low, high = p.score_band or (p.score, p.score)
        assert y_range[0] < low <= high < y_range[1]
    assert y_range[0] < 0.5 < y_range[1]
    (majority,) = [s for s in fig.layout.shapes if s.y0 == s.y1 == 0.5]
    assert majority.line.dash == "dash"
    tops = [(p.score_band or (p.score, p.score))[1] for p in result.points]
    bottoms = [(p.score_band or (p.score, p.score))[0] for p in result.points] + [0.5]
    span = y_range[1] - y_range[0]
    assert y_range[1] - max(tops) < 0.1 * span and min(bottoms) - y_range[0] < 0.1 * span
    no_majority = frontier_figure(frontier(sweep_results(seed)))
    assert not no_majority.layout.shapes


def test_labels_of_points_at_one_place_are_not_drawn_on_each_other():
    runs = sweep_results(2, seeds=1)
    same = {"accuracy": 0.8, "psp": 0.2, "constraint": 0.01}
    runs = [replace(r, metrics={"test": dict(same)}) if r.solver == "penalty" else r for r in runs]
    fig = frontier_figure(frontier(runs))
    placed = [
        (t.text[i], t.textposition[i])
        for t in markers(fig)
        for i, ids in enumerate(t.customdata)
        if ids[0].startswith("penalty")
    ]
    labelled = [position for text, position in placed if text]
    assert len(placed) == 3 and labelled and len(set(labelled)) == len(labelled)


def test_one_seed_with_no_interval_draws_no_error_bars_and_no_plus_minus():
    result = frontier(sweep_results(4, seeds=1))
    assert all(p.score_spread is None and p.fairness_spread is None for p in result.points)
    fig = frontier_figure(result)
    for t in markers(fig):
        assert t.error_x.visible is False and t.error_y.visible is False
        assert not any("±" in h for h in t.hovertext)
    assert "no confidence interval" in fig.layout.title.subtitle.text


def test_the_figure_can_hide_dominated_points():
    result = frontier(sweep_results(1))
    points = plotted_points(frontier_figure(result, show_dominated=False))
    assert sorted(points) == sorted(p.run_ids for p in result.points if not p.dominated)
    assert not any(q[4] == DOMINATED_COLOUR for q in points.values())


def test_the_axes_name_the_quantity_split_and_spread():
    fig = frontier_figure(frontier(sweep_results(2), metric="psp", split="test"))
    assert fig.layout.xaxis.title.text == "fairness = 1 − pSP (exact, test) ± 95 % CI"
    assert fig.layout.yaxis.title.text == "accuracy (exact, test) ± 95 % CI"
    assert fig.layout.title.text == "Accuracy–fairness frontier"
    fig = frontier_figure(frontier(sweep_results(2), metric="constraint", split="val"), "EO gap")
    assert fig.layout.xaxis.title.text == "fairness = 1 − EO gap (exact, val)"  # no point on val
    fig = frontier_figure(frontier(sweep_results(2, seeds=1), metric="psp"))
    assert fig.layout.yaxis.title.text == "accuracy (exact, test)"  # one seed: no spread


def test_an_auc_frontier_plots_auc_with_standard_errors_on_both_coordinates():
    runs = sweep_results(3)
    rng = np.random.default_rng(3)
    for r in runs:
        r.metrics["test"]["auc"] = float(rng.uniform(0.8, 0.9))
    result = frontier(runs, metric="constraint", score="auc", spread="se")
    fig = frontier_figure(result, "AUC gap")
    assert fig.layout.title.text == "AUC–fairness frontier"
    assert fig.layout.yaxis.title.text == "AUC (exact, test) ± s.e."
    assert fig.layout.xaxis.title.text == "fairness = 1 − AUC gap (exact, test) ± s.e."
    assert "mean ± s.e. over seeds" in fig.layout.title.subtitle.text
    points = plotted_points(fig)
    for p in result.points:
        x, y, error_x, error_y, *_, hover = points[p.run_ids]
        assert (x, y) == (p.fairness, p.score)
        assert bars(error_x, p.fairness, p.fairness_band) and bars(error_y, p.score, p.score_band)
        assert p.score_band == pytest.approx((p.score - p.score_spread, p.score + p.score_spread))
        assert f"AUC = {p.score:.4f} [{p.score_band[0]:.4f}, {p.score_band[1]:.4f}]" in hover
    single = frontier_figure(frontier(sweep_results(3, seeds=1), score="accuracy", spread="se"))
    assert "no standard error" in single.layout.title.subtitle.text


def test_the_kappa_by_interval_view_has_a_cell_per_point_with_its_score_and_marks():
    runs = sweep_results(5, seeds=1, intervals=TWO_INTERVALS)
    runs = [
        r for r in runs if not (r.solver == "idca" and r.kappa == 0.2 and r.interval == (0.1, 0.4))
    ]
    result = frontier(runs)
    (grid,) = kappa_interval_figure(result, "idca", "pSP").data
    assert list(grid.y) == ["κ = 0.2", "κ = 0.1", "κ = 0.05", "κ = 0.01"]
    assert list(grid.x) == ["[5 %, 30 %)", "[10 %, 40 %)"]
    for p in (p for p in result.points if p.solver == "idca"):
        row, column = list(grid.y).index(f"κ = {p.kappa:g}"), TWO_INTERVALS.index(p.interval)
        assert grid.z[row][column] == p.score
        assert grid.text[row][column].startswith(f"{p.score:.3f}")
        assert ("!" in grid.text[row][column]) == (p.meets_kappa is False)
    assert np.isnan(grid.z[0][1]) and grid.text[0][1] == ""  # not run
    with pytest.raises(UserError):
        kappa_interval_figure(result, "nobody", "pSP")
