"""Background execution for real: detached runner, worker processes, faults."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_fixtures import lasting_spec, make_spec, wait_for
from soak import soak

from engine.runs import submit_sweep, sweep_specs, wait
from engine.runs.runner import WORKER_NICENESS, Runner, runner_pid
from engine.runs.submit import submit
from engine.status import WITH_MODEL

pytestmark = pytest.mark.slow  # tests of several seconds each, started first (conftest.py)

PROJECT = Path(__file__).resolve().parents[2]


def test_killed_worker_fails_only_its_own_run(store, csv_spec):
    specs = [lasting_spec(csv_spec, seconds=4.0, seed=s) for s in range(3)]
    ids = submit(specs, store)
    running = wait_for(lambda: [r for r in store.runs(status="running") if r.pid], timeout=90)
    victim = running[0]
    os.kill(victim.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    wait_for(lambda: store.run(victim.id).status == "failed", timeout=10)
    assert time.monotonic() - killed_at < 5
    assert "worker process died" in store.run(victim.id).reason
    statuses = wait(store, ids, timeout=120)
    assert sorted(statuses.values()) == ["budget", "budget", "failed"]
    others = [i for i in ids if i != victim.id]
    assert all(store.metrics(i)["test"]["accuracy"] is not None for i in others)


def test_runs_outlive_the_process_that_submitted_them(store, csv_spec):
    spec = make_spec(csv_spec, iterations=400)
    script = (
        "import sys, pickle; from engine.runs import Store; from engine.runs.submit import submit; "
        "spec = pickle.loads(sys.stdin.buffer.read()); "
        f"print(submit([spec], Store({str(store.home)!r}))[0], flush=True); "
        "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    )
    import pickle

    result = subprocess.run(
        [sys.executable, "-c", script],
        input=pickle.dumps(spec),
        capture_output=True,
        cwd=PROJECT,
        timeout=120,
    )
    assert result.returncode == -signal.SIGKILL
    run_id = result.stdout.decode().strip()
    assert wait(store, [run_id], timeout=120)[run_id] in WITH_MODEL


def test_runs_of_a_dead_runner_are_marked_interrupted_on_restart(store, csv_spec):
    finished = make_spec(csv_spec, iterations=30, seed=5)
    (done_id,) = submit([finished], store)
    wait(store, [done_id], timeout=120)
    long_ids = submit([lasting_spec(csv_spec, seconds=60.0, seed=s) for s in range(2)], store)
    wait_for(lambda: len(store.runs(status="running")) == 2, timeout=90)
    os.killpg(runner_pid(store.home), signal.SIGKILL)  # the runner and its workers
    wait_for(lambda: runner_pid(store.home) is None, timeout=10)
    assert Runner(store.home, idle_exit=0.0).serve()
    assert {store.run(i).status for i in long_ids} == {"interrupted"}
    assert store.run(done_id).has_model and store.metrics(done_id)["test"]


def test_cancelling_a_running_run_of_a_lower_priority_worker(store, csv_spec):
    (run_id,) = submit([lasting_spec(csv_spec, seconds=60.0)], store)
    wait_for(lambda: store.records(run_id), timeout=90)  # it is solving
    worker_niceness = os.getpriority(os.PRIO_PROCESS, store.run(run_id).pid)
    assert worker_niceness == min(19, os.getpriority(os.PRIO_PROCESS, 0) + WORKER_NICENESS)
    assert store.request_cancel(run_id) == "running"
    wait_for(lambda: store.run(run_id).status == "cancelled", timeout=10)
    steps = [r for r in store.records(run_id) if r["kind"] == "surrogate"]
    assert steps and steps[-1]["iteration"] > 0  # what it did is kept


def test_fifty_runs_on_two_workers_with_a_reader_polling(store, csv_spec):
    specs = [make_spec(csv_spec, solver="unconstrained", iterations=3, seed=s) for s in range(50)]
    result = soak(store, specs, timeout=300)
    assert result.errors == [] and result.reads > 0
    assert list(result.statuses.values()) == ["budget"] * 50  # each ends at its 3-iteration budget
    assert store.counts() == {"budget": 50}


def test_a_sweep_on_a_local_dask_cluster(store, csv_spec):
    from dask.distributed import LocalCluster

    specs = sweep_specs(
        make_spec(csv_spec, iterations=60),
        [0.2, 0.1],
        [(0.1, 0.5)],
        ["idca", "unconstrained"],
        [0, 1],
    )
    assert len(specs) == 6
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        sweep_id = submit_sweep("dask", specs, {}, store, scheduler=cluster.scheduler_address)
    rows = store.runs(sweep_id=sweep_id)
    assert len(rows) == 6 and all(r.has_model for r in rows)
    assert runner_pid(store.home) is None  # nothing ran locally
    assert len({r.pid for r in rows}) >= 1


def test_a_fresh_worker_warms_up_the_default_solvers_and_another_before_its_run():
    """What a run uses is imported at the start and the default solvers are warm; a solver few
    runs use is loaded only when a run of it is about to start, and warmed once."""
    code = (
        "import os, sys; from engine.runs import warm_up as w; "
        "assert w.warm_up() == os.getpid(); "
        "print(all(m in sys.modules for m in "
        "('engine.runs.worker', 'engine.data.sources', 'engine.solvers.paper003.idca', "
        "'engine.solvers.reference.unconstrained')), "
        "'engine.solvers.paper001.plada' in sys.modules); "
        "w.warm_solver('plada'); print('engine.solvers.paper001.plada' in sys.modules, "
        "sorted(w._warmed))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-2] == "True False"
    assert lines[-1] == "True ['idca', 'plada', 'unconstrained']"
