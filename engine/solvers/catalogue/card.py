"""A solver's card: what a run specification, the app and the command line need to know about a
solver without loading it (torch): its name, options, paper, what it solves, and where its
implementation lives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.errors import UserError
from engine.lazy import load_object
from engine.models import ModelSpec

if TYPE_CHECKING:
    from engine.problem import Problem
    from engine.solvers.base import Solver


@dataclass(frozen=True)
class SolverCard:
    name: str
    Config: type  # a frozen dataclass of options whose defaults cite the paper
    paper: str
    summary: str
    implementation: str  # "module:Class" of the Solver subclass
    requires: frozenset[str] = frozenset()  # "affine_model", "dc"
    families: frozenset[str] | None = None  # the constraint families it solves; None: any

    def check_combination(self, model: ModelSpec, family: str | None) -> None:
        """Refuse a model or constraint family this algorithm cannot solve, saying why."""
        if "affine_model" in self.requires and not model.affine:
            raise UserError(f"{self.name} needs a linear model (its DC parts are convex only then)")
        if self.families is not None and family not in self.families:
            allowed = ", ".join(sorted(self.families)) or "none"
            raise UserError(
                f"{self.name} solves the constraint families {allowed}, not {family or 'none'}"
            )

    def check_problem(self, problem: Problem) -> None:
        family = problem.constraint.family if problem.constraint is not None else None
        self.check_combination(problem.model, family)

    def load(self) -> type[Solver]:
        return load_object(self.implementation)
