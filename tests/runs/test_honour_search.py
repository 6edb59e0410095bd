"""A run's κ′ search read back as rows (`engine.runs.honour_search`), from a Solution made here
and from the store, and the frontier of a sweep that honours κ: its points are the chosen
models."""

from __future__ import annotations

import dataclasses

import pytest
from run_fixtures import make_spec

from engine.errors import UserError
from engine.fairness.noise import value_noise
from engine.runs import sweep_specs
from engine.runs.frontier import frontier
from engine.runs.frontier_text import format_frontier, honour_words
from engine.runs.honour_search import honour_search, search_table
from engine.runs.results import run_results
from engine.runs.submit import submit
from engine.runs.worker import build_problem, execute_run
from engine.solvers import solve
from engine.solvers.honour import solve_honouring
from engine.solvers.records import RecordKind

KAPPA = 0.2  # on the toy data, IDCA's exact train pSP at κ exceeds it: the search tightens κ′
# κ of a sweep: at 0.15 the last solve of the search misses κ, so the chosen model is not the last
SWEPT = [0.3, 0.15]


def _chosen_record(records: list[dict]) -> dict:
    (chosen,) = [
        r for r in records if r["kind"] == RecordKind.HONOUR and r["state"]["chosen"] == "yes"
    ]
    return chosen


def test_a_solutions_search_is_one_row_per_solve_with_the_chosen_one_marked(csv_spec):
    problem = build_problem(make_spec(csv_spec, kappa=KAPPA))
    solution = solve_honouring(problem, "idca", "train")
    search = honour_search(solution.trajectory)
    records = [r for r in solution.trajectory if r.kind == RecordKind.HONOUR]
    assert search is not None and len(search.rows) == len(records) > 1
    assert (search.split, search.split_words, search.kappa) == ("train", "train", KAPPA)
    assert [row.solve for row in search.rows] == list(range(1, len(records) + 1))
    assert [row.kappa_prime for row in search.rows] == [r.values["kappa_prime"] for r in records]
    assert sum(row.iterations for row in search.rows) == solution.iterations
    for row in search.rows:
        assert row.meets_kappa == (row.value <= KAPPA)
    chosen = search.chosen
    assert sum(row.chosen for row in search.rows) == 1
    assert chosen.value == pytest.approx(solution.metrics["train"]["constraint"])
    assert chosen.accuracy == pytest.approx(solution.metrics["train"]["accuracy"])
    assert search.sentence and solution.reason.endswith(search.sentence)
    train = problem.data.train
    sigma = value_noise(problem.constraint, train.groups, train.y)
    assert search.sigma == pytest.approx(sigma) and search.split_rows == len(train)
    if chosen.kappa_prime != KAPPA:
        assert f"κ′ = {chosen.kappa_prime:.4g}" in search.sentence
    table = search_table(search)
    assert [row["chosen"] for row in table] == [row.chosen for row in search.rows]
    assert [row["train_value"] for row in table] == [row.value for row in search.rows]
    assert set(table[0]) == {
        "solve",
        "kappa_prime",
        "levels",
        "temperature",
        "refined",
        "train_value",
        "accuracy",
        "iterations",
        "meets_kappa",
        "chosen",
    }
    validation = honour_search(solve_honouring(problem, "idca", "val").trajectory)
    assert "value" in search_table(validation)[0]  # on validation: its value beside train's
    assert honour_search(solve(problem, "idca", budget=None).trajectory) is None


def test_a_stored_runs_search_is_read_from_its_records(store, csv_spec):
    spec = dataclasses.replace(make_spec(csv_spec, kappa=KAPPA), honour="train")
    (run_id,) = submit([spec], store, start_runner=False)
    execute_run(str(store.home), run_id)
    search = honour_search(store.records(run_id))
    assert search is not None and search.split == "train" and search.chosen is not None
    assert search.chosen.value == pytest.approx(store.metrics(run_id)["train"]["constraint"])
    assert search.sentence in store.run(run_id).reason
    assert honour_search(store.records(run_id, kind=RecordKind.HONOUR)) == search
    plain = make_spec(csv_spec, kappa=KAPPA, iterations=50)
    (plain_id,) = submit([plain], store, start_runner=False)
    execute_run(str(store.home), plain_id)
    assert honour_search(store.records(plain_id)) is None


def test_a_honoured_sweeps_frontier_points_are_its_chosen_models(store, csv_spec):
    base = dataclasses.replace(make_spec(csv_spec), honour="train")
    specs = sweep_specs(base, SWEPT, [base.interval], ["idca", "unconstrained"], [0])
    reference = next(s for s in specs if s.solver == "unconstrained")
    assert reference.honour is None and "honour" not in reference.to_dict()  # no κ to honour
    plain = make_spec(csv_spec, kappa=SWEPT[1])  # the same point solved at κ alone
    ids = submit([*specs, plain], store, start_runner=False)
    for run_id in ids:
        execute_run(str(store.home), run_id)
    results = [x for run_id in ids for x in run_results(store.run(run_id), store)]
    result = frontier(results, metric="constraint", split="train")
    honoured = [p for p in result.points if p.honour == "train"]
    assert sorted(p.kappa for p in honoured) == sorted(SWEPT)
    for point in honoured:
        (run_id,) = point.run_ids
        chosen = _chosen_record(store.records(run_id))
        assert point.constraint == pytest.approx(chosen["values"]["value"])
        assert point.score == pytest.approx(chosen["values"]["accuracy"])
    (alone,) = [p for p in result.points if p.honour is None and p.kappa == SWEPT[1]]
    assert alone.run_ids == (plain.run_id,)  # never averaged with the honoured point
    assert honour_words("train") in format_frontier(result)
    assert "κ honoured" not in format_frontier(frontier(results[-1:], metric="constraint"))


def test_a_sweep_drops_the_honoured_split_where_no_kappa_is_and_refuses_it_where_none_is(
    csv_spec,
):
    base = dataclasses.replace(make_spec(csv_spec), honour="val")
    specs = sweep_specs(base, [0.1], [base.interval], ["idca", "unconstrained"], [0])
    assert {s.solver: s.honour for s in specs} == {"idca": "val", "unconstrained": None}
    with pytest.raises(UserError, match="unconstrained runs without a constraint"):
        sweep_specs(base, [0.1], [base.interval], ["unconstrained"], [0])
