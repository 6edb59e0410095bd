"""The exact fairness quantities a table of runs can give a column of its own, each with the name
its header says and the stored metric that holds it.

A run stores the exact value of its own constraint's quantity as "constraint", and every run
stores the quantities of `engine.fairness.families.reported_metric` under metrics of their own
("psp", "dp", "group_auc_gap", ...). One quantity is one column: a run constrained by it is read
from "constraint" (the same value as the reported metric, where there is one), any other run
from the reported metric, and a run that stores neither has no value there. A quantity only the
runs held to it report (a family away from its defaults, e.g. the group-loss gap of each group
against the mean) is named with what sets it apart, so that its column is never taken for the
quantity at the family's defaults. No torch, no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import (
    AUC_GAP_REPORTED_AS,
    FAMILIES,
    REPORTED_AS,
    REPORTED_QUANTITY,
    family_entry,
    reported_metric,
)
from engine.runs.spec import RunSpec
from engine.task import Task

# paper 004's AUC gaps by variant (App. A): the auc_gap family's one name, "AUC gap", would say
# the same of all six
_AUC_GAP_NAMES = {
    "group": "group-AUC gap",
    "inter": "inter-group AUC gap",
    "intra": "intra-group AUC gap",
    "average_positive": "positive average equality gap",
    "average_negative": "negative average equality gap",
    "bpsn": "BPSN–BNSP AUC gap",
}
# the name a table's header gives each metric every run reports a quantity under: the AUC gaps
# by variant, else its family's quantity (REPORTED_AS), and a regression's mean gap
QUANTITY_NAMES: MappingProxyType[str, str] = MappingProxyType(
    {
        **{metric: FAMILIES[family].quantity for family, metric in REPORTED_AS.items()},
        **{AUC_GAP_REPORTED_AS[v]: name for v, name in _AUC_GAP_NAMES.items()},
        **{metric: name for name, metric in REPORTED_QUANTITY.values()},
    }
)
# options that shape only a family's surrogate rows, not its exact quantity
_SURROGATE_OPTIONS = frozenset({"c1", "c2", "mean_method"})
_PAIRS_WORDS = {"vs_mean": "each group vs the mean", "vs_rest": "each group vs the rest"}


@dataclass(frozen=True)
class Quantity:
    """One exact quantity of a model: `name` as table headers say it ("DP gap"), the metric
    every run reports it under (`metric`; None when only a run held to it reports it, as
    "constraint"), and the constraint that holds it (`held`: κ, I and the surrogate's settings
    left out; None for a quantity no constraint holds, a regression's mean gap)."""

    name: str
    metric: str | None
    held: ConstraintSpec | None = None

    @property
    def key(self) -> str | ConstraintSpec | None:
        """What makes two quantities one: the metric that holds it, else the constraint."""
        return self.metric if self.metric is not None else self.held

    def source(self, spec: RunSpec) -> str | None:
        """The stored metric that holds this quantity for a run of `spec`: "constraint"
        when the run's own constraint holds it, else the metric every run reports it under;
        None when the run stores it under no name."""
        own = held_quantity(spec)
        if own is not None and own.key == self.key:
            return "constraint"
        return self.metric


def quantity_of(constraint: ConstraintSpec) -> Quantity:
    """The exact quantity `constraint` holds to κ."""
    held = exact_part(constraint)
    metric = reported_metric(held)
    if metric is not None:
        return Quantity(
            QUANTITY_NAMES.get(metric, family_entry(held.family).quantity), metric, held
        )
    words = [_PAIRS_WORDS.get(held.pairs, held.pairs)] if held.pairs != "all" else []
    words += [f"at threshold {held.threshold:g}"] if held.threshold != 0.0 else []
    words += [f"{name} {value}" for name, value in held.options]
    name = family_entry(held.family).quantity
    return Quantity(f"{name} ({', '.join(words)})" if words else name, None, held)


def exact_part(constraint: ConstraintSpec) -> ConstraintSpec:
    """`constraint` with only what decides its exact quantity: its family, pairs, threshold and
    the options that change the quantity (an AUC gap's variant, a loss gap's condition); κ, I
    and the surrogate's settings are set to their defaults."""
    options = tuple((k, v) for k, v in constraint.options if k not in _SURROGATE_OPTIONS)
    return ConstraintSpec(
        constraint.family,
        0.0,
        pairs=constraint.pairs,
        threshold=constraint.threshold,
        options=options,
    )


def task_quantity(task: Task) -> Quantity:
    """What every run of `task` reports without a constraint (`REPORTED_QUANTITY`): a
    classifier's pSP on I, a regression's gap between the groups' mean predictions."""
    if task is Task.CLASSIFICATION:
        return quantity_of(ConstraintSpec(REPORTED_QUANTITY[task][0], 0.0))
    name, metric = REPORTED_QUANTITY[task]
    return Quantity(name, metric)


def held_quantity(spec: RunSpec) -> Quantity | None:
    """The quantity a run's constraint holds to κ; None for a run without one."""
    return None if spec.constraint is None else quantity_of(spec.constraint)


def distinct(quantities: list[Quantity]) -> list[Quantity]:
    """The quantities in order of first appearance, each once (by `Quantity.key`)."""
    seen: dict[Any, Quantity] = {}
    for quantity in quantities:
        seen.setdefault(quantity.key, quantity)
    return list(seen.values())


def same_quantity(a: ConstraintSpec, b: ConstraintSpec) -> bool:
    """Whether two constraints hold one exact quantity (whatever their κ, I or surrogate)."""
    return quantity_of(a).key == quantity_of(b).key
