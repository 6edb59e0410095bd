"""The one shape every algorithm has: a Solver object stepped by the shared driver.

A solver is built from a Problem, its Config (a frozen dataclass whose defaults cite the paper,
declared with the solver's card in its package's card module) and a random Generator; `step()`
advances it and reports a StepInfo; `candidate()` is the iterate the solver would return now
(for switching methods, the best nearly-feasible one). A run reports one model (`select`) and
may also yield a set of models, its front (`front`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from engine.models import Params
from engine.problem import Problem
from engine.status import StopCode


@dataclass
class StepInfo:
    """What one `step()` did: iterations taken, the objective value at the current iterate (a
    non-finite one stops the run), and solver-specific state (branch, step size, duals ...).

    `done` ends the run with `stop` and `reason`: CONVERGED for the solver's stopping rule,
    ITERATION_CAP when its own iteration count ran out, STEP_FAILED when a step could not be
    taken (the candidate is then the iterate before it)."""

    iterations: int
    objective: float
    state: dict[str, float | str] = field(default_factory=dict)
    done: bool = False
    reason: str = ""
    stop: StopCode = StopCode.CONVERGED


@dataclass(frozen=True)
class Snapshot:
    """The iterate after some outer iterations, kept so K can be chosen on validation."""

    iteration: int
    outer: int
    params: Params
    metrics: dict[str, dict]


@dataclass(frozen=True)
class FrontPoint:
    """One model of a run's front: `label` names it for people ("λ = (0.25, 0.75)", distinct
    within the front), `params` is the model and `coordinates` the numbers that place it on
    the front (e.g. {"lambda.<group name>": 0.25, "beta": 1.0}; paper 002 §5: the group weights
    λ of the weighted-sum scalarisation w*(λ))."""

    label: str
    params: Params
    coordinates: dict[str, float] = field(default_factory=dict)


class Solver(ABC):
    """Base class of every algorithm; subclasses implement `step` and `candidate`."""

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

    def multipliers(self) -> np.ndarray | None:
        """The solver's Lagrange multipliers, one per row of the problem's bound in its order,
        for the KKT measure (`engine.solvers.kkt`); None for a solver that keeps none, whose
        measure then takes the least-squares ones."""
        return None

    def surrogate_view(self) -> tuple[float, np.ndarray | None]:
        """f0 and the surrogate constraint rows (≤ 0 feasible) at the candidate, for the log.
        A solver that keeps no auxiliary variables (e.g. the unconstrained one) is shown with the
        family's own starting values for them (pSP: the feasible θ of its scores)."""
        params = self.candidate()
        h = self.problem.scores(params)
        objective = self.problem.loss(h)
        if self.problem.constraint is None:
            return objective, None
        scores = torch.from_numpy(h)
        aux = aux_tensors(params) or self.problem.bound.aux_init(scores)
        rows = self.problem.bound.surrogate(scores, aux)
        return objective, rows.detach().numpy()

    def select(self, snapshots: list[Snapshot]) -> Params:
        """The iterate to report when the run ends; the paper's rule where it has one."""
        return self.candidate()

    def front(self) -> list[FrontPoint]:
        """The run's front, when the solver yields a set of models rather than one: e.g. the
        weighted-sum front of paper 002 (§5 (a)), one model w*(λ) per λ on a grid of the group
        weights, each Pareto-efficient in the group losses. Called once, after `select`; the
        driver evaluates each model exactly on every split, off the run's clock, so the models
        must be ones the solver has already fitted (fitting them is solving, and belongs in
        `step`). In the solver's own order (e.g. λ along its grid); [] for a run that yields one
        model only, as most do."""
        return []

    def selection_note(self) -> str:
        """What the reported iterate is, when `select` chose it by a rule the user should
        know the outcome of (e.g. no iterate within κ on validation); "" otherwise. Called
        after `select`; the driver adds it to the run's stop reason."""
        return ""

    def evaluation_seconds(self) -> float:
        """Seconds spent so far judging the solver's own iterates (e.g. on validation for its
        selection rule): evaluation, not solving, so the driver takes them off the run's clock."""
        return 0.0


def aux_tensors(params: Params) -> dict[str, torch.Tensor]:
    """The constraint's auxiliary variables (stored as "aux.<name>", e.g. pSP's θ) as tensors."""
    return {k[4:]: torch.from_numpy(v) for k, v in params.items() if k.startswith("aux.")}
