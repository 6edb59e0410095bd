"""Solvers: one catalogue of cards, one interface (`solve(problem, solver, config, budget, log)`).

The modules here are what every solver shares: the driver and its budget, clocks and records,
the base classes (`base`, `minibatch`, `full_data`, `stepped_loop`), the KKT measure, holding
and honouring κ (`exact_train`, `honour`, `solve_sequence`), tuning, validation selection, steps
from smoothness, the switching step and the random outputs of switching methods (`switching`,
`tail_sample`), and the card (`card`) with the catalogue that collects every card
(`catalogue`). Each source of algorithms is a package of its own, its implementations beside
its cards: `paper000` … `paper004`, `fairlearn`, `baselines` (reweighing, group thresholds) and
`reference` (the unconstrained solver). A source's package imports the shared modules, its own
modules and, for those built on an unconstrained model, `reference`; never another source's.

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
