"""From a family name to its constraint class (the names and their checks are in
`engine.fairness.families`, which needs no torch)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import family_entry

from .base import BoundConstraint, Members


def family(name: str) -> type[BoundConstraint]:
    """The constraint class registered under `name`."""
    return family_entry(name).load()


def bind(
    spec: ConstraintSpec,
    *,
    groups: Sequence[Any] | np.ndarray,
    y: Sequence[Any] | np.ndarray | None = None,
) -> BoundConstraint:
    """Bind `spec` to the samples' groups (and labels) with the class of its family."""
    return family(spec.family).bind(spec, groups=groups, y=y)


def bind_ids(
    spec: ConstraintSpec,
    *,
    ids: np.ndarray,
    names: Sequence[str],
    y: Sequence[Any] | np.ndarray | None = None,
    members: Members | None = None,
) -> BoundConstraint:
    """`bind` for samples whose groups are integer ids 0..G−1 named by `names` (with their
    subgroup `members`hip, for a family that constrains subgroups)."""
    return family(spec.family).bind_ids(spec, ids=ids, names=names, y=y, members=members)
