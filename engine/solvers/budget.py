"""A run's budget: how many solver iterations and/or seconds it may take, on which clock, and
how often its iterates are saved."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from engine.errors import UserError


class BudgetClock(enum.StrEnum):
    """The clock a time budget is counted on."""

    WALL = "wall"  # as the person waiting sees it: records, evaluations and reports spend it
    SOLVER = "solver"  # the solver's own time, without them: paper 000's protocol, whose saved
    # iterates are evaluated off the clock, so solvers are compared at equal solver time


@dataclass(frozen=True)
class Budget:
    """Stop after this many solver iterations and/or seconds (None: no limit), counted on
    `clock` (wall time unless a study compares solvers at equal solver time).

    `save_every` (None: off) saves the iterate after every that many solver iterations and
    evaluates it on the train and test sets off the solver's clock, as paper 000 §3 does for its
    plots (state saved every 100 iterations, Ghost every 10); `save_seconds` saves it every that
    many seconds of the solver's clock, which suits solvers whose speeds differ a hundredfold
    (a few points per 0.5 s bin of the bands, whatever the solver).
    """

    max_iterations: int | None = None
    max_seconds: float | None = None
    save_every: int | None = None
    save_seconds: float | None = None
    clock: BudgetClock = BudgetClock.WALL

    def __post_init__(self) -> None:
        try:  # a stored spec holds the clock's word
            object.__setattr__(self, "clock", BudgetClock(self.clock))
        except ValueError:
            words = " or ".join(c.value for c in BudgetClock)
            raise UserError(f"a time budget's clock is {words}, not {self.clock!r}") from None
        if self.max_iterations is not None and self.max_iterations < 1:
            raise UserError("the iteration budget must be at least 1")
        if self.max_seconds is not None and not (
            math.isfinite(self.max_seconds) and self.max_seconds > 0
        ):
            raise UserError("the time budget must be a finite number of seconds > 0")
        if self.save_every is not None and self.save_every < 1:
            raise UserError("iterates are saved every 1 or more iterations")
        if self.save_seconds is not None and not (
            math.isfinite(self.save_seconds) and self.save_seconds > 0
        ):
            raise UserError("iterates are saved every finite number of seconds > 0")
