"""The constraint families a run can name, without torch: each family's checks of its
specification (run before any data is loaded, e.g. by the app) and where its torch
implementation lives (imported only to bind the constraint to data).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from engine.capabilities import Capability
from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.family_options import (
    AUCGapOptions,
    GroupLossOptions,
    NoOptions,
    PSPOptions,
    changed_options,
    declared_options,
)
from engine.fairness.refine import Refinement, refine_pdp, refine_psp, refine_rate_gap
from engine.lazy import load_object
from engine.options import Options
from engine.task import Task

if TYPE_CHECKING:
    from engine.fairness.constraints.base import BoundConstraint


def _require_unit_kappa(spec: ConstraintSpec) -> None:
    if not (0.0 < spec.kappa <= 1.0):
        raise UserError(
            f"κ = {spec.kappa} is outside (0, 1]: κ is the allowed normalised gap on I "
            "(paper 003, eq. 12–13), 0 < κ ≤ 1."
        )


def _require_pairs(spec: ConstraintSpec, allowed: tuple[str, ...], why: str) -> None:
    if spec.pairs not in allowed:
        raise UserError(f"{spec.family} {why}; pairs={spec.pairs!r} is not supported.")


def _check_psp(spec: ConstraintSpec) -> None:
    _require_unit_kappa(spec)
    _require_pairs(
        spec, ("all",), "constrains every group against shared thresholds (paper 003, eq. 15)"
    )


def _check_pdp(spec: ConstraintSpec) -> None:
    _require_unit_kappa(spec)
    _require_pairs(spec, ("all",), "compares every pair of groups")


def _check_group_loss(spec: ConstraintSpec) -> None:
    _require_pairs(
        spec,
        ("vs_mean", "all"),
        "compares each group with the mean (paper 000, eq. 4) or every pair",
    )


def _check_intersectional(spec: ConstraintSpec) -> None:
    _require_pairs(
        spec, ("all", "vs_mean"), "compares each group with the whole sample (paper 001, eq. 18)"
    )


def _check_auc_gap(spec: ConstraintSpec) -> None:
    _require_pairs(spec, ("all",), "compares every pair of groups")


def _check_rate_gap(spec: ConstraintSpec) -> None:
    _require_pairs(spec, ("all",), "compares every pair of groups")


def _check_quadratic_auc(spec: ConstraintSpec) -> None:
    if not spec.kappa > 0:
        raise UserError(
            f"{spec.family} needs κ > 0 (got {spec.kappa}): at w = 0 every row equals −κ, "
            "and the projected-gradient baselines start there (paper 003, G.3.2)."
        )
    _require_pairs(spec, ("all",), "constrains every ordered pair of groups")


@dataclass(frozen=True)
class Family:
    """A constraint family: `quantity` names the exact value its rows hold to κ (what tables,
    charts and verdicts call it); `offers` what solvers may require of it
    (`engine.capabilities`); `uses_interval` is True only for the families defined on a
    percentile interval I (pSP, pDP); `tasks` the labels it is defined on: every family so far
    is a classifier's (rates, AUCs and logistic losses of 0/1 labels, or percentiles of its
    scores, papers 000, 001, 003 and 004), none a regression's."""

    name: str
    source: str
    implementation: str  # "module:Class" of the BoundConstraint subclass
    check: Callable[[ConstraintSpec], None]
    quantity: str
    offers: frozenset[Capability]
    uses_interval: bool = False
    uses_subgroups: bool = False  # constrains the data's overlapping subgroups when it has them
    tasks: frozenset[Task] = frozenset({Task.CLASSIFICATION})
    # a finer surrogate for a model whose exact training value exceeds κ although its surrogate
    # holds (`engine.fairness.refine`), given (spec, κ, train scores, groups, labels); None for a
    # family whose surrogate has no resolution to refine (only an inner κ′ then tightens it)
    refine: Callable[..., Refinement | None] | None = None
    # why κ bounds a surrogate's scale rather than the exact quantity's (so no exact value can
    # be held to it); empty when κ is on the exact quantity's scale
    kappa_scale: str = ""
    # for such a family, a κ of its paper's grid on that scale (the middle of it), where a κ
    # meant for the exact quantity (0.05) would hold the model near w = 0; None otherwise
    surrogate_kappa: float | None = None
    # the solvers its paper proposes for it, which the pages show first (the unconstrained
    # reference beside them); the others stay one click away
    proposed: tuple[str, ...] = ()
    # its own options (`engine.fairness.family_options`), and the short name that heads their
    # command-line flags and page keys ("auc": --auc-variant, auc_variant)
    options: type[Options] = NoOptions
    short: str = ""

    def load(self) -> type[BoundConstraint]:
        return load_object(self.implementation)


_C = "engine.fairness.constraints."


def _offers(*capabilities: Capability) -> frozenset[Capability]:
    """Every family has differentiable surrogate rows; these capabilities come on top."""
    return frozenset({Capability.SURROGATE, *capabilities})


# What each family offers, as tests/test_capabilities.py checks against its bound class: DC_PARTS
# where the class has difference-of-convex parts (`BoundConstraint.dc`); MINIBATCH_ROWS where the
# rows are affine in means over groups or (group, label) cells, or in means over the pairs of two
# disjoint such sets: on a batch with equally many rows of every group, each of these means is an
# unbiased estimate of its value on the data (a group's rows hold a uniform sample of each cell).
# RATE_MOMENTS where the rows are gaps of groups' positive rates that fairlearn's moments bound;
# SELECTION_RATE_GAPS where the exact quantity is the largest gap of the overall positive rates.
_QUADRATIC_SCALE = (
    "κ bounds the quadratic surrogate ½(1 + x)² of the AUC gap, which may exceed "
    "1 (paper 003, G.3.2), not the exact gap"
)
_DC, _BATCH, _RATES = Capability.DC_PARTS, Capability.MINIBATCH_ROWS, Capability.RATE_MOMENTS
FAMILIES: MappingProxyType[str, Family] = MappingProxyType(
    {
        f.name: f
        for f in (
            # rows affine in group means of σ((h − θ_p)/τ), θ_p a variable (paper 003, eq. 15)
            Family(
                "pSP",
                "paper 003, model (15)",
                _C + "psp:PSPConstraint",
                _check_psp,
                "pSP",
                _offers(_DC, _BATCH, Capability.PENALTY_TERM),
                uses_interval=True,
                refine=refine_psp,
                proposed=("idca", "ssg"),
                options=PSPOptions,
                short="psp",
            ),
            # not MINIBATCH_ROWS: the clipped rate min{s_k, β} − min{s_k, α} of a batch's rate s_k
            # is biased where s_k may cross α or β (paper 003, eq. 20)
            Family(
                "pDP",
                "paper 003, model (21)",
                _C + "pdp:PDPConstraint",
                _check_pdp,
                "pDP",
                _offers(_DC, Capability.PENALTY_TERM),
                uses_interval=True,
                refine=refine_pdp,
                proposed=("idca", "ssg"),
            ),
            # rows affine in the group losses (paper 000, eq. 4)
            Family(
                "group_loss_gap",
                "paper 000, eq. (4)",
                _C + "group_loss:GroupLossGap",
                _check_group_loss,
                "group-loss gap",
                _offers(_DC, _BATCH, Capability.LOSS_GAP_PENALTY),
                proposed=("ssl_alm",),
                options=GroupLossOptions,
                short="loss",
            ),
            # DP, EO, EOpp: differences of rates, means over groups or (group, label) cells
            Family(
                "DP",
                "paper 001, eq. (15)",
                _C + "rate_gaps:DemographicParityGap",
                _check_rate_gap,
                "DP gap",
                _offers(_DC, _BATCH, _RATES, Capability.SELECTION_RATE_GAPS),
                refine=refine_rate_gap,
                proposed=("plada",),
            ),
            Family(
                "EO",
                "paper 001, eq. (17)",
                _C + "rate_gaps:EqualizedOddsGap",
                _check_rate_gap,
                "EO gap",
                _offers(_DC, _BATCH, _RATES),
                refine=refine_rate_gap,
                proposed=("plada",),
            ),
            Family(
                "EOpp",
                "paper 001, Sec. 2.1",
                _C + "rate_gaps:EqualOpportunityGap",
                _check_rate_gap,
                "EOpp gap",
                _offers(_DC, _BATCH, _RATES),
                refine=refine_rate_gap,
                proposed=("plada",),
            ),
            # not MINIBATCH_ROWS: a batch's mean over all its rows weighs the groups equally, the
            # data's by their sizes (paper 001, eq. 18)
            Family(
                "intersectional_hinge",
                "paper 001, eq. (18)",
                _C + "intersectional:IntersectionalHinge",
                _check_intersectional,
                "hinge-loss excess",
                _offers(_DC),
                uses_subgroups=True,
                proposed=("plada",),
            ),
            # not MINIBATCH_ROWS: the group variant (the default) compares with the pairs of all
            # samples, whose batch mean pairs each row with itself and weighs the groups equally
            # (paper 004, Ex. 1)
            Family(
                "auc_gap",
                "paper 004, eq. (6)",
                _C + "auc_gap:AUCGap",
                _check_auc_gap,
                "AUC gap",
                _offers(_DC, Capability.AUC_PAIR_SETS),
                proposed=("sfls",),
                options=AUCGapOptions,
                short="auc",
            ),
            # means over the pairs of two groups or cells (paper 003, eq. 103)
            Family(
                "quad_group_auc",
                "paper 003, eq. (102)",
                _C + "quadratic_auc:QuadraticGroupAUC",
                _check_quadratic_auc,
                "group-AUC gap",
                _offers(_BATCH, Capability.QUADRATIC_GROUP_AUC),
                kappa_scale=_QUADRATIC_SCALE,
                surrogate_kappa=1.0,  # the middle of G.3.2's a9a grid
                proposed=("group_auc",),
            ),
            Family(
                "quad_inter",
                "paper 003, eq. (105)",
                _C + "quadratic_auc:QuadraticInterAUC",
                _check_quadratic_auc,
                "inter-group AUC gap",
                _offers(_BATCH, Capability.QUADRATIC_INTER),
                kappa_scale=_QUADRATIC_SCALE,
                surrogate_kappa=3.0,  # the middle of G.3.2's a9a grid
                proposed=("inter_pairwise",),
            ),
            Family(
                "quad_intra",
                "paper 003, eq. (107)",
                _C + "quadratic_auc:QuadraticIntraAUC",
                _check_quadratic_auc,
                "intra-group AUC gap",
                _offers(_BATCH, Capability.QUADRATIC_INTRA),
                kappa_scale=_QUADRATIC_SCALE,
                surrogate_kappa=5.0,  # the middle of G.3.2's a9a grid
                proposed=("intra_pairwise",),
            ),
        )
    }
)


def family_names() -> list[str]:
    return sorted(FAMILIES)


def family_entry(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise UserError(
            f"Unknown constraint family {name!r}; choose one of {family_names()}."
        ) from None


def family_offers(family: str | None) -> frozenset[Capability]:
    """What the constraint family offers, as it declares (`Family.offers`); nothing without a
    constraint."""
    return frozenset() if family is None else family_entry(family).offers


# the families whose exact quantity every run reports under a metric of its own (pSP and pDP on
# the run's interval, the rate gaps at the threshold 0, the group-loss gap over all pairs: the
# families' defaults; paper 003's quadratic AUC rows stand for paper 004's exact AUC gaps), so
# that a run without constraint can be set beside them (engine.problem.Problem.report_scores)
REPORTED_AS = MappingProxyType(
    {
        "pSP": "psp",
        "pDP": "pdp",
        "DP": "dp",
        "EO": "eo",
        "EOpp": "eopp",
        "quad_group_auc": "group_auc_gap",
        "quad_inter": "inter_group_auc_gap",
        "quad_intra": "intra_group_auc_gap",
        "group_loss_gap": "group_loss_gap",
    }
)
# the metric under which every run reports each of paper 004's AUC gaps (App. A), by variant
AUC_GAP_REPORTED_AS = MappingProxyType(
    {
        "group": "group_auc_gap",
        "inter": "inter_group_auc_gap",
        "intra": "intra_group_auc_gap",
        "average_positive": "positive_average_equality_gap",
        "average_negative": "negative_average_equality_gap",
        "bpsn": "bpsn_bnsp_gap",
    }
)


# what every run reports beside its own constraint, by the task of its label, as (name, metric):
# a classifier's pSP on I (paper 003); a regression's gap between the groups' mean predictions,
# the exact demographic parity of paper 002's regressions (Table 3; engine.fairness.regression)
REPORTED_QUANTITY = MappingProxyType(
    {Task.CLASSIFICATION: ("pSP", REPORTED_AS["pSP"]), Task.REGRESSION: ("mean gap", "mean_gap")}
)


def quantity_name(family: str | None, task: Task = Task.CLASSIFICATION) -> str:
    """What the constrained value of `family` is called ("EO gap"); without a constraint, what
    every run of `task` reports (`REPORTED_QUANTITY`: pSP on I for a classifier)."""
    return REPORTED_QUANTITY[task][0] if family is None else family_entry(family).quantity


def quantity_metric(
    run_family: str | None, view: ConstraintSpec | None = None, task: Task = Task.CLASSIFICATION
) -> str | None:
    """The stored metric holding the quantity of the constraint `view` for a run: "constraint"
    for a run constrained by that family, the metric every run reports it under
    (`reported_metric`; without a view, that of `REPORTED_QUANTITY` for the run's `task`: pSP
    on I for a classifier) for a run without a constraint, None when the run does not report
    it."""
    if run_family is not None:
        return "constraint" if view is None or view.family == run_family else None
    return REPORTED_QUANTITY[task][1] if view is None else reported_metric(view)


def task_refusal(family: str, task: Task, label: str) -> str | None:
    """Why the constraint `family` cannot hold a model of a label of `task` (described by
    `label`: "data set Law school's label 'ugpa'"), in words; None when it is defined for it."""
    entry = family_entry(family)
    if task in entry.tasks:
        return None
    kinds = " or ".join(t.label_words for t in Task if t in entry.tasks)
    serving = [name for name, other in FAMILIES.items() if task in other.tasks]
    choice = (
        f"choose the constraint {' or '.join(serving)}"
        if serving
        else "no constraint family is defined for one, so train it without a constraint "
        "(e.g. the unconstrained or sgd solver)"
    )
    return (
        f"the {family} constraint ({entry.source}) is defined for a {kinds} label; {label} "
        f"is {task.label_words}: {choice}"
    )


def check_family_task(family: str, task: Task, label: str) -> None:
    """Refuse the constraint `family` for a label of `task` it is not defined on
    (`task_refusal`)."""
    reason = task_refusal(family, task, label)
    if reason is not None:
        raise UserError(reason)


def reported_metric(spec: ConstraintSpec) -> str | None:
    """The metric under which every run, with or without a constraint, reports the exact
    quantity `spec` holds to κ; None when only a run under `spec` reports it. REPORTED_AS holds
    each family's metric at its defaults (every pair of groups, threshold 0, no option set); an
    AUC gap is its variant's, whatever the c1 and c2 of its surrogate (paper 004, App. A)."""
    if spec.family == "auc_gap":
        return AUC_GAP_REPORTED_AS.get(options_of(spec).variant)
    if spec.pairs != "all" or spec.threshold != 0.0 or spec.options:
        return None
    return REPORTED_AS.get(spec.family)


def check_constraint(spec: ConstraintSpec) -> None:
    """Everything about `spec` that can be checked without data, its options first; raises
    UserError."""
    options_of(spec)
    family_entry(spec.family).check(spec)


@functools.lru_cache(maxsize=256)
def options_of(spec: ConstraintSpec) -> Options:
    """The family options of `spec`: those it sets, the rest at their defaults (refused in words
    where the family has no such option or does not allow the value). Parsed once per spec (both
    are frozen): a bound constraint reads them on every binding, a bootstrap binds hundreds."""
    entry = family_entry(spec.family)
    return declared_options(entry.options, spec.family, dict(spec.options))


def set_options(family: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The options of `family` a spec stores for `given` (None: not given): those that differ
    from their defaults, checked by the family's declaration."""
    entry = family_entry(family)
    chosen = {name: value for name, value in given.items() if value is not None}
    return changed_options(declared_options(entry.options, family, chosen))
