"""The one shape every algorithm has: a Solver object stepped by the shared driver.

A solver is built from a Problem, its Config (a frozen dataclass whose defaults cite the paper)
and a random Generator; `step()` advances it and reports a StepInfo; `candidate()` is the iterate
the solver would return now (for switching methods, the best nearly-feasible one).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch

from engine.errors import UserError
from engine.models import ModelSpec, Params
from engine.problem import Problem

STATUSES = ("converged", "budget", "diverged", "cancelled")


@dataclass(frozen=True)
class Budget:
    """Stop after this many solver iterations and/or wall seconds (None: no limit)."""

    max_iterations: int | None = None
    max_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.max_iterations is not None and self.max_iterations < 1:
            raise UserError("the iteration budget must be at least 1")
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise UserError("the time budget must be positive")


@dataclass
class StepInfo:
    """What one `step()` did: iterations taken, the objective value at the current iterate (a
    non-finite one stops the run), and solver-specific state (branch, step size, duals ...)."""

    iterations: int
    objective: float
    state: dict[str, float | str] = field(default_factory=dict)
    done: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Snapshot:
    """The iterate after some outer iterations, kept so K can be chosen on validation."""

    iteration: int
    outer: int
    params: Params
    metrics: dict[str, dict]


class Solver(ABC):
    """Base class of every algorithm; subclasses set the class attributes and three methods."""

    name: ClassVar[str]
    Config: ClassVar[type]
    paper: ClassVar[str]
    summary: ClassVar[str]
    requires: ClassVar[frozenset[str]] = frozenset()
    families: ClassVar[frozenset[str] | None] = None  # None: any family (or none)

    def __init__(self, problem: Problem, config: Any, rng: np.random.Generator) -> None:
        self.problem = problem
        self.config = config
        self.rng = rng

    @abstractmethod
    def step(self) -> StepInfo: ...

    def advance(self, max_iterations: int) -> StepInfo:
        """At most `max_iterations` iterations: one `step()`, unless a solver runs several in
        one call (a compiled inner loop) and reports how many it took."""
        return self.step()

    @abstractmethod
    def candidate(self) -> Params: ...

    def snapshots(self) -> list[Snapshot]:
        return []

    def surrogate_view(self) -> tuple[float, np.ndarray | None]:
        """f0 and the surrogate constraint rows (≤ 0 feasible) at the candidate, for the log."""
        params = self.candidate()
        h = self.problem.scores(params)
        objective = self.problem.loss(h)
        if self.problem.constraint is None:
            return objective, None
        rows = self.problem.bound.surrogate(torch.from_numpy(h), aux_tensors(params))
        return objective, rows.detach().numpy()

    def select(self, snapshots: list[Snapshot]) -> Params:
        """The iterate to report when the run ends; the paper's rule where it has one."""
        return self.candidate()

    @classmethod
    def check_problem(cls, problem: Problem) -> None:
        """Refuse problems this algorithm cannot solve, saying why."""
        family = problem.constraint.family if problem.constraint is not None else None
        cls.check_combination(problem.model, family)

    @classmethod
    def check_combination(cls, model: ModelSpec, family: str | None) -> None:
        if "affine_model" in cls.requires and not model.affine:
            raise UserError(f"{cls.name} needs a linear model (its DC parts are convex only then)")
        if cls.families is not None and family not in cls.families:
            allowed = ", ".join(sorted(f for f in cls.families if f)) or "none"
            raise UserError(
                f"{cls.name} solves the constraint families {allowed}, not {family or 'none'}"
            )


def aux_tensors(params: Params) -> dict[str, torch.Tensor]:
    """The constraint's auxiliary variables (stored as "aux.<name>", e.g. pSP's θ) as tensors."""
    return {k[4:]: torch.from_numpy(v) for k, v in params.items() if k.startswith("aux.")}


def config_from_dict(config_class: type, values: dict[str, Any] | None) -> Any:
    """A solver config from user-given values, rejecting unknown names with the known ones."""
    values = dict(values or {})
    known = {f.name: f for f in dataclasses.fields(config_class)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise UserError(
            f"unknown option(s) {', '.join(unknown)}; the options are {', '.join(known)}"
        )
    typed = {}
    for name, value in values.items():
        default = getattr(config_class, name, None)
        typed[name] = _coerce(name, value, default)
    return config_class(**typed)


def _coerce(name: str, value: Any, default: Any) -> Any:
    if isinstance(value, str) and not isinstance(default, str):
        try:
            if isinstance(default, bool):
                if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                return value.lower() in ("true", "1", "yes")
            if isinstance(default, int):
                return int(value)
            if isinstance(default, float) or default is None:
                return float(value)
        except ValueError:
            raise UserError(f"option {name} needs a number, not '{value}'") from None
    return value


def config_fields(config_class: type) -> list[dict[str, Any]]:
    """Name, default and help (the field's `doc` metadata) of every option, for listings."""
    return [
        {"name": f.name, "default": f.default, "help": f.metadata.get("doc", "")}
        for f in dataclasses.fields(config_class)
    ]


def option(default: Any, doc: str) -> Any:
    """A config field with its documentation (shown by `python -m engine solvers`)."""
    return field(default=default, metadata={"doc": doc})
