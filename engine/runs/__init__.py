"""Runs: specs with content-hash ids, a persistent SQLite store, background execution on a
bounded process pool (or a Dask cluster), sweeps and frontiers.

The names below are imported on first use, so that the background runner, which needs only the
store, starts without importing the solvers (torch). `submit` is not among them: importing the
module `engine.runs.submit` sets the package attribute of that name to the module, so the
function is imported from that module.
"""

from __future__ import annotations

from engine.lazy import lazy_exports

_HOMES = {
    "Grid": "engine.runs.grid",
    "grid_specs": "engine.runs.grid",
    "grid_points": "engine.runs.grid",
    "parse_grid": "engine.runs.grid",
    "RunSpec": "engine.runs.spec",
    "with_seed": "engine.runs.spec",
    "FINAL": "engine.status",
    "STATUSES": "engine.runs.store",
    "Store": "engine.runs.store",
    "default_home": "engine.runs.store",
    "continuation_specs": "engine.runs.continuation",
    "submit_sweep": "engine.runs.submit",
    "sweep_specs": "engine.runs.submit",
    "wait": "engine.runs.submit",
}

__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
