"""Continuation sweeps: which points start from which, the queue's order, and runs that start
from their neighbour's model in the background and on a Dask cluster."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from run_fixtures import INTERVAL, make_spec

from engine.data.acs import SyntheticACSSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import load_prepared
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.runs import RunSpec, submit_sweep, sweep_specs, wait
from engine.runs.continuation import chains_of, continuation_specs
from engine.runs.runner import runner_pid, stop_runners
from engine.runs.store import Store
from engine.runs.submit import submit
from engine.solvers import Budget
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


def test_intervals_and_seeds_are_lines_of_their_own_and_cold_sweeps_keep_their_ids(csv_spec):
    base = make_spec(csv_spec)
    intervals = [(0.1, 0.5), (0.0, 0.3)]
    warm = sweep_specs(base, [0.2, 0.1], intervals, ["idca"], [0, 1], chains=1)
    chains = chains_of(warm)
    assert len(chains) == 2  # one per seed: the κ and I of a seed's line run as one chain
    for chain in chains:
        assert len({s.seed for s in chain}) == 1
        assert [(s.interval, s.constraint.kappa) for s in chain] == [
            ((0.0, 0.3), 0.1), ((0.0, 0.3), 0.2), ((0.1, 0.5), 0.1), ((0.1, 0.5), 0.2)]  # fmt: skip
    cold = sweep_specs(base, [0.2, 0.1], intervals, ["idca"], [0, 1])
    assert all(s.warm_start is None for s in cold)
    assert continuation_specs(cold, 0) == cold
    assert "warm_start" not in cold[0].to_dict()  # a cold run's id is what it always was


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


def test_a_continuation_sweep_runs_each_point_after_and_from_its_neighbour(store, csv_spec):
    specs = sweep_specs(make_spec(csv_spec, iterations=150), [0.3, 0.2, 0.1], [(0.1, 0.5)],
                        ["idca"], [0], chains=1)  # fmt: skip
    submit_sweep("warm", specs, {}, store, workers=2)
    statuses = wait(store, [s.run_id for s in specs], timeout=120)
    assert all(store.run(r).has_model for r in statuses)
    followers = [spec for spec in specs if spec.warm_start is not None]
    assert [s.constraint.kappa for s in followers] == [0.3, 0.2]  # 0.1 → 0.2 → 0.3
    for spec in followers:
        row, source = store.run(spec.run_id), store.run(spec.warm_start)
        assert row.started >= source.finished
        assert (
            f"started from the model of run {source.id} (κ = {source.spec['constraint']['kappa']:g}"
            in row.reason
        )


def test_a_point_whose_neighbour_left_no_model_starts_cold_and_says_so(store, csv_spec):
    first = make_spec(csv_spec, kappa=0.3)
    second = dataclasses.replace(make_spec(csv_spec, kappa=0.1, iterations=50),
                                 warm_start=first.run_id)  # fmt: skip
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
    base = RunSpec(data=data, prepare=PrepareOptions(grouping=(GroupingSpec("SEX"),)),
                   model=ModelSpec(cross_terms=True),
                   constraint=ConstraintSpec("pSP", 0.1, INTERVAL), interval=INTERVAL,
                   solver="idca", budget=Budget(max_iterations=2000))  # fmt: skip
    specs = sweep_specs(base, [0.3, 0.2, 0.1, 0.05], [INTERVAL], ["idca", "unconstrained"], [0],
                        chains=2)  # fmt: skip
    shared = Store(tmp_path / "shared-folder" / "runs")
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster:  # fmt: skip
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
            assert "started from the model of run" in rows[spec.run_id].reason
