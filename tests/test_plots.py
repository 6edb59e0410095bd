"""The figures of engine.plots hold the numbers they claim to show, checked by counting."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest

from engine import plots
from engine.errors import UserError
from engine.fairness import psp
from engine.fairness.distributions import candidate_intervals, interval_scan
from engine.plots import (
    DOMINATED_COLOUR,
    cdf_figure,
    density_figure,
    frontier_figure,
    group_colour,
    groups_figure,
    interval_scan_figure,
    rank_rank_figure,
    thin_steps,
    trajectory_figure,
)
from engine.runs.frontier import RunResult, frontier

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


# ---- frontier -----------------------------------------------------------------------------------


def sweep_results(seed: int) -> list[RunResult]:
    rng = np.random.default_rng(seed)
    runs = []
    for solver, kappas in (("unconstrained", [None]), ("idca", [0.01, 0.05, 0.1, 0.2]),
                           ("penalty", [0.3, 1.0, 3.0])):  # fmt: skip
        for kappa, run_seed in itertools.product(kappas, range(3)):
            metrics = {"accuracy": float(rng.uniform(0.7, 0.85)), "psp": float(rng.uniform(0, 0.6))}
            run_id = f"{solver}-{kappa}-{run_seed}"
            runs.append(RunResult(run_id, solver, kappa, (0.05, 0.3), run_seed, {"test": metrics}))
    return runs


def plotted_points(fig):
    """(customdata, x, y, error x, error y, colour, symbol, trace name) of every marker."""
    out = []
    for t in fig.data:
        for i, ids in enumerate(t.customdata):
            out.append((list(ids), t.x[i], t.y[i], t.error_x.array[i], t.error_y.array[i],
                        t.marker.color, t.marker.symbol[i], t.name))  # fmt: skip
    return out


@pytest.mark.parametrize("seed", range(6))
def test_frontier_figure_has_one_point_per_frontier_point(seed):
    result = frontier(sweep_results(seed))
    assert any(p.dominated for p in result.points) and any(not p.dominated for p in result.points)
    points = plotted_points(frontier_figure(result))
    assert len(points) == len(result.points)
    assert is_grey(DOMINATED_COLOUR)
    solver_colours = {}
    for p in result.points:
        (found,) = [q for q in points if q[0] == list(p.run_ids)]
        _, x, y, error_x, error_y, colour, symbol, name = found
        assert (x, y, error_x, error_y) == (p.fairness, p.accuracy, p.fairness_ci, p.accuracy_ci)
        assert (colour == DOMINATED_COLOUR) == p.dominated
        assert (symbol == "star") == p.unconstrained
        assert name.startswith(p.solver)
        if not p.dominated:
            solver_colours.setdefault(p.solver, set()).add(colour)
    assert all(len(colours) == 1 for colours in solver_colours.values())
    assert len({c for colours in solver_colours.values() for c in colours}) == len(solver_colours)


def test_frontier_figure_can_hide_dominated_points():
    result = frontier(sweep_results(1))
    points = plotted_points(frontier_figure(result, show_dominated=False))
    expected = sorted(list(p.run_ids) for p in result.points if not p.dominated)
    assert sorted(q[0] for q in points) == expected
    assert not any(q[5] == DOMINATED_COLOUR for q in points)


def test_frontier_axis_names_the_metric_and_split():
    fig = frontier_figure(frontier(sweep_results(2), metric="psp", split="test"))
    assert "1 − psp" in fig.layout.xaxis.title.text and "test" in fig.layout.xaxis.title.text
    assert "accuracy" in fig.layout.yaxis.title.text


# ---- trajectories -------------------------------------------------------------------------------


def trajectory(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    records, seq = [], 0
    for iteration in range(12):
        records.append({
            "seq": seq, "iteration": iteration, "seconds": 0.1 * iteration, "kind": "surrogate",
            "objective": float(rng.uniform(0.3, 1.0)),
            "max_violation": None if iteration == 4 else float(rng.normal()),
            "values": {"psp.p0.k0.lower": float(rng.normal())}, "state": {},
        })  # fmt: skip
        seq += 1
        if iteration % 3 == 0:
            values = {"val.accuracy": float(rng.uniform()), "val.psp": float(rng.uniform()),
                      "train.psp": float(rng.uniform())}  # fmt: skip
            records.append({"seq": seq, "iteration": iteration, "seconds": 0.0, "kind": "exact",
                            "objective": None, "max_violation": None, "values": values,
                            "state": {}})  # fmt: skip
            seq += 1
    final = {"val.accuracy": 5.0, "val.psp": 7.0}  # far from every exact value
    records.append({"seq": seq, "iteration": 12, "seconds": 2.0, "kind": "final",
                    "objective": None, "max_violation": None, "values": final, "state": {}})  # fmt: skip
    return records


def test_trajectory_figure_takes_exact_metrics_from_exact_records_only():
    runs = [("idca κ=0.05", trajectory(0)), ("ssg", trajectory(1))]
    fig = trajectory_figure(runs)
    for label, records in runs:
        mine = [t for t in fig.data if t.legendgroup == label]
        assert len({t.line.color for t in mine}) == 1
        exact = [r for r in records if r["kind"] == "exact"]
        surrogate = [r for r in records if r["kind"] == "surrogate"]
        for metric in ("val.accuracy", "val.psp"):
            (t,) = [t for t in mine if t.name == f"{metric} (exact)"]
            np.testing.assert_array_equal(t.x, [r["iteration"] for r in exact])
            np.testing.assert_array_equal(t.y, [r["values"][metric] for r in exact])
            assert t.yaxis == "y3"
        (objective,) = [t for t in mine if t.name == "f0 (surrogate)"]
        np.testing.assert_array_equal(objective.y, [r["objective"] for r in surrogate])
        (violation,) = [t for t in mine if "surrogate" in t.name and t.yaxis == "y2"]
        kept = [r for r in surrogate if r["max_violation"] is not None]
        np.testing.assert_array_equal(violation.x, [r["iteration"] for r in kept])
        np.testing.assert_array_equal(violation.y, [r["max_violation"] for r in kept])
    colours = {next(t for t in fig.data if t.legendgroup == label).line.color for label, _ in runs}
    assert len(colours) == len(runs)
    assert not any(np.any(np.asarray(t.y) >= 5.0) for t in fig.data if "(exact)" in t.name)
    (zero,) = shapes(fig, type="line")
    assert zero.y0 == zero.y1 == 0 and zero.yref == "y2"


def test_trajectory_figure_without_exact_records_has_no_exact_traces():
    records = [r for r in trajectory(2) if r["kind"] != "exact"]
    fig = trajectory_figure([("run", records)])
    assert not [t for t in fig.data if "(exact)" in t.name]
    assert [t for t in fig.data if t.name == "f0 (surrogate)"]


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


def test_figures_use_the_white_template_and_name_their_axes():
    scores, groups, names = random_data(5)
    figures = [
        cdf_figure(scores, groups, names, 0.05, 0.3),
        rank_rank_figure(scores, groups, names, 0.05, 0.3, 0.1),
        density_figure([("m", scores, groups)], names, 0.05, 0.3),
        frontier_figure(frontier(sweep_results(0))),
        trajectory_figure([("run", trajectory(0))]),
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
    tree = ast.parse(Path(plots.__file__).read_text(encoding="utf-8"))
    modules = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names]  # fmt: skip
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
    summary = {"groups": [
        {"name": n, **{s: {"size": size + i, "label_rate": rate} for i, s in
                       enumerate(("train", "val", "test"))}}
        for n, size, rate in (("F", 100, 0.1), ("M", 200, None))
    ]}  # fmt: skip
    fig = groups_figure(summary)
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 6
    train_sizes = next(t for t in bars if t.name == "train" and t.xaxis == "x")
    assert list(train_sizes.x) == ["F", "M"] and list(train_sizes.y) == [100, 200]
    train_rates = next(t for t in bars if t.name == "train" and t.xaxis == "x2")
    assert train_rates.y[0] == 0.1 and np.isnan(train_rates.y[1])
