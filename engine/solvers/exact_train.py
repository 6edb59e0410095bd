"""Holding κ on the exact training value: when a solver's surrogate holds but its model's exact
constrained value on the training data exceeds κ, the surrogate itself is tightened, each solve
starting from the model before (when the solver takes a warm start), until the exact value
meets κ or the run's budget or solves run out.

A surrogate stands for an indicator (paper 003's ramp, eq. 15; the sigmoids of paper 001), and
a model feasible for it at tolerance ε can realise an exact value above κ: by the surrogate's
coarseness (App. F: the grid Î and the ramp's width) and by ε itself (each of pSP's rows may
exceed its band by ε, so the exact value by up to 2ε/(β − α)). So, after the solver's own solve:
1. where the family's surrogate has a resolution (`engine.fairness.families.Family.refine`),
   the first miss refines it: the violated ranks join Î, the ramp narrows to the scores' spread
   (`engine.fairness.refine`); a later miss refines it again only when that changes it by much
   (`MUCH_FINER`);
2. otherwise the inner κ′ < κ the surrogate is held to tightens: by the ratio the last solve
   missed by, then where the line through the two tightest misses at the same surrogate crosses
   κ (a secant on v(κ′)), between `LEAST_STEP` and `MOST_STEP` of κ′ at a time. A step that
   overshot (its exact value rose above the lowest before it: a κ′ the solver could not reach
   from there, whose model is worse) bounds κ′ from below: the next step goes at most halfway
   to it, and starts from the model of the lowest exact value instead. For a family whose
   surrogate has no resolution, the first κ′ step also lowers the solver's tolerance to
   `TOLERANCE_SHARE` of κ: each row holds κ′ only within ε, and an ε near κ would leave κ′
   alone to make up for it.
A run that starts warm from a neighbour held to a tighter κ (a continuation sweep) takes step 1
before its first solve, at the start model's scores (`first_solve`). The first solve that
meets κ on the training data is reported. When none does within
`MAX_SOLVES`, or two κ′ steps in a row bring the value no lower, the solve with the lowest exact
value is reported and the run says that no model of this kind met κ there.

Holding κ costs at most two more solves' iterations: the solves after the solver's own take
together no more iterations than it took, each at most half of what is left of that share.
When the first solve that holds κ was one of them and that share cut it short, it runs on at its
κ′ from its own model for at most as many iterations again, until the solver's stopping rule
ends it (`finish_held`): a model the search found but left unfinished is not the model the user
asked for, and the share alone would cut every such solve short, whatever the run's budget.
Each starts from a model the solve before left near its optimum, and the first (the
refinement, the largest change of the problem) gets the most. Without that share a solver with no stopping rule of its
own (ssg, the SGD baselines) runs its whole T again on every solve, and holding costs up to
seven times a plain run. The share is counted in iterations, not seconds, so that a run gives
the same model whatever else the machine is doing; a refined surrogate makes an iteration
dearer (pSP's Î grown from 10 to 200 ranks at a small κ), so the wall time can exceed twice the
plain run's a little.

A solver that takes a warm start gives its own solve at most `FIRST_SHARE` of the run's time
budget. One that runs until its budget ends (PLADA and the SGD methods stop by the clock, as
their papers do) would otherwise spend all of it there, and a miss would leave no time to hold
κ. When that share ends the solve, the run counts in time, not iterations: each later solve
takes `FIRST_SHARE` of the time left, and the solve that holds κ runs on from its model with
all the time left (on validation, a share of it, for the search there: `finish_held`).

The training data is what the solver fits, so its exact value is no noisy measurement of the
model but the quantity the user asked to bring to κ; how far it carries to new data is the
held-out verdict's to say (`engine.verdict`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import family_entry, quantity_name
from engine.fairness.refine import TOLERANCE_SHARE, Refinement
from engine.solvers.catalogue import solver_card
from engine.solvers.solve_sequence import Solve, SolveSequence
from engine.status import RunStatus, StopCode, StopReason

MAX_SOLVES = 8  # the solver's own solve and seven more
LEAST_STEP, MOST_STEP = 0.25, 0.9  # κ′ shrinks to between a quarter and 90 % of itself per miss
MUCH_FINER = 2.0  # a later refinement is taken when it narrows τ or grows Î this many times
STALLED_STEPS = 2  # κ′ steps in a row that bring the value no lower end the search
MOST_ALLOWED = "the most allowed"
SHARE = "holding κ's share of iterations (as many as the solver's own solve took)"
LEAST_SHARE = 1 / 16  # of the first solve's: a smaller share is too little for a solve
SHARE_SPENT = f"{SHARE} is spent"
FIRST_SHARE = 0.5  # of a run's time budget: the most the solver's own solve of a warm one takes


@dataclass(frozen=True)
class Holding:
    """How holding κ on the training data ended: the solve the run reports, whether its exact
    training value meets κ, the stop the run ends with and what was done, in words."""

    chosen: Solve
    held: bool
    stop: StopReason
    sentence: str


def hold_on_train(sequence: SolveSequence, max_solves: int = MAX_SOLVES) -> Holding:
    """Solve `sequence`'s problem, then tighten its surrogate until the exact training value
    meets κ (see the module's text); the first solve is the solver's own, under the run's
    constraint."""
    kappa = sequence.kappa
    sequence.run(*first_solve(sequence), time_share=FIRST_SHARE if sequence.warm else None)
    end = ""
    while not sequence.last.holds(kappa):
        end = sequence.ended()
        if end:
            break
        if len(sequence.solves) >= max_solves:
            end = MOST_ALLOWED
            break
        if _stalled(sequence.solves):
            end = "tightening κ′ brought the exact value no lower"
            break
        most, time_share = None, FIRST_SHARE
        if not sequence.timed:
            most, time_share = _half_the_share_left(sequence.solves), None
            if most is None:
                end = SHARE_SPENT
                break
        end = sequence.attempt(
            *next_solve(sequence), after=base_solve(sequence), most=most, time_share=time_share
        )
        if end:
            break
    return finish_held(sequence, _holding(sequence, end))


def finish_held(sequence: SolveSequence, holding: Holding) -> Holding:
    """`holding`, or, when its chosen solve held κ but a share cut it short (holding κ's share
    of iterations, or the share of time the solver's own solve was given: its stop is the
    sequence's own cap), that solve run on at its κ′ from its own model with the solver's
    stopping rule, within the run's budget and at most as many iterations as the solver's own
    solve took: reported when its model still holds κ on the training data, otherwise the cut
    one is."""
    chosen, own = holding.chosen, sequence.solves[0]
    cut = chosen.solution.stop.code is StopCode.SOLVE_SHARE
    # a solver whose own solve its stopping rule ended, or its share of the time: one that its
    # own iteration count ended (ssg runs all its T) would only spend the iterations again, to
    # end on them as well
    if not (
        holding.held
        and cut
        and sequence.warm
        and (sequence.timed or own.solution.status is RunStatus.CONVERGED)
    ):
        return holding
    most, time_share = own.solution.iterations, None
    if sequence.timed:  # the time left, or on validation a share of it for the search there
        most, time_share = None, FIRST_SHARE if sequence.on == "val" else None
    if sequence.attempt(
        chosen.constraint, "", chosen.config, after=chosen, most=most, time_share=time_share
    ):
        return holding  # the run's budget is spent
    finished = sequence.last
    if not finished.holds(sequence.kappa):
        return _holding(sequence, "", chosen)
    ran_on = _holding(sequence, "", finished)
    share = "the share of the run's time it was given" if chosen.time_cut else SHARE
    return dataclasses.replace(
        ran_on, sentence=f"{ran_on.sentence}, its solve run on after {share} cut it short"
    )


def _half_the_share_left(solves: list[Solve]) -> int | None:
    """Half of what holding κ has left of its share, as many iterations as the first (the
    solver's own) solve took less those of the solves after it; None when that is less than
    `LEAST_SHARE` of the first's."""
    first, later = solves[0].solution.iterations, [s.solution.iterations for s in solves[1:]]
    iterations = (first - sum(later)) // 2
    if iterations < max(1.0, LEAST_SHARE * first):
        return None
    return iterations


def tighter(kappa: float, misses: list[tuple[float, float]]) -> float:
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


def first_solve(sequence: SolveSequence) -> tuple[ConstraintSpec, str, object | None]:
    """The first solve's constraint, what it refines and the solver's options: the run's own;
    or, for a run that starts warm from another model (a continuation sweep's neighbour, a
    feasible tighter model) whose family's surrogate has a resolution, that surrogate refined
    to the start model's scores. The start was itself held to its κ on the exact value, and the
    run's coarse surrogate would first lead it away from there (a κ looser than the start's,
    with the ramp at its width of 1, lets the exact value rise well above κ) for a solve that
    the refinement then mostly undoes."""
    problem = sequence.problem
    run = (problem.constraint, "", None)
    if problem.start is None or not sequence.warm:
        return run
    refined = _refined(sequence, problem.constraint, problem.init_params(), sequence.config)
    return refined or run


def next_solve(sequence: SolveSequence) -> tuple[ConstraintSpec, str, object | None]:
    """The constraint of the next solve, what it refines ("" for a κ′ step) and the solver's
    options (None: those of the solve before)."""
    base = base_solve(sequence)
    refine = family_entry(base.constraint.family).refine
    if refine is not None:
        first = not any(s.refined for s in sequence.solves)
        refined = _refined(
            sequence,
            base.constraint,
            base.solution.params,
            base.config,
            lambda r: first or _much_finer(r.levels, r.temperature),
        )
        if refined is not None:
            return refined
    current = _since_refined(sequence.solves)
    overshot = _overshot(current)
    missed = [s for s in current if all(s is not o for o in overshot)]
    misses = sorted((s.kappa_prime, s.train_value) for s in missed)
    kappa_prime = tighter(sequence.kappa, misses)
    floor = max((s.kappa_prime for s in overshot), default=0.0)
    if kappa_prime <= floor:
        kappa_prime = 0.5 * (floor + base.kappa_prime)
    config, words = base.config, ""
    if refine is None:  # a row held to κ′ within ε: ε a small share of κ, as a refinement's
        config, words = with_tolerance(sequence, base.config, TOLERANCE_SHARE * sequence.kappa)
    return dataclasses.replace(base.constraint, kappa=kappa_prime), words, config


def _refined(
    sequence: SolveSequence,
    constraint: ConstraintSpec,
    params: object,
    config: object | None,
    take: Callable[[Refinement], bool] = lambda refinement: True,
) -> tuple[ConstraintSpec, str, object | None] | None:
    """`constraint`'s surrogate refined to the training scores of the model `params`, in
    words, with the solver's options `config` at the tolerance the refinement asks; None when
    the family has no refinement, the surrogate is as fine as these scores ask, or `take`
    declines it."""
    refine = family_entry(constraint.family).refine
    if refine is None:
        return None
    train = sequence.problem.data.train
    h = sequence.problem.scores(params, "train")
    refinement = refine(constraint, sequence.kappa, h, train.groups, train.y)
    if refinement is None or not take(refinement):
        return None
    config, words = with_tolerance(sequence, config, refinement.tolerance)
    return refinement.spec, ", ".join(filter(None, (refinement.words, words))), config


def _overshot(solves: list[Solve]) -> list[Solve]:
    """The κ′ steps among `solves` (under one surrogate, in order) whose exact training value
    rose above the lowest before them."""
    return [
        s
        for i, s in enumerate(solves)
        if i > 0 and s.train_value > min(t.train_value for t in solves[:i])
    ]


def base_solve(sequence: SolveSequence) -> Solve:
    """The solve the next starts from: the last, unless a κ′ step overshot since the surrogate
    last changed; then the one of lowest exact training value under it."""
    current = _since_refined(sequence.solves)
    if not _overshot(current):
        return current[-1]
    return min(reversed(current), key=lambda s: s.train_value)


def with_tolerance(
    sequence: SolveSequence, config: object | None, tolerance: float
) -> tuple[object | None, str]:
    """The solver's options with its tolerance option (its card's `tolerance_option`) lowered to
    `tolerance` where it is above it, and what changed in words; unchanged for a solver without
    one."""
    name = solver_card(sequence.solver).tolerance_option
    if not name:
        return config, ""
    config = config if config is not None else solver_card(sequence.solver).Config()
    current = getattr(config, name)
    if current <= tolerance:
        return config, ""
    return dataclasses.replace(config, **{name: tolerance}), f"{name} {current:g} → {tolerance:.2g}"


def _much_finer(levels: tuple[int, int], temperature: tuple[float, float]) -> bool:
    return levels[1] >= MUCH_FINER * levels[0] or temperature[1] * MUCH_FINER <= temperature[0]


def _since_refined(solves: list[Solve]) -> list[Solve]:
    """The solves under the current surrogate: from the last that refined it (or the first)."""
    start = max((i for i, s in enumerate(solves) if s.refined), default=0)
    return solves[start:]


def _stalled(solves: list[Solve]) -> bool:
    """Whether the last `STALLED_STEPS` solves were κ′ steps that brought the exact training
    value no lower than the lowest before them."""
    steps = _since_refined(solves)[1:]
    if len(steps) < STALLED_STEPS or any(s.refined for s in steps[-STALLED_STEPS:]):
        return False
    before = min(s.train_value for s in solves[: len(solves) - STALLED_STEPS])
    return all(s.train_value >= before for s in solves[-STALLED_STEPS:])


def _holding(sequence: SolveSequence, end: str, chosen: Solve | None = None) -> Holding:
    """How holding ended: `chosen` (by default the first solve that holds κ, else the one of
    the lowest exact value) reported, and why, in words."""
    kappa, solves = sequence.kappa, sequence.solves
    holding = [s for s in solves if s.holds(kappa)]
    if chosen is None:
        chosen = holding[0] if holding else min(solves, key=lambda s: s.train_value)
    quantity = quantity_name(sequence.problem.constraint.family)
    count = f"{len(solves)} solve{'s' if len(solves) > 1 else ''}"
    how = _changes(sequence, chosen)
    if holding:
        if len(solves) == 1 and not chosen.refined:
            sentence = (
                f"κ held on the training data by the first solve: exact "
                f"{quantity} {chosen.train_value:.4f} ≤ κ = {kappa:g}"
            )
        else:
            sentence = (
                f"κ held on the training data after {count}: exact {quantity} "
                f"{chosen.train_value:.4f} ≤ κ = {kappa:g}{how}"
            )
        return Holding(chosen, True, chosen.solution.stop, sentence)
    why = f", {MOST_ALLOWED}" if end == MOST_ALLOWED else f" ({end})" if end else ""
    sentence = (
        f"κ not held on the training data after {count}{why}: the lowest exact "
        f"{quantity}, {chosen.train_value:.4f} > κ = {kappa:g}{how}, is reported"
    )
    return Holding(chosen, False, _unheld_stop(sequence, chosen, end), sentence)


def _unheld_stop(sequence: SolveSequence, chosen: Solve, end: str) -> StopReason:
    """A run that did not hold κ on the training data does not end "converged": a budget that
    ended it says so (the run's, holding's share of iterations, or the solver's own iteration
    cap on its last solve: a longer one may hold κ), a solve that ended the search (cancelled,
    diverged) keeps its own stop, and otherwise no model of this kind met κ there."""
    last = sequence.last.solution.stop
    if sequence.ended():
        return last
    spent = sequence.spent()
    if spent is not None:
        return StopReason(spent, "the run's budget ended before κ held on the training data")
    if end == SHARE_SPENT:
        ended = f"{SHARE} ended before κ held on the training data"
        return StopReason(StopCode.SOLVE_SHARE, ended)
    if last.status is RunStatus.BUDGET:
        return StopReason(
            last.code, f"{last.text} in its last solve, before κ held on the training data"
        )
    return StopReason(StopCode.KAPPA_UNMET, "no model of this kind met κ on the training data")


def _changes(sequence: SolveSequence, chosen: Solve) -> str:
    """How the chosen solve's constraint differs from the run's, as a clause: ", the surrogate
    refined (Î 10 → 47 ranks, ramp width τ 1 → 0.032), at κ′ = 0.0389"; "" for none."""
    original, spec = sequence.problem.constraint, chosen.constraint
    parts = []
    if spec.family == "pSP" and spec.rank_levels().size != original.rank_levels().size:
        parts.append(f"Î {original.rank_levels().size} → {spec.rank_levels().size} ranks")
    if spec.temperature != original.temperature:
        kind = "ramp width" if spec.surrogate == "ramp" else "sigmoid temperature"
        parts.append(f"{kind} τ {original.temperature:.3g} → {spec.temperature:.3g}")
    refined = f", the surrogate refined ({', '.join(parts)})" if parts else ""
    inner = f", at κ′ = {spec.kappa:.4g}" if spec.kappa != original.kappa else ""
    return refined + inner + _tolerance_change(sequence, chosen)


def _tolerance_change(sequence: SolveSequence, chosen: Solve) -> str:
    """ ", epsilon 0.005 → 0.00062" when the chosen solve held the rows to a lower tolerance
    than the run's options; "" otherwise."""
    name = solver_card(sequence.solver).tolerance_option
    if not name:
        return ""
    default = solver_card(sequence.solver).Config()
    before = getattr(sequence.config or default, name)
    after = getattr(chosen.config or default, name)
    return f", {name} {before:g} → {after:.2g}" if after != before else ""
