"""The stock folktables ACS tasks, and which columns each one cannot do without; and two of
them with their target as a real-valued label instead of its binary cut (regression)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import folktables
import numpy as np
import pandas as pd

from engine.errors import UserError
from engine.task import Task

# Columns read by each task's row filter (folktables.acs: adult_filter, public_coverage_filter,
# travel_time_filter, employment_filter and ACSMobility's age window). A task without them, or
# without its target, cannot run even in reduced form.
_FILTER_COLUMNS = {
    "income": ("AGEP", "PINCP", "WKHP", "PWGTP"),
    "employment": (),
    "public_coverage": ("AGEP", "PINCP"),
    "health_insurance": (),
    "travel_time": ("AGEP", "PWGTP", "ESR"),
    "mobility": ("AGEP",),
    "employment_filtered": ("AGEP", "PWGTP"),
    "income_poverty_ratio": (),
}

_LABEL_NAMES = {
    "income": "income > $50,000",
    "employment": "employed",
    "public_coverage": "has public health coverage",
    "health_insurance": "has health insurance",
    "travel_time": "commute > 20 minutes",
    "mobility": "same residence as a year ago",
    "employment_filtered": "employed",
    "income_poverty_ratio": "income below 250% of the poverty line",
}

_PROBLEMS = {
    "income": folktables.ACSIncome,
    "employment": folktables.ACSEmployment,
    "public_coverage": folktables.ACSPublicCoverage,
    "health_insurance": folktables.ACSHealthInsurance,
    "travel_time": folktables.ACSTravelTime,
    "mobility": folktables.ACSMobility,
    "employment_filtered": folktables.ACSEmploymentFiltered,
    "income_poverty_ratio": folktables.ACSIncomePovertyRatio,
}

# Real-valued labels (paper 002's ridge regression, Table 1 regression column): the stock task's
# target itself, on its rows and features (the target is never one of them), under a name of its
# own: (stock task, label in words, the label as a function of the target column).
# - commute time in minutes as it is (JWMNP). folktables' binary label counts a worker with no
#   commute (worked from home, JWMNP blank) as "≤ 20 minutes"; a commute time they do not have,
#   so their rows are left out (`engine.data.acs`).
# - income as ln(PINCP): dollars are heavy-tailed (a few top earners would dominate the squared
#   loss, and errors of tens of thousands of dollars make a fixed SGD step diverge), and the
#   ACSIncome filter keeps PINCP > 100 (folktables' adult_filter), so the log is defined. Group
#   gaps in mean prediction are then about relative income (0.1 ≈ 10 %).
_REAL_VALUED: dict[str, tuple[str, str, Callable[[pd.Series], pd.Series]]] = {
    "travel_time_minutes": ("travel_time", "commute time in minutes", lambda minutes: minutes),
    "log_income": ("income", "ln of total personal income in dollars", np.log),
}

# Continuous PUMS columns; every other task feature is a code and is one-hot encoded.
NUMERIC_COLUMNS = frozenset({"AGEP", "WKHP", "PINCP", "POVPIP", "JWMNP"})

# Columns the census renamed in the 2019 files; folktables' tasks use the old names.
RENAMED_FROM_2019 = {"RELSHIPP": "RELP", "JWTRNS": "JWTR"}


@dataclass(frozen=True)
class ACSTask:
    """One stock folktables task under a short name (`income` is folktables.ACSIncome), or one
    with a real-valued label (`value` of the target column; `stock` names the task whose rows,
    features and target it takes)."""

    name: str
    problem: folktables.BasicProblem
    stock: str
    label_name: str
    value: Callable[[pd.Series], pd.Series] | None = None  # None: folktables' binary label

    @property
    def task(self) -> Task:
        return Task.CLASSIFICATION if self.value is None else Task.REGRESSION

    @property
    def folktables_name(self) -> str:
        """The folktables problem's name (the stock task's, for a real-valued label)."""
        return "ACS" + "".join(part.capitalize() for part in self.stock.split("_"))

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.problem.features)

    @property
    def target(self) -> str:
        return self.problem.target

    @property
    def required(self) -> tuple[str, ...]:
        """Columns that must be present: the target and what the row filter reads."""
        return (self.target, *_FILTER_COLUMNS[self.stock])

    def select_rows(self, frame):
        """The task's row filter (folktables applies it before building features)."""
        return self.problem._preprocess(frame)  # folktables 0.0.12 keeps it on the problem

    def label(self, frame: pd.DataFrame) -> pd.Series:
        """Each row's label: folktables' binary one, or the real value (NaN where the target is
        blank)."""
        if self.value is None:
            return self.problem.target_transform(frame[self.target])
        return self.value(frame[self.target].astype(np.float64))


TASKS: dict[str, ACSTask] = {  # folktables' own, with binary labels
    name: ACSTask(name, problem, name, _LABEL_NAMES[name]) for name, problem in _PROBLEMS.items()
}
REGRESSION_TASKS: dict[str, ACSTask] = {
    name: ACSTask(name, _PROBLEMS[stock], stock, f"{words} ({_PROBLEMS[stock].target})", value)
    for name, (stock, words, value) in _REAL_VALUED.items()
}
ALL_TASKS: dict[str, ACSTask] = TASKS | REGRESSION_TASKS


def task_by_name(name: str) -> ACSTask:
    """Accepts `income`, `ACSIncome` or `acsincome`."""
    wanted = name.lower().removeprefix("acs").replace("_", "").replace("-", "")
    for task in ALL_TASKS.values():
        if task.name.replace("_", "") == wanted:
            return task
    raise UserError(
        f"unknown ACS task '{name}'; the tasks are: {', '.join(ALL_TASKS)} "
        "(folktables' ACSIncome, ACSEmployment, ... under short names, and "
        f"{', '.join(REGRESSION_TASKS)} with a real-valued label)"
    )
