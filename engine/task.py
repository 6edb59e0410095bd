"""What a label is: a class to predict (0/1) or a real number (no torch, no numpy).

The data decides the task (`engine.data.dataset.Dataset.task`); the objective says which task it
serves (`engine.objectives`), and so does each constraint family (`engine.fairness.families`).
A run whose parts disagree is refused with a sentence (`engine.problem.Problem`).
"""

from __future__ import annotations

from enum import StrEnum


class Task(StrEnum):
    CLASSIFICATION = "classification"  # a binary label, 1 = positive
    REGRESSION = "regression"  # a real-valued label (paper 002's ridge regression, Table 1)

    @property
    def label_words(self) -> str:
        """The kind of label, for sentences: "binary" or "real-valued"."""
        return "binary" if self is Task.CLASSIFICATION else "real-valued"
