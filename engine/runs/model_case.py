"""A model's case, per group: what the model does to each group on the test set, the numbers a
stakeholder asks for beside a fairness verdict (paper 000, Table 2's per-group rates)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.fairness.criteria import group_rates


@dataclass(frozen=True)
class GroupRow:
    """One group on a split at the decision threshold: its rows, selection rate P(Ŷ = 1),
    true- and false-positive rates (NaN where it has no positive or no negative labels) and
    accuracy."""

    name: str
    rows: int
    selection_rate: float
    tpr: float
    fpr: float
    accuracy: float


def group_rows(
    scores: np.ndarray,
    groups: np.ndarray,
    y: np.ndarray,
    names: Sequence[str],
    threshold: float = 0.0,
) -> list[GroupRow]:
    """Per group of `names` (ids 0..m−1), the rates of `GroupRow` of the predictions
    1[score > threshold], in the order of `names`."""
    rates = group_rates(scores, groups, y, threshold)
    sizes = np.bincount(np.asarray(groups, dtype=int), minlength=len(names))
    return [
        GroupRow(
            name,
            int(sizes[k]),
            float(rates.independence[k]),
            float(rates.separation[k, 0]),
            float(rates.separation[k, 1]),
            float(rates.accuracy[k]),
        )
        for k, name in enumerate(names)
    ]
