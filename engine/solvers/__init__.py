"""Solvers: one registry, one interface (`solve(problem, solver, config, budget, log)`)."""

from engine.solvers.base import Budget, Solver, StepInfo, config_fields, config_from_dict
from engine.solvers.driver import solve
from engine.solvers.records import IterationRecord, Solution
from engine.solvers.registry import solver_class, solver_names

__all__ = [
    "Budget",
    "IterationRecord",
    "Solution",
    "Solver",
    "StepInfo",
    "config_fields",
    "config_from_dict",
    "solve",
    "solver_class",
    "solver_names",
]
