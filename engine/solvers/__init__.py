"""Solvers: one catalogue of cards, one interface (`solve(problem, solver, config, budget, log)`).

The names below are imported on first use: the catalogue and the options need no torch, so the
app and the command line can describe and check runs without loading any solver.
"""

from __future__ import annotations

from engine.lazy import lazy_exports

_HOMES = {
    "FrontPoint": "engine.solvers.base",
    "Solver": "engine.solvers.base",
    "StepInfo": "engine.solvers.base",
    "SolverCard": "engine.solvers.catalogue",
    "solver_card": "engine.solvers.catalogue",
    "solver_names": "engine.solvers.catalogue",
    "solve": "engine.solvers.driver",
    "solve_run": "engine.solvers.honour",
    "Budget": "engine.solvers.budget",
    "config_fields": "engine.options",
    "config_from_dict": "engine.options",
    "IterationRecord": "engine.solvers.records",
    "Solution": "engine.solvers.records",
}

__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
