"""A sequence of solves of one problem under a changing constraint (a tighter inner κ′, a finer
surrogate), each from the model before when the solver takes a warm start, within one budget,
whose records run on as one trajectory: the machinery under holding κ on the training data
(`engine.solvers.exact_train`) and honouring it on validation (`engine.solvers.honour`).

The run's trajectory holds every solve's records in turn (iterations and seconds running on
from one solve to the next; in each record's state the solve's κ′, `KAPPA_PRIME`, and its
index, `SOLVE`), then one record of kind "honour" per solve (`search_record`), then the final
record of the reported solve; its iterations and seconds are those of all the solves.

The run's time budget is wall time from the sequence's start (`engine.solvers.run_clock`): each
solve ends by the time the budget does (`SolveSequence.until`), the work between solves
(refining the surrogate, binding the next constraint) spends it too, and no solve starts with
less than `LEAST_SECONDS` of the budget left: a solve must make its first step and its records,
and a sliver of a budget would only add them. A solve may be given a share of the time left
(`run`'s `time_share`): a solver that runs until its budget ends (PLADA, the SGD methods, whose
own iteration count is unbounded) would otherwise spend the whole budget on the sequence's
first solve and leave none to the solves after it. A solve that a share (of iterations or of
time) ends, ends on it (`StopCode.SOLVE_SHARE`), and the sequence goes on.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.noise import value_noise
from engine.problem import Problem
from engine.solvers import run_clock
from engine.solvers.budget import Budget, BudgetClock
from engine.solvers.catalogue import solver_card
from engine.solvers.driver import Log, solve
from engine.solvers.records import KAPPA_PRIME, SOLVE, IterationRecord, RecordKind, Solution
from engine.status import StopCode, StopReason

ENDS_SEARCH = (StopCode.CANCELLED, StopCode.NON_FINITE)  # a solve that ends so ends the search
RETRIES = 3  # a κ′ the data refuse is taken halfway back to the last one this many times
BUDGET_SPENT = "the run's budget is spent"
RESOLVES = 2.0  # a split resolves values above about this many σ of its sampling noise
LEAST_SECONDS = 0.05  # of the run's time budget: less left starts no solve


@dataclass(frozen=True)
class SplitNoise:
    """How precisely the judged split measures the constrained value: the split, its rows
    and the standard error σ of the value there (None for a family without one)."""

    split: str
    rows: int
    sigma: float | None

    @property
    def search_sigma(self) -> float | None:
        """The σ the search's rules use: validation's. A model is fitted to the training rows,
        so its value there is not a measurement of a held-out sample but the very quantity a
        search on train is asked to bring to κ; σ then only qualifies the sentence."""
        return self.sigma if self.split == "val" else None

    def resolves(self, kappa: float) -> bool:
        """Whether the split can tell a value of κ from none at all."""
        return self.sigma is None or kappa >= RESOLVES * self.sigma


def split_noise(problem: Problem, on: str) -> SplitNoise:
    """The sampling noise of the problem's constrained value on split `on`."""
    part = problem.data.split(on)
    return SplitNoise(on, len(part), value_noise(problem.constraint, part.groups, part.y))


@dataclass(frozen=True)
class Solve:
    """One solve of a sequence: the constraint it was held to (its κ is the inner κ′), what
    the surrogate changed before it (words; "" for none), the solver's options it ran with
    (None: the card's defaults), its model's exact constrained value
    and loss on the training data, its exact value and accuracy on the judged split, and its
    solution."""

    constraint: ConstraintSpec
    refined: str
    config: object
    train_value: float
    train_loss: float
    value: float
    accuracy: float | None
    solution: Solution
    time_cut: bool = False  # the share of the run's time it was given ended it

    @property
    def kappa_prime(self) -> float:
        return self.constraint.kappa

    def meets(self, kappa: float) -> bool:
        """Whether its exact value on the judged split is ≤ κ."""
        return self.value <= kappa

    def holds(self, kappa: float) -> bool:
        """Whether its exact value on the training data is ≤ κ."""
        return self.train_value <= kappa


class SolveSequence:
    """The solves of one run, in order, on the judged split `on` ("train" or "val")."""

    def __init__(
        self,
        problem: Problem,
        solver: str,
        on: str,
        config: object | None = None,
        budget: Budget | None = None,
        log: Log | None = None,
        seed: int = 0,
        should_stop: Callable[[], bool] | None = None,
        until: float | None = None,
    ) -> None:
        """The solves end by `until` (a `run_clock.now()` time; by default when the budget's
        seconds from now are spent)."""
        self.problem, self.solver, self.on = problem, solver, on
        self.config, self.budget, self.log = config, budget or Budget(), log
        self.seed, self.should_stop = seed, should_stop
        self.warm = bool(solver_card(solver).warm_start)
        self.noise = split_noise(problem, on)
        self.solves: list[Solve] = []
        self.records: list[IterationRecord] = []
        self.started = run_clock.now()
        seconds = self.budget.max_seconds
        if seconds is None or self.budget.clock is BudgetClock.SOLVER:
            self.until = None  # no wall time to end by
        else:
            self.until = until if until is not None else self.started + seconds

    @property
    def kappa(self) -> float:
        return self.problem.constraint.kappa

    @property
    def last(self) -> Solve:
        return self.solves[-1]

    @property
    def timed(self) -> bool:
        """Whether the share of time the first solve was given ended it: a solver that runs
        until its budget ends, whose later solves then share the time left too."""
        return bool(self.solves) and self.solves[0].time_cut

    def left(self, most: int | None = None) -> Budget | None:
        """The budget the next solve may use: what the solves so far left of the run's
        iterations, and at most `most` iterations when given, with the run's time budget (each
        solve ends by the sequence's `until`); None when nothing is left (of the time budget,
        less than `LEAST_SECONDS` of it)."""
        iterations = self._iterations_left()
        if most is not None:
            iterations = most if iterations is None else min(iterations, most)
        seconds = self._seconds_left()
        if (iterations is not None and iterations < 1) or self._time_spent(seconds):
            return None
        if self.budget.clock is BudgetClock.SOLVER:  # what the solves so far left of it
            return dataclasses.replace(self.budget, max_iterations=iterations, max_seconds=seconds)
        return dataclasses.replace(self.budget, max_iterations=iterations)

    def spent(self) -> StopCode | None:
        """Which of the run's budgets the solves have spent (time first), None for neither."""
        iterations = self.budget.max_iterations
        if self._time_spent(self._seconds_left()):
            return StopCode.TIME_BUDGET
        if iterations is not None and sum(s.solution.iterations for s in self.solves) >= iterations:
            return StopCode.ITERATION_BUDGET
        return None

    def wall_seconds(self) -> float:
        """Wall time since the sequence started."""
        return run_clock.now() - self.started

    def _iterations_left(self) -> int | None:
        iterations = self.budget.max_iterations
        return (
            None
            if iterations is None
            else iterations - sum(s.solution.iterations for s in self.solves)
        )

    def _seconds_left(self) -> float | None:
        """Of the time budget: wall seconds to `until`, or on the solver's clock what the solves
        so far left of it; None without one."""
        if self.budget.max_seconds is not None and self.budget.clock is BudgetClock.SOLVER:
            return self.budget.max_seconds - sum(s.solution.seconds for s in self.solves)
        return None if self.until is None else self.until - run_clock.now()

    def _time_spent(self, left: float | None) -> bool:
        """Whether `left` seconds are too few for another solve (`LEAST_SECONDS`), or the last
        solve, which was given all that was left, ended on it."""
        if left is None:
            return False
        ended = bool(self.solves) and self.last.solution.stop.code is StopCode.TIME_BUDGET
        return ended or left < LEAST_SECONDS * self.budget.max_seconds

    def run(
        self,
        constraint: ConstraintSpec,
        refined: str = "",
        config: object | None = None,
        after: Solve | None = None,
        most: int | None = None,
        time_share: float | None = None,
    ) -> Solve | None:
        """Solve under `constraint` from the model of `after` (by default the last solve's;
        when the solver takes a warm start; the first solve starts where the run does, from
        the problem's own start), with what is left of the budget, at most `most` iterations
        and at most the share `time_share` of the time left, and the solver's options `config`
        (by default those of the solve before, the run's for the first); None when nothing is
        left. A constraint these data cannot hold (`UserError`: e.g. a κ′ below what the family
        allows) is raised."""
        left = self.left(most)
        if left is None:
            return None
        own_cap = left.max_iterations != self._iterations_left()  # `most` bounds this solve
        left, until = self._time_share(left, time_share)
        if config is None:
            config = self.last.config if self.solves else self.config
        after = after or (self.last if self.solves else None)
        start, state = self.problem.start, None  # a continuation sweep's neighbour, or cold
        if after is not None and self.warm:
            start = after.solution.params
            if dataclasses.replace(after.constraint, kappa=constraint.kappa) == constraint:
                state = after.solution.trajectory[-1].state  # a κ′ step: its duals carry over
        inner = self.problem.under(constraint, start, state)
        solution = solve(
            inner,
            self.solver,
            config,
            left,
            self._offset_log(constraint),
            self.seed,
            self.should_stop,
            until,
        )
        if own_cap and solution.stop.code is StopCode.ITERATION_BUDGET:
            solution = _capped(
                solution, f"all {left.max_iterations} iterations given to this solve done"
            )
        time_cut = time_share is not None and solution.stop.code is StopCode.TIME_BUDGET
        if time_cut:
            solution = _capped(
                solution, f"the {time_share:.0%} of the run's time left given to this solve spent"
            )
        train = solution.metrics.get("train", {})
        judged = solution.metrics.get(self.on, {})
        self.solves.append(
            Solve(
                constraint,
                refined,
                config,
                _number(train.get("constraint")),
                _number(train.get("loss")),
                _number(judged.get("constraint")),
                judged.get("accuracy"),
                solution,
                time_cut,
            )
        )
        return self.last

    def _time_share(self, left: Budget, share: float | None) -> tuple[Budget, float | None]:
        """The budget `left` and the time (`run_clock`) a solve ends by, when it is given the
        share `share` of the time left (None: all of it): on the wall clock an earlier end, on
        the solver's clock fewer seconds."""
        if share is None or self._seconds_left() is None:
            return left, self.until
        if self.budget.clock is BudgetClock.SOLVER:
            return dataclasses.replace(left, max_seconds=share * left.max_seconds), self.until
        now = run_clock.now()
        return left, now + share * (self.until - now)

    def attempt(
        self,
        constraint: ConstraintSpec,
        refined: str = "",
        config: object | None = None,
        after: Solve | None = None,
        most: int | None = None,
        time_share: float | None = None,
    ) -> str:
        """`run`, and where the family refuses the constraint's κ′ on these data (a band too
        narrow to hold a row of a group), again halfway back to the κ′ of `after` (by default
        the last solve), up to `RETRIES` times; "" when a solve ran, else why the sequence
        ends, in words (its budget is spent, or κ′ can go no lower)."""
        retries = 0 if refined else RETRIES
        after = after or self.last
        while True:
            try:
                solved = self.run(constraint, refined, config, after, most, time_share)
            except UserError as error:
                if retries == 0:
                    return f"κ′ can go no lower ({str(error).rstrip('.')})"
                retries -= 1
                back = 0.5 * (constraint.kappa + after.kappa_prime)
                constraint = dataclasses.replace(constraint, kappa=back)
                continue
            return "" if solved is not None else BUDGET_SPENT

    def ended(self) -> str:
        """Why the last solve ends the search ("" when it does not): cancelled or diverged."""
        stop = self.last.solution.stop
        return f"the last solve ended: {stop.text}" if stop.code in ENDS_SEARCH else ""

    def finish(self, chosen: Solve, stop: StopReason, sentence: str) -> Solution:
        """The run's solution: the `chosen` solve's model and exact metrics, the stop `stop`
        (its text followed by `sentence`), one "honour" record per solve, then the final
        record; iterations and seconds of all the solves."""
        iterations = sum(s.solution.iterations for s in self.solves)
        seconds = sum(s.solution.seconds for s in self.solves)
        for index, inner in enumerate(self.solves):
            self._emit(self._search_record(index, inner, inner is chosen, sentence, seconds))
        final = chosen.solution.trajectory[-1]
        self._emit(dataclasses.replace(final, iteration=iterations, seconds=seconds))
        return dataclasses.replace(
            chosen.solution,
            stop=StopReason(stop.code, f"{stop.text}; {sentence}" if sentence else stop.text),
            iterations=iterations,
            seconds=seconds,
            trajectory=self.records,
            wall_seconds=self.wall_seconds(),
        )

    def _search_record(
        self, index: int, inner: Solve, chosen: bool, sentence: str, seconds: float
    ) -> IterationRecord:
        """A solve as a record of kind "honour": values "kappa_prime", "value" and "accuracy"
        (on the judged split), "train_value", "loss" (train), "iterations", "levels" (|Î| of
        pSP), "temperature", and the judged split's "sigma" and "rows"; state "split",
        "chosen", "refined" (what the surrogate changed before it), and on the chosen one the
        search's "sentence"."""
        spec = inner.constraint
        levels = float(spec.rank_levels().size) if spec.family == "pSP" else None
        state = {"split": self.on, "chosen": "yes" if chosen else "no", "refined": inner.refined}
        return IterationRecord(
            iteration=index,
            seconds=seconds,
            kind=RecordKind.HONOUR,
            values={
                "kappa_prime": inner.kappa_prime,
                "value": inner.value,
                "accuracy": inner.accuracy,
                "train_value": inner.train_value,
                "loss": inner.train_loss,
                "iterations": float(inner.solution.iterations),
                "levels": levels,
                "temperature": spec.temperature,
                "sigma": self.noise.sigma,
                "rows": float(self.noise.rows),
            },
            state=state | {"sentence": sentence} if chosen else state,
        )

    def _offset_log(self, constraint: ConstraintSpec) -> Log:
        """The log of one solve: its records with iterations and seconds running on from the
        solves before, its κ′ and index in their state; its final record is left for the end."""
        iterations = sum(s.solution.iterations for s in self.solves)
        seconds = sum(s.solution.seconds for s in self.solves)
        marks = {KAPPA_PRIME: constraint.kappa, SOLVE: float(len(self.solves))}

        def offset(record: IterationRecord) -> None:
            if record.kind == RecordKind.FINAL:
                return
            self._emit(
                dataclasses.replace(
                    record,
                    iteration=record.iteration + iterations,
                    seconds=record.seconds + seconds,
                    state=record.state | marks,
                )
            )

        return offset

    def _emit(self, record: IterationRecord) -> None:
        self.records.append(record)
        if self.log is not None:
            self.log(record)


def check_sequence(problem: Problem, on: str) -> None:
    """Refuse a sequence on validation when the data has none."""
    if on == "val" and not len(problem.data.val):
        raise UserError(
            "κ is honoured on validation, but the data has no validation split; "
            "honour it on train, or give the split a validation share"
        )


def _capped(solution: Solution, text: str) -> Solution:
    """A solve that spent the iterations or time the sequence gave it (`text`, in words) ends
    on them, which are no budget of the run's but this solve's own cap."""
    return dataclasses.replace(solution, stop=StopReason(StopCode.SOLVE_SHARE, text))


def _number(value: float | None) -> float:
    return math.inf if value is None or not math.isfinite(value) else float(value)
