"""A run spec in words, for people reading a report or a page.

Only what decides the run is said, and each fact once: the model's cross-terms come from the
model (the run spec's `prepare.cross_terms` is always False: the problem adds the terms), hidden
layers only for an MLP, the interval I only for families defined on one, and a solver's options
only where they differ from its card's defaults. No torch, no Streamlit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from engine.data.acs import ACSSpec, SyntheticACSSpec
from engine.data.adult import AdultSpec
from engine.data.classic import CLASSIC
from engine.data.csv_source import CSVSpec
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import DataSpec
from engine.errors import UserError
from engine.fairness.families import family_entry, quantity_name
from engine.models import ModelSpec
from engine.objectives import Objective, PairwiseAUCLoss
from engine.runs.spec import RunSpec
from engine.solvers.budget import Budget, BudgetClock
from engine.solvers.catalogue import solver_card
from engine.solvers.honour_rules import HOLDING_WORDS
from engine.status import ACTIVE, WITH_MODEL

Setting = tuple[str, str]

_GROUPING_WORDS = {
    "all": "every value a group",
    "binary": "the most frequent value against all others",
    "auto": "bins for numbers, every value a group otherwise",
}
_SECONDS_PER = (("h", 3600.0), ("min", 60.0))


def describe_spec(spec: RunSpec) -> list[Setting]:
    """(setting, value) pairs in words: data, protected groups, split, model, objective,
    constraint, solver, its options, budget."""
    settings = [
        ("data", _data_words(spec.data)),
        ("protected groups", _grouping_words(spec.prepare)),
        ("split", _split_words(spec)),
        ("model", _model_words(spec.model)),
        ("objective", _objective_words(spec.objective)),
        ("constraint", _constraint_words(spec)),
        ("solver", _solver_words(spec.solver)),
        ("solver options", _options_words(spec)),
        ("budget", _budget_words(spec.budget)),
    ]
    if spec.prepare.drop_protected:
        settings.insert(2, ("features", "the protected attribute is not used as a feature"))
    return settings


def split_settings(
    descriptions: Sequence[Sequence[Setting]],
) -> tuple[list[Setting], list[list[Setting]]]:
    """The settings every run shares (said once), and each run's other settings, in order."""
    if not descriptions:
        return [], []
    shared = [s for s in descriptions[0] if all(s in d for d in descriptions[1:])]
    return shared, [[s for s in d if s not in shared] for d in descriptions]


def run_label(spec: RunSpec) -> str:
    """A short name for a run: its solver alone without a constraint ("unconstrained"), else
    with κ ("idca (κ = 0.05)")."""
    if spec.kappa is None:
        return spec.solver
    return f"{spec.solver} (κ = {spec.kappa:g})"


def _constraint_words(spec: RunSpec) -> str:
    """The constraint, e.g. "EO gap ≤ κ = 0.05"; the interval I in words only for the families
    defined on one; the split κ is honoured on for a run that honours it
    (`engine.solvers.honour`)."""
    family = spec.family
    if family is None:
        return "none (unconstrained)"
    text = f"{quantity_name(family)} ≤ κ = {spec.kappa:g}"
    if family_entry(family).uses_interval:
        text += f" on I = {interval_words(*spec.constraint_interval)}"
    if spec.honour:
        text += f"; κ {HOLDING_WORDS[spec.honour]}"
    return text


def interval_words(alpha: float, beta: float) -> str:
    """I = [α, β) counted from the top of each group (paper 003, Def. 4.1)."""
    return f"each group's top {percent_words(alpha)} to {percent_words(beta)}"


def _data_words(data: DataSpec) -> str:
    if isinstance(data, AdultSpec):
        return "UCI Adult (bundled)"
    if isinstance(data, ACSSpec):
        states = ", ".join(data.states)
        return f"ACS census survey, {states} {data.year} ({data.horizon}), task “{data.task}”"
    if isinstance(data, SyntheticACSSpec):
        return (
            f"synthetic ACS records ({data.n_persons:,} persons, seed {data.seed}) in "
            f"the layout of {data.state} {data.year}, task “{data.task}”"
        )
    if isinstance(data, CSVSpec):
        return f"CSV file {PurePath(data.path).name}, label column “{data.label}”"
    entry = CLASSIC[data.kind]
    name, _ = entry.label(data.label)
    return f"{entry.title}, label “{name}”"


def _grouping_words(prepare: PrepareOptions) -> str:
    parts = [f"{g.attribute} ({_mode_words(g)})" for g in prepare.grouping]
    joined = " × ".join(parts) + (", intersected" if len(parts) > 1 else "")
    size = prepare.min_group_size
    if prepare.small_groups == "merge":
        return f"{joined}; groups under {size:,} rows merged into “other”"
    return f"{joined}; groups under {size:,} rows refused"


def _mode_words(grouping: GroupingSpec) -> str:
    if grouping.mode == "top-k":
        return f"the {grouping.k} most frequent values, the rest pooled as “other”"
    if grouping.mode == "bins":
        bins = grouping.bins
        return f"cut at {', '.join(f'{b:g}' for b in bins)}" if bins else "binned (default cuts)"
    return _GROUPING_WORDS[grouping.mode]


def _split_words(spec: RunSpec) -> str:
    train, val, test = spec.prepare.split
    seed = f"seed {spec.seed}"
    if isinstance(spec.data, AdultSpec):  # its published test split is kept as the test set
        pool = train + val
        return (
            f"{percent_words(train / pool)} train, {percent_words(val / pool)} validation of "
            f"adult.data; test: the published adult.test; {seed}"
        )
    return (
        f"{percent_words(train)} train, {percent_words(val)} validation, {percent_words(test)} test; "
        f"{seed}"
    )


def _model_words(model: ModelSpec) -> str:
    if model.kind == "mlp":
        widths = "-".join(str(h) for h in model.hidden)
        activation = {"relu": "ReLU", "sigmoid": "sigmoid"}[model.activation]
        text = f"MLP {widths}, {activation}"
    else:
        text = "linear"
    return text + (" with group cross-terms" if model.cross_terms else "")


def _objective_words(objective: Objective) -> str:
    if not isinstance(objective, PairwiseAUCLoss):
        return objective.words
    return f"{objective.words}, c1 = {objective.c1:g}, c2 = {objective.c2:g}"


def _solver_words(name: str) -> str:
    try:
        card = solver_card(name)
    except UserError:
        return name  # a run of a solver this version no longer has
    return f"{name}: {card.summary}"


def _options_words(spec: RunSpec) -> str:
    """The options that differ from the card's defaults, "option = value (default d)"; the
    options as given when this version cannot read them (a solver or option that no longer
    exists)."""
    try:
        config = spec.options
    except UserError:
        given = spec.config.items()
        return ", ".join(f"{k} = {_value_words(v)}" for k, v in given) or "defaults"
    default = type(config)()
    changed = [
        f"{f.name} = {_value_words(getattr(config, f.name))} "
        f"(default {_value_words(getattr(default, f.name))})"
        for f in dataclasses.fields(config)
        if getattr(config, f.name) != getattr(default, f.name)
    ]
    return ", ".join(changed) or "defaults"


def _budget_words(budget: Budget) -> str:
    limits = []
    if budget.max_iterations is not None:
        limits.append(f"{budget.max_iterations:,} iterations")
    if budget.max_seconds is not None:
        clock = "solver time" if budget.clock is BudgetClock.SOLVER else "wall time"
        limits.append(f"{_duration_words(budget.max_seconds)} of {clock}")
    if not limits:
        return "none: the solver runs until its own stopping rule"
    return "at most " + " or ".join(limits) + (", whichever comes first" if len(limits) > 1 else "")


def _duration_words(seconds: float) -> str:
    """ "45 s", "5 min", "2.5 h"."""
    for unit, size in _SECONDS_PER:
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def _value_words(value: Any) -> str:
    """An option's value in a settings table: an optional one left out is "unset"."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def percent_words(share: float) -> str:
    """0.05 as "5 %"."""
    return f"{100 * share:.4g} %"


@dataclasses.dataclass(frozen=True)
class SweepProgress:
    """How far a sweep has come: the share of its stored runs that have ended, and in words
    what ended how and which runs the store no longer has."""

    share: float
    text: str


def sweep_progress(statuses: dict[str, str], run_ids: Sequence[str]) -> SweepProgress:
    """The progress of the sweep of `run_ids` whose stored runs have `statuses` (id → status). A
    run deleted from the store is no longer waited for: it is named as such, with how to get
    it back, instead of holding the count below its total for good."""
    stored = [statuses[r] for r in run_ids if r in statuses]
    ended = [s for s in stored if s not in ACTIVE]
    without_model = sum(s not in WITH_MODEL for s in ended)
    parts = [f"{len(ended)} of {len(stored)} runs finished"]
    if without_model:
        parts.append(f"{without_model} without a model")
    deleted = len(run_ids) - len(stored)
    if deleted:
        parts.append(
            f"{deleted} of the sweep's runs {'is' if deleted == 1 else 'are'} no longer "
            "stored (deleted): Run sweep computes them again"
        )
    return SweepProgress(len(ended) / len(stored) if stored else 1.0, "; ".join(parts))
