"""The one registry from family name to constraint class."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from engine.errors import UserError

from .auc_gap import AUCGap
from .base import BoundConstraint
from .group_loss import GroupLossGap
from .intersectional import IntersectionalHinge
from .pdp import PDPConstraint
from .psp import PSPConstraint
from .quadratic_auc import QUADRATIC_AUC_FAMILIES
from .rate_gaps import DemographicParityGap, EqualizedOddsGap, EqualOpportunityGap
from .spec import ConstraintSpec

FAMILIES: MappingProxyType[str, type[BoundConstraint]] = MappingProxyType(
    {
        cls.family: cls
        for cls in (
            PSPConstraint,  # paper 003, model (15)
            PDPConstraint,  # paper 003, model (21)
            GroupLossGap,  # paper 000, eq. (4)
            DemographicParityGap,  # paper 001, eq. (15)
            EqualizedOddsGap,  # paper 001, eq. (17)
            EqualOpportunityGap,  # paper 001, Sec. 2.1
            IntersectionalHinge,  # paper 001, eq. (18)
            AUCGap,  # paper 004, eq. (6)
            *QUADRATIC_AUC_FAMILIES,  # paper 003, eqs. (102), (105), (107)
        )
    }
)


def family(name: str) -> type[BoundConstraint]:
    """The constraint class registered under `name`."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise UserError(
            f"Unknown constraint family {name!r}; choose one of {sorted(FAMILIES)}."
        ) from None


def bind(
    spec: ConstraintSpec,
    *,
    groups: Sequence[Any] | np.ndarray,
    y: Sequence[Any] | np.ndarray | None = None,
) -> BoundConstraint:
    """Bind `spec` to the samples' groups (and labels) with the class of its family."""
    return family(spec.family).bind(spec, groups=groups, y=y)
