"""The figures of engine.plots hold the numbers they claim to show, checked by counting."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest
from frontier_sample import sweep_results

from engine import plots
from engine.data.prepare import PrepareOptions
from engine.errors import UserError
from engine.fairness import psp
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.distributions import candidate_intervals, interval_scan
from engine.models import ModelSpec
from engine.plots.data_summary import groups_figure
from engine.plots.frontier import frontier_figure
from engine.plots.intervals import interval_scan_figure
from engine.plots.scores import cdf_figure, density_figure, rank_rank_figure
from engine.plots.style import TITLE_MARGIN, group_colour, thin_steps
from engine.plots.trajectory import (
    MAX_TRAJECTORY_POINTS,
    TrajectoryRun,
    trajectory_figure,
    trajectory_run,
)
from engine.runs.frontier import frontier
from engine.runs.spec import RunSpec

SEEDS = range(8)
INTERVALS = [(0.05, 0.3), (0.0, 0.2), (0.7, 1.0), (0.25, 0.75)]


def random_data(seed: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """2..4 groups of 3..15 members; even seeds draw scores on a coarse grid, so ties are common."""
    rng = np.random.default_rng(seed)
    n_groups = int(rng.integers(2, 5))
    groups = np.repeat(np.arange(n_groups), rng.integers(3, 16, size=n_groups))
    if seed % 2 == 0:
        scores = rng.integers(-4, 5, size=groups.size) / 2.0
    else:
        scores = rng.normal(size=groups.size) + 0.4 * groups
    perm = rng.permutation(groups.size)
    return scores[perm], groups[perm], [f"group {chr(65 + k)}" for k in range(n_groups)]


def rank(members: np.ndarray, theta: float) -> float:
    """Paper 003, Def. 4.1 by counting: the share of the group strictly above theta."""
    return float(np.sum(members > theta)) / members.size


def clipped(members: np.ndarray, theta: float, alpha: float, beta: float) -> float:
    """Paper 003, eq. (62): Pr(h > theta | group, rank in I)."""
    return (min(rank(members, theta), beta) - min(rank(members, theta), alpha)) / (beta - alpha)


def brute_inverse(members: np.ndarray, p: float) -> float:
    """inf{theta : rank(theta) <= p} over the thresholds where the rank can change."""
    return -np.inf if p >= 1 else min(s for s in members if rank(members, s) <= p)


def trace(fig, name: str):
    (found,) = [t for t in fig.data if t.name == name]
    return found


def shapes(fig, **match):
    return [s for s in fig.layout.shapes if all(s[key] == value for key, value in match.items())]


def is_grey(colour: str) -> bool:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return red == green == blue


# ---- CCDF ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("alpha", "beta"), INTERVALS)
def test_cdf_figure_draws_the_counted_ranks_and_the_band(seed, alpha, beta):
    scores, groups, names = random_data(seed)
    fig = cdf_figure(scores, groups, names, alpha, beta, threshold=0.25)
    for k, name in enumerate(names):
        members = scores[groups == k]
        curve = trace(fig, name)
        assert isinstance(curve.x, np.ndarray) and curve.line.shape == "hv"
        assert curve.line.color == group_colour(k)
        np.testing.assert_array_equal(curve.y, [rank(members, t) for t in curve.x])
        assert curve.y[0] == 1.0 and curve.y[-1] == 0.0
        bounds = trace(fig, f"{name}: I-slice bounds")
        np.testing.assert_array_equal(bounds.y, [alpha, beta])
        assert bounds.x[0] == brute_inverse(members, alpha)
        if beta < 1:
            assert bounds.x[1] == brute_inverse(members, beta)
        else:  # the slice runs to the bottom of the group: drawn at the left end of the curve
            assert bounds.x[1] < members.min()
    (band,) = shapes(fig, type="rect")
    assert (band.y0, band.y1) == (alpha, beta)
    (line,) = shapes(fig, type="line")
    assert line.x0 == line.x1 == 0.25


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("alpha", "beta"), INTERVALS)
def test_cdf_figure_marks_where_the_psp_gap_is_attained(seed, alpha, beta):
    scores, groups, names = random_data(seed)
    fig = cdf_figure(scores, groups, names, alpha, beta, kappa=0.05)
    (segment,) = [t for t in fig.data if t.name.startswith("largest pSP gap")]
    value = psp(scores, groups, alpha, beta)
    theta = segment.x[0]
    assert segment.x[1] == theta
    assert abs(segment.y[1] - segment.y[0]) / (beta - alpha) == pytest.approx(value, abs=1e-12)
    gaps = [
        abs(
            clipped(scores[groups == k], theta, alpha, beta)
            - clipped(scores[groups == k2], theta, alpha, beta)
        )
        for k, k2 in itertools.combinations(range(len(names)), 2)
    ]
    assert max(gaps) == pytest.approx(value, abs=1e-12)
    texts = [a.text for a in fig.layout.annotations]
    assert any(f"pSP = {value:.3f}" in t and "κ = 0.05" in t for t in texts)


def outlying_data() -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Two groups of 300 scores in about [−3, 3], and three huge outliers."""
    rng = np.random.default_rng(11)
    scores = np.concatenate([rng.uniform(-3, 3, 600), [29.0, 35.0, -40.0]])
    groups = np.concatenate([np.repeat([0, 1], 300), [0, 1, 0]])
    return scores, groups, ["F", "M"]


def outlier_notes(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations if "beyond the axis" in a.text]


def test_cdf_axis_shows_the_central_mass_and_notes_the_outliers():
    scores, groups, names = outlying_data()
    fig = cdf_figure(scores, groups, names, 0.05, 0.3, threshold=0.25)
    low, high = fig.layout.xaxis.range
    assert -3.7 < low < -2.9 and 2.9 < high < 3.7  # the outliers do not stretch the axis
    assert outlier_notes(fig) == ["3 scores beyond the axis: min -40, max 35"]
    for name in names:  # the slice bounds and the witness stay on screen
        assert np.all(
            (trace(fig, f"{name}: I-slice bounds").x >= low)
            & (trace(fig, f"{name}: I-slice bounds").x <= high)
        )
    (segment,) = [t for t in fig.data if t.name.startswith("largest pSP gap")]
    assert low <= segment.x[0] <= high


def test_density_axis_shows_the_central_mass_and_counts_outliers_out_of_the_bars():
    scores, groups, names = outlying_data()
    fig = density_figure([("model", scores, groups)], names, 0.05, 0.3)
    low, high = fig.layout.xaxis.range
    assert -3.7 < low < -2.9 and 2.9 < high < 3.7
    assert outlier_notes(fig) == ["3 scores beyond the axis: min -40, max 35"]
    for k, name in enumerate(names):
        (bars,) = [t for t in fig.data if t.type == "bar" and t.name == name]
        members = scores[groups == k]
        inside = np.count_nonzero((members >= low) & (members <= high))
        mass = float(np.sum(np.asarray(bars.y) * np.asarray(bars.width)))
        assert mass == pytest.approx(inside / members.size)  # outliers are missing, not spread


def test_cdf_axis_widens_to_show_a_far_threshold():
    scores, groups, names = outlying_data()
    fig = cdf_figure(scores, groups, names, 0.05, 0.3, threshold=12.0)
    low, high = fig.layout.xaxis.range
    assert high > 12.0 and low < -2.9
    assert outlier_notes(fig) == ["3 scores beyond the axis: min -40, max 35"]


def test_cdf_axis_without_outliers_says_nothing_about_them():
    rng = np.random.default_rng(3)
    scores, groups = rng.uniform(-1, 1, 400), np.repeat([0, 1], 200)
    fig = cdf_figure(scores, groups, ["a", "b"], 0.0, 0.2)
    low, high = fig.layout.xaxis.range
    assert low < scores.min() and high > scores.max()
    assert not outlier_notes(fig)


# ---- rank-rank curve ----------------------------------------------------------------------------


def shoelace(x: np.ndarray, y: np.ndarray) -> float:
    return 0.5 * abs(float(np.dot(x[:-1], y[1:]) - np.dot(x[1:], y[:-1])))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("alpha", "beta"), INTERVALS)
@pytest.mark.parametrize("kappa", [0.05, 0.3, 1.5])
def test_rank_rank_figure_curve_box_band_and_threshold_point(seed, alpha, beta, kappa):
    scores, groups, names = random_data(seed)
    pair = (len(names) - 1, 0)
    fig = rank_rank_figure(scores, groups, names, alpha, beta, kappa, pair=pair, threshold=0.0)
    a, b = scores[groups == pair[0]], scores[groups == pair[1]]
    thetas = [*np.unique(scores)[::-1], -np.inf]
    curve = trace(fig, "rank–rank curve")
    np.testing.assert_array_equal(curve.x, [rank(a, t) for t in thetas])
    np.testing.assert_array_equal(curve.y, [rank(b, t) for t in thetas])

    (box,) = shapes(fig, type="rect")
    assert (box.x0, box.x1, box.y0, box.y1) == (alpha, beta, alpha, beta)

    (band,) = [t for t in fig.data if t.fill == "toself"]
    tolerance = min(kappa * (beta - alpha), beta - alpha)
    assert np.all((band.x >= alpha - 1e-12) & (band.x <= beta + 1e-12))
    assert np.all((band.y >= alpha - 1e-12) & (band.y <= beta + 1e-12))
    assert np.all(np.abs(band.y - band.x) <= tolerance + 1e-12)
    width = beta - alpha  # the box minus the two corner triangles outside the band
    assert shoelace(band.x, band.y) == pytest.approx(width**2 - (width - tolerance) ** 2)

    (point,) = [t for t in fig.data if t.name.startswith("θ̂")]
    assert (point.x[0], point.y[0]) == (rank(a, 0.0), rank(b, 0.0))
    gap = abs(clipped(a, 0.0, alpha, beta) - clipped(b, 0.0, alpha, beta))
    assert f"pDP = {gap:.3f}" in point.name


# ---- densities ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("alpha", "beta"), INTERVALS)
def test_density_figure_histograms_and_shaded_slices(seed, alpha, beta):
    scores, groups, names = random_data(seed)
    models = [("unconstrained", scores, groups), ("κ = 0.05", 0.5 * scores + groups, groups)]
    fig = density_figure(models, names, alpha, beta)
    histograms = [t for t in fig.data if t.type == "bar"]
    assert len(histograms) == len(models) * len(names)
    for row, (label, model_scores, model_groups) in enumerate(models):
        axis = "x" if row == 0 else f"x{row + 1}"
        for k, name in enumerate(names):
            members = model_scores[model_groups == k]
            (hist,) = [h for h in histograms if h.name == name and h.xaxis == axis]
            left = np.asarray(hist.x) - np.asarray(hist.width) / 2
            right = np.asarray(hist.x) + np.asarray(hist.width) / 2
            left[0], right[-1] = left[0] - 1e-9, right[-1] + 1e-9  # the pooled min and max
            counts = [
                np.sum((members >= lo) & (members < hi)) for lo, hi in zip(left, right, strict=True)
            ]
            assert sum(counts) == len(members)  # every member falls in a bar
            expected = np.array(counts) / (len(members) * np.asarray(hist.width))
            np.testing.assert_allclose(hist.y, expected, rtol=1e-9)
            assert hist.marker.color == group_colour(k)
            (shade,) = shapes(fig, name=f"{label}: {name} I-slice")
            assert shade.xref == axis and shade.fillcolor == group_colour(k)
            assert shade.x1 == brute_inverse(members, alpha)
            lower = brute_inverse(members, beta) if beta < 1 else members.min()
            assert shade.x0 == lower
            for s in members:  # every member of the I-slice lies in the shaded range
                if alpha <= rank(members, s) < beta:
                    assert shade.x0 <= s <= shade.x1


def test_group_colours_agree_across_figures():
    scores, groups, names = random_data(3)
    cdf = cdf_figure(scores, groups, names, 0.1, 0.5)
    density = density_figure([("m", scores, groups)], names, 0.1, 0.5)
    for name in names:
        hist = next(t for t in density.data if t.name == name)
        assert trace(cdf, name).line.color == hist.marker.color
    assert len({trace(cdf, name).line.color for name in names}) == len(names)


# ---- trajectories -------------------------------------------------------------------------------


def trajectory(seed: int, iterations: int = 12, metric: str = "constraint") -> list[dict]:
    rng = np.random.default_rng(seed)
    records, seq = [], 0
    for iteration in range(iterations):
        records.append(
            {
                "seq": seq,
                "iteration": iteration,
                "seconds": 0.1 * iteration,
                "kind": "surrogate",
                "objective": float(rng.uniform(0.3, 1.0)),
                "max_violation": None if iteration == 4 else float(rng.normal()),
                "values": {"psp.p0.k0.lower": float(rng.normal())},
                "state": {},
            }
        )
        seq += 1
        if iteration % 3 == 0:
            values = {
                "val.accuracy": float(rng.uniform()),
                f"val.{metric}": float(rng.uniform()),
                f"train.{metric}": float(rng.uniform()),
            }
            records.append(
                {
                    "seq": seq,
                    "iteration": iteration,
                    "seconds": 0.1 * iteration + 0.05,
                    "kind": "exact",
                    "objective": None,
                    "max_violation": None,
                    "values": values,
                    "state": {},
                }
            )
            seq += 1
    final = {f"val.{metric}": 7.0, f"train.{metric}": 7.0}  # far from every exact value
    records.append(
        {
            "seq": seq,
            "iteration": iterations,
            "seconds": 2.0,
            "kind": "final",
            "objective": None,
            "max_violation": None,
            "values": final,
            "state": {},
        }
    )
    return records


def axes_of(fig, row: int, col: int) -> tuple[str, str]:
    """The trace anchors ("x2", "y2") of the panel in `row`, `col`."""
    panel = fig.get_subplot(row, col)
    return panel.xaxis.plotly_name.replace("axis", ""), panel.yaxis.plotly_name.replace("axis", "")


def layout_axis(fig, anchor: str):
    return fig.layout[anchor.replace("x", "xaxis").replace("y", "yaxis")]


TWO_RUNS = [
    TrajectoryRun("idca κ=0.05", trajectory(0), "EO gap", kappa=0.05, epsilon=0.001),
    TrajectoryRun("unconstrained", trajectory(1, iterations=30, metric="psp"), "pSP", metric="psp"),
]


@pytest.mark.parametrize("x", ["iteration", "seconds"])
def test_trajectory_figure_gives_each_run_its_own_column(x):
    fig = trajectory_figure(TWO_RUNS, x=x)
    texts = {a.text for a in fig.layout.annotations}
    assert {"idca κ=0.05", "unconstrained"} <= texts  # the column titles
    for col, run in enumerate(TWO_RUNS, start=1):
        mine = [t for t in fig.data if t.legendgroup == run.label]
        assert len({t.line.color for t in mine}) == 1
        surrogate = [r for r in run.records if r["kind"] == "surrogate"]
        exact = [r for r in run.records if r["kind"] == "exact"]
        (objective,) = [t for t in mine if t.name == "f0 (surrogate)"]
        assert (objective.xaxis, objective.yaxis) == axes_of(fig, 1, col)
        np.testing.assert_array_equal(objective.x, [r[x] for r in surrogate])
        np.testing.assert_array_equal(objective.y, [r["objective"] for r in surrogate])
        (violation,) = [t for t in mine if t.name == "max surrogate row"]
        assert (violation.xaxis, violation.yaxis) == axes_of(fig, 2, col)
        kept = [r for r in surrogate if r["max_violation"] is not None]
        np.testing.assert_array_equal(violation.y, [r["max_violation"] for r in kept])
        for split, key in (("train", "train"), ("validation", "val")):
            (t,) = [t for t in mine if t.name == f"{split} {run.quantity} (exact)"]
            assert (t.xaxis, t.yaxis) == axes_of(fig, 3, col)
            np.testing.assert_array_equal(t.x, [r[x] for r in exact])  # exact records only
            np.testing.assert_array_equal(t.y, [r["values"][f"{key}.{run.metric}"] for r in exact])
    assert layout_axis(fig, axes_of(fig, 3, 1)[0]).title.text == x
    assert layout_axis(fig, axes_of(fig, 3, 2)[0]).title.text == x


def test_trajectory_x_axes_are_per_run_and_y_axes_per_row():
    fig = trajectory_figure(TWO_RUNS)
    bottom1, bottom2 = axes_of(fig, 3, 1)[0], axes_of(fig, 3, 2)[0]
    for row in (1, 2, 3):
        (x1, y1), (x2, y2) = axes_of(fig, row, 1), axes_of(fig, row, 2)
        if row < 3:  # one span down each run's column, never the other run's
            assert (layout_axis(fig, x1).matches, layout_axis(fig, x2).matches) == (
                bottom1,
                bottom2,
            )
        assert layout_axis(fig, y2).matches == y1  # one scale along a row
    assert layout_axis(fig, bottom1).matches is None and layout_axis(fig, bottom2).matches is None
    titles = [layout_axis(fig, axes_of(fig, row, 1)[1]).title.text for row in (1, 2, 3)]
    assert "surrogate" in titles[0] and "surrogate" in titles[1]
    assert "EO gap / pSP" in titles[2] and "exact" in titles[2]


def test_trajectory_figure_draws_epsilon_and_kappa_where_the_run_has_them():
    fig = trajectory_figure(TWO_RUNS)
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    (epsilon, kappa) = lines  # the unconstrained run has neither
    assert epsilon.y0 == epsilon.y1 == 0.001 and epsilon.line.dash == "dash"
    assert epsilon.yref == axes_of(fig, 2, 1)[1]
    assert kappa.y0 == kappa.y1 == 0.05 and kappa.yref == axes_of(fig, 3, 1)[1]
    texts = [a.text for a in fig.layout.annotations]
    assert "≤ ε = 0.001 feasible (surrogate)" in texts and "κ = 0.05" in texts


def test_trajectory_figure_draws_levels_before_the_first_record():
    fig = trajectory_figure([TrajectoryRun("queued", [], "EO gap", kappa=0.1, epsilon=0.01)])
    assert not fig.data
    assert sorted(s.y0 for s in fig.layout.shapes) == [0.01, 0.1]


def test_trajectory_figure_bounds_the_points_of_a_long_run():
    records = trajectory(5, iterations=30_000)
    fig = trajectory_figure([TrajectoryRun("long", records)])
    (objective,) = [t for t in fig.data if t.name == "f0 (surrogate)"]
    assert len(objective.x) <= MAX_TRAJECTORY_POINTS
    assert objective.x[0] == 0 and objective.x[-1] == 29_999


def test_trajectory_figure_without_exact_records_has_no_exact_traces():
    records = [r for r in trajectory(2) if r["kind"] != "exact"]
    fig = trajectory_figure([TrajectoryRun("run", records)])
    assert not [t for t in fig.data if "(exact)" in t.name]
    assert [t for t in fig.data if t.name == "f0 (surrogate)"]


def test_trajectory_figure_refuses_an_unknown_axis():
    with pytest.raises(UserError):
        trajectory_figure(TWO_RUNS, x="epoch")


def run_spec(solver: str, constraint: ConstraintSpec | None = None, **config) -> RunSpec:
    """A spec of data held in memory, enough to say what its run's trajectory shows."""
    return RunSpec(
        data=None,
        prepare=PrepareOptions(grouping=()),
        model=ModelSpec(),
        constraint=constraint,
        interval=(0.05, 0.3),
        solver=solver,
        config=config,
    )


def test_trajectory_run_reads_the_constraint_and_epsilon_from_the_spec():
    spec = run_spec("idca", ConstraintSpec("EO", 0.05), epsilon=0.002)
    run = trajectory_run("idca", spec, [])
    assert (run.quantity, run.kappa, run.epsilon, run.metric) == (
        "EO gap",
        0.05,
        0.002,
        "constraint",
    )
    default = run_spec("idca", ConstraintSpec("EO", 0.05))
    assert trajectory_run("idca", default, []).epsilon == 0.005  # the card default
    free_spec = run_spec("unconstrained")
    free = trajectory_run("ref", free_spec, [])
    assert (free.quantity, free.kappa, free.epsilon, free.metric) == ("pSP", None, None, "psp")
    beside_pdp = trajectory_run("ref", free_spec, [], view=ConstraintSpec("pDP", 0.05, (0.05, 0.3)))
    assert (beside_pdp.quantity, beside_pdp.metric) == ("pDP", "pdp")
    beside_eo = trajectory_run(
        "ref", free_spec, trajectory(3, metric="psp"), view=ConstraintSpec("EO", 0.05)
    )
    assert (beside_eo.quantity, beside_eo.metric) == ("EO gap", "eo")  # reported for every run
    intra = ConstraintSpec("auc_gap", 0.05, options=(("variant", "intra"),))
    beside_auc = trajectory_run("ref", free_spec, trajectory(3, metric="psp"), view=intra)
    assert (beside_auc.quantity, beside_auc.metric) == ("AUC gap", "intra_group_auc_gap")
    on_other_rows = ConstraintSpec("group_loss_gap", 0.05, pairs="vs_mean")
    beside_loss = trajectory_run("ref", free_spec, trajectory(3, metric="psp"), view=on_other_rows)
    assert beside_loss.metric is None  # not reported by a run without it: not drawn
    assert not [t for t in trajectory_figure([beside_eo]).data if "(exact)" in t.name]


# ---- interval helper ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_interval_scan_figure_heat_map_and_choice(seed):
    scores, groups, _ = random_data(seed)
    rows = interval_scan(scores, groups, 0.0, candidate_intervals(steps=10))
    fig = interval_scan_figure(rows)
    (heat,) = [t for t in fig.data if t.type == "heatmap"]
    for r in rows:
        cell = heat.z[list(heat.y).index(r["beta"])][list(heat.x).index(r["alpha"])]
        assert cell == r["psp"] == psp(scores, groups, r["alpha"], r["beta"])
    filled = np.count_nonzero(~np.isnan(np.asarray(heat.z, dtype=float)))
    assert filled == len(rows)
    holding = [r for r in rows if r["contains_rate"]]
    (ringed,) = [t for t in fig.data if t.name.startswith("contains p")]
    assert sorted(zip(ringed.x, ringed.y, strict=True)) == sorted(
        (r["alpha"], r["beta"]) for r in holding
    )
    (star,) = [t for t in fig.data if t.name.startswith("App. B choice")]
    best = max(r["psp"] for r in holding)
    chosen = next(r for r in holding if (r["alpha"], r["beta"]) == (star.x[0], star.y[0]))
    assert chosen["psp"] == best


def test_interval_scan_figure_refuses_nothing_and_unknown_metrics():
    with pytest.raises(UserError):
        interval_scan_figure([])
    rows = interval_scan(np.array([0.1, -0.2, 0.3]), np.array([0, 1, 1]), 0.0, [(0.0, 0.5)])
    with pytest.raises(UserError):
        interval_scan_figure(rows, metric="auc")


# ---- common -------------------------------------------------------------------------------------


def test_titles_are_short_with_room_for_their_subtitles():
    scores, groups, names = random_data(6)
    names[:2] = ["White alone, not Hispanic", "Black or African American alone"]
    figures = [
        cdf_figure(scores, groups, names, 0.05, 0.3, kappa=0.05),
        rank_rank_figure(scores, groups, names, 0.05, 0.3, 0.05, pair=(1, 0)),
        density_figure([("m", scores, groups)], names, 0.05, 0.3),
        frontier_figure(frontier(sweep_results(0))),
        interval_scan_figure(interval_scan(scores, groups, 0.0, candidate_intervals(steps=5))),
    ]
    for fig in figures:
        title = fig.layout.title
        assert len(title.text) <= 30 and "<br>" not in title.text
        lines = title.subtitle.text.split("<br>")
        assert all(len(line) <= 80 for line in lines)
        # each further line of the 12 px subtitle needs ~14.5 px (plotly's line height)
        assert fig.layout.margin.t >= TITLE_MARGIN + 14.5 * (len(lines) - 1)
        assert fig.layout.title.yanchor == "top"  # the title at the top, the room below it
    subtitle = figures[1].layout.title.subtitle.text
    assert names[1] in subtitle and "pSP = " in subtitle and "κ = 0.05" in subtitle


def test_figures_use_the_white_template_and_name_their_axes():
    scores, groups, names = random_data(5)
    figures = [
        cdf_figure(scores, groups, names, 0.05, 0.3),
        rank_rank_figure(scores, groups, names, 0.05, 0.3, 0.1),
        density_figure([("m", scores, groups)], names, 0.05, 0.3),
        frontier_figure(frontier(sweep_results(0))),
        trajectory_figure([TrajectoryRun("run", trajectory(0))]),
        interval_scan_figure(interval_scan(scores, groups, 0.0, candidate_intervals(steps=5))),
    ]
    for fig in figures:
        assert fig.layout.template == pio.templates["plotly_white"]
        axes = [fig.layout[name] for name in fig.layout if name.startswith(("xaxis", "yaxis"))]
        assert sum(bool(axis.title.text) for axis in axes) >= 2
    cdf = figures[0]
    assert cdf.layout.xaxis.title.text == "score θ"
    assert "rank from the top" in cdf.layout.yaxis.title.text


def test_unnamed_group_is_refused():
    scores, groups, names = random_data(4)
    with pytest.raises(UserError):
        cdf_figure(scores, groups, names[:-1], 0.05, 0.3)


def test_plots_do_not_import_streamlit():
    modules = []
    for source in Path(plots.__file__).parent.glob("*.py"):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        modules += [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ]
        modules += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert modules and not [m for m in modules if m and m.split(".")[0] == "streamlit"]


def test_thinned_step_curves_keep_their_ends_and_order():
    x = np.sort(np.random.default_rng(0).normal(size=10_000))
    y = 1.0 - np.arange(x.size) / x.size
    tx, ty = thin_steps(x, y, max_points=300)
    assert len(tx) <= 300 and tx[0] == x[0] and tx[-1] == x[-1] and ty[-1] == y[-1]
    assert np.all(np.diff(tx) > 0) and np.all(np.isin(tx, x))
    np.testing.assert_array_equal(thin_steps(x[:50], y[:50])[0], x[:50])


def test_groups_figure_shows_sizes_and_rates_per_split():
    summary = {
        "groups": [
            {
                "name": n,
                **{
                    s: {"size": size + i, "label_rate": rate}
                    for i, s in enumerate(("train", "val", "test"))
                },
            }
            for n, size, rate in (("F", 100, 0.1), ("M", 200, None))
        ]
    }
    fig = groups_figure(summary)
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 6
    train_sizes = next(t for t in bars if t.name == "train" and t.xaxis == "x")
    assert list(train_sizes.x) == ["F", "M"] and list(train_sizes.y) == [100, 200]
    train_rates = next(t for t in bars if t.name == "train" and t.xaxis == "x2")
    assert train_rates.y[0] == 0.1 and np.isnan(train_rates.y[1])


def test_row_named_duals_and_slacks_get_a_panel_each_with_a_line_per_row():
    records = trajectory(0)
    for i, record in enumerate(r for r in records if r["kind"] == "surrogate"):
        record["state"] = {
            "dual.g1": 0.1 * i,
            "dual.g2": -0.2 * i,
            "slack.g1": 0.01 * i,
            "branch": "objective",
        }
    runs = [
        TrajectoryRun("alm", records, "EO gap", kappa=0.05),
        TrajectoryRun("sgd", trajectory(1)),
    ]
    fig = trajectory_figure(runs)
    duals = [t for t in fig.data if t.name.startswith("dual ")]
    slacks = [t for t in fig.data if t.name.startswith("slack ")]
    assert sorted(t.name for t in duals) == ["dual g1", "dual g2"] and len(slacks) == 1
    assert {axes_of(fig, 4, 1)[1]} == {t.yaxis for t in duals}
    assert {axes_of(fig, 5, 1)[1]} == {t.yaxis for t in slacks}
    np.testing.assert_allclose(duals[0].y, [0.1 * i for i in range(12)])
    assert layout_axis(fig, axes_of(fig, 4, 1)[1]).title.text.startswith("dual variables")
    plain = trajectory_figure([TrajectoryRun("sgd", trajectory(1))])
    assert not [t for t in plain.data if t.name.startswith(("dual ", "slack "))]
    reversed_order = trajectory_figure(runs[::-1])  # the titles go where the lines are
    assert layout_axis(reversed_order, axes_of(reversed_order, 4, 2)[1]).title.text.startswith(
        "dual variables"
    )


def test_trajectories_against_data_passes_place_exact_records_between_counted_ones():
    counted = []
    for record in trajectory(0):
        if record["kind"] == "surrogate":  # a minibatch solver: 0.25 passes per iteration
            record = {
                **record,
                "state": {**record["state"], "oracle.data_passes": 0.25 * record["iteration"]},
            }
        counted.append(record)
    runs = [
        TrajectoryRun("ssl_alm", counted, "EO gap", kappa=0.05),
        TrajectoryRun("idca", trajectory(1), "EO gap", kappa=0.05),
    ]
    fig = trajectory_figure(runs, x="data passes")
    (objective,) = [
        t for t in fig.data if t.legendgroup == "ssl_alm" and t.name == "f0 (surrogate)"
    ]
    surrogate = [r for r in counted if r["kind"] == "surrogate"]
    np.testing.assert_allclose(objective.x, [0.25 * r["iteration"] for r in surrogate])
    (train,) = [
        t for t in fig.data if t.legendgroup == "ssl_alm" and t.name == "train EO gap (exact)"
    ]
    exact = [r for r in counted if r["kind"] == "exact"]
    first, last = surrogate[0]["iteration"], surrogate[-1]["iteration"]
    expected = [0.25 * min(max(r["iteration"], first), last) for r in exact]
    np.testing.assert_allclose(train.x, expected)
    # a full-batch solver counts no passes: its column stays empty
    assert not any(len(t.x) for t in fig.data if t.legendgroup == "idca")
