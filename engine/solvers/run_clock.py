"""A run's two clocks and the schedule of its records.

A time budget (`Budget.max_seconds`) is wall time (`BudgetClock.WALL`), as the person waiting
for the run sees it:
the solver's steps, its records (surrogate and exact), saved iterates, its own judging of its
iterates and the evaluations that end the run all spend it. The driver ends the solver's loop
early enough for those last evaluations to fit (`RunClock.reserve`), and asks a solver for no
more iterations at a time than fit in what is left (`RunClock.iterations_that_fit`).

The solver's clock (a record's `seconds`, `Solution.seconds`) is the same wall time less the
records and evaluations: the time the solver itself had, which is what compares solvers (paper
000's bands are drawn over it), whatever each one's logging cost. `Solution.wall_seconds` is the
wall time. A budget on the solver's clock (`BudgetClock.SOLVER`, a benchmark study's, whose
saved iterates' evaluations would otherwise take most of a short run) ends when the solver has
had its seconds, however long its records took.

Records take a bounded share of a run: the gap after a record is at least `RECORD_SHARE` times
what it took. Exact records draw the run's exact trajectory: the gap after one is the longest of
that share, `EXACT_EVERY_SECONDS` and the run's age over `EXACT_POINTS`. The last spreads them
evenly over log-time: a run whose records are cheap has EXACT_POINTS of them once it is
EXACT_POINTS·EXACT_EVERY_SECONDS old and about EXACT_POINTS·(1 + ln(age/that)) after, so a few
hundred in an hour, not one a second; a run whose exact records take c seconds each has
EXACT_POINTS of them once it is EXACT_POINTS·(1 + RECORD_SHARE)·c old (20 s for c = 0.08 s).

Every time is read from `now()`, which a test may replace by a clock of its own.
"""

from __future__ import annotations

import functools
import math
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from threadpoolctl import ThreadpoolController

LOG_EVERY_SECONDS = 0.1  # at most ~10 surrogate records per second reach the log
EXACT_EVERY_SECONDS = 0.05  # exact records, at most ~20 per second
EXACT_POINTS = 24  # exact records come at least this many to a run, when their share allows
# the gap after a record is at least this many times the record's own time, so each kind takes
# at most 1/(1 + this) of the run: exact records, which draw the run's exact trajectory, 1/10,
# surrogate ones, cheaper and more often, 1/50, together about a tenth (on large data a
# record's full-data pass can take longer than the shortest gaps: an MLP's exact record on
# Adult takes about 0.1 s, its surrogate one 0.03 s); up to a longest gap (a first record may
# pay one-off costs)
RECORD_SHARE = {"surrogate": 49.0, "exact": 9.0}
LONGEST_GAP = {"surrogate": 2.0, "exact": 60.0}
# a call of the solver is asked for at most this share of the budget (or what is left of it),
# so the run's end is met within about one such call; not for much less, as a solver that keeps
# state between calls (L-BFGS's curvature pairs) pays a little for each
CALL_SHARE = 0.05
ENDING_EXACT = 2.0  # the run's last exact record and its final report, as exact records go


def now() -> float:
    """The wall clock, in seconds."""
    return time.perf_counter()


def one_thread() -> AbstractContextManager:
    """BLAS on one thread while a record is made. A record's products are a few of one pass
    over the data, and the cores are shared (the runner's workers, the app): on two busy cores
    an MLP's exact record on Adult took three times as long on two BLAS threads as on one."""
    return _controller().limit(limits=1, user_api="blas")


@functools.cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


@dataclass
class RunClock:
    """The wall clock of one solve against its budget: `seconds` of it (None: none), to end by
    `until` (by default `seconds` after it started; a solve of several in one budget, or one
    whose run has more to do after it, is given an earlier time); the records and evaluations
    taken off the solver's clock, and what each kind of record cost last."""

    seconds: float | None
    until: float | None = None
    solver_time: bool = False  # the budget is on the solver's clock: `until` does not apply
    started: float = field(default_factory=lambda: now())  # read when made: a test's clock
    evaluation: float = 0.0  # wall seconds of records and evaluations
    costs: dict[str, float] = field(default_factory=dict)
    pace: float | None = None  # wall seconds per solver iteration, from the last call
    least_call: float = 0.0  # wall seconds of the shortest call the solver can make

    def __post_init__(self) -> None:
        if self.seconds is None or self.solver_time:
            self.until = None  # no wall time to end by
        elif self.until is None:
            self.until = self.started + self.seconds

    def elapsed(self) -> float:
        return now() - self.started

    def solver_seconds(self) -> float:
        """The solver's clock: wall time less records and evaluations."""
        return self.elapsed() - self.evaluation

    def charge(self, seconds: float, kind: str | None = None) -> None:
        """Take `seconds` of records or evaluations off the solver's clock (they stay on the
        wall clock); `kind` names a record whose cost sets its next gap and the reserve."""
        self.evaluation += seconds
        if kind is not None:
            self.costs[kind] = seconds

    def called(self, seconds: float, iterations: int, asked: int) -> None:
        """A call of the solver took `seconds` of wall time for `iterations` (it was asked for
        at most `asked`): the pace of the next calls."""
        self.pace = seconds / max(iterations, 1)
        # a solver that takes more iterations per call than asked (one outer step of many inner
        # ones) cannot make a call shorter than this one
        self.least_call = self.pace if iterations <= asked else seconds

    def reserve(self) -> float:
        """Wall seconds to keep for the run's end: its last surrogate record, its last exact
        record and its final report (about an exact record)."""
        return self.costs.get("surrogate", 0.0) + ENDING_EXACT * self.costs.get("exact", 0.0)

    def left(self) -> float:
        """Wall seconds the solver may still use (infinite without a budget); on the solver's
        clock, its own seconds."""
        if self.solver_time and self.seconds is not None:
            return self.seconds - self.solver_seconds()
        if self.until is None:
            return math.inf
        return self.until - now() - self.reserve()

    def spent(self) -> bool:
        """Whether the budget has no room for another call of the solver and the run's end."""
        left = self.left()
        return left <= 0.0 or (self.pace is not None and left < self.least_call)

    def iterations_that_fit(self, most: int, due: float = math.inf) -> int:
        """At most `most` iterations, and no more than end by `due` (a record due then, seconds
        from now) at the solver's pace; under a budget, also no more than a call of
        `CALL_SHARE` of it, or what is left, holds. The first call of a budgeted run, whose pace
        is unknown, is one iteration."""
        if self.pace is None:
            return most if self.seconds is None else 1
        room = due
        if self.seconds is not None:
            room = min(room, max(min(self.left(), CALL_SHARE * self.seconds), self.least_call))
        if self.pace <= 0.0 or math.isinf(room):
            return most
        return int(max(1, min(most, room // self.pace)))

    def gap(self, kind: str, shortest: float) -> float:
        """The wait after a record of `kind`: its share of the run (`RECORD_SHARE`) and at
        least `shortest`; an exact record's also at least the run's age over `EXACT_POINTS`;
        up to `LONGEST_GAP`."""
        spent = self.costs.get(kind, 0.0)
        wait = shortest
        if kind == "exact":
            wait = max(shortest, self.elapsed() / EXACT_POINTS)
        return min(max(wait, RECORD_SHARE[kind] * spent), LONGEST_GAP[kind])
