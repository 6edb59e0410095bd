"""Honouring κ: when a run's surrogate constraint holds but the exact constrained quantity on the
chosen split exceeds κ, solve again with a tighter inner tolerance κ′ < κ until it does not.

The surrogates approximate an indicator (paper 003's ramp, eq. 15; the hinges and sigmoids of
the other families), so a model feasible for the surrogate at κ can realise an exact value above
κ. The exact value falls as κ′ falls, roughly in proportion near κ, so the search
1. solves at κ′ = κ, and stops there if the exact value v meets κ;
2. while no κ′ has met κ, tightens it: by the ratio the first solve missed by, κ′ ← κ′·κ/v,
   then where the line through the two tightest misses crosses κ (a secant on v(κ′)), to
   between `LEAST_STEP` and `MOST_STEP` of the tightest κ′ at a time;
3. once one has, bisects between the loosest κ′ that met κ and the tightest looser one that did
   not, for the loosest that meets it, until they are within `BRACKET` of κ.
Each solve starts from the model of the one before when the solver takes a warm start (its card
says why), so a re-solve costs a fraction of the first. The search stops after `max_solves`
solves, when the run's budget is spent or when the run is cancelled, and reports the loosest κ′
that met κ or, when none did, the solve whose exact value came closest, saying so.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from engine.errors import UserError
from engine.fairness.families import quantity_name
from engine.models import Params
from engine.problem import Problem
from engine.solvers.catalogue import solver_card
from engine.solvers.driver import Log, solve
from engine.solvers.honour_rules import HONOUR, SPLIT_WORDS, check_honour
from engine.solvers.options import Budget
from engine.solvers.records import IterationRecord, Solution
from engine.status import StopCode, StopReason

MAX_SOLVES = 6  # the first solve and five re-solves: bisection then narrows κ′ to ~κ/8
LEAST_STEP, MOST_STEP = 0.25, 0.9  # κ′ shrinks to between a quarter and 90 % of itself per miss
BRACKET = 0.05  # bisection stops when the bracket on κ′ is narrower than this share of κ
ENDS_SEARCH = (StopCode.CANCELLED, StopCode.NON_FINITE)  # a solve that ends so ends the search


@dataclass(frozen=True)
class InnerSolve:
    """One solve of the search: its inner tolerance, the exact constrained value and accuracy of
    its model on the honoured split, and its cost."""

    kappa_prime: float
    value: float
    accuracy: float | None
    iterations: int
    seconds: float
    solution: Solution

    def meets(self, kappa: float) -> bool:
        return self.value <= kappa


def solve_honouring(
    problem: Problem,
    solver: str,
    on: str,
    config: object | None = None,
    budget: Budget | None = None,
    log: Log | None = None,
    seed: int = 0,
    should_stop: Callable[[], bool] | None = None,
    max_solves: int = MAX_SOLVES,
) -> Solution:
    """`engine.solvers.driver.solve`, honouring κ on the split `on` ("val" or "train"): the
    solution of the loosest κ′ ≤ κ whose model meets κ there, or the closest when none does.

    Its trajectory holds every solve's records in turn (iterations and seconds running on from
    one solve to the next, the solve's κ′ in each record's state as "honour.kappa_prime"),
    then one record of kind "honour" per solve (values "kappa_prime", "value", "accuracy",
    "iterations"; state "split" and "chosen", and on the chosen one "sentence": what the
    search did, in the words it adds to the stop reason), then the final record of the chosen
    solve; its iterations and seconds are those of all the solves."""
    _check(problem, solver, on, max_solves)
    budget = budget or Budget()
    kappa = problem.constraint.kappa
    warm = bool(solver_card(solver).warm_start)
    solves: list[InnerSolve] = []
    records: list[IterationRecord] = []
    kappa_prime: float | None = kappa
    start: Params | None = None
    floor = ""  # why κ′ could go no lower, when it could not
    while kappa_prime is not None:
        left = _left(budget, solves)
        if left is None:
            break
        try:
            tightened = dataclasses.replace(problem.constraint, kappa=kappa_prime)
            inner = dataclasses.replace(
                problem, constraint=tightened, start=start if warm else None
            )
        except UserError as error:  # κ′ below what the family allows on these data
            if not solves:
                raise
            floor = str(error)
            break
        solution = solve(inner, solver, config, left, _offset_log(records, log, solves, kappa_prime),
                         seed, should_stop)  # fmt: skip
        metrics = solution.metrics.get(on, {})
        solves.append(InnerSolve(kappa_prime, _number(metrics.get("constraint")),
                                 metrics.get("accuracy"), solution.iterations, solution.seconds,
                                 solution))  # fmt: skip
        start = solution.params
        if solution.stop.code in ENDS_SEARCH or len(solves) >= max_solves:
            break
        kappa_prime = next_kappa_prime(kappa, [(s.kappa_prime, s.value) for s in solves])
    return _result(problem, on, kappa, solves, records, log, max_solves, floor)


def solve_run(
    problem: Problem,
    solver: str,
    honour: str | None,
    config: object | None = None,
    budget: Budget | None = None,
    log: Log | None = None,
    seed: int = 0,
    should_stop: Callable[[], bool] | None = None,
) -> Solution:
    """A run's solve: honouring κ on the split `honour` names, or plainly when it is None."""
    if honour is None:
        return solve(problem, solver, config, budget, log, seed, should_stop)
    return solve_honouring(problem, solver, honour, config, budget, log, seed, should_stop)


def next_kappa_prime(kappa: float, tried: list[tuple[float, float]]) -> float | None:
    """The next inner tolerance to try after the solves `tried` (κ′, exact value), or None when
    the search is done: the first κ′ met κ, or the bracket is narrow enough."""
    meeting = [k for k, v in tried if v <= kappa]
    if tried[0][1] <= kappa:
        return None  # κ itself is honoured
    if not meeting:
        return _tighter(kappa, sorted(tried))
    loosest_meeting = max(meeting)
    tightest_missing = min(k for k, v in tried if v > kappa and k > loosest_meeting)
    if tightest_missing - loosest_meeting <= BRACKET * kappa:
        return None
    return 0.5 * (loosest_meeting + tightest_missing)


def _tighter(kappa: float, misses: list[tuple[float, float]]) -> float:
    """A κ′ below every one of `misses` (κ′, exact value), sorted by κ′: where the line through
    the two tightest crosses κ (a secant on v(κ′)), or, with one miss or a line that does not
    fall, by the ratio the tightest missed by; between `LEAST_STEP` and `MOST_STEP` of it."""
    k, v = misses[0]
    step = kappa / v if v > 0 else LEAST_STEP
    if len(misses) > 1:
        k_up, v_up = misses[1]
        slope = (v_up - v) / (k_up - k)
        if slope > 0:
            step = (k + (kappa - v) / slope) / k
    return k * min(max(step, LEAST_STEP), MOST_STEP)


def _result(
    problem: Problem,
    on: str,
    kappa: float,
    solves: list[InnerSolve],
    records: list[IterationRecord],
    log: Log | None,
    max_solves: int,
    floor: str,
) -> Solution:
    meeting = [s for s in solves if s.meets(kappa)]
    chosen = max(meeting, key=lambda s: s.kappa_prime) if meeting else min(solves, key=_distance)
    iterations = sum(s.iterations for s in solves)
    seconds = sum(s.seconds for s in solves)
    sentence = honour_sentence(problem, on, kappa, solves, chosen, max_solves, floor)
    for index, inner in enumerate(solves):
        state = {"split": on, "chosen": "yes" if inner is chosen else "no"}
        record = IterationRecord(
            iteration=index, seconds=seconds, kind=HONOUR,
            values={"kappa_prime": inner.kappa_prime, "value": inner.value,
                    "accuracy": inner.accuracy, "iterations": float(inner.iterations)},
            state=state | {"sentence": sentence} if inner is chosen else state,
        )  # fmt: skip
        _emit(records, log, record)
    final = chosen.solution.trajectory[-1]
    _emit(records, log, dataclasses.replace(final, iteration=iterations, seconds=seconds))
    return dataclasses.replace(
        chosen.solution,
        stop=StopReason(chosen.solution.stop.code, f"{chosen.solution.stop.text}; {sentence}"),
        iterations=iterations,
        seconds=seconds,
        trajectory=records,
    )


def honour_sentence(
    problem: Problem,
    on: str,
    kappa: float,
    solves: list[InnerSolve],
    chosen: InnerSolve,
    max_solves: int,
    floor: str = "",
) -> str:
    """What the search did, in words, for the run's stop reason."""
    quantity = quantity_name(problem.constraint.family)
    split = SPLIT_WORDS[on]
    count = f"{len(solves)} solve{'s' if len(solves) > 1 else ''}"
    if chosen.meets(kappa) and chosen.kappa_prime == kappa:
        return f"κ honoured on {split} at κ′ = κ: {quantity} {chosen.value:.4f} ≤ κ = {kappa:g}"
    if chosen.meets(kappa):
        return (f"κ honoured on {split}: the surrogate at κ′ = {chosen.kappa_prime:.4g} gives "
                f"{quantity} {chosen.value:.4f} ≤ κ = {kappa:g} (the loosest κ′ that did, of "
                f"{count})")  # fmt: skip
    why = (f"after {count}, the most allowed" if len(solves) >= max_solves
           else f"after {count}: {_search_end(solves, floor)}")  # fmt: skip
    return (f"κ not honoured on {split} {why}; the closest, κ′ = {chosen.kappa_prime:.4g}, "
            f"gives {quantity} {chosen.value:.4f} > κ = {kappa:g}")  # fmt: skip


def _search_end(solves: list[InnerSolve], floor: str) -> str:
    if floor:
        return f"κ′ can go no lower ({floor.rstrip('.')})"
    last = solves[-1].solution.stop
    if last.code in ENDS_SEARCH:
        return f"the last solve ended: {last.text}"
    return "the run's budget is spent"


def _distance(inner: InnerSolve) -> float:
    return inner.value if math.isfinite(inner.value) else math.inf


def _left(budget: Budget, solves: list[InnerSolve]) -> Budget | None:
    """The budget the next solve may use: what the solves so far left of the run's (None when
    nothing is left)."""
    iterations, seconds = budget.max_iterations, budget.max_seconds
    if iterations is not None:
        iterations -= sum(s.iterations for s in solves)
        if iterations < 1:
            return None
    if seconds is not None:
        seconds -= sum(s.seconds for s in solves)
        if seconds <= 0:
            return None
    return dataclasses.replace(budget, max_iterations=iterations, max_seconds=seconds)


def _offset_log(
    records: list[IterationRecord], log: Log | None, solves: list[InnerSolve], kappa_prime: float
) -> Log:
    """The log of one solve: its records with iterations and seconds running on from the solves
    before, κ′ in their state; its final record is left for the search's end."""
    iterations = sum(s.iterations for s in solves)
    seconds = sum(s.seconds for s in solves)

    def offset(record: IterationRecord) -> None:
        if record.kind == "final":
            return
        state = record.state | {"honour.kappa_prime": kappa_prime}
        _emit(records, log, dataclasses.replace(record, iteration=record.iteration + iterations,
                                                seconds=record.seconds + seconds, state=state))  # fmt: skip

    return offset


def _emit(records: list[IterationRecord], log: Log | None, record: IterationRecord) -> None:
    records.append(record)
    if log is not None:
        log(record)


def _number(value: float | None) -> float:
    return math.inf if value is None or not math.isfinite(value) else float(value)


def _check(problem: Problem, solver: str, on: str, max_solves: int) -> None:
    check_honour(solver, problem.constraint is not None, on)
    if on == "val" and not len(problem.data.val):
        raise UserError("κ is honoured on validation, but the data has no validation split; "
                        "honour it on train, or give the split a validation share")  # fmt: skip
    if max_solves < 1:
        raise UserError("honouring κ needs at least one solve")
