"""Runs: specs with content-hash ids, a persistent SQLite store, background execution on a
bounded process pool (or a Dask cluster), sweeps and frontiers.

The names below are imported on first use, so that the background runner, which needs only the
store, starts without importing the solvers (torch).
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "RunSpec": "engine.runs.spec",
    "with_seed": "engine.runs.spec",
    "FINAL": "engine.runs.store",
    "STATUSES": "engine.runs.store",
    "Store": "engine.runs.store",
    "default_home": "engine.runs.store",
    "submit": "engine.runs.submit",
    "submit_sweep": "engine.runs.submit",
    "sweep_specs": "engine.runs.submit",
    "wait": "engine.runs.submit",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'engine.runs' has no attribute '{name}'")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
