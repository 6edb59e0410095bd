"""ACS census data with folktables' tasks: one or several states pooled, any year and stock task.

The state files are read one at a time, only the columns the task needs, so that pooling all of
them (about 3.2 million persons in a year's 1-Year files) holds one state's table at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from engine.data.acs_files import (
    ALL_STATES,
    Progress,
    check_year_horizon,
    ensure_state_file,
    expand_states,
    read_header,
    state_file,
    states_label,
)
from engine.data.acs_tasks import NUMERIC_COLUMNS, RENAMED_FROM_2019, ACSTask, task_by_name
from engine.data.codes import ACS_VALUE_LABELS
from engine.data.dataset import Dataset
from engine.data.memory import check_fits, estimate_acs_load
from engine.data.paths import acs_root, cache_root
from engine.data.synthetic_pums import (
    GENERATOR_VERSION,
    MAX_PERSONS,
    is_synthetic,
    persons_per_state,
    write_synthetic_pums,
)
from engine.errors import UserError
from engine.task import Task

PROTECTED_CANDIDATES = ("SEX", "RAC1P", "MAR", "AGEP")


@dataclass(frozen=True)
class ACSSpec:
    """Which ACS person files and which task; `root` defaults to FAIRFRONT_ACS_ROOT or data/acs.

    `states` are two-letter codes; "all" stands for the 50 states and Puerto Rico.
    """

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
        object.__setattr__(self, "states", expand_states(self.states))
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
    columns, notes = _pooled_columns(task, paths)
    check_fits(estimate_acs_load(paths, len(columns)), "loading and preparing these ACS files")
    rows = _read_pooled(task, paths, columns)
    return _task_dataset(spec, task, rows, notes, synthetic=any(is_synthetic(p) for p in paths))


def _pooled_columns(task: ACSTask, paths: tuple[Path, ...]) -> tuple[list[str], list[str]]:
    """The columns to read (the task's features, label and filter columns, the protected
    candidates) that every file has, under folktables' names; and a note on those some lack.

    Files are pooled by column name, never by position: a column some of the files lack is left
    out of all of them, so that the pooled rows agree.
    """
    wanted = list(dict.fromkeys((*task.features, *task.required, *PROTECTED_CANDIDATES)))
    present = [set(_file_names(read_header(p), wanted)) for p in paths]
    shared = [c for c in wanted if all(c in names for names in present)]
    dropped = sorted(set().union(*present) - set(shared))
    notes = []
    if dropped:
        notes.append(
            "the state files have different columns; pooled on the shared ones, "
            f"leaving out {', '.join(dropped)}"
        )
    missing_required = [c for c in task.required if c not in shared]
    if missing_required:
        raise UserError(
            f"the ACS files lack {', '.join(missing_required)}, which the {task.name} task needs "
            "for its label or row filter; it cannot run on these files"
        )
    return shared, notes


def _file_names(header: list[str], wanted: list[str]) -> dict[str, str]:
    """folktables' name -> the file's name of each wanted column the file has (2019 on, the
    census spells some of them differently: RENAMED_FROM_2019)."""
    spelled = {old: new for new, old in RENAMED_FROM_2019.items() if old not in header}
    names = {c: spelled.get(c, c) for c in wanted}
    return {c: name for c, name in names.items() if name in header}


def _read_pooled(task: ACSTask, paths: tuple[Path, ...], columns: list[str]) -> pd.DataFrame:
    """The task's rows of every file, state by state: only `columns` are read, the row filter is
    applied to each state's rows and their numbers are stored compactly, so that no more than one
    state's table is held besides the pooled result."""
    kept = [_compact(task.select_rows(_read_state(path, columns))) for path in paths]
    return pd.concat(kept, ignore_index=True) if len(kept) > 1 else kept[0]


def _read_state(path: Path, columns: list[str]) -> pd.DataFrame:
    header = read_header(path)  # spaces stripped: some early files have them
    names = _file_names(header, columns)
    frame = pd.read_csv(path, header=0, names=header, usecols=list(names.values()))
    return frame.rename(columns={name: c for c, name in names.items()})[columns]


def _compact(frame: pd.DataFrame) -> pd.DataFrame:
    """Numeric columns as float32 where that holds every value exactly (census codes, ages,
    hours and dollar amounts below 2^24 do): half the memory of float64 and int64."""
    narrowed = {}
    for name in frame.columns:
        values = frame[name]
        if values.dtype.kind in "iuf" and values.dtype != np.float32:
            numbers = values.to_numpy(dtype=np.float64)
            single = numbers.astype(np.float32)
            if np.array_equal(single, numbers, equal_nan=True):
                narrowed[name] = single
    return frame.assign(**narrowed) if narrowed else frame


def _task_dataset(
    spec: ACSSpec, task: ACSTask, rows: pd.DataFrame, notes: list[str], synthetic: bool
) -> Dataset:
    """The Dataset of the task's rows (already filtered)."""
    present = [c for c in task.features if c in rows.columns]
    missing = tuple(c for c in task.features if c not in rows.columns)
    if missing:
        notes.append(
            f"reduced task: the files lack {', '.join(missing)}; "
            f"it runs on the {len(present)} of {len(task.features)} feature columns present"
        )
    label = task.label(rows)
    if task.task is Task.REGRESSION and label.isna().any():  # e.g. no commute: worked from home
        notes.append(
            f"{int(label.isna().sum()):,} rows without a {task.target} value are left "
            "out: their label is blank"
        )
        rows, label = rows[label.notna()], label[label.notna()]
    if rows.empty:
        raise UserError(f"no rows of the ACS files pass the {task.name} task's filter")
    protected = tuple(c for c in PROTECTED_CANDIDATES if c in rows.columns)
    columns = list(dict.fromkeys(present + list(protected)))
    name = f"ACS {task.folktables_name} {states_label(spec.states)} {spec.year}"
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


MIN_SYNTHETIC_PERSONS = 100  # per state: fewer leave too few rows to split and group


@dataclass(frozen=True)
class SyntheticACSSpec:
    """Seeded synthetic person records in the census layout, read through the same ACS path.

    `state` is one code ("CT"), several joined by commas ("CT,NY") or "all" (the 50 states and
    Puerto Rico). `n_persons` are the persons of all of them together: several states share them
    in proportion to their populations, at least MIN_SYNTHETIC_PERSONS each
    (`engine.data.synthetic_pums.FULL_SIZE_PERSONS` with "all" gives about 1.66 M rows of the
    income task). Everything made from them is labelled synthetic; they exist for tests,
    benchmarks and trying the ACS workflow without census files.
    """

    state: str = "CT"
    year: int = 2018
    task: str = "income"
    n_persons: int = 5000
    seed: int = 0
    kind: str = "synthetic"

    def __post_init__(self) -> None:
        if self.n_persons < MIN_SYNTHETIC_PERSONS:
            raise UserError(f"a synthetic ACS file needs at least {MIN_SYNTHETIC_PERSONS} persons")
        self.as_acs()  # validates states, year and task
        largest = max(self.persons.values())
        if largest > MAX_PERSONS:
            raise UserError(
                f"{self.n_persons:,} synthetic persons would put {largest:,} in one state's file; "
                f"at most {MAX_PERSONS:,} fit in one"
            )

    @property
    def states(self) -> tuple[str, ...]:
        codes = expand_states([s for s in self.state.split(",") if s.strip()])
        return tuple(dict.fromkeys(codes))

    @property
    def persons(self) -> dict[str, int]:
        """Persons in each state's file."""
        return persons_per_state(self.states, self.n_persons, at_least=MIN_SYNTHETIC_PERSONS)

    @property
    def label_task(self) -> Task:
        return task_by_name(self.task).task

    def as_acs(self) -> ACSSpec:
        """The ACS spec of the written files; their folder names everything that decides them."""
        states = self.states
        folder = f"v{GENERATOR_VERSION}-n{self.n_persons}-seed{self.seed}"
        if len(states) > 1:  # several states share the persons: the set decides each share
            folder += "-" + ("all" if set(states) == set(ALL_STATES) else "-".join(sorted(states)))
        root = cache_root() / "synthetic-pums" / folder
        return ACSSpec(states=states, year=self.year, task=self.task, root=str(root))

    def files(self, progress: Progress | None = None) -> tuple[Path, ...]:
        """The state files, each written (one at a time) if it is not there yet."""
        acs = self.as_acs()
        paths = []
        for state, n_persons in self.persons.items():
            path = state_file(Path(acs.root), state, self.year, acs.horizon)
            if not path.is_file():
                write_synthetic_pums(Path(acs.root), state, self.year, n_persons, self.seed)
            paths.append(path)
        return tuple(paths)

    def load(self, progress: Progress | None = None) -> Dataset:
        self.files()
        return load_acs(self.as_acs())
