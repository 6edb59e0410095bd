"""RunSpec: everything that determines a run; its canonical JSON hash is the run id."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from engine import __version__
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.data.sources import DataSpec, spec_from_dict, spec_to_dict
from engine.data.subgroups import SubgroupSpec
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import check_constraint, check_family_task
from engine.models import ModelSpec
from engine.objectives import (
    LogisticLoss,
    Objective,
    PairwiseAUCLoss,
    check_objective_task,
    objective_from_dict,
    objective_to_dict,
)
from engine.options import Options, config_from_dict
from engine.solvers.budget import Budget, BudgetClock
from engine.solvers.catalogue import SolverCard, solver_card
from engine.solvers.honour_rules import check_honour
from engine.task import Task


@dataclass(frozen=True)
class RunSpec:
    """A data source and its preparation, a model, a constraint with I and κ, a solver with its
    options, a budget, a seed (which draws the train/validation split and seeds the solver), the
    training objective; for a continuation sweep's point, `warm_start`: the id of the run
    whose model this one starts from (`engine.runs.continuation`); and `honour`: the split
    ("val" or "train") on which κ is honoured by tightening the inner κ′
    (`engine.solvers.honour`), None to solve at κ alone.

    `data` is None for data the caller holds already prepared, in memory (the estimators'
    rows, `engine.runs.execute.build_problem`): such a spec has no data source to hash, so it
    is never stored and has no run id."""

    data: DataSpec | None
    prepare: PrepareOptions
    model: ModelSpec
    constraint: ConstraintSpec | None
    interval: tuple[float, float]
    solver: str
    config: dict[str, Any] = field(default_factory=dict)
    budget: Budget = field(default_factory=Budget)
    seed: int = 0
    objective: Objective = LogisticLoss()
    warm_start: str | None = None
    honour: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON-able fields; the objective only when it is not the default logistic
        loss, the warm start and the honoured split only when there are, so that the canonical
        JSON, and so the run id, of a plain logistic run is what it was before those fields
        existed."""
        objective = (
            {}
            if self.objective == LogisticLoss()
            else {"objective": objective_to_dict(self.objective)}
        )
        start = {} if self.warm_start is None else {"warm_start": self.warm_start}
        honour = {} if self.honour is None else {"honour": self.honour}
        return (
            {
                "data": spec_to_dict(self.data),
                "prepare": _prepare_dict(self.prepare),
                "model": dataclasses.asdict(self.model),
                "constraint": self.constraint.to_dict() if self.constraint else None,
                "interval": list(self.interval),
                "solver": self.solver,
                "config": dict(self.config),
                "budget": _budget_dict(self.budget),
                "seed": self.seed,
                "engine_version": __version__,
            }
            | objective
            | start
            | honour
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        """The spec `to_dict` wrote, in any version's shape: a field added since (the objective,
        the warm start, the honoured split, the subgroups, the budget's saving and clock, a
        model's activation, a constraint's added ranks...) takes its default when the stored
        spec lacks it, and the engine version is not part of the spec. No solver card is looked
        up and no data file is opened: a run of a solver this version no longer has, or on data
        that is gone, still reads."""
        prepare = dict(data["prepare"])
        prepare["grouping"] = tuple(
            GroupingSpec(**{**g, "bins": tuple(g.get("bins", ()))}) for g in prepare["grouping"]
        )
        prepare["split"] = tuple(prepare["split"])
        if prepare.get("subgroups") is not None:
            prepare["subgroups"] = SubgroupSpec(**prepare["subgroups"])
        model = dict(data["model"], hidden=tuple(data["model"].get("hidden", (64,))))
        constraint = _constraint_from_dict(data.get("constraint"))
        return cls(
            data=spec_from_dict(data["data"]),
            prepare=PrepareOptions(**prepare),
            model=ModelSpec(**model),
            constraint=constraint,
            interval=tuple(data["interval"]),
            solver=data["solver"],
            config=dict(data.get("config", {})),
            budget=Budget(**data.get("budget", {})),
            seed=int(data.get("seed", 0)),
            objective=objective_from_dict(data.get("objective", {"name": LogisticLoss.name})),
            warm_start=data.get("warm_start"),
            honour=data.get("honour"),
        )

    def canonical_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), default=str)

    @property
    def run_id(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:16]

    @property
    def family(self) -> str | None:
        """The family of the run's constraint, None for a run without one."""
        return None if self.constraint is None else self.constraint.family

    @property
    def kappa(self) -> float | None:
        """The κ of the run's constraint, None for a run without one."""
        return None if self.constraint is None else self.constraint.kappa

    @property
    def constraint_interval(self) -> tuple[float, float]:
        """The interval I the run's constraint uses: the constraint's own, else the spec's (the
        spec's for a run without a constraint)."""
        own = None if self.constraint is None else self.constraint.interval
        alpha, beta = own or self.interval
        return float(alpha), float(beta)

    @property
    def task(self) -> Task:
        """The task of the run's label: its objective's (`engine.problem.Problem` refuses an
        objective of another task than the data's)."""
        return self.objective.task

    @property
    def thresholded(self) -> bool:
        """Whether the run's objective fits its scores to the decision threshold; paper 004's
        pairwise AUC loss (eq. 3) only ranks them (`engine.verdict.judge`)."""
        return self.objective.name != PairwiseAUCLoss.name

    @property
    def card(self) -> SolverCard:
        """The card of the spec's solver (`engine.solvers.catalogue`)."""
        return solver_card(self.solver)

    @property
    def options(self) -> Options:
        """The solver's options as its typed config: the spec's, the rest at the card's
        defaults; an option the solver does not have, or a value it does not allow, is refused
        in words."""
        return config_from_dict(self.card.Config, self.config)

    def with_options_filled(self) -> RunSpec:
        """The spec with every option of its solver written out, defaults included, so that two
        specs of the same run have the same id however their options were given."""
        return dataclasses.replace(self, config=dataclasses.asdict(self.options))

    def validate(self) -> None:
        """Everything that can be checked without loading data: solver and options, I, κ, the
        solver/constraint/model combination, that the objective and the constraint are defined
        for the data's label, and that the data files are there."""
        if self.seed < 0:
            raise UserError(f"the seed must be a whole number ≥ 0, not {self.seed}")
        alpha, beta = self.interval
        if not 0.0 <= alpha < beta <= 1.0:
            raise UserError(f"the interval [α, β) = [{alpha}, {beta}) needs 0 ≤ α < β ≤ 1")
        own = None if self.constraint is None else self.constraint.interval
        if own is not None and own != (float(alpha), float(beta)):  # ConstraintSpec's are floats
            raise UserError(
                f"the constraint's interval [{own[0]}, {own[1]}) is not the run's [{alpha}, "
                f"{beta}): the run reports its exact values on the interval it constrains"
            )
        card = self.card
        config_from_dict(card.Config, self.config)  # refuses options it lacks or forbids
        if self.warm_start is not None and not card.warm_start:
            raise UserError(
                f"{self.solver} starts where its paper says; it takes no warm start "
                "from another run's model"
            )
        family = self.family
        if self.honour is not None:
            check_honour(self.solver, family, self.honour)
        if self.constraint is not None:
            check_constraint(self.constraint)
        variant = self.constraint.option("variant", None) if self.constraint else None
        task = self.data.label_task
        check_objective_task(self.objective.name, task, "the data's label")
        if family is not None:
            check_family_task(family, task, "the data's label")
        card.check_combination(self.model, family, self.objective.name, variant)
        self.data.files()  # a missing file is reported now, not in a worker


@functools.lru_cache(maxsize=4096)
def stored_spec(text: str) -> tuple[RunSpec, str | None]:
    """The spec of a stored run from the JSON text the run store holds (`RunSpec.to_dict`, in
    any version's shape), and the engine version that wrote it. Parsed once per text: the
    store reads the same specs on every poll of a page. The spec returned is shared by every
    reader of that text, as every spec is meant to be: never changed."""
    fields = json.loads(text)
    return RunSpec.from_dict(fields), fields.get("engine_version")


def _constraint_from_dict(data: dict[str, Any] | None) -> ConstraintSpec | None:
    """A stored constraint (a spec's "constraint"), None for a run without one."""
    if not data:
        return None
    c = dict(data)
    c["interval"] = tuple(c["interval"]) if c.get("interval") is not None else None
    c["options"] = tuple(tuple(o) for o in c.get("options", ()))
    return ConstraintSpec(**c)


def _prepare_dict(prepare: PrepareOptions) -> dict[str, Any]:
    """The preparation options, leaving out the subgroups when there are none: the canonical
    JSON, and so the run id, of a spec without them is what it was before the field existed."""
    fields = dataclasses.asdict(prepare)
    if fields["subgroups"] is None:
        del fields["subgroups"]
    return fields


def _budget_dict(budget: Budget) -> dict[str, Any]:
    """The budget's fields, leaving out the saving ones when they are off and a wall clock: the
    canonical JSON, and so the run id, of a spec that saves no iterates on the wall clock is what
    it was before the fields existed."""
    fields = dataclasses.asdict(budget)
    for name in ("save_every", "save_seconds"):
        if fields[name] is None:
            del fields[name]
    if budget.clock is BudgetClock.WALL:
        del fields["clock"]
    else:
        fields["clock"] = budget.clock.value
    return fields


def with_seed(spec: RunSpec, seed: int) -> RunSpec:
    """The same run on another split and solver seed."""
    return dataclasses.replace(
        spec, seed=seed, prepare=dataclasses.replace(spec.prepare, seed=seed)
    )
