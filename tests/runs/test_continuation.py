"""Continuation sweeps: which points start from which, the queue's order, and runs that start
from their neighbour's model in the background and on a Dask cluster."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from run_fixtures import INTERVAL, make_spec

from engine.data.acs import SyntheticACSSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.runs import RunSpec, submit_sweep, sweep_specs, wait, with_seed
from engine.runs.continuation import chains_of, continuation_specs, queue_order
from engine.runs.runner import runner_pid, stop_runners
from engine.runs.store import Store
from engine.runs.submit import submit
from engine.runs.worker import build_problem, execute_run, warm_start
from engine.solvers import Budget
from engine.solvers.driver import solve
from engine.solvers.honour import solve_run
from engine.status import StopCode, StopReason

KAPPAS = [0.05, 0.3, 0.1, 0.2, 0.02]  # in no order: a chain runs them from tight to loose


def test_points_start_from_their_tighter_neighbour_in_as_many_chains_as_asked(csv_spec):
    base = make_spec(csv_spec)
    specs = sweep_specs(base, KAPPAS, [(0.1, 0.5)], ["idca", "unconstrained"], [0], chains=2)
    idca = [s for s in specs if s.solver == "idca"]
    reference = [s for s in specs if s.solver == "unconstrained"]
    assert reference[0].warm_start is None
    chains = chains_of(idca)
    kappas = sorted([s.constraint.kappa for s in chain] for chain in chains)
    assert kappas == [[0.02, 0.1, 0.3], [0.05, 0.2]]
    for chain in chains:
        assert chain[0].warm_start is None
        assert [s.constraint.kappa for s in chain] == sorted(s.constraint.kappa for s in chain)
        for before, after in itertools.pairwise(chain):
            assert after.warm_start == before.run_id


def test_chains_never_cross_intervals_or_seeds_and_cold_sweeps_keep_their_ids(csv_spec):
    base = make_spec(csv_spec)
    intervals = [(0.1, 0.5), (0.0, 0.3)]
    warm = sweep_specs(base, [0.2, 0.05, 0.1], intervals, ["idca"], [0, 1], chains=2)
    chains = chains_of(warm)
    assert len(chains) == 8  # two chains for each of the 2 intervals × 2 seeds
    for chain in chains:
        assert len({(s.interval, s.constraint.interval, s.seed) for s in chain}) == 1
        kappas = [s.constraint.kappa for s in chain]
        assert kappas == sorted(kappas)  # tight to loose
    lines = {(c[0].interval, c[0].seed): [] for c in chains}
    for chain in chains:
        lines[(chain[0].interval, chain[0].seed)].append([s.constraint.kappa for s in chain])
    assert all(sorted(line) == [[0.05, 0.2], [0.1]] for line in lines.values())
    cold = sweep_specs(base, [0.2, 0.1], intervals, ["idca"], [0, 1])
    assert all(s.warm_start is None for s in cold)
    assert continuation_specs(cold, 0) == cold
    assert "warm_start" not in cold[0].to_dict()  # a cold run's id is what it always was


def test_a_sweep_queues_its_reference_first_then_its_chains_tightest_first(
    store, csv_spec, monkeypatch
):
    monkeypatch.setattr("engine.runs.submit.ensure_runner", lambda *args: None)  # queue only
    specs = sweep_specs(
        make_spec(csv_spec), KAPPAS, [(0.1, 0.5)], ["idca", "unconstrained"], [0], chains=2
    )
    ordered = queue_order(specs)
    assert sorted(s.run_id for s in ordered) == sorted(s.run_id for s in specs)
    assert [s.solver for s in ordered] == ["unconstrained"] + ["idca"] * len(KAPPAS)
    assert [s.constraint.kappa for s in ordered[1:]] == [0.02, 0.1, 0.3, 0.05, 0.2]
    even = sweep_specs(
        make_spec(csv_spec), [0.3, 0.2, 0.1, 0.05], [(0.1, 0.5)], ["idca"], [0], chains=2
    )
    assert [s.constraint.kappa for s in queue_order(even)] == [0.05, 0.2, 0.1, 0.3]
    submit_sweep("ordered", specs, {}, store, workers=2)
    assert [r.id for r in store.runs()] == [s.run_id for s in ordered]
    assert store.queued(5) == [ordered[0].run_id, ordered[1].run_id, ordered[4].run_id]


def test_a_reference_at_a_second_interval_is_queued_after_every_trained_run(csv_spec):
    """Its twin at the first I has then finished, so it takes that model instead of training
    it a second time on the other worker (`engine.runs.reference_reuse`)."""
    intervals = [(0.1, 0.5), (0.0, 0.3), (0.2, 0.6)]
    specs = sweep_specs(
        make_spec(csv_spec), [0.1, 0.2], intervals, ["idca", "unconstrained"], [0, 1]
    )
    ordered = queue_order(specs)
    assert sorted(s.run_id for s in ordered) == sorted(s.run_id for s in specs)
    references = [i for i, s in enumerate(ordered) if s.solver == "unconstrained"]
    assert len(references) == 6 and references[:2] == [0, 1]  # one per seed, trained first
    assert references[2:] == list(range(len(ordered) - 4, len(ordered)))  # the rest last
    assert {ordered[i].seed for i in references[:2]} == {0, 1}


def test_a_warm_start_survives_the_store_and_is_refused_for_solvers_without_one(csv_spec):
    spec = dataclasses.replace(make_spec(csv_spec), warm_start="0123456789abcdef")
    again = RunSpec.from_dict(spec.to_dict())
    assert again.warm_start == spec.warm_start and again.run_id == spec.run_id
    assert again.run_id != make_spec(csv_spec).run_id
    refused = dataclasses.replace(make_spec(csv_spec, solver="unconstrained"), warm_start="x")
    with pytest.raises(UserError, match="takes no warm start"):
        refused.validate()


def test_a_run_waits_in_the_queue_while_the_run_it_starts_from_has_not_ended(store, csv_spec):
    first = make_spec(csv_spec, kappa=0.3)
    second = dataclasses.replace(make_spec(csv_spec, kappa=0.1), warm_start=first.run_id)
    other = make_spec(csv_spec, kappa=0.2)
    submit([second, first, other], store, start_runner=False)
    assert store.queued(5) == [first.run_id, other.run_id]
    store.claim(first.run_id, 1)
    assert store.queued(5) == [other.run_id]
    store.finish(first.run_id, StopReason(StopCode.ITERATION_BUDGET, "done"))
    assert store.queued(5) == [second.run_id, other.run_id]


@pytest.mark.slow
def test_a_continuation_sweep_runs_each_point_after_and_from_its_neighbour(store, csv_spec):
    """Each point holds κ on the training data, so the model it hands on meets the next κ."""
    base = dataclasses.replace(make_spec(csv_spec, iterations=2000), honour="train")
    specs = sweep_specs(base, [0.3, 0.2, 0.1], [(0.1, 0.5)], ["idca"], [0], chains=1)
    submit_sweep("warm", specs, {}, store, workers=2)
    statuses = wait(store, [s.run_id for s in specs], timeout=120)
    assert all(store.run(r).has_model for r in statuses)
    followers = [spec for spec in specs if spec.warm_start is not None]
    assert [s.constraint.kappa for s in followers] == [0.3, 0.2]  # 0.1 → 0.2 → 0.3
    for spec in followers:
        row, source = store.run(spec.run_id), store.run(spec.warm_start)
        assert row.started >= source.finished
        train = store.metrics(source.id)["train"]["constraint"]
        assert train <= spec.constraint.kappa
        assert (
            f"started from the model of run {source.id} (κ = {source.spec.kappa:g}"
            f", I = [0.1, 0.5)), whose exact training pSP {train:.4g} ≤ κ = "
            f"{spec.constraint.kappa:g}" in row.reason
        )


@pytest.mark.slow
def test_a_point_whose_neighbour_left_no_model_starts_cold_and_says_so(store, csv_spec):
    first = make_spec(csv_spec, kappa=0.3)
    second = dataclasses.replace(
        make_spec(csv_spec, kappa=0.1, iterations=50), warm_start=first.run_id
    )
    submit([first], store, start_runner=False)
    store.request_cancel(first.run_id)
    submit([second], store)
    wait(store, [second.run_id], timeout=60)
    row = store.run(second.run_id)
    assert row.has_model
    assert f"started cold: run {first.run_id}, its warm start, ended cancelled" in row.reason


@pytest.mark.slow
def test_a_continuation_sweep_on_a_local_dask_cluster_runs_its_chains_in_order(tmp_path):
    """Two Dask worker processes, synthetic census files of three states pooled, the store on a
    folder of its own that the workers share: each chain runs in order on one worker."""
    from dask.distributed import LocalCluster

    data = SyntheticACSSpec(state="CT,RI,VT", n_persons=6000)
    base = RunSpec(
        data=data,
        prepare=PrepareOptions(grouping=(GroupingSpec("SEX"),)),
        model=ModelSpec(cross_terms=True),
        constraint=ConstraintSpec("pSP", 0.1, INTERVAL),
        interval=INTERVAL,
        solver="idca",
        budget=Budget(max_iterations=2000),
    )
    specs = sweep_specs(
        base, [0.3, 0.2, 0.1, 0.05], [INTERVAL], ["idca", "unconstrained"], [0], chains=2
    )
    shared = Store(tmp_path / "shared-folder" / "runs")
    try:
        with LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            sweep_id = submit_sweep("dask", specs, {}, shared, scheduler=cluster.scheduler_address)
    finally:
        stop_runners(shared.home)
    rows = {r.id: r for r in shared.runs(sweep_id=sweep_id)}
    assert len(rows) == 5 and all(r.has_model for r in rows.values())
    assert runner_pid(shared.home) is None  # nothing ran locally
    assert "(synthetic)" in load_prepared(data, base.prepare).dataset_name
    for spec in specs:
        if spec.warm_start is not None:
            assert rows[spec.run_id].started >= rows[spec.warm_start].finished
            assert rows[spec.run_id].pid == rows[spec.warm_start].pid  # a chain is one task
            assert f"the model of run {spec.warm_start}" in rows[spec.run_id].reason


def _ended_with_model(store: Store, spec: RunSpec, train_value: float | None) -> None:
    """`spec` stored as a run that ended with a model (its problem's cold one) whose exact
    training value of the constrained quantity is `train_value`."""
    store.enqueue(spec.run_id, spec.to_dict())
    store.claim(spec.run_id, 1)
    store.save_artifacts(spec.run_id, build_problem(spec).init_params(), np.zeros(0), np.zeros(0))
    metrics = {} if train_value is None else {"train": {"constraint": train_value}}
    store.finish(spec.run_id, StopReason(StopCode.CONVERGED, "done"), metrics=metrics)


@pytest.mark.parametrize(
    ("source", "train_value", "why"),
    [
        ({"kappa": 0.2}, 0.05, "was held to a looser κ than this run's κ = 0.1"),
        ({"kappa": 0.05}, 0.15, "does not meet κ = 0.1: its exact training pSP is 0.15"),
        ({"kappa": 0.05}, None, "has no exact training pSP to tell whether it meets κ = 0.1"),
        ({"kappa": 0.05, "interval": (0.0, 0.3)}, 0.05, "was held on another interval"),
        ({"kappa": 0.05, "family": "pDP"}, 0.05, "was held to pDP, not pSP"),
        ({"kappa": 0.05, "seed": 1}, 0.05, "was trained on other data, another split"),
    ],
)
def test_a_start_that_is_no_feasible_tighter_model_is_refused_with_why(
    store, csv_spec, source, train_value, why
):
    point = make_spec(csv_spec, kappa=0.1)
    before = with_seed(make_spec(csv_spec, kappa=source["kappa"]), source.get("seed", 0))
    interval = source.get("interval", INTERVAL)
    held = ConstraintSpec(source.get("family", "pSP"), source["kappa"], interval)
    before = dataclasses.replace(before, constraint=held, interval=interval)
    _ended_with_model(store, before, train_value)
    start, words = warm_start(store, dataclasses.replace(point, warm_start=before.run_id))
    assert start is None
    assert words.startswith(f"started cold: the model of run {before.run_id} (κ = ")
    assert why in words


def test_a_feasible_tighter_model_is_the_start_and_its_words_say_why(store, csv_spec):
    before = make_spec(csv_spec, kappa=0.05)
    _ended_with_model(store, before, 0.04)
    point = dataclasses.replace(make_spec(csv_spec, kappa=0.1), warm_start=before.run_id)
    start, words = warm_start(store, point)
    assert start is not None and set(start) == {"w"}
    assert words == (
        f"started from the model of run {before.run_id} (κ = 0.05, I = [0.1, 0.5)), "
        "whose exact training pSP 0.04 ≤ κ = 0.1"
    )


def test_a_point_whose_start_misses_its_kappa_on_train_runs_cold_and_says_so(store, csv_spec):
    before = make_spec(csv_spec, kappa=0.05)
    _ended_with_model(store, before, 0.3)
    point = dataclasses.replace(
        make_spec(csv_spec, kappa=0.1, iterations=50), warm_start=before.run_id
    )
    submit([point], store, start_runner=False)
    assert execute_run(str(store.home), point.run_id) != "failed"
    row = store.run(point.run_id)
    assert row.has_model
    assert (
        f"started cold: the model of run {before.run_id} (κ = 0.05, I = [0.1, 0.5)), its warm "
        "start, does not meet κ = 0.1: its exact training pSP is 0.3"
    ) in row.reason


def test_a_run_that_holds_kappa_on_train_starts_its_first_solve_from_its_start(
    csv_spec, monkeypatch
):
    """Holding κ solves again and again; the first solve, too, must start where the run does."""
    spec = make_spec(csv_spec, kappa=0.1)
    start = {"w": np.full(build_problem(spec).init_params()["w"].shape, 0.01)}
    starts = []

    def recording(problem, *args):
        starts.append(problem.start)
        return solve(problem, *args)

    monkeypatch.setattr("engine.solvers.solve_sequence.solve", recording)
    solve_run(build_problem(spec, start), "idca", "train", budget=Budget(max_iterations=50))
    assert starts and starts[0] is start
