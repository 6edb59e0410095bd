"""A run that yields a front, through the store: its front records are kept and read back as
they were made, become frontier points of their own (one curve per run, filtered on its own),
and leave the other runs' points as they were."""

import json
from dataclasses import replace

import numpy as np
import pytest
from front_solver import NAME, register
from run_fixtures import make_spec

from engine.runs.frontier import RunResult, frontier, frontier_points
from engine.runs.frontier_text import format_frontier
from engine.runs.fronts import REPORTED, FrontMember, reported_member, run_front
from engine.runs.results import (
    export_run,
    run_document,
    run_front_frontier,
    run_results,
    sweep_results,
)
from engine.runs.submit import submit
from engine.runs.worker import build_problem, execute_run
from engine.solvers import solve
from engine.solvers.records import RecordKind

INTERVAL = (0.1, 0.5)


@pytest.fixture
def front_run(store, csv_spec, monkeypatch):
    """A finished toy_front run in the store (made in this process)."""
    register(monkeypatch)
    spec = make_spec(csv_spec, solver=NAME)
    (run_id,) = submit([spec], store, start_runner=False)
    assert execute_run(str(store.home), run_id) == "converged"
    return run_id, spec


def test_the_front_is_stored_and_read_back_as_it_was_made(store, front_run):
    run_id, spec = front_run
    made = solve(build_problem(spec), NAME, seed=spec.seed).to_dict()["front"]
    members = run_front(store, run_id)
    assert [m.to_dict() for m in members] == made
    assert [m.label for m in members] == ["λ = (0, 1)", "λ = (0.5, 0.5)", "λ = (1, 0)"]
    assert members[0].coordinates == {"lambda.a": 0.0, "lambda.b": 1.0}
    assert store.runs_with(RecordKind.FRONT) == {run_id}
    records = store.records(run_id)
    assert [r["kind"] for r in records][-4:] == [
        RecordKind.FRONT,
        RecordKind.FRONT,
        RecordKind.FRONT,
        "final",
    ]
    assert store.progress(run_id) == (len(records), records[-1]["iteration"])
    assert json.loads(export_run(store, run_id, "json"))["front"] == made
    assert run_document(store, run_id)["front"] == made


def test_a_run_without_a_front_reads_back_an_empty_one(store, csv_spec):
    (run_id,) = submit(
        [make_spec(csv_spec, solver="unconstrained", iterations=5)], store, start_runner=False
    )
    execute_run(str(store.home), run_id)
    assert run_front(store, run_id) == [] and store.runs_with(RecordKind.FRONT) == set()
    (result,) = run_results(store.run(run_id), store)
    assert result.front_of is None and not result.chosen


def test_a_stored_front_becomes_one_curve_with_the_reported_model(store, front_run):
    run_id, _ = front_run
    row = store.run(run_id)
    results = run_results(row, store)
    members = run_front(store, run_id)
    assert [r.front_of for r in results] == [run_id] * 4
    assert [r.label for r in results] == [
        *(m.label for m in members),
        f"{REPORTED} = λ = (0.5, 0.5)",
    ]
    assert [r.chosen for r in results] == [False, False, False, True]
    stored = store.metrics(run_id)  # beside the exact metrics: their held-out intervals
    assert results[1].metrics == members[1].metrics
    assert all(
        stored[split] | values == stored[split] for split, values in members[1].metrics.items()
    )
    result = run_front_frontier(store, row)
    assert list(result.fronts) == [run_id] and result.ordinary == ()
    assert [p.label for p in result.fronts[run_id]] == [r.label for r in results]
    reported = result.fronts[run_id][-1]
    assert reported.chosen and (reported.fairness, reported.score) == (
        result.fronts[run_id][1].fairness,
        result.fronts[run_id][1].score,
    )


def test_a_sweep_with_a_front_run_keeps_its_other_points(store, csv_spec, monkeypatch):
    register(monkeypatch)
    specs = [make_spec(csv_spec, solver=NAME), make_spec(csv_spec, iterations=20)]
    ids = submit(specs, store, start_runner=False)
    store.add_sweep("mixed", "mixed", {"solver": [NAME, "idca"]}, ids)
    for run_id in ids:
        execute_run(str(store.home), run_id)
    results = sweep_results(store, "mixed")
    result = frontier(results, metric="constraint")
    (ordinary,) = result.ordinary
    assert ordinary.solver == "idca" and ordinary.run_ids == (specs[1].run_id,)
    assert len(result.fronts[specs[0].run_id]) == 4
    text = format_frontier(result)
    assert f"front of run {specs[0].run_id} ({NAME}): 3 models" in text
    assert all(label in text for label in ("λ = (0, 1)", "λ = (0.5, 0.5)", "λ = (1, 0)"))


# ---- the frontier of runs with fronts (pure) ------------------------------------------------------


def front(run_id: str, rng: np.random.Generator, size: int, kappa=None, seed: int = 0):
    """A run's front of `size` random models and its reported model (one of them)."""
    results = [
        RunResult(
            run_id,
            "badr_front",
            kappa,
            INTERVAL,
            seed,
            {
                "test": {
                    "accuracy": float(rng.uniform(0.6, 0.9)),
                    "psp": float(rng.choice([0.1, 0.2, rng.uniform(0, 0.5)])),
                    "constraint": float(rng.uniform(0, 0.3)),
                }
            },
            front_of=run_id,
            label=f"λ = ({t:g}, {1 - t:g})",
            coordinates={"lambda.a": float(t), "lambda.b": float(1 - t)},
        )
        for t in np.linspace(0, 1, size)
    ]
    reported = replace(results[size // 2], label=REPORTED, coordinates={}, chosen=True)
    return [*results, reported]


def brute_force_dominated(points) -> list[bool]:
    return [
        any(
            q.fairness >= p.fairness
            and q.score >= p.score
            and (q.fairness, q.score) != (p.fairness, p.score)
            for q in points
        )
        for p in points
    ]


def ordinary_runs(rng: np.random.Generator) -> list[RunResult]:
    return [
        RunResult(
            f"idca-{k}-{s}",
            "idca",
            k,
            INTERVAL,
            s,
            {"test": {"accuracy": float(rng.uniform(0.6, 0.9)), "psp": float(rng.uniform(0, 0.5))}},
        )
        for k in (0.05, 0.1, 0.2)
        for s in range(3)
    ]


@pytest.mark.parametrize("seed", range(8))
def test_each_front_is_one_curve_marked_dominated_within_itself(seed):
    rng = np.random.default_rng(seed)
    ordinary = ordinary_runs(rng)
    fronts = {
        f"run{i}": front(f"run{i}", rng, int(rng.integers(2, 12)), seed=i % 2) for i in range(3)
    }
    mixed = [*ordinary[:4], *fronts["run0"], *ordinary[4:], *fronts["run1"], *fronts["run2"]]
    result = frontier(mixed)
    assert result.ordinary == tuple(frontier_points(ordinary))  # as if there were no fronts
    assert list(result.fronts) == list(fronts)
    for run_id, points in result.fronts.items():
        given = fronts[run_id]
        assert [p.label for p in points] == [r.label for r in given]  # the run's own order
        assert all(p.n == 1 and p.run_ids == (run_id,) and p.score_spread is None for p in points)
        assert [p.score for p in points] == [r.metrics["test"]["accuracy"] for r in given]
        assert [p.fairness for p in points] == [1 - r.metrics["test"]["psp"] for r in given]
        assert [p.dominated for p in points] == brute_force_dominated(points)
        assert [p.chosen for p in points] == [r.chosen for r in given]
        assert not any(p.unconstrained for p in points)
        assert dict(points[0].coordinates) == given[0].coordinates


def test_the_same_model_of_two_seeds_fronts_is_not_averaged():
    rng = np.random.default_rng(0)
    result = frontier([*front("a", rng, 3, seed=0), *front("b", rng, 3, seed=1)])
    assert result.ordinary == () and [len(p) for p in result.fronts.values()] == [4, 4]


def test_a_front_model_meets_kappa_by_its_own_constrained_value():
    rng = np.random.default_rng(1)
    results = front("a", rng, 4, kappa=0.15)
    points = frontier(results).fronts["a"]
    for point, given in zip(points, results, strict=True):
        assert point.meets_kappa == (given.metrics["test"]["constraint"] <= 0.15)


def test_a_front_model_without_the_metric_skips_its_run_once():
    rng = np.random.default_rng(2)
    results = front("a", rng, 3)
    results[0] = replace(results[0], metrics={"test": {"accuracy": 0.8}})
    results[1] = replace(results[1], metrics={"test": {"accuracy": 0.8}})
    result = frontier(results)
    assert result.skipped == ("a",) and len(result.fronts["a"]) == 2


def test_a_model_of_a_front_must_come_as_its_run():
    rng = np.random.default_rng(3)
    (stray, *_) = front("a", rng, 2)
    with pytest.raises(ValueError, match="front"):
        frontier([replace(stray, run_id="b")])


def test_the_text_lists_each_front_with_its_marks():
    rng = np.random.default_rng(4)
    result = frontier([*ordinary_runs(rng), *front("r1", rng, 5)])
    text = format_frontier(result)
    block = text[text.index("front of run r1") :].splitlines()
    assert block[0] == "front of run r1 (badr_front): 5 models, on the test split"
    assert block[1].split() == ["model", "coordinates", "accuracy", "fairness", "psp"]
    rows = block[2:-1]
    for row, point in zip(rows, result.fronts["r1"], strict=True):
        assert point.label in row and f"{point.score:.4f}" in row
        assert row.startswith("◆") == point.chosen
        assert ("·" in row.split(point.label)[0]) == point.dominated
        assert f"{1 - point.fairness:.4f}" in row  # the metric's own value
    assert "◆ the model the run reports" in block[-1]


def test_members_read_from_records_and_from_solutions_agree():
    record = {
        "kind": RecordKind.FRONT,
        "state": {"label": "λ = (1, 0)"},
        "values": {"test.accuracy": 0.8, "val.psp": None, "coord.lambda.a.b": 1.0},
    }
    member = FrontMember.from_record(record)
    assert member == FrontMember(
        "λ = (1, 0)", {"lambda.a.b": 1.0}, {"test": {"accuracy": 0.8}, "val": {"psp": None}}
    )
    assert FrontMember.from_dict(member.to_dict()) == member


def test_a_reported_model_off_the_front_is_a_point_of_its_own(store, csv_spec, monkeypatch):
    register(monkeypatch)
    (run_id,) = submit(
        [make_spec(csv_spec, solver=NAME, config={"reported": -1})], store, start_runner=False
    )
    execute_run(str(store.home), run_id)
    results = run_results(store.run(run_id), store)
    assert [(r.label, r.chosen) for r in results][-1] == (REPORTED, True)
    assert all(r.metrics != results[-1].metrics for r in results[:-1])


def test_the_reported_model_is_found_among_the_front_whatever_its_missing_values():
    member = FrontMember("λ = (1, 0)", {}, {"test": {"accuracy": 0.8, "auc": float("nan")}})
    other = FrontMember("λ = (0, 1)", {}, {"test": {"accuracy": 0.7, "auc": None}})
    assert reported_member([other, member], {"test": {"accuracy": 0.8, "auc": None}}) is member
    assert reported_member([other, member], {"test": {"accuracy": 0.9, "auc": None}}) is None
