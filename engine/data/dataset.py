"""The raw, not yet encoded, data set every source produces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.errors import UserError
from engine.task import Task


@dataclass(frozen=True)
class Dataset:
    """A table of people with a label, ready to be grouped, split and encoded.

    `frame` holds the feature columns and the candidate protected columns (a protected column may
    also be a feature); the label is never one of them. `task` says what the label is: 0/1 for
    classification, real numbers for regression. `fixed_test` marks rows of a published test split that must stay the test
    split (Adult's adult.test); `None` means the split is drawn at preparation.
    """

    name: str
    frame: pd.DataFrame
    label: np.ndarray
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    protected: tuple[str, ...]
    label_name: str
    value_labels: Mapping[str, Mapping[object, str]] = field(default_factory=dict)
    fixed_test: np.ndarray | None = None
    synthetic: bool = False
    missing_features: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    task: Task = Task.CLASSIFICATION

    @property
    def features(self) -> tuple[str, ...]:
        return self.numeric + self.categorical

    @property
    def reduced(self) -> bool:
        """True when a stock task runs on fewer feature columns than it defines."""
        return bool(self.missing_features)

    def column(self, name: str) -> str:
        """The frame's spelling of a column: the exact name, else one matched without regard to
        case (a table may hold both 'Sex' and 'sex')."""
        if name in self.frame.columns:
            return name
        by_lower = {c.lower(): c for c in self.frame.columns}
        if name.lower() not in by_lower:
            raise UserError(
                f"column '{name}' is not in data set '{self.name}'; "
                f"protected attributes on offer: {', '.join(self.protected)}"
            )
        return by_lower[name.lower()]
