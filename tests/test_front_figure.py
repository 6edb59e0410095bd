"""The frontier figure draws a run's front as a line of its own through its models, beside the
other runs' points and without changing them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.plots.frontier import DOMINATED_COLOUR, MISSED_COLOUR, frontier_figure
from engine.plots.style import series_colour
from engine.runs.frontier import RunResult, frontier

INTERVAL = (0.05, 0.3)


def ordinary(rng: np.random.Generator) -> list[RunResult]:
    return [
        RunResult(
            f"{solver}-{k}-{s}",
            solver,
            k,
            INTERVAL,
            s,
            {
                "test": {
                    "accuracy": float(rng.uniform(0.7, 0.85)),
                    "psp": float(rng.uniform(0, 0.6)),
                    "constraint": float(rng.uniform(0, 0.25)),
                }
            },
        )
        for solver, kappas in (("unconstrained", [None]), ("idca", [0.05, 0.1, 0.2]))
        for k in kappas
        for s in range(2)
    ]


def front(run_id: str, rng: np.random.Generator, size: int, kappa=None) -> list[RunResult]:
    members = [
        RunResult(
            run_id,
            "badr_front",
            kappa,
            INTERVAL,
            0,
            {
                "test": {
                    "accuracy": float(rng.uniform(0.7, 0.85)),
                    "psp": float(rng.uniform(0, 0.6)),
                    "constraint": float(rng.uniform(0, 0.25)),
                }
            },
            front_of=run_id,
            label=f"λ = ({t:g}, {1 - t:g})",
            coordinates={"lambda.a": float(t), "lambda.b": float(1 - t)},
        )
        for t in np.linspace(0, 1, size)
    ]
    return [*members, replace(members[0], label="reported model", coordinates={}, chosen=True)]


def traces_of(fig, run_id: str) -> list:
    return [t for t in fig.data if t.legendgroup == f"front {run_id}"]


@pytest.mark.parametrize("seed", range(5))
def test_one_trace_per_front_with_a_point_per_model_and_the_reported_one_on_top(seed):
    rng = np.random.default_rng(seed)
    sizes = {"r1": int(rng.integers(2, 9)), "r2": int(rng.integers(2, 9))}
    runs = ordinary(rng)
    result = frontier([*runs, *front("r1", rng, sizes["r1"]), *front("r2", rng, sizes["r2"])])
    fig = frontier_figure(result, "pSP")
    alone = frontier_figure(frontier(runs), "pSP")
    assert fig.data[: len(alone.data)] == alone.data  # the other runs are drawn as before
    for i, (run_id, size) in enumerate(sizes.items()):
        line, diamond = traces_of(fig, run_id)
        points = result.fronts[run_id]
        members = [p for p in points if not p.chosen]
        assert line.mode == "lines+markers" and len(line.x) == size == len(members)
        assert list(zip(line.x, line.y, strict=True)) == [(p.fairness, p.score) for p in members]
        colour = series_colour(1 + i)  # after the one constrained solver
        assert line.line.color == colour
        assert list(line.marker.color) == [
            MISSED_COLOUR if p.meets_kappa is False else DOMINATED_COLOUR if p.dominated else colour
            for p in members
        ]
        assert [list(c) for c in line.customdata] == [[run_id, p.label] for p in members]
        for hover, point in zip(line.hovertext, members, strict=True):
            assert point.label in hover and "lambda.a = " in hover
        assert diamond.marker.symbol == "diamond" and len(diamond.x) == 1
        assert (diamond.x[0], diamond.y[0]) == (points[-1].fairness, points[-1].score)
        assert [list(c) for c in diamond.customdata] == [[run_id]]
    assert "one run's front" in fig.layout.title.subtitle.text.replace("<br>", " ")
    assert "front" not in alone.layout.title.subtitle.text.replace("<br>", " ")


def test_a_front_misses_kappa_by_its_own_models_and_can_hide_dominated_ones():
    rng = np.random.default_rng(7)
    result = frontier(front("r", rng, 12, kappa=0.1))
    (line, _) = traces_of(frontier_figure(result), "r")
    members = [p for p in result.fronts["r"] if not p.chosen]
    assert list(line.marker.symbol) == [
        "circle-open" if p.meets_kappa is False else "circle" for p in members
    ]
    assert any(p.dominated for p in members)
    (kept, _) = traces_of(frontier_figure(result, show_dominated=False), "r")
    assert len(kept.x) == sum(not p.dominated for p in members)


def test_a_frontier_of_fronts_only_has_no_other_points():
    rng = np.random.default_rng(8)
    fig = frontier_figure(frontier(front("r", rng, 4)))
    assert len(fig.data) == 2 and {t.legendgroup for t in fig.data} == {"front r"}
