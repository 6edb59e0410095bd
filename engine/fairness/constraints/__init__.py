"""Differentiable fairness constraint families (torch).

A `ConstraintSpec` is frozen; `bind(spec, groups=..., y=...)` returns a `BoundConstraint` with
named `rows`, `surrogate(scores, aux)` (g ≤ 0 is feasible), `exact_rows`, `exact(scores)` (the
metric from engine.fairness), `aux_init` and, where the family has one, `dc` (convex parts f⁺, f⁻
with subgradients), so a solver never needs to know which family it solves.
"""

from engine.fairness.constraint_spec import ConstraintSpec, psp_grid

from .auc_gap import AUCGap, empirical_auc, square_pair_loss
from .base import BoundConstraint, DCParts, GroupData, Linearization, RowSubgradient
from .exact import EXACT_FUNCTIONS, MissingExactMetric, exact_metric
from .group_loss import GroupLossGap
from .intersectional import IntersectionalHinge
from .pdp import PDPConstraint
from .psp import PSPConstraint, TinyBandWarning, VacuousConstraintWarning
from .rate_gaps import DemographicParityGap, EqualizedOddsGap, EqualOpportunityGap
from .registry import bind, bind_ids, family
from .surrogates import Surrogate, group_mean_relu, mean_relu

__all__ = [
    "AUCGap",
    "BoundConstraint",
    "ConstraintSpec",
    "DCParts",
    "DemographicParityGap",
    "EXACT_FUNCTIONS",
    "EqualOpportunityGap",
    "EqualizedOddsGap",
    "GroupData",
    "GroupLossGap",
    "IntersectionalHinge",
    "Linearization",
    "MissingExactMetric",
    "PDPConstraint",
    "PSPConstraint",
    "RowSubgradient",
    "Surrogate",
    "TinyBandWarning",
    "VacuousConstraintWarning",
    "bind",
    "bind_ids",
    "empirical_auc",
    "exact_metric",
    "family",
    "group_mean_relu",
    "mean_relu",
    "psp_grid",
    "square_pair_loss",
]
