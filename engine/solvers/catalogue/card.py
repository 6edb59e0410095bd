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
    """`linear_only` says why the algorithm trains linear models only (empty: any model);
    `families` lists the constraint families it solves (None: any), with `families_why` saying
    why those; `constrained` is False for a solver that ignores the constraint (and also runs
    without one)."""

    name: str
    Config: type  # a frozen dataclass of options whose defaults cite the paper
    paper: str
    summary: str
    implementation: str  # "module:Class" of the Solver subclass
    linear_only: str = ""
    families: frozenset[str] | None = None
    families_why: str = ""
    constrained: bool = True

    def refusal(self, model: ModelSpec, family: str | None) -> str | None:
        """Why this algorithm cannot solve `model` under `family`, in words; None if it can."""
        if self.linear_only and not model.affine:
            return (f"{self.name} trains linear models only: {self.linear_only}; choose the "
                    "linear model (with or without group cross-terms)")  # fmt: skip
        if family is None and self.constrained:
            return (f"{self.name} trains under a constraint; choose a constraint family, or the "
                    "unconstrained solver")  # fmt: skip
        if self.families is not None and family not in self.families:
            allowed = ", ".join(sorted(self.families))
            return (f"{self.name} solves the constraint families {allowed} only "
                    f"({self.families_why}), not {family}")  # fmt: skip
        return None

    def check_combination(self, model: ModelSpec, family: str | None) -> None:
        """Refuse a model or constraint family this algorithm cannot solve, saying why."""
        reason = self.refusal(model, family)
        if reason is not None:
            raise UserError(reason)

    def check_problem(self, problem: Problem) -> None:
        family = problem.constraint.family if problem.constraint is not None else None
        self.check_combination(problem.model, family)

    def load(self) -> type[Solver]:
        return load_object(self.implementation)
