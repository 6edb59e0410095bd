"""ACS census data through folktables: one or several states pooled, any year and stock task."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from folktables import ACSDataSource

from engine.data.acs_files import (
    Progress,
    check_state,
    check_year_horizon,
    ensure_state_file,
    read_header,
    state_file,
)
from engine.data.acs_tasks import NUMERIC_COLUMNS, RENAMED_FROM_2019, ACSTask, task_by_name
from engine.data.codes import ACS_VALUE_LABELS
from engine.data.dataset import Dataset
from engine.data.paths import acs_root, cache_root
from engine.data.synthetic_pums import GENERATOR_VERSION, is_synthetic, write_synthetic_pums
from engine.errors import UserError
from engine.task import Task

PROTECTED_CANDIDATES = ("SEX", "RAC1P", "MAR", "AGEP")


@dataclass(frozen=True)
class ACSSpec:
    """Which ACS person files and which task; `root` defaults to FAIRFRONT_ACS_ROOT or data/acs."""

    states: tuple[str, ...]
    year: int = 2018
    task: str = "income"
    horizon: str = "1-Year"
    root: str = field(default_factory=lambda: str(acs_root()))
    allow_download: bool = False
    kind: str = "acs"

    def __post_init__(self) -> None:
        if not self.states:
            raise UserError("choose at least one state")
        object.__setattr__(self, "states", tuple(check_state(s) for s in self.states))
        check_year_horizon(self.year, self.horizon)
        task_by_name(self.task)

    @property
    def label_task(self) -> Task:
        return task_by_name(self.task).task

    def files(self, progress: Progress | None = None) -> tuple[Path, ...]:
        """The state files, downloaded first where that is allowed and they are missing."""
        return tuple(
            ensure_state_file(
                Path(self.root), s, self.year, self.horizon, self.allow_download, progress
            )
            for s in self.states
        )

    def load(self, progress: Progress | None = None) -> Dataset:
        return load_acs(self, progress)


def load_acs(spec: ACSSpec, progress: Progress | None = None) -> Dataset:
    task = task_by_name(spec.task)
    paths = spec.files(progress)
    raw, notes = _read_pooled(spec, paths)
    raw = raw.rename(columns={new: old for new, old in RENAMED_FROM_2019.items()
                              if new in raw.columns and old not in raw.columns})  # fmt: skip
    return _task_dataset(spec, task, raw, notes, synthetic=any(is_synthetic(p) for p in paths))


def _read_pooled(spec: ACSSpec, paths: tuple[Path, ...]) -> tuple[pd.DataFrame, list[str]]:
    """Read the state files; pool them by column name, never by position.

    folktables writes the first file's header and then every file's rows as they are, so files
    whose headers differ would be misaligned. Such files are read one by one and joined on the
    columns they share instead.
    """
    source = ACSDataSource(
        survey_year=str(spec.year), horizon=spec.horizon, survey="person", root_dir=spec.root
    )
    headers = [read_header(p) for p in paths]
    if all(h == headers[0] for h in headers):
        return source.get_data(states=list(spec.states), download=False), []
    frames = [source.get_data(states=[s], download=False) for s in spec.states]
    shared = [c for c in frames[0].columns if all(c in f.columns for f in frames)]
    dropped = sorted({c for f in frames for c in f.columns} - set(shared))
    notes = []
    if dropped:
        notes.append(
            "the state files have different columns; pooled on the shared ones, "
            f"leaving out {', '.join(dropped)}"
        )
    return pd.concat([f[shared] for f in frames], ignore_index=True), notes


def _task_dataset(
    spec: ACSSpec, task: ACSTask, raw: pd.DataFrame, notes: list[str], synthetic: bool
) -> Dataset:
    missing_required = [c for c in task.required if c not in raw.columns]
    if missing_required:
        raise UserError(
            f"the ACS files lack {', '.join(missing_required)}, which the {task.name} task needs "
            "for its label or row filter; it cannot run on these files"
        )
    present = [c for c in task.features if c in raw.columns]
    missing = tuple(c for c in task.features if c not in raw.columns)
    if missing:
        notes.append(
            f"reduced task: the files lack {', '.join(missing)}; "
            f"it runs on the {len(present)} of {len(task.features)} feature columns present"
        )
    rows = task.select_rows(raw)
    label = task.label(rows)
    if task.task is Task.REGRESSION and label.isna().any():  # e.g. no commute: worked from home
        notes.append(f"{int(label.isna().sum()):,} rows without a {task.target} value are left "
                     "out: their label is blank")  # fmt: skip
        rows, label = rows[label.notna()], label[label.notna()]
    if rows.empty:
        raise UserError(f"no rows of the ACS files pass the {task.name} task's filter")
    protected = tuple(c for c in PROTECTED_CANDIDATES if c in rows.columns)
    columns = list(dict.fromkeys(present + list(protected)))
    states = "+".join(spec.states)
    name = f"ACS {task.folktables_name} {states} {spec.year}"
    name += " (reduced)" if missing else ""
    name += " (synthetic)" if synthetic else ""
    return Dataset(
        name=name,
        frame=rows[columns].reset_index(drop=True),
        label=label.to_numpy(dtype=np.int8 if task.task is Task.CLASSIFICATION else np.float64),
        numeric=tuple(c for c in present if c in NUMERIC_COLUMNS),
        categorical=tuple(c for c in present if c not in NUMERIC_COLUMNS),
        protected=protected,
        label_name=task.label_name,
        value_labels={c: ACS_VALUE_LABELS[c] for c in columns if c in ACS_VALUE_LABELS},
        synthetic=synthetic,
        missing_features=missing,
        notes=tuple(notes),
        task=task.task,
    )


@dataclass(frozen=True)
class SyntheticACSSpec:
    """Seeded synthetic person records in the census layout, read through the same ACS path.

    Everything made from them is labelled synthetic; they exist for tests and for trying the ACS
    workflow without census files.
    """

    state: str = "CT"
    year: int = 2018
    task: str = "income"
    n_persons: int = 5000
    seed: int = 0
    kind: str = "synthetic"

    def __post_init__(self) -> None:
        if self.n_persons < 100:
            raise UserError("a synthetic ACS file needs at least 100 persons")
        self.as_acs()  # validates state, year and task

    @property
    def label_task(self) -> Task:
        return task_by_name(self.task).task

    def as_acs(self) -> ACSSpec:
        folder = (
            f"v{GENERATOR_VERSION}-n{self.n_persons}-seed{self.seed}"  # a new generator, new files
        )
        root = cache_root() / "synthetic-pums" / folder
        return ACSSpec(states=(self.state,), year=self.year, task=self.task, root=str(root))

    def files(self, progress: Progress | None = None) -> tuple[Path, ...]:
        acs = self.as_acs()
        path = state_file(Path(acs.root), acs.states[0], self.year, acs.horizon)
        if not path.is_file():
            write_synthetic_pums(
                Path(acs.root), acs.states[0], self.year, self.n_persons, self.seed
            )
        return (path,)

    def load(self, progress: Progress | None = None) -> Dataset:
        self.files()
        return load_acs(self.as_acs())
