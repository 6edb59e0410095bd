"""The trajectory figure's optional panels: solver state (paper 001's PLADA: λ, μ, u, ‖λ − μ‖,
γ_k), the KKT measure of the exact records, the oracle-calls axis and the row cap."""

from __future__ import annotations

import numpy as np
import pytest
from test_plots import axes_of, layout_axis, run_spec, trajectory

from engine.fairness.constraint_spec import ConstraintSpec
from engine.plots.trajectory import (
    MAX_STATE_ROWS,
    SHARED_PANELS,
    TRAJECTORY_AXES,
    TrajectoryRun,
    trajectory_figure,
    trajectory_run,
)
from engine.solvers.catalogue import CARDS, solver_card

PLADA_STATE = ("dual", "mu", "u", "dual_gap", "gamma")
# the panels a PLADA run may draw: the shared ones and those its card declares
PLADA_PANELS = SHARED_PANELS + solver_card("plada").state_panels
PANEL = {panel.key: panel for panel in PLADA_PANELS}
KKT_PARTS = {"stationarity": 0.1, "complementarity": 0.02, "feasibility": 0.003}


def with_state(records: list[dict], state) -> list[dict]:
    """The records with `state(i)` (i the surrogate record's index) in each surrogate record."""
    surrogate = (r for r in records if r["kind"] == "surrogate")
    by_id = {id(r): state(i) for i, r in enumerate(surrogate)}
    return [
        {**r, "state": {**r["state"], **by_id[id(r)]}} if id(r) in by_id else r for r in records
    ]


def plada_state(kinds=PLADA_STATE, rows=("g1", "g2")):
    """PLADA's state entries of the `kinds` asked for, at surrogate record i."""

    def state(i: int) -> dict[str, float]:
        out = {}
        for kind in kinds:
            if PANEL[kind].per_row:
                out |= {f"{kind}.{row}": 0.1 * (j + 1) * i for j, row in enumerate(rows)}
        return out | {key: 1.0 / (i + 1) for key in kinds if not PANEL[key].per_row}

    return state


def with_kkt(records: list[dict]) -> list[dict]:
    """Exact records with paper 001's KKT measure and its parts, "train.kkt.<part>"."""
    out = []
    for r in records:
        if r["kind"] == "exact":
            parts = {f"train.kkt.{k}": v * (r["iteration"] + 1) for k, v in KKT_PARTS.items()}
            total = sum(parts.values())
            r = {**r, "values": {**r["values"], "train.kkt": total, **parts}}
        out.append(r)
    return out


def titles(fig) -> list[str]:
    """The y-axis titles of the first column, top to bottom."""
    rows = len(fig._grid_ref)
    return [layout_axis(fig, axes_of(fig, row, 1)[1]).title.text for row in range(1, rows + 1)]


def test_plada_state_and_kkt_get_panels_in_order_with_log_axes_where_they_go_to_zero():
    records = with_kkt(with_state(trajectory(0), plada_state()))
    fig = trajectory_figure([TrajectoryRun("plada", records, "DP gap", 0.02, panels=PLADA_PANELS)])
    shown = titles(fig)
    assert len(shown) == 9
    assert shown[3].startswith("KKT measure")
    assert shown[4:] == [PANEL[key].title for key in PLADA_STATE]
    logs = [layout_axis(fig, axes_of(fig, row, 1)[1]).type == "log" for row in range(1, 10)]
    assert logs == [False, False, False, True, False, False, False, True, True]
    for row, name in ((5, "dual g1"), (6, "mu g2"), (7, "u g1"), (8, "‖λ − μ‖"), (9, "γ_k")):
        (line,) = [t for t in fig.data if t.name == name]
        assert (line.xaxis, line.yaxis) == axes_of(fig, row, 1)
    (gap,) = [t for t in fig.data if t.name == "‖λ − μ‖"]
    np.testing.assert_allclose(gap.y, [1.0 / (i + 1) for i in range(12)])


@pytest.mark.parametrize("kinds", [("dual",), ("mu", "gamma"), ("u", "dual_gap"), ("gamma",)])
def test_a_state_panel_is_drawn_exactly_when_a_run_records_that_state(kinds):
    records = with_state(trajectory(0), plada_state(kinds))
    runs = [TrajectoryRun("plain", trajectory(1)), TrajectoryRun("x", records, panels=PLADA_PANELS)]
    fig = trajectory_figure(runs)
    expected = [panel.title for panel in PLADA_PANELS if panel.key in kinds]
    # the titles sit in the column with the lines: the second one
    rows = range(4, 4 + len(expected))
    assert [layout_axis(fig, axes_of(fig, row, 2)[1]).title.text for row in rows] == expected
    assert len(fig._grid_ref) == 3 + len(expected)
    assert not [
        t
        for t in fig.data
        if t.legendgroup == "plain" and t.yaxis in {axes_of(fig, row, 1)[1] for row in rows}
    ]


def test_without_state_or_kkt_the_figure_keeps_its_three_panels():
    fig = trajectory_figure([TrajectoryRun("sgd", trajectory(1))])
    assert len(fig._grid_ref) == 3 and not [t for t in fig.data if t.name == "KKT"]


def test_the_kkt_panel_draws_the_exact_records_with_the_parts_in_the_hover():
    records = with_kkt(trajectory(0))
    runs = [TrajectoryRun("plada", records, "DP gap"), TrajectoryRun("free", trajectory(1))]
    fig = trajectory_figure(runs)
    (kkt,) = [t for t in fig.data if t.name == "KKT"]
    assert (kkt.xaxis, kkt.yaxis) == axes_of(fig, 4, 1)
    exact = [r for r in records if r["kind"] == "exact"]
    np.testing.assert_array_equal(kkt.x, [r["iteration"] for r in exact])
    np.testing.assert_allclose(kkt.y, [r["values"]["train.kkt"] for r in exact])
    np.testing.assert_allclose(
        kkt.customdata, [[r["values"][f"train.kkt.{k}"] for k in KKT_PARTS] for r in exact]
    )
    assert all(part in kkt.hovertemplate for part in KKT_PARTS)
    assert layout_axis(fig, axes_of(fig, 4, 1)[1]).type == "log"
    assert layout_axis(fig, axes_of(fig, 4, 2)[1]).type == "log"  # the row's shared axis
    assert not kkt.showlegend


def counted(i: int) -> dict[str, float]:
    """A solver's oracle counts after surrogate record i: 3 gradients of f0 and 5 constraint
    gradients per iteration (constraint values and data passes are not oracle calls)."""
    return {
        "oracle.objective_gradients": 3.0 * i,
        "oracle.constraint_gradients": 5.0 * i,
        "oracle.constraint_values": 100.0 * i,
        "oracle.data_passes": 0.5 * i,
    }


def test_oracle_calls_are_an_axis_placing_exact_records_between_counted_ones():
    assert "oracle calls" in TRAJECTORY_AXES
    records = with_kkt(with_state(trajectory(0), counted))  # iteration i = surrogate record i
    runs = [
        TrajectoryRun("idca", records, "EO gap", kappa=0.05),
        TrajectoryRun("stored before counting", trajectory(1), "EO gap"),
    ]
    fig = trajectory_figure(runs, x="oracle calls")
    mine = [t for t in fig.data if t.legendgroup == "idca"]
    (objective,) = [t for t in mine if t.name == "f0 (surrogate)"]
    np.testing.assert_allclose(objective.x, 8.0 * np.arange(12))
    exact = [r["iteration"] for r in records if r["kind"] == "exact"]
    for name in ("train EO gap (exact)", "KKT"):
        (line,) = [t for t in mine if t.name == name]
        np.testing.assert_allclose(line.x, [8.0 * i for i in exact])
    title = layout_axis(fig, axes_of(fig, len(fig._grid_ref), 1)[0]).title.text
    assert title.startswith("oracle calls") and "gradients" in title
    assert "oracle calls" in objective.hovertemplate
    assert not any(len(t.x) for t in fig.data if t.legendgroup == "stored before counting")
    passes = trajectory_figure(runs, x="data passes")  # the other counted axis is unchanged
    (objective,) = [t for t in passes.data if t.legendgroup == "idca" and t.name.startswith("f0")]
    np.testing.assert_allclose(objective.x, 0.5 * np.arange(12))


def test_many_rows_are_capped_to_the_largest_final_values_with_a_note():
    rows = [f"g{j}" for j in range(30)]
    finals = np.random.default_rng(0).normal(size=len(rows))

    def state(i: int) -> dict[str, float]:  # each row ends at its final value
        return {f"dual.{row}": float(v) * (i + 1) / 12 for row, v in zip(rows, finals, strict=True)}

    few = with_state(trajectory(1), plada_state(("dual",), rows=rows[:MAX_STATE_ROWS]))
    runs = [
        TrajectoryRun("intersectional", with_state(trajectory(0), state)),
        TrajectoryRun("few rows", few),
    ]
    fig = trajectory_figure(runs)
    drawn = [t for t in fig.data if t.legendgroup == "intersectional" and t.name.startswith("dual")]
    largest = np.argsort(-np.abs(finals))[:MAX_STATE_ROWS]
    assert [t.name for t in drawn] == [f"dual g{j}" for j in sorted(largest)]  # in row order
    assert {(t.xaxis, t.yaxis) for t in drawn} == {axes_of(fig, 4, 1)}
    (note,) = [a for a in fig.layout.annotations if "rows shown" in a.text]
    assert note.text == f"{MAX_STATE_ROWS} of 30 rows shown (largest final |value|)"
    x, y = axes_of(fig, 4, 1)
    assert (note.xref, note.yref) == (f"{x} domain", f"{y} domain")
    # a run with no more rows than the cap draws them all, without a note
    assert (
        len([t for t in fig.data if t.legendgroup == "few rows" and t.name.startswith("dual")])
        == MAX_STATE_ROWS
    )


def test_every_panel_keeps_a_readable_height_and_the_figure_a_bounded_one():
    records = with_kkt(with_state(trajectory(0), plada_state()))
    records = with_state(
        records,
        lambda i: {
            "slack.g1": 0.1,
            "branch.objective": float(i),
            "lambda.g1": 0.5,
            "group_loss.g1": 0.3,
            "fair": 0.7,
            "stationarity": 1.0 / (i + 1),
        },
    )
    every = tuple(
        dict.fromkeys(SHARED_PANELS + tuple(p for c in CARDS.values() for p in c.state_panels))
    )
    fig = trajectory_figure([TrajectoryRun("all", records, panels=every)])
    rows = len(fig._grid_ref)
    assert rows == 3 + 1 + len(every)  # every optional panel
    height = fig.layout.height
    assert height <= 720 + 200 * (rows - 3)
    plot_area = height - 180
    for row in range(1, rows + 1):
        low, high = layout_axis(fig, axes_of(fig, row, 1)[1]).domain
        assert (high - low) * plot_area >= 100  # pixels


def test_a_line_of_few_points_marks_them():
    """A short run may have a single exact record: a line alone would draw nothing."""
    from engine.plots.trajectory import FEW_POINTS, TrajectoryRun, trajectory_figure

    surrogate = [
        {
            "kind": "surrogate",
            "iteration": i,
            "seconds": i / 10,
            "objective": 1.0 / i,
            "max_violation": 0.1 / i,
            "values": {},
            "state": {},
        }
        for i in range(1, 20)
    ]
    exact = [
        {
            "kind": "exact",
            "iteration": 10,
            "seconds": 1.0,
            "values": {"train.constraint": 0.03, "val.constraint": 0.04},
        }
    ]
    figure = trajectory_figure([TrajectoryRun("run", surrogate + exact, "DP gap", 0.05)])
    modes = {trace.name: trace.mode for trace in figure.data}
    assert modes["train DP gap (exact)"] == "lines+markers"
    assert modes["f0 (surrogate)"] == "lines" and FEW_POINTS < 19


def test_a_stored_run_draws_the_state_panels_its_solvers_card_declares():
    """PLADA's μ, u, ‖λ − μ‖ and γ_k come from its card; a solver whose card declares none draws
    only the shared panels, even when its state has entries of the same names."""
    records = with_state(trajectory(0), plada_state())
    dp = ConstraintSpec("DP", 0.02)
    plada = trajectory_figure([trajectory_run("plada", run_spec("plada", dp), records)])
    assert titles(plada)[3:] == [PANEL[key].title for key in PLADA_STATE]
    other = trajectory_figure([trajectory_run("ssl_alm", run_spec("ssl_alm", dp), records)])
    assert titles(other)[3:] == [PANEL["dual"].title]
