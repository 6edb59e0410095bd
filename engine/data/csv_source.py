"""A user's own table (CSV file or DataFrame), validated column by column."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.data.csv_text import MAX_BYTES, read_table
from engine.data.dataset import Dataset
from engine.data.feature_columns import MAX_CATEGORIES, feature_kind, unusable_reason
from engine.data.label_column import guess_label
from engine.errors import UserError
from engine.task import Task

MIN_ROWS = 20


@dataclass(frozen=True)
class CSVSpec:
    """A CSV file with a chosen binary label and protected column(s).

    `features` names the feature columns besides the protected ones (which are features unless
    the preparation drops them); None takes every other column except those that look like
    identifiers or free text (see `engine.data.feature_columns`).
    """

    path: str
    label: str
    protected: tuple[str, ...]
    positive: str | None = None
    features: tuple[str, ...] | None = None
    kind: str = "csv"

    def __post_init__(self) -> None:
        object.__setattr__(self, "protected", tuple(self.protected))
        if self.features is not None:
            object.__setattr__(self, "features", tuple(self.features))

    @property
    def label_task(self) -> Task:
        return Task.CLASSIFICATION  # the label column is read as binary

    def files(self, progress: object = None) -> tuple[Path, ...]:
        if not Path(self.path).is_file():
            raise UserError(f"CSV file not found: {self.path}")
        return (Path(self.path),)

    def load(self, progress: object = None) -> Dataset:
        return load_csv(self.path, self.label, self.protected, self.positive, self.features)


def load_csv(
    source: str | Path | bytes,
    label: str,
    protected: tuple[str, ...] | list[str],
    positive: str | None = None,
    features: tuple[str, ...] | list[str] | None = None,
    name: str | None = None,
    max_bytes: int = MAX_BYTES,
) -> Dataset:
    """Read a CSV from a path or from uploaded bytes and validate it (see `from_frame`)."""
    frame, shown = read_table(source, name, max_bytes)
    return from_frame(frame, label, protected, positive, features, name=shown)


@dataclass(frozen=True)
class Survey:
    """What the page offers of a CSV: its columns, those left out of the default features (with
    the reason), and the label guessed by name (None: the user chooses)."""

    columns: tuple[str, ...]
    left_out: dict[str, str]
    label: str | None


def survey(source: str | Path | bytes) -> Survey:
    """A CSV's columns, the columns left out of the default features, and its label by name."""
    frame, shown = read_table(source)
    frame = _clean_names(frame, shown)
    return Survey(tuple(frame.columns), unusable_columns(frame), guess_label(frame))


def survey_csv(source: str | Path | bytes) -> tuple[tuple[str, ...], dict[str, str]]:
    """A CSV's column names, and the columns left out of the default features with the reason."""
    found = survey(source)
    return found.columns, found.left_out


def unusable_columns(frame: pd.DataFrame) -> dict[str, str]:
    """Columns that are left out of the default features, each with the reason."""
    reasons = {c: unusable_reason(frame[c], c) for c in frame.columns}
    return {c: r for c, r in reasons.items() if r is not None}


def from_frame(
    frame: pd.DataFrame,
    label: str,
    protected: tuple[str, ...] | list[str],
    positive: str | None = None,
    features: tuple[str, ...] | list[str] | None = None,
    name: str = "table",
    max_categories: int = MAX_CATEGORIES,
) -> Dataset:
    """Validate a table and turn it into a Dataset.

    The label must have two values (or `positive` names the positive one); protected columns must
    exist and not be empty. The features are the protected columns and `features`, or, when that
    is None, every other column except identifiers and free text (named in a note). A feature is
    numeric or categorical; a text column that is mostly numbers but holds some junk, or has too
    many distinct values to one-hot encode, is an error naming the column.
    """
    frame = _clean_names(frame, name)
    label = _one_line(label)
    protected = tuple(dict.fromkeys(_one_line(c) for c in protected))
    features = None if features is None else [_one_line(c) for c in features]
    if not protected:
        raise UserError("choose at least one protected column")
    _require_columns(frame, [label, *protected], name)
    if label in protected:
        raise UserError(f"the label column '{label}' cannot also be a protected column")
    if len(frame) < MIN_ROWS:
        raise UserError(f"{name} has {len(frame)} rows; at least {MIN_ROWS} are needed")
    y = _binary_label(frame[label], label, positive)
    for column in protected:
        if frame[column].isna().all():
            raise UserError(f"protected column '{column}' is empty")
    chosen, notes = _feature_columns(frame, label, protected, features, name)
    numeric, categorical = [], []
    for column in chosen:
        kind, values = feature_kind(frame[column], column, column in protected, max_categories)
        frame[column] = values
        (numeric if kind == "numeric" else categorical).append(column)
    return Dataset(
        name=name,
        frame=frame[chosen].reset_index(drop=True),
        label=y,
        numeric=tuple(numeric),
        categorical=tuple(categorical),
        protected=protected,
        label_name=f"{label} = {positive}" if positive is not None else label,
        notes=notes,
    )


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _feature_columns(
    frame: pd.DataFrame,
    label: str,
    protected: tuple[str, ...],
    features: tuple[str, ...] | list[str] | None,
    name: str,
) -> tuple[list[str], tuple[str, ...]]:
    """The protected and feature columns in table order, and a note on columns left out."""
    if features is not None:
        _require_columns(frame, list(features), name)
        if label in features:
            raise UserError(f"the label column '{label}' cannot also be a feature")
        wanted = set(features) | set(protected)
        return [c for c in frame.columns if c in wanted], ()
    others = frame[[c for c in frame.columns if c != label and c not in protected]]
    left_out = unusable_columns(others)
    chosen = [c for c in frame.columns if c != label and c not in left_out]
    if not left_out:
        return chosen, ()
    listed = "; ".join(f"'{c}' ({reason})" for c, reason in left_out.items())
    return chosen, (f"left out of the features: {listed}; choose the feature columns to use them",)


def _clean_names(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """Column names as one line of text without surrounding spaces, each used once."""
    frame = frame.rename(columns=_one_line)
    repeated = frame.columns[frame.columns.duplicated()].unique().tolist()
    if repeated:
        raise UserError(
            f"{name} has more than one column named {', '.join(repr(c) for c in repeated)}; "
            "give every column its own name"
        )
    return frame


def _require_columns(frame: pd.DataFrame, wanted: list[str], name: str) -> None:
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise UserError(
            f"{name} has no column {', '.join(repr(c) for c in missing)}; "
            f"its columns are: {', '.join(map(str, frame.columns))}"
        )


def _binary_label(column: pd.Series, label: str, positive: str | None) -> np.ndarray:
    if column.isna().any():
        raise UserError(f"label column '{label}' has {int(column.isna().sum())} empty values")
    text = column.astype(str).map(_one_line)
    values = sorted(text.unique())
    shown = ", ".join(values[:10]) + (" ..." if len(values) > 10 else "")
    if positive is not None:
        positive = _one_line(positive)
        if positive not in values:
            raise UserError(
                f"'{positive}' does not occur in label column '{label}' (its values: {shown})"
            )
        if len(values) < 2:
            raise UserError(f"label column '{label}' has only the value '{positive}'")
        return (text == positive).to_numpy(dtype=np.int8)
    if len(values) == 1:
        raise UserError(
            f"label column '{label}' has only the value '{values[0]}', but a binary label needs two"
        )
    if len(values) > 2:
        raise UserError(
            f"label column '{label}' has {len(values)} values ({shown}), but a binary label is "
            f"needed; give the positive value (e.g. '{values[-1]}') to count it as yes and every "
            "other value as no"
        )
    for pair in (("0", "1"), ("False", "True"), ("false", "true"), ("no", "yes")):
        if values == sorted(pair):
            return (text == pair[1]).to_numpy(dtype=np.int8)
    raise UserError(
        f"label column '{label}' has the values '{values[0]}' and '{values[1]}'; "
        "name which one is the positive outcome"
    )


def _one_line(value: object) -> str:
    """A name or value as the user reads it: one line, single spaces, none around it."""
    return " ".join(str(value).split())
