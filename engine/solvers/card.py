"""A solver's card: what a run specification, the app and the command line need to know about a
solver without loading it (torch): its name, options, paper, what it requires of the model, the
objective and the constraint family, and where its implementation lives."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from engine.capabilities import (
    Capability,
    Side,
    model_kinds_offering,
    model_offers,
    objective_offers,
)
from engine.errors import UserError
from engine.fairness.families import (
    family_names,
    family_offers,
    task_refusal,
)
from engine.fairness.family_options import AUCGapOptions
from engine.lazy import load_object
from engine.models import ModelSpec
from engine.objectives import OBJECTIVE_TYPES
from engine.solvers.tuning import TuningPlan
from engine.task import Task

if TYPE_CHECKING:
    from engine.problem import Problem
    from engine.solvers.base import Solver

DEFAULT_OBJECTIVE = "logistic"  # engine.problem.Problem's objective


@dataclass(frozen=True)
class StatePanel:
    """A part of a solver's recorded state that its trajectory figure draws as a panel of its
    own (`engine.plots.trajectory`): `key` names a number of the state, or, `per_row`, the
    entries "<key>.<row>", a line per row; `title` is the panel's axis title (lines split by
    "<br>"), `name` a number's name in the hover, and `log` asks for a logarithmic axis (for a
    quantity that should go to 0 or shrinks like 1/k)."""

    key: str
    title: str
    per_row: bool = False
    name: str = ""
    log: bool = False


@dataclass(frozen=True)
class SolverCard:
    """`needs` maps each capability the algorithm requires (`engine.capabilities`) to why,
    citing the paper, in the order of `Capability`: model, objective, then family. `constrained`
    is False for a reference solver, which ignores the constraint (and also runs without one)
    and so needs nothing of a constraint family. `classifier_only` says why, citing the paper,
    an algorithm trains classifiers only (a model of a binary label) whatever its family; empty
    when it trains a model of any label (a constrained one is held to its family's labels:
    `engine.fairness.families.Family.tasks`)."""

    name: str
    Config: type  # a frozen dataclass of options whose defaults cite the paper
    paper: str
    summary: str
    implementation: str  # "module:Class" of the Solver subclass
    # left out of the card's hash: a mapping has none
    needs: Mapping[Capability, str] = field(default_factory=dict, hash=False)
    constrained: bool = True
    # the auc_gap variants (paper 004, App. A) the algorithm applies to, and why (empty: all)
    auc_variants: tuple[str, ...] = ()
    auc_variants_why: str = ""
    classifier_only: str = ""
    # why, citing the paper, the algorithm is defined for two protected groups only (empty: for
    # any number), so that data grouped otherwise is refused before a run is queued
    two_groups_only: str = ""
    # the option naming the unfairness measure the algorithm minimises itself (paper 002's
    # `measure`): its fairness is an upper-level objective, not a constraint, so a run that
    # names no constraint has none
    measure_option: str | None = None
    # for a solver that yields a front (`Solver.front`): what its models are and which one the
    # run reports, in words for the pages beside the front
    front_words: str = ""
    # why the algorithm may start from a given model (`Problem.start`: a neighbouring κ's or I's
    # solution, so a sweep continues along κ or I instead of starting each point afresh); empty
    # when it starts only where its paper says
    warm_start: str = ""
    # the option holding the surrogate rows to a tolerance ε (a row ≤ ε counts as feasible),
    # which a run that holds κ on the exact training value lowers where its rows' band asks for
    # less (`engine.fairness.refine.Refinement.tolerance`); empty for a solver without one
    tolerance_option: str = ""
    # why κ does not bind the solver's model although it takes a constraint (a penalty whose
    # weight sets the trade-off), citing the paper; empty when κ bounds its surrogate rows
    kappa_free: str = ""
    # the paper's tuning protocol: a grid of options and the rule that picks one on validation
    # (`engine.runs.tuning`); None where the paper gives no grid
    tuning: TuningPlan | None = field(default=None, hash=False)
    # the parts of the solver's own state its trajectory figure draws, beyond the duals, slacks
    # and branch counts that several solvers record (`engine.plots.trajectory.SHARED_PANELS`)
    state_panels: tuple[StatePanel, ...] = ()

    def __post_init__(self) -> None:
        ordered = {c: self.needs[c] for c in Capability if c in self.needs}
        object.__setattr__(self, "needs", MappingProxyType(ordered))

    @property
    def requires(self) -> frozenset[Capability]:
        """The capabilities the algorithm requires, without the reasons."""
        return frozenset(self.needs)

    @property
    def default_objective(self) -> str:
        """The objective a run gets unless it names one: the pairwise AUC loss for a solver
        that needs it, else the logistic loss."""
        return "pairwise_auc" if Capability.PAIRWISE_AUC in self.needs else DEFAULT_OBJECTIVE

    def requires_of(self, side: Side) -> frozenset[Capability]:
        return frozenset(c for c in self.needs if c.side is side)

    def families(self) -> list[str]:
        """The constraint families that offer what this algorithm needs of a family."""
        wanted = self.requires_of(Side.FAMILY)
        return [name for name in family_names() if wanted <= family_offers(name)]

    def model_kinds(self) -> list[str]:
        """The kinds of model that offer what this algorithm needs of a model."""
        return model_kinds_offering(self.requires_of(Side.MODEL))

    def missing(
        self, model: ModelSpec, family: str | None, objective: str | None = None
    ) -> list[Capability]:
        """The required capabilities that the model, the objective (by default the card's) and
        the family do not offer."""
        objective = objective or self.default_objective
        offers = model_offers(model) | objective_offers(objective) | family_offers(family)
        return [c for c in self.needs if c not in offers]

    def refusal(
        self,
        model: ModelSpec,
        family: str | None,
        objective: str | None = None,
        variant: str | None = None,
        n_groups: int | None = None,
    ) -> str | None:
        """Why this algorithm cannot solve `model` under `family` (of `variant`, for auc_gap),
        in words: the first capability it misses (of the model, the objective, then the
        family), else a label it is not defined for (the objective's task: a classifier's
        algorithm, or a family it uses, for a regression), else a variant it does not apply to,
        else data of `n_groups` protected groups (None: not known yet); None if it can."""
        objective = objective or self.default_objective
        missing = self.missing(model, family, objective)
        if not missing:
            return (
                self._task_refusal(family, objective)
                or self._variant_refusal(family, variant)
                or self.groups_refusal(n_groups)
            )
        first = missing[0]
        needed = f"{first.words} ({self.needs[first]})"
        if first.side is Side.MODEL:
            kinds = self.model_kinds()
            return (
                f"{self.name} trains {' and '.join(kinds)} models only: it needs {needed}; "
                f"choose the {' or '.join(kinds)} model (with or without group cross-terms)"
            )
        if first.side is Side.OBJECTIVE:
            return f"{self.name} needs {needed}, which the {objective} objective does not offer"
        if family is None:
            return (
                f"{self.name} trains under a constraint; choose a constraint family, or the "
                "unconstrained solver"
            )
        return (
            f"{self.name} solves the constraint families {', '.join(self.families())} only: "
            f"it needs {needed}, which those families offer, not {family}"
        )

    def _task_refusal(self, family: str | None, objective: str) -> str | None:
        """An algorithm for classifiers, or a family it uses (under it, or as its penalty), that
        is not defined for the task of the objective's label."""
        kind = OBJECTIVE_TYPES.get(objective)  # a name the capabilities know but not the code
        if kind is None or kind.task is Task.CLASSIFICATION:
            return None  # every solver and family is defined for a binary label
        if self.classifier_only:
            return (
                f"{self.name} trains classifiers only ({self.classifier_only}); the "
                f"{objective} objective is for a {kind.task.label_words} label"
            )
        if family is None or not (self.constrained or self.requires_of(Side.FAMILY)):
            return None
        return task_refusal(family, kind.task, f"the label of the {objective} objective")

    def groups_refusal(self, n_groups: int | None) -> str | None:
        """Why this algorithm cannot train on data of `n_groups` protected groups (None: any
        number, or not known); None if it can."""
        if not self.two_groups_only or n_groups is None or n_groups == 2:
            return None
        return (
            f"{self.name} is defined for two protected groups ({self.two_groups_only}), "
            f"and this data has {n_groups}; choose a grouping with two"
        )

    def _variant_refusal(self, family: str | None, variant: str | None) -> str | None:
        variant = variant or AUCGapOptions().variant
        if family != "auc_gap" or not self.auc_variants or variant in self.auc_variants:
            return None
        return (
            f"{self.name} applies to the AUC gaps {' and '.join(self.auc_variants)} only "
            f"({self.auc_variants_why}), not {variant}"
        )

    def check_combination(
        self,
        model: ModelSpec,
        family: str | None,
        objective: str | None = None,
        variant: str | None = None,
        n_groups: int | None = None,
    ) -> None:
        """Refuse a model, objective or constraint family (or auc_gap variant), or data of
        `n_groups` protected groups, this algorithm cannot solve, saying why."""
        reason = self.refusal(model, family, objective, variant, n_groups)
        if reason is not None:
            raise UserError(reason)

    def check_problem(self, problem: Problem) -> None:
        spec = problem.constraint
        family = spec.family if spec is not None else None
        variant = spec.option("variant", None) if spec is not None else None
        self.check_combination(
            problem.model, family, problem.objective.name, variant, problem.data.n_groups
        )

    def load(self) -> type[Solver]:
        return load_object(self.implementation)
