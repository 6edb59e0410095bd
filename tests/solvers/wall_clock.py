"""A wall clock of the test's own, and what each piece of a run is charged on it: tests of what
the driver does with its time, not of how fast this machine is."""

from __future__ import annotations

import dataclasses

from engine.problem import Problem
from engine.solvers import driver as driver_module
from engine.solvers.paper000.sgd import SGD


class WallClock:
    """Wall time that moves only when a test charges it."""

    def __init__(self) -> None:
        self.time = 1000.0  # any start: the driver reads differences

    def __call__(self) -> float:
        return self.time

    def spend(self, seconds: float) -> None:
        self.time += seconds


@dataclasses.dataclass
class Costs:
    """Seconds each piece of a run is charged: an iteration of the solver, a surrogate record,
    an exact record, a report of the final model."""

    step: float = 0.01
    surrogate: float = 0.0
    exact: float = 0.0
    report: float = 0.0


def charge(monkeypatch, wall: WallClock, costs: Costs, solver: type = SGD) -> None:
    """Make each iteration of `solver` and each record cost `costs` on the wall clock."""
    advance = solver.advance

    def timed_advance(self, most):
        info = advance(self, most)
        wall.spend(costs.step * info.iterations)
        return info

    def costing(function, seconds: float):
        def timed(*args, **kwargs):
            wall.spend(seconds)
            return function(*args, **kwargs)

        return timed

    monkeypatch.setattr(solver, "advance", timed_advance)
    monkeypatch.setattr(
        driver_module,
        "_surrogate_record",
        costing(driver_module._surrogate_record, costs.surrogate),
    )
    monkeypatch.setattr(
        driver_module, "exact_record", costing(driver_module.exact_record, costs.exact)
    )
    monkeypatch.setattr(Problem, "report", costing(Problem.report, costs.report))
