"""How a solver tunes itself by its paper's protocol: a grid of option values, the options every
trial holds fixed (a shorter run than the final one, where the paper tunes on one), and the
rule that picks a trial on validation. Declared on the solver's card (`SolverCard.tuning`); the
runs are made by `engine.runs.tuning`. No torch.

Paper 003 (G.2.2) picks T and ε "by validation accuracy after 50 outer iterations", then K on
validation (IDCA's own snapshots do that); its baselines' steps the same way (G.4.2, G.7).
Paper 000 (App. B, Tables 5–12) ran each setting for 30 s and chose the lowest validation loss
among those whose validation violation was small. Both choose among the settings that meet the
constraint on validation; when none does, the rule has no answer, and the trial nearest to κ
(the smallest exact value on validation) is taken and said to miss it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from engine.errors import UserError
from engine.status import StopCode


class Score(StrEnum):
    """What a rule ranks the trials that meet κ on validation by, with its direction."""

    ACCURACY = "accuracy"  # highest (paper 003 G.2.2)
    LOSS = "loss"  # lowest (paper 000 App. B)
    AUC = "auc"  # highest (paper 004 App. E.3)

    @property
    def higher_is_better(self) -> bool:
        return self is not Score.LOSS


@dataclass(frozen=True)
class TuningPlan:
    """`grid` maps an option to the values its paper tried, in the paper's order; `fixed` are
    the options every trial holds (the final run drops them: e.g. IDCA's 50 outer iterations);
    `score` what picks among the trials that meet κ on validation; `source` the paper's place."""

    grid: Mapping[str, tuple[Any, ...]]
    score: Score
    source: str
    fixed: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.grid or any(len(values) == 0 for values in self.grid.values()):
            raise ValueError("a tuning grid names at least one option, each with a value")
        object.__setattr__(self, "grid", MappingProxyType(dict(self.grid)))
        object.__setattr__(self, "fixed", MappingProxyType(dict(self.fixed)))

    def settings(self) -> list[dict[str, Any]]:
        """Every combination of the grid's values, the first option varying slowest."""
        names = list(self.grid)
        return [
            dict(zip(names, values, strict=True))
            for values in itertools.product(*self.grid.values())
        ]

    def check(self, options: Mapping[str, Any]) -> None:
        """Refuse a plan naming an option the solver does not have (`options`: its defaults)."""
        unknown = sorted((set(self.grid) | set(self.fixed)) - set(options))
        if unknown:
            raise UserError(f"tuning names options the solver does not have: {unknown}")

    def words(self) -> str:
        """The plan for people: "τ ∈ {0.01, 0.05} × η ∈ {…}, by validation loss (paper 000 …)"."""
        grid = " × ".join(
            f"{name} ∈ {{{', '.join(map(str, values))}}}" for name, values in self.grid.items()
        )
        best = "highest" if self.score.higher_is_better else "lowest"
        fixed = ", ".join(f"{name} = {value}" for name, value in self.fixed.items())
        held = f"; each trial with {fixed}" if fixed else ""
        return (
            f"{grid}{held}; the {best} validation {self.score} among the settings within "
            f"κ on validation ({self.source})"
        )


# the ends of a trial whose model counts (a failed, cancelled or diverged trial is not chosen)
ENDS_WITH_MODEL = ("converged", "budget")


@dataclass(frozen=True)
class Trial:
    """One setting's outcome: how its run ended, its validation score and exact constrained
    value (None where it has none), whether that meets κ (None: no constraint or no value), its
    run where it ran in the store and its stop code where known."""

    setting: dict[str, Any]
    status: str
    score: float | None
    value: float | None
    meets: bool | None
    run_id: str | None = None
    stop: StopCode | None = None

    @property
    def ended(self) -> str:
        """How its run ended, for the trial table: its status, or "all iterations" for a run
        that its own iteration count ended (a plan's fixed K: its paper's algorithm run in
        full, which the status calls a budget)."""
        return "all iterations" if self.stop is StopCode.ITERATION_CAP else self.status


def trial_outcome(
    plan: TuningPlan,
    setting: dict[str, Any],
    status: str,
    validation: Mapping[str, float | None],
    kappa: float | None,
    run_id: str | None = None,
    stop: StopCode | None = None,
) -> Trial:
    """The trial of `setting` from how its run ended (its status and stop code) and its exact
    validation metrics ("constraint", and the plan's score)."""
    counts = status in ENDS_WITH_MODEL
    score = _finite(validation.get(plan.score)) if counts else None
    value = _finite(validation.get("constraint")) if counts else None
    meets = None if kappa is None or value is None else value <= kappa
    return Trial(setting, status, score, value, meets, run_id, stop)


@dataclass(frozen=True)
class Choice:
    """The trials in the grid's order, the index of the chosen one (None: no trial ended with
    a model) and whether it meets κ on validation (None: no constraint)."""

    plan: TuningPlan
    trials: tuple[Trial, ...]
    chosen: int | None
    meets: bool | None

    @property
    def setting(self) -> dict[str, Any] | None:
        return None if self.chosen is None else self.trials[self.chosen].setting

    def headline(self) -> str:
        """The chosen setting and how it was chosen, in a line: "epsilon = 0.005, the highest
        validation accuracy within κ"."""
        if self.chosen is None:
            return "no trial ended with a model"
        setting = ", ".join(
            f"{name} = {value}" for name, value in self.trials[self.chosen].setting.items()
        )
        if self.meets is False:
            return f"{setting}, the nearest to κ: no setting is within κ on validation"
        best = "highest" if self.plan.score.higher_is_better else "lowest"
        within = " within κ" if self.meets else ""
        return f"{setting}, the {best} validation {self.plan.score}{within}"

    def words(self) -> str:
        """What was chosen and why, for people."""
        if self.chosen is None:
            return "No trial ended with a model: nothing to choose."
        if self.meets is False:
            return (
                f"Chosen: {self.headline()} (the rule of {self.plan.source} has no answer "
                "then; the run may miss κ)."
            )
        return f"Chosen: {self.headline()}."

    def rows(self, quantity: str = "value") -> list[dict[str, Any]]:
        """The trials as a table's rows: the setting's options, how the run ended, the
        validation score and exact constrained value ("val <quantity>"; None where there is
        none), whether that is within κ ("yes", "no", "—") and "◆" on the chosen one."""
        score = f"val {self.plan.score}"
        return [
            {
                **trial.setting,
                "status": trial.ended,
                score: trial.score,
                f"val {quantity}": trial.value,
                "within κ": {True: "yes", False: "no", None: "—"}[trial.meets],
                "chosen": "◆" if index == self.chosen else "",
            }
            for index, trial in enumerate(self.trials)
        ]


def pick(plan: TuningPlan, trials: Sequence[Trial], constrained: bool) -> Choice:
    """The plan's rule: among the trials with a score, those within κ on validation (all of
    them without a constraint) ranked by the score, ties to the first in the grid's order;
    when none is within κ, the one of the smallest validation value, said to miss κ."""
    scored = [i for i, trial in enumerate(trials) if trial.score is not None]
    sign = -1.0 if plan.score.higher_is_better else 1.0
    within = [i for i in scored if trials[i].meets or not constrained]
    if within:
        best = min(within, key=lambda i: (sign * trials[i].score, i))
        return Choice(plan, tuple(trials), best, trials[best].meets)
    measured = [i for i in scored if trials[i].value is not None]
    if not measured:
        return Choice(plan, tuple(trials), None, None)
    nearest = min(measured, key=lambda i: (trials[i].value, i))
    return Choice(plan, tuple(trials), nearest, False)


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)
