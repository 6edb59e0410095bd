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

The exact value is measured on a sample, the honoured split, and so carries sampling noise: its
standard error σ for a model whose groups do not differ (`engine.fairness.noise`: for a
difference of two groups' shares √(p(1 − p)(1/n_a + 1/n_b)), pSP's divided by the width of I).
On Adult's validation split (8,141 rows, groups of 2,700 and 5,400) σ of pSP on
I = [5 %, 30 %) is 0.043; two models whose values differ by less than σ cannot be told apart
there, and a κ below about `RESOLVES`·σ cannot be told from zero (groups that do not differ at
all give pSP above 2σ one time in ten). Chasing such differences selects models by the noise
of that one sample, and each tighter κ′ costs accuracy, so where σ is known and κ is honoured
on validation the search
- stops tightening when a re-solve did not bring the value more than σ below the best before it
  (a tighter κ′ buys no difference the split can see);
- stops bisecting when its bracket's two values are within σ of each other;
- when no κ′ met κ, reports the loosest κ′ whose value is within σ of the lowest (statistically
  equivalent models: the one that gives up least), which is κ itself when no tighter solve beat
  it by more than σ;
- says so in its sentence: that a κ below `RESOLVES`·σ is more than the split resolves, and that
  a model meets κ by less than σ (on other data it may not).
On train the model is fitted to the very rows it is measured on: its value there is no noisy
measurement of something else but the quantity the user asked to bring to κ, and a tighter κ′
moves it as surely as the optimiser does; so there, and for a family without a σ (`value_noise`
is None), the search runs on the values alone: it tightens until a κ′ meets κ or its solves run
out, and reports the closest when none did. Its sentence still says when κ is below what the
split resolves and when the margin is under σ, which is what the value says of new data.

Each solve starts from the model of the one before when the solver takes a warm start (its card
says why), so a re-solve costs a fraction of the first. The search stops after `max_solves`
solves, when the run's budget is spent or when the run is cancelled.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from engine.errors import UserError
from engine.fairness.families import quantity_name
from engine.fairness.noise import value_noise
from engine.models import Params
from engine.problem import Problem
from engine.solvers.catalogue import solver_card
from engine.solvers.driver import Log, solve
from engine.solvers.honour_rules import HONOUR, SPLIT_WORDS, check_honour
from engine.solvers.options import Budget
from engine.solvers.records import KAPPA_PRIME, IterationRecord, Solution
from engine.status import StopCode, StopReason

MAX_SOLVES = 6  # the first solve and five re-solves: bisection then narrows κ′ to ~κ/8
LEAST_STEP, MOST_STEP = 0.25, 0.9  # κ′ shrinks to between a quarter and 90 % of itself per miss
BRACKET = 0.05  # bisection stops when the bracket on κ′ is narrower than this share of κ
RESOLVES = 2.0  # a split resolves values above about this many σ of its sampling noise
ENDS_SEARCH = (StopCode.CANCELLED, StopCode.NON_FINITE)  # a solve that ends so ends the search
MOST_ALLOWED = "the most allowed"


@dataclass(frozen=True)
class SplitNoise:
    """How precisely the honoured split measures the constrained value: the split, its rows
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
    solution of the loosest κ′ ≤ κ whose model meets κ there, or, when none does, of the one
    `chosen_solve` picks.

    Its trajectory holds every solve's records in turn (iterations and seconds running on from
    one solve to the next, the solve's κ′ in each record's state as "honour.kappa_prime"),
    then one record of kind "honour" per solve (values "kappa_prime", "value", "accuracy",
    "iterations", and the split's "sigma" and "rows"; state "split" and "chosen", and on the
    chosen one "sentence": what the search did, in the words it adds to the stop reason), then
    the final record of the chosen solve; its iterations and seconds are those of all the
    solves."""
    _check(problem, solver, on, max_solves)
    budget = budget or Budget()
    kappa = problem.constraint.kappa
    noise = split_noise(problem, on)
    warm = bool(solver_card(solver).warm_start)
    solves: list[InnerSolve] = []
    records: list[IterationRecord] = []
    kappa_prime: float | None = kappa
    start: Params | None = None
    end = ""  # why the search ended, in words (read only when no κ′ met κ)
    while kappa_prime is not None:
        left = _left(budget, solves)
        if left is None:
            end = "the run's budget is spent"
            break
        try:
            tightened = dataclasses.replace(problem.constraint, kappa=kappa_prime)
            inner = dataclasses.replace(
                problem, constraint=tightened, start=start if warm else None
            )
        except UserError as error:  # κ′ below what the family allows on these data
            if not solves:
                raise
            end = f"κ′ can go no lower ({str(error).rstrip('.')})"
            break
        solution = solve(inner, solver, config, left, _offset_log(records, log, solves, kappa_prime),
                         seed, should_stop)  # fmt: skip
        metrics = solution.metrics.get(on, {})
        solves.append(InnerSolve(kappa_prime, _number(metrics.get("constraint")),
                                 metrics.get("accuracy"), solution.iterations, solution.seconds,
                                 solution))  # fmt: skip
        start = solution.params
        if solution.stop.code in ENDS_SEARCH:
            end = f"the last solve ended: {solution.stop.text}"
            break
        if len(solves) >= max_solves:
            end = MOST_ALLOWED
            break
        kappa_prime = next_kappa_prime(kappa, _tried(solves), noise.search_sigma)
        if kappa_prime is None and not any(s.meets(kappa) for s in solves):
            end = _stall_words(problem, solves, noise)  # only σ ends a search that met κ nowhere
    return _result(problem, on, kappa, solves, records, log, noise, end)


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


def next_kappa_prime(
    kappa: float, tried: list[tuple[float, float]], sigma: float | None = None
) -> float | None:
    """The next inner tolerance to try after the solves `tried` (κ′, exact value, in the order
    they ran), or None when the search is done: the first κ′ met κ, the bracket is narrow
    enough, or, with the value's noise `sigma`, its two ends are within σ of each other or the
    last tightening brought the value no more than σ below the best before it."""
    if tried[0][1] <= kappa:
        return None  # κ itself is honoured
    meeting = [(k, v) for k, v in tried if v <= kappa]
    if not meeting:
        if sigma is not None and len(tried) > 1 and stalled(tried, sigma):
            return None
        return _tighter(kappa, sorted(tried))
    loosest, meets_value = max(meeting)
    tightest, misses_value = min((k, v) for k, v in tried if v > kappa and k > loosest)
    if tightest - loosest <= BRACKET * kappa:
        return None
    if sigma is not None and misses_value - meets_value <= sigma:
        return None  # every κ′ between gives a model the split cannot tell from these two
    return 0.5 * (loosest + tightest)


def stalled(tried: list[tuple[float, float]], sigma: float) -> bool:
    """Whether the last of the solves `tried` (κ′, value, in the order they ran) brought the
    value no more than `sigma` below the best of those before it."""
    return tried[-1][1] > min(v for _, v in tried[:-1]) - sigma


def chosen_solve(kappa: float, tried: list[tuple[float, float]], sigma: float | None) -> int:
    """The index of the solve among `tried` (κ′, exact value) whose model the search reports:
    the loosest κ′ that met κ; when none did, the loosest whose value is within `sigma` of the
    lowest (the models the split cannot tell apart, the one that gives up least), or without a
    σ the lowest."""
    indices = range(len(tried))
    meeting = [i for i in indices if tried[i][1] <= kappa]
    if meeting:
        return max(meeting, key=lambda i: tried[i][0])
    lowest = min(indices, key=lambda i: tried[i][1])
    if sigma is None:
        return lowest
    within = [i for i in indices if tried[i][1] <= tried[lowest][1] + sigma]
    return max(within, key=lambda i: tried[i][0])


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
    noise: SplitNoise,
    end: str,
) -> Solution:
    chosen = solves[chosen_solve(kappa, _tried(solves), noise.search_sigma)]
    iterations = sum(s.iterations for s in solves)
    seconds = sum(s.seconds for s in solves)
    sentence = honour_sentence(problem, on, kappa, solves, chosen, noise, end)
    for index, inner in enumerate(solves):
        state = {"split": on, "chosen": "yes" if inner is chosen else "no"}
        record = IterationRecord(
            iteration=index, seconds=seconds, kind=HONOUR,
            values={"kappa_prime": inner.kappa_prime, "value": inner.value,
                    "accuracy": inner.accuracy, "iterations": float(inner.iterations),
                    "sigma": noise.sigma, "rows": float(noise.rows)},
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
    noise: SplitNoise,
    end: str = "",
) -> str:
    """What the search did, in words, for the run's stop reason: first, when κ is below what
    the split resolves, that it is; then whether κ was honoured and with which κ′, or, when it
    was not, why the search ended (`end`) and which model it reports."""
    quantity = quantity_name(problem.constraint.family)
    split = SPLIT_WORDS[on]
    resolution = (
        "" if noise.resolves(kappa) else f"{_resolution_words(quantity, split, noise, kappa)}; "
    )
    count = f"{len(solves)} solve{'s' if len(solves) > 1 else ''}"
    if chosen.meets(kappa):
        if chosen.kappa_prime == kappa:
            said = f"κ honoured on {split} at κ′ = κ: {quantity} {chosen.value:.4f} ≤ κ = {kappa:g}"
        else:
            said = (f"κ honoured on {split}: the surrogate at κ′ = {chosen.kappa_prime:.4g} gives "
                    f"{quantity} {chosen.value:.4f} ≤ κ = {kappa:g} (the loosest κ′ that did, of "
                    f"{count})")  # fmt: skip
        if resolution or noise.sigma is None or kappa - chosen.value >= noise.sigma:
            return resolution + said
        return (f"{said}; it meets κ by {kappa - chosen.value:.4f}, less than the sampling noise "
                f"of {quantity} on {split} (σ ≈ {noise.sigma:.2g}): on other data it may not")  # fmt: skip
    why = f", {MOST_ALLOWED}" if end == MOST_ALLOWED else f": {end}"
    return (f"{resolution}κ not honoured on {split} after {count}{why}; "
            f"{_choice_words(quantity, split, kappa, solves, chosen, noise.search_sigma)}")  # fmt: skip


def _resolution_words(quantity: str, split: str, noise: SplitNoise, kappa: float) -> str:
    return (f"{split} ({noise.rows:,} rows) cannot tell {quantity} apart below about "
            f"{RESOLVES * noise.sigma:.2g} ({RESOLVES:g}σ, its sampling noise σ ≈ "
            f"{noise.sigma:.2g}), and κ = {kappa:g} is below that")  # fmt: skip


def _choice_words(
    quantity: str,
    split: str,
    kappa: float,
    solves: list[InnerSolve],
    chosen: InnerSolve,
    sigma: float | None,
) -> str:
    """Which model a search that met κ nowhere reports, and why."""
    itself = " (κ itself)" if chosen.kappa_prime == kappa else ""
    model = f"κ′ = {chosen.kappa_prime:.4g}{itself}"
    lowest = min(s.value for s in solves)
    if sigma is None or chosen.value <= lowest:
        return f"the closest, {model}, gives {quantity} {chosen.value:.4f} > κ = {kappa:g}"
    return (f"reported: the loosest κ′ within σ ≈ {sigma:.2g} of the lowest {quantity} "
            f"({lowest:.4f}), models {split} cannot tell apart: {model}, {quantity} "
            f"{chosen.value:.4f} > κ = {kappa:g}")  # fmt: skip


def _stall_words(problem: Problem, solves: list[InnerSolve], noise: SplitNoise) -> str:
    """Why a search whose last tightening bought no difference the split can see ended."""
    quantity = quantity_name(problem.constraint.family)
    best = min(s.value for s in solves[:-1])
    last = solves[-1]
    return (f"tightening to κ′ = {last.kappa_prime:.4g} gave {quantity} {last.value:.4f}, less "
            f"than its sampling noise σ ≈ {noise.sigma:.2g} below the best before "
            f"({best:.4f})")  # fmt: skip


def _tried(solves: list[InnerSolve]) -> list[tuple[float, float]]:
    return [(s.kappa_prime, s.value) for s in solves]


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
        state = record.state | {KAPPA_PRIME: kappa_prime}
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
