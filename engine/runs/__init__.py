"""Runs: specs with content-hash ids, a persistent SQLite store, background execution on a
bounded process pool (or a Dask cluster), sweeps and frontiers."""

from engine.runs.spec import RunSpec, with_seed
from engine.runs.store import FINAL, STATUSES, Store, default_home
from engine.runs.submit import submit, submit_sweep, sweep_specs, wait

__all__ = [
    "FINAL",
    "STATUSES",
    "RunSpec",
    "Store",
    "default_home",
    "submit",
    "submit_sweep",
    "sweep_specs",
    "wait",
    "with_seed",
]
