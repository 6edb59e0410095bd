"""Submitting runs and sweeps from Python (the CLI and the app call these)."""

from __future__ import annotations

import hashlib
import json
import time

from engine.runs.continuation import chains_of, continuation_specs, queue_order
from engine.runs.grid import grid_specs
from engine.runs.runner import IDLE_EXIT_SECONDS, ensure_runner
from engine.runs.spec import RunSpec
from engine.runs.store import Store
from engine.status import FINAL, RunStatus


def submit(
    specs: list[RunSpec],
    store: Store,
    force: bool = False,
    workers: int = 2,
    start_runner: bool = True,
    idle_exit: float = IDLE_EXIT_SECONDS,
) -> list[str]:
    """Validate every spec (a bad one is refused before anything is queued), queue the runs that
    have no result yet, and make sure a runner is working on them. Returns the run ids."""
    for spec in specs:
        spec.validate()
    ids = []
    for spec in specs:
        store.enqueue(spec.run_id, spec.to_dict(), force=force)
        ids.append(spec.run_id)
    if start_runner:
        ensure_runner(store.home, workers, idle_exit)
    return ids


def sweep_specs(
    base: RunSpec,
    kappas: list[float],
    intervals: list[tuple[float, float]],
    solvers: list[str],
    seeds: list[int],
    configs: dict[str, dict] | None = None,
    chains: int = 0,
) -> list[RunSpec]:
    """The grid solver × I × seed × κ (`engine.runs.grid.grid_specs`, which says how reference
    solvers ignore κ); `configs` holds each solver's options (default: the base spec's for its
    own solver). With `chains` ≥ 1, a continuation sweep in that many chains
    (`engine.runs.continuation`); cold points otherwise."""
    grid = {
        "solver": list(solvers),
        "interval": [tuple(i) for i in intervals],
        "seed": list(seeds),
        "kappa": list(kappas),
    }
    return continuation_specs(grid_specs(base, grid, configs), chains)


def submit_sweep(
    name: str,
    specs: list[RunSpec],
    grid: dict,
    store: Store,
    workers: int = 2,
    scheduler: str | None = None,
    force: bool = False,
    idle_exit: float = IDLE_EXIT_SECONDS,
) -> str:
    """Queue a sweep (or run it on a Dask cluster when `scheduler` is an address), its runs in
    `queue_order`; its id. `grid` is stored with it as it is, so it must be JSON-able (a `Grid`
    is). A runner this starts stops after `idle_exit` seconds without work."""
    ids = submit(
        queue_order(specs),
        store,
        force=force,
        workers=workers,
        start_runner=scheduler is None,
        idle_exit=idle_exit,
    )
    sweep_id = hashlib.sha256(json.dumps(sorted(ids)).encode()).hexdigest()[:12]
    store.add_sweep(sweep_id, name, grid, ids)
    if scheduler is not None:
        run_on_dask(store, ids, scheduler)
    return sweep_id


def run_on_dask(store: Store, run_ids: list[str], scheduler: str) -> None:
    """Execute queued runs on a Dask cluster through joblib's dask backend; the workers write
    into the same store, so the store's folder must be reachable from them. A continuation
    sweep's chain is one task, its runs in order (each starts from the one before)."""
    from dask.distributed import Client
    from joblib import Parallel, delayed, parallel_config

    queued = {r.id: r.spec for r in store.runs(status=RunStatus.QUEUED)}
    todo = [queued[r] for r in run_ids if r in queued]
    chains = [[spec.run_id for spec in chain] for chain in chains_of(todo)]
    with Client(scheduler), parallel_config(backend="dask"):
        Parallel()(delayed(execute_chain)(str(store.home), chain) for chain in chains)


def execute_chain(home: str, run_ids: list[str]) -> list[str]:
    """Run queued runs one after the other in this process; their final statuses. A Dask
    worker runs as many chains at once as it has threads, so each solves on one."""
    from engine.runs.worker import execute_run  # the solvers, in this process only for Dask
    from engine.threads import use_threads

    use_threads(1)
    return [execute_run(home, run_id) for run_id in run_ids]


def wait(store: Store, run_ids: list[str], timeout: float | None = None, poll: float = 0.2) -> dict:
    """Block until every run has a final status (or the timeout passes); their statuses."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        statuses = {r: store.run(r).status for r in run_ids}
        if all(s in FINAL for s in statuses.values()):
            return statuses
        if deadline is not None and time.monotonic() > deadline:
            return statuses
        time.sleep(poll)
