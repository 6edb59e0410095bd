"""Honouring κ: a run's promise kept on the exact constrained value, on the training data
(`engine.solvers.exact_train`: the surrogate tightened until the exact training value meets κ)
and, on top of that, on validation: while the model's exact value there exceeds κ, solve again
with a tighter inner tolerance κ′ < κ until it does not.

On validation the search starts from the model that holds κ on the training data, at its κ′
and surrogate, and
1. stops there if its exact validation value v meets κ;
2. while no κ′ has met κ, tightens it: by the ratio the last solve missed by, κ′ ← κ′·κ/v,
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
of that one sample, and each tighter κ′ costs accuracy, so the search
- stops tightening when a re-solve did not bring the value more than σ below the best before it
  (a tighter κ′ buys no difference the split can see);
- stops bisecting when its bracket's two values are within σ of each other;
- when no κ′ met κ, reports the loosest κ′ whose value is within σ of the lowest (statistically
  equivalent models: the one that gives up least);
- says so in its sentence: that a κ below `RESOLVES`·σ is more than the split resolves, and that
  a model meets κ by less than σ (on other data it may not).
Only models that hold κ on the training data are reported. The search stops after `MAX_SOLVES`
solves on validation, when the run's budget is spent or when the run is cancelled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from engine.errors import UserError
from engine.fairness.families import quantity_name
from engine.problem import Problem
from engine.solvers import run_clock
from engine.solvers.budget import Budget
from engine.solvers.driver import Log, solve, until_before_intervals, with_intervals
from engine.solvers.exact_train import (
    FIRST_SHARE,
    LEAST_STEP,
    MOST_ALLOWED,
    MOST_STEP,
    Holding,
    hold_on_train,
    tighter,
)
from engine.solvers.honour_rules import SPLIT_WORDS, check_honour
from engine.solvers.records import Solution
from engine.solvers.solve_sequence import (
    RESOLVES,
    Solve,
    SolveSequence,
    SplitNoise,
    check_sequence,
    split_noise,
)

__all__ = [
    "BRACKET",
    "LEAST_STEP",
    "MAX_SOLVES",
    "MOST_STEP",
    "RESOLVES",
    "SplitNoise",
    "chosen_solve",
    "next_kappa_prime",
    "solve_honouring",
    "solve_run",
    "split_noise",
    "stalled",
]

MAX_SOLVES = 6  # solves on validation after the model that holds κ on train
BRACKET = 0.05  # bisection stops when the bracket on κ′ is narrower than this share of κ


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
    until: float | None = None,
) -> Solution:
    """`engine.solvers.driver.solve`, holding κ on the exact training value and, with `on` =
    "val", honouring it on validation too: the solution of the loosest κ′ whose model meets κ
    there among those that hold it on train, or, when none does, of the one `chosen_solve`
    picks. Its trajectory is that of `engine.solvers.solve_sequence.SolveSequence`: one record
    of kind "honour" per solve, the chosen one carrying the sentence its stop reason ends with.
    Its solves end by `until` (a `run_clock.now()` time) when given, for a run with more to do
    after them in its time budget."""
    _check(problem, solver, on, max_solves)
    sequence = SolveSequence(problem, solver, on, config, budget, log, seed, should_stop, until)
    holding = hold_on_train(sequence)
    if on == "train":
        return sequence.finish(holding.chosen, holding.stop, holding.sentence)
    return _honour_on_validation(sequence, holding, max_solves)


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
    """A run's solve: holding κ on the split `honour` names, or plainly when it is None; with
    the 95 % intervals of its model's held-out values (`engine.solvers.driver.with_intervals`),
    all within the wall time of its budget (`until_before_intervals`), its `wall_seconds` all
    of it."""
    started = run_clock.now()
    until = until_before_intervals(problem, budget, started)
    if honour is None:
        solution = solve(problem, solver, config, budget, log, seed, should_stop, until)
    else:
        solution = solve_honouring(
            problem, solver, honour, config, budget, log, seed, should_stop, until=until
        )
    solution = with_intervals(problem, solution)
    return dataclasses.replace(solution, wall_seconds=run_clock.now() - started)


def _honour_on_validation(sequence: SolveSequence, holding: Holding, max_solves: int) -> Solution:
    """The κ′ search on validation from the model that holds κ on train (`holding`), each solve
    under that model's surrogate at a tighter κ′."""
    kappa, noise = sequence.kappa, sequence.noise
    tried = [holding.chosen]
    end = ""  # why the search ended, in words (read only when no κ′ met κ)
    kappa_prime = (
        next_kappa_prime(kappa, _tried(tried), noise.search_sigma) if holding.held else None
    )
    while kappa_prime is not None:
        if len(tried) - 1 >= max_solves:
            end = MOST_ALLOWED
            break
        end = sequence.attempt(
            dataclasses.replace(holding.chosen.constraint, kappa=kappa_prime),
            time_share=FIRST_SHARE if sequence.timed else None,
        )
        if end:
            break
        tried.append(sequence.last)
        end = sequence.ended()
        if end:
            break
        kappa_prime = next_kappa_prime(kappa, _tried(tried), noise.search_sigma)
        if kappa_prime is None and not any(s.meets(kappa) for s in tried):
            end = _stall_words(sequence, tried)  # only σ ends a search that met κ nowhere
    eligible = [s for s in tried if s.holds(kappa)] or tried
    chosen = eligible[chosen_solve(kappa, _tried(eligible), noise.search_sigma)]
    sentence = honour_sentence(sequence, tried, chosen, end, holding)
    stop = chosen.solution.stop if chosen is not holding.chosen else holding.stop
    return sequence.finish(chosen, stop, sentence)


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
        return tighter(kappa, sorted(tried))
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


def honour_sentence(
    sequence: SolveSequence,
    tried: list[Solve],
    chosen: Solve,
    end: str,
    holding: Holding,
) -> str:
    """What the search did, in words, for the run's stop reason: how κ was held on the
    training data; then, when κ is below what validation resolves, that it is; then whether κ
    was honoured on validation and with which κ′, or, when it was not, why the search ended
    (`end`) and which model it reports."""
    kappa, noise = sequence.kappa, sequence.noise
    quantity = quantity_name(sequence.problem.constraint.family)
    split = SPLIT_WORDS[sequence.on]
    resolution = (
        "" if noise.resolves(kappa) else f"{_resolution_words(quantity, split, noise, kappa)}; "
    )
    if not holding.held:
        return (
            f"{holding.sentence}; {resolution}κ not honoured on {split}: the model does not "
            "hold κ on the training data"
        )
    count = f"{len(tried)} solve{'s' if len(tried) > 1 else ''}"
    if chosen.meets(kappa):
        if chosen is holding.chosen:
            said = f"κ honoured on {split}: {quantity} {chosen.value:.4f} ≤ κ = {kappa:g}"
        else:
            said = (
                f"κ honoured on {split}: the surrogate at κ′ = {chosen.kappa_prime:.4g} gives "
                f"{quantity} {chosen.value:.4f} ≤ κ = {kappa:g} (the loosest κ′ that did, of "
                f"{count})"
            )
        if not (resolution or noise.sigma is None or kappa - chosen.value >= noise.sigma):
            said += (
                f"; it meets κ by {kappa - chosen.value:.4f}, less than the sampling noise "
                f"of {quantity} on {split} (σ ≈ {noise.sigma:.2g}): on other data it may "
                "not"
            )
        return f"{holding.sentence}; {resolution}{said}"
    why = f", {MOST_ALLOWED}" if end == MOST_ALLOWED else f": {end}" if end else ""
    return (
        f"{holding.sentence}; {resolution}κ not honoured on {split} after {count}{why}; "
        f"{_choice_words(quantity, split, kappa, tried, chosen, holding, noise.search_sigma)}"
    )


def _resolution_words(quantity: str, split: str, noise: SplitNoise, kappa: float) -> str:
    return (
        f"{split} ({noise.rows:,} rows) cannot tell {quantity} apart below about "
        f"{RESOLVES * noise.sigma:.2g} ({RESOLVES:g}σ, its sampling noise σ ≈ "
        f"{noise.sigma:.2g}), and κ = {kappa:g} is below that"
    )


def _choice_words(
    quantity: str,
    split: str,
    kappa: float,
    tried: list[Solve],
    chosen: Solve,
    holding: Holding,
    sigma: float | None,
) -> str:
    """Which model a search that met κ nowhere reports, and why."""
    itself = " (the model that holds κ on train)" if chosen is holding.chosen else ""
    model = f"κ′ = {chosen.kappa_prime:.4g}{itself}"
    lowest = min(s.value for s in tried)
    if sigma is None or chosen.value <= lowest:
        return f"the closest, {model}, gives {quantity} {chosen.value:.4f} > κ = {kappa:g}"
    return (
        f"reported: the loosest κ′ within σ ≈ {sigma:.2g} of the lowest {quantity} "
        f"({lowest:.4f}), models {split} cannot tell apart: {model}, {quantity} "
        f"{chosen.value:.4f} > κ = {kappa:g}"
    )


def _stall_words(sequence: SolveSequence, tried: list[Solve]) -> str:
    """Why a search whose last tightening bought no difference the split can see ended."""
    quantity = quantity_name(sequence.problem.constraint.family)
    best = min(s.value for s in tried[:-1])
    last = tried[-1]
    return (
        f"tightening to κ′ = {last.kappa_prime:.4g} gave {quantity} {last.value:.4f}, less "
        f"than its sampling noise σ ≈ {sequence.noise.sigma:.2g} below the best before "
        f"({best:.4f})"
    )


def _tried(solves: list[Solve]) -> list[tuple[float, float]]:
    return [(s.kappa_prime, s.value) for s in solves]


def _check(problem: Problem, solver: str, on: str, max_solves: int) -> None:
    check_honour(solver, problem.constraint.family if problem.constraint else None, on)
    check_sequence(problem, on)
    if max_solves < 1:
        raise UserError("honouring κ needs at least one solve")
