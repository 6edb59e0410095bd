"""Exact records on the trajectory figure: markers, joined only where they are consecutive."""

import math

import numpy as np

from engine.exact_trajectory import consecutive, exact_points
from engine.plots.trajectory import KKT, TrajectoryRun, trajectory_figure
from engine.solvers.records import SOLVE


def exact(seconds: float, value: float, solve: int | None = None) -> dict:
    state = {} if solve is None else {SOLVE: float(solve)}
    values = {
        "train.constraint": value,
        "val.constraint": value + 0.01,
        KKT: 1.0 + value,
        f"{KKT}.stationarity": value,
    }
    return {
        "iteration": int(100 * seconds),
        "seconds": seconds,
        "kind": "exact",
        "objective": None,
        "max_violation": None,
        "values": values,
        "state": state,
    }


def surrogate(seconds: float) -> dict:
    return {
        "iteration": int(100 * seconds),
        "seconds": seconds,
        "kind": "surrogate",
        "objective": 0.5,
        "max_violation": 0.0,
        "values": {},
        "state": {},
    }


def figure_of(records: list[dict]):
    return trajectory_figure([TrajectoryRun("run", records, "pSP", kappa=0.05)], x="seconds")


def trace(fig, name: str):
    (found,) = [t for t in fig.data if t.name == name]
    return found


def test_a_run_that_recorded_only_its_start_and_end_draws_two_points_and_no_line():
    records = [exact(0.0, 0.2), *(surrogate(0.5 * k) for k in range(1, 40)), exact(20.0, 0.05)]
    fig = figure_of(records)
    for name in ("train pSP (exact)", "validation pSP (exact)", "KKT"):
        line = trace(fig, name)
        assert "markers" in line.mode
        assert [x for x in line.x if not math.isnan(x)] == [0.0, 20.0]
        assert math.isnan(line.y[1])  # the break between them: no segment is drawn


def test_regular_exact_records_are_one_line_and_a_long_stretch_without_any_breaks_it():
    regular = [exact(0.5 * k, 0.1 / (k + 1)) for k in range(20)]
    line = trace(figure_of(regular), "train pSP (exact)")
    assert "markers" in line.mode and "lines" in line.mode
    assert not np.isnan(np.array(line.y, dtype=float)).any()
    stalled = [*regular, *(exact(30.0 + 0.5 * k, 0.01) for k in range(5))]  # 20 s of nothing
    line = trace(figure_of(stalled), "train pSP (exact)")
    y = np.array(line.y, dtype=float)
    (gap,) = np.flatnonzero(np.isnan(y))
    assert line.x[gap - 1] == 9.5 and line.x[gap + 1] == 30.0


def test_the_end_record_soon_after_the_last_one_on_schedule_is_joined():
    records = [exact(1.0 * k, 0.1) for k in range(10)] + [exact(9.2, 0.1)]
    assert consecutive(records).all()


def test_each_solve_of_a_run_that_holds_kappa_is_its_own_line():
    first = [exact(0.5 * k, 0.1, solve=0) for k in range(10)]
    second = [exact(5.0 + 0.5 * k, 0.08, solve=1) for k in range(10)]
    joined = consecutive(first + second)
    assert not joined[9] and joined[:9].all() and joined[10:].all()
    points = exact_points(
        first + second, lambda r: r["seconds"], lambda r: r["values"]["train.constraint"]
    )
    assert len(points) == 21 and np.isnan(points[10]).all()


def test_two_records_alone_are_not_joined_and_one_is_a_point():
    assert not consecutive([exact(0.0, 0.1), exact(1.0, 0.1)]).any()
    assert len(consecutive([exact(0.0, 0.1)])) == 0
    line = trace(figure_of([exact(0.0, 0.1)]), "train pSP (exact)")
    assert list(line.x) == [0.0] and "markers" in line.mode
