"""A run that yields a front: the driver evaluates each of its models exactly on every split,
off the run's clock, and records them (kind "front") before the final record."""

import json

import numpy as np
import pytest
from front_solver import NAME, ToyFront, ToyFrontConfig, register

from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.solvers import FrontPoint, solve
from engine.solvers.driver import _flatten
from engine.solvers.records import FRONT_COORDINATE, RecordKind
from engine.solvers.reference.cards import UnconstrainedConfig

INTERVAL = (0.1, 0.5)


@pytest.fixture
def problem(toy, monkeypatch):
    register(monkeypatch)
    return Problem(
        toy, ModelSpec(cross_terms=True), ConstraintSpec("pSP", 0.1, INTERVAL), interval=INTERVAL
    )


def test_every_model_of_the_front_is_recorded_with_its_exact_metrics(problem):
    seen = []
    solution = solve(problem, NAME, log=seen.append)
    front = [r for r in seen if r.kind == RecordKind.FRONT]
    expected = ToyFront(problem, ToyFrontConfig(), np.random.default_rng(0)).front()
    assert len(front) == len(expected) == 3
    for index, (record, point) in enumerate(zip(front, expected, strict=True)):
        metrics = problem.report(point.params)
        assert record.iteration == index and record.seconds == solution.seconds
        assert record.state == {"label": point.label}
        coordinates = {f"{FRONT_COORDINATE}{k}": v for k, v in point.coordinates.items()}
        assert record.values == _flatten(metrics) | coordinates
        assert {"train", "val", "test"} <= {key.split(".")[0] for key in record.values}
        assert solution.front[index] == {
            "label": point.label,
            "coordinates": point.coordinates,
            "metrics": metrics,
        }
    kinds = [r.kind for r in seen]
    assert kinds[-1] == "final" and kinds[-1 - len(front) : -1] == [RecordKind.FRONT] * len(front)
    assert solution.trajectory == seen


def test_the_front_is_in_the_solutions_json_and_an_ordinary_run_has_an_empty_one(problem):
    document = json.loads(json.dumps(solve(problem, NAME).to_dict()))
    assert [m["label"] for m in document["front"]] == ["λ = (0, 1)", "λ = (0.5, 0.5)", "λ = (1, 0)"]
    assert document["front"][1]["coordinates"] == {"lambda.a": 0.5, "lambda.b": 0.5}
    assert set(document["front"][0]["metrics"]) == {"train", "val", "test"}
    ordinary = solve(problem, "unconstrained", UnconstrainedConfig(max_iterations=5))
    assert ordinary.front == [] and ordinary.to_dict()["front"] == []
    assert not [r for r in ordinary.trajectory if r.kind == RecordKind.FRONT]


def test_the_fronts_evaluation_is_off_the_run_clock(problem, wall, monkeypatch):
    report = Problem.report

    def slow_report(self, params, splits=("train", "val", "test")):
        wall.spend(0.2)
        return report(self, params, splits)

    monkeypatch.setattr(Problem, "report", slow_report)
    solution = solve(problem, NAME)
    assert solution.wall_seconds >= 0.6  # three models took 0.6 s to evaluate
    assert solution.seconds < 0.2  # none of it on the solver's clock


def test_a_front_point_is_a_frozen_value():
    point = FrontPoint("λ = (1, 0)", {"w": np.zeros(2)}, {"lambda.a": 1.0})
    with pytest.raises(AttributeError):
        point.label = "other"  # type: ignore[misc]
