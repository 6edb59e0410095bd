"""What paper 000's stochastic solvers share: one flat vector x of primal variables stepped on
sampled batches through `engine.oracles.MinibatchOracles`, several steps per driver call (a step
takes a fraction of a millisecond, so the driver's bookkeeping per call would otherwise cost more
than the step), the oracle counts in the state, and the last iterate as the candidate.

A solver that reports by paper 004's rule sets `selection` (a `ValidationSelection`): every
`select_every` steps the current iterate is offered to it, and the run reports the best one it
kept, else the candidate."""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import ClassVar

import numpy as np

from engine.models import Params
from engine.oracles import MinibatchOracles
from engine.problem import Problem
from engine.sampling import BatchSampler
from engine.solvers.base import Snapshot, Solver, StepInfo
from engine.solvers.validation_select import ValidationSelection
from engine.status import StopCode


class MinibatchSolver(Solver):
    """Subclasses implement `iterate` (one step) and may extend `state` and `add_blocks`."""

    # False for a solver that ignores the constraint: the family's auxiliary variables are not
    # in x, and its constraint batches are not drawn by the family's cells
    uses_constraint: ClassVar[bool] = True
    steps_per_call: ClassVar[int] = 25

    def __init__(self, problem: Problem, config, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        seed = int(rng.integers(2**31))  # the run's first draw: the model's initial weights
        self.oracles = MinibatchOracles(problem, seed, with_aux=self.uses_constraint)
        self.add_blocks()
        self.x = self.oracles.start()
        self.t = 0
        self.outer = 0  # the outer iteration, for a solver that has them (SFLS's oracle calls)
        self.selection: ValidationSelection | None = None
        self.select_every = 1

    def batch_sampler(self) -> BatchSampler:
        """Objective batches over the training rows, and constraint batches of J rows of every
        group, or of every (group, label) cell when the family's rows are means within cells."""
        train, bound = (
            self.problem.data.train,
            self.problem.bound if self.problem.constraint else None,
        )
        by_cell = self.uses_constraint and bound is not None and bound.label_cells
        return BatchSampler(
            train.groups, self.problem.data.n_groups, self.rng, labels=train.y if by_cell else None
        )

    def add_blocks(self) -> None:  # noqa: B027
        """Add the solver's own variables to `self.oracles` (before x_0 is laid out)."""

    @abstractmethod
    def iterate(self) -> float:
        """One step of the algorithm; returns the objective on the batch it drew."""

    def state(self) -> dict[str, float | str]:
        """The solver's state after the last step (duals, branch, step sizes ...)."""
        return {}

    def step(self) -> StepInfo:
        return self.advance(1)

    def advance(self, max_iterations: int) -> StepInfo:
        """Up to `max_iterations` steps (and `steps_per_call`), ending early at the solver's
        iteration count or a non-finite batch objective."""
        wanted = max(1, min(max_iterations, self.steps_per_call))
        taken, value = 0, math.nan
        while taken < wanted:
            value = self.iterate()
            taken += 1
            self.t += 1
            if self.selection is not None and self.t % self.select_every == 0:
                self.selection.offer(self.t, self.outer, self.current())
            if not math.isfinite(value) or self.t >= self.config.iterations:
                break
        done = self.t >= self.config.iterations
        n_train = len(self.problem.data.train)
        return StepInfo(
            iterations=taken,
            objective=value,
            state=self.state() | self.oracles.counts.state(n_train),
            done=done,
            reason=f"all {self.t} iterations done" if done else "",
            stop=StopCode.ITERATION_CAP,
        )

    def move(self, step: float, direction: np.ndarray) -> None:
        """x ← proj(x − step · direction), descending on minimised blocks and ascending on
        maximised ones, into every block's box."""
        self.x = self.oracles.layout.project(self.x - step * self.oracles.layout.descent(direction))

    def current(self) -> Params:
        """The current iterate's weights and auxiliary variables."""
        return self.oracles.params(self.x)

    def candidate(self) -> Params:
        """The last iterate (paper 000 reports the last x_K)."""
        return self.current()

    def select(self, snapshots: list[Snapshot]) -> Params:
        """The best iterate the selection kept (paper 004, App. E.3), else the candidate."""
        if self.selection is None:
            return self.candidate()
        return self.selection.chosen(self.candidate())

    def selection_note(self) -> str:
        return "" if self.selection is None else self.selection.note()

    def evaluation_seconds(self) -> float:
        return 0.0 if self.selection is None else self.selection.seconds
