"""The stock folktables ACS tasks, and which columns each one cannot do without."""

from __future__ import annotations

from dataclasses import dataclass

import folktables

from engine.errors import UserError

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

# Continuous PUMS columns; every other task feature is a code and is one-hot encoded.
NUMERIC_COLUMNS = frozenset({"AGEP", "WKHP", "PINCP", "POVPIP", "JWMNP"})

# Columns the census renamed in the 2019 files; folktables' tasks use the old names.
RENAMED_FROM_2019 = {"RELSHIPP": "RELP", "JWTRNS": "JWTR"}


@dataclass(frozen=True)
class ACSTask:
    """One stock folktables task under a short name (`income` is folktables.ACSIncome)."""

    name: str
    problem: folktables.BasicProblem

    @property
    def folktables_name(self) -> str:
        return "ACS" + "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.problem.features)

    @property
    def target(self) -> str:
        return self.problem.target

    @property
    def required(self) -> tuple[str, ...]:
        """Columns that must be present: the target and what the row filter reads."""
        return (self.target, *_FILTER_COLUMNS[self.name])

    @property
    def label_name(self) -> str:
        return _LABEL_NAMES[self.name]

    def select_rows(self, frame):
        """The task's row filter (folktables applies it before building features)."""
        return self.problem._preprocess(frame)  # folktables 0.0.12 keeps it on the problem

    def label(self, frame):
        return self.problem.target_transform(frame[self.target])


TASKS: dict[str, ACSTask] = {name: ACSTask(name, problem) for name, problem in _PROBLEMS.items()}


def task_by_name(name: str) -> ACSTask:
    """Accepts `income`, `ACSIncome` or `acsincome`."""
    wanted = name.lower().removeprefix("acs").replace("_", "").replace("-", "")
    for task in TASKS.values():
        if task.name.replace("_", "") == wanted:
            return task
    raise UserError(
        f"unknown ACS task '{name}'; the tasks are: {', '.join(TASKS)} "
        "(folktables' ACSIncome, ACSEmployment, ... under short names)"
    )
