"""Saved iterates (paper 000 §3): every N iterations the iterate is evaluated on every split, off
the solver's clock, and the store keeps those records."""

import hashlib
import json

import numpy as np
import pytest
from solver_data import toy_prepared
from toy_tables import write_toy_csv
from wall_clock import Costs, charge

from engine.cli import build_parser
from engine.cli.run_commands import run_spec_from_args
from engine.data.csv_source import CSVSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.runs import RunSpec, Store
from engine.runs.submit import submit
from engine.runs.worker import execute_run
from engine.solvers import Budget, solve

MODEL = ModelSpec(kind="mlp", hidden=(4,))
CONSTRAINT = ConstraintSpec("group_loss_gap", 0.02)


@pytest.fixture(scope="module")
def problem() -> Problem:
    return Problem(toy_prepared(), MODEL, CONSTRAINT)


def iterates(solution) -> list:
    return [r for r in solution.trajectory if r.kind == "iterate"]


def test_a_run_saves_its_iterate_every_n_iterations(problem):
    """Driver calls of up to 25 iterations stop at each multiple of 50: the saves land on them."""
    seen = []
    budget = Budget(max_iterations=400, save_every=50)
    solution = solve(problem, "ssl_alm", budget=budget, log=seen.append)
    assert seen == solution.trajectory
    saved = iterates(solution)
    assert [r.iteration for r in saved] == list(range(50, 401, 50))
    seconds = [r.seconds for r in saved]
    assert seconds == sorted(seconds) and seconds[-1] <= solution.seconds
    rows = problem.bound.rows
    names = ("loss", "accuracy", "constraint", *(f"row.{r}" for r in rows))
    groups = problem.data.group_names
    names += tuple(f"group.{g}.{q}" for g in groups for q in ("loss", "positive_rate"))
    expected = {f"{split}.{name}" for split in ("train", "test") for name in names}
    assert set(saved[0].values) == expected
    # the group losses average, weighted by group size, to the loss
    sizes = np.bincount(problem.data.train.groups)
    group_losses = [saved[0].values[f"train.group.{g}.loss"] for g in groups]
    assert np.dot(sizes, group_losses) / sizes.sum() == pytest.approx(saved[0].values["train.loss"])
    assert saved[0].objective == saved[0].values["train.loss"]
    assert saved[0].max_violation == max(saved[0].values[f"train.row.{r}"] for r in rows)


@pytest.mark.parametrize("solver", ["sgd", "ssl_alm"])
def test_a_saved_iterate_is_the_iterate_of_that_iteration(problem, solver):
    """The same seed stopped by an iteration budget k reports the iterate saved at k."""
    solution = solve(problem, solver, budget=Budget(max_iterations=200, save_every=50))
    saved = {r.iteration: r.values for r in iterates(solution)}
    for k in (50, 200):
        params = solve(problem, solver, budget=Budget(max_iterations=k)).params
        report = problem.report(params)
        for split in ("train", "test"):
            assert saved[k][f"{split}.loss"] == pytest.approx(report[split]["loss"], rel=1e-12)
        test = problem.data.test
        h = problem.scores(params, "test")
        exact = problem.bound.with_ids(test.groups, test.y).exact_rows(h)
        found = [saved[k][f"test.row.{r}"] for r in problem.bound.rows]
        np.testing.assert_allclose(found, exact, rtol=1e-12)


def test_no_iterates_unless_asked(problem):
    solution = solve(problem, "sgd", budget=Budget(max_iterations=100))
    assert not iterates(solution)


def test_the_save_interval_is_checked():
    with pytest.raises(UserError, match="every 1 or more iterations"):
        Budget(save_every=0)


@pytest.fixture
def csv_spec(tmp_path) -> CSVSpec:
    return write_toy_csv(tmp_path, n=600)


def spec_of(data: CSVSpec, budget: Budget) -> RunSpec:
    prepare = PrepareOptions(grouping=(GroupingSpec("g"),))
    return RunSpec(
        data=data,
        prepare=prepare,
        model=MODEL,
        constraint=CONSTRAINT,
        interval=(0.0, 1.0),
        solver="sgd",
        budget=budget,
    )


def test_a_spec_keeps_its_run_id_unless_it_saves_iterates(csv_spec):
    plain = spec_of(csv_spec, Budget(max_iterations=100))
    document = plain.to_dict()
    assert document["budget"] == {"max_iterations": 100, "max_seconds": None}  # as before
    again = RunSpec.from_dict(document)
    assert again == plain and again.run_id == plain.run_id
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    assert plain.run_id == hashlib.sha256(canonical.encode()).hexdigest()[:16]
    saving = spec_of(csv_spec, Budget(max_iterations=100, save_every=10))
    assert RunSpec.from_dict(saving.to_dict()) == saving
    assert saving.run_id != plain.run_id


def test_the_store_returns_the_saved_iterates(tmp_path, csv_spec):
    store = Store(tmp_path / "home")
    spec = spec_of(csv_spec, Budget(max_iterations=120, save_every=40))
    (run_id,) = submit([spec], store, start_runner=False)
    assert execute_run(str(store.home), run_id) == "budget"
    saved = [r for r in store.records(run_id) if r["kind"] == "iterate"]
    assert [r["iteration"] for r in saved] == [40, 80, 120]
    assert {"train.loss", "test.loss"} <= set(saved[-1]["values"])
    assert any(k.startswith("test.row.loss[") for k in saved[-1]["values"])
    assert saved[-1]["objective"] == saved[-1]["values"]["train.loss"]


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_the_command_line_sets_the_save_interval(command):
    flags = ["--solver", "sgd", "--constraint", "none", "--seconds", "30"]
    args = build_parser().parse_args([command, *flags, "--save-every", "100"])
    assert run_spec_from_args(args).budget == Budget(max_seconds=30.0, save_every=100)
    args = build_parser().parse_args([command, *flags])
    assert run_spec_from_args(args).budget == Budget(max_seconds=30.0)


def test_a_run_saves_its_iterate_every_t_seconds_of_its_clock(problem, wall, monkeypatch):
    """Saves on the solver's clock land in every interval of `save_seconds` it ran through (a
    clock of the test's own, on which each step costs a millisecond)."""
    charge(monkeypatch, wall, Costs(step=0.001))
    budget = Budget(max_seconds=0.6, save_seconds=0.1)
    solution = solve(problem, "sgd", budget=budget)
    saved = iterates(solution)
    seconds = [r.seconds for r in saved]
    intervals = int(solution.seconds // 0.1)  # that the solver's clock ran through
    assert intervals - 1 <= len(saved) <= intervals and seconds == sorted(seconds)
    assert all(s >= 0.1 * (k + 1) for k, s in enumerate(seconds))
    assert len({int(s // 0.1) for s in seconds}) == len(seconds)  # one save per interval
