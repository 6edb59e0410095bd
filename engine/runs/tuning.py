"""A run tuned by its solver's paper protocol (`engine.solvers.tuning`): one trial run per
setting of the card's grid, each an ordinary run of the store (an identical trial is one run,
reused; an interrupted one is queued again like any run), the setting the plan's rule picks on
validation, and the run to report with it: the chosen trial itself, or, where the trials are
shorter than the final run (the plan's fixed options), the run of the chosen setting at full
length. No torch: the trials run in the background workers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.errors import UserError
from engine.runs.spec import RunSpec
from engine.runs.store import Store
from engine.solvers.tuning import Choice, TuningPlan, pick, trial_outcome
from engine.status import FINAL

SPLIT = "val"  # the split every plan chooses on (papers 000, 003, 004)


def tuning_plan(spec: RunSpec) -> TuningPlan:
    """The card's plan for the solver of `spec`, or why it cannot tune."""
    card = spec.card
    if card.tuning is None:
        raise UserError(f"{card.name} declares no tuning: its paper gives no grid to tune on")
    if card.constrained and spec.constraint is None:
        raise UserError(f"tuning {card.name} picks among settings within κ: give a constraint")
    card.tuning.check({f.name: f.default for f in dataclasses.fields(card.Config)})
    return card.tuning


def trial_specs(spec: RunSpec) -> list[RunSpec]:
    """One run per setting of the grid: `spec` with the plan's fixed options and the setting
    over its own options. A plan whose fixed options make its trials shorter runs them as its
    paper does, at κ alone: paper 003 (G.2.2) compares T and ε by the plain algorithm's model
    after 50 outer iterations, and holding κ on a split (`RunSpec.honour`, several solves of
    the refined surrogate) is the final run's work; a trial held to it would spend most of its
    budget refining and be compared at unequal progress."""
    plan = tuning_plan(spec)
    honour = None if plan.fixed else spec.honour
    return [
        dataclasses.replace(spec, config={**spec.config, **plan.fixed, **setting}, honour=honour)
        for setting in plan.settings()
    ]


@dataclass(frozen=True)
class TunedRun:
    """The choice among the stored trials of a spec, and the spec of the run to report (None
    when no trial ended with a model)."""

    choice: Choice
    final: RunSpec | None


def tuned_run(store: Store, spec: RunSpec) -> TunedRun | None:
    """The plan's choice among the trials of `spec` in `store`, None while any is queued or
    running (or not yet queued)."""
    trials = trial_specs(spec)
    return _choice(store, spec, trials, store.statuses([t.run_id for t in trials]))


def _choice(
    store: Store, spec: RunSpec, trials: list[RunSpec], statuses: dict[str, str]
) -> TunedRun | None:
    """`tuned_run` from the trials' `statuses` (`Store.statuses`)."""
    if any(statuses.get(trial.run_id) not in FINAL for trial in trials):
        return None
    plan = tuning_plan(spec)
    kappa = spec.constraint.kappa if spec.constraint is not None else None
    outcomes = []
    for setting, trial in zip(plan.settings(), trials, strict=True):
        validation = store.metrics(trial.run_id).get(SPLIT, {})
        status, stop = statuses[trial.run_id], store.run(trial.run_id).stop_code
        outcomes.append(trial_outcome(plan, setting, status, validation, kappa, trial.run_id, stop))
    choice = pick(plan, outcomes, constrained=spec.constraint is not None)
    if choice.setting is None:
        return TunedRun(choice, None)
    # without fixed options this is the chosen trial's own spec: its run is the one reported
    return TunedRun(choice, dataclasses.replace(spec, config={**spec.config, **choice.setting}))


@dataclass(frozen=True)
class TuningProgress:
    """Where the tuning of `spec` stands in a store: its trials, how many are in the store and
    how many have ended, and the choice once all have (None before)."""

    spec: RunSpec
    trials: tuple[RunSpec, ...]
    stored: int
    ended: int
    tuned: TunedRun | None


def tuning_progress(store: Store, spec: RunSpec) -> TuningProgress:
    """How far the tuning of `spec` has got (the trials' statuses read once)."""
    trials = trial_specs(spec)
    statuses = store.statuses([t.run_id for t in trials])
    ended = sum(status in FINAL for status in statuses.values())
    tuned = _choice(store, spec, trials, statuses) if ended == len(trials) else None
    return TuningProgress(spec, tuple(trials), len(statuses), ended, tuned)


def tunes(spec: RunSpec) -> bool:
    """Whether the solver of `spec` can be tuned on its problem (`tuning_plan` without why)."""
    card = spec.card
    return card.tuning is not None and (spec.constraint is not None or not card.constrained)
