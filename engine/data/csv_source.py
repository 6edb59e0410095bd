"""A user's own table (CSV file or DataFrame), validated column by column."""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import UserError

MAX_BYTES = 200 * 1024 * 1024
MAX_CATEGORIES = 100
MIN_ROWS = 20
NUMERIC_SHARE = 0.9  # a text column this numeric is taken for a numeric one with junk in it


@dataclass(frozen=True)
class CSVSpec:
    """A CSV file with a chosen binary label and protected column(s); the rest are features."""

    path: str
    label: str
    protected: tuple[str, ...]
    positive: str | None = None
    kind: str = "csv"

    def files(self, progress: object = None) -> tuple[Path, ...]:
        if not Path(self.path).is_file():
            raise UserError(f"CSV file not found: {self.path}")
        return (Path(self.path),)

    def load(self, progress: object = None) -> Dataset:
        return load_csv(self.path, self.label, self.protected, self.positive)


def load_csv(
    source: str | Path | bytes,
    label: str,
    protected: tuple[str, ...] | list[str],
    positive: str | None = None,
    name: str | None = None,
    max_bytes: int = MAX_BYTES,
) -> Dataset:
    """Read a CSV from a path or from uploaded bytes and validate it (see `from_frame`)."""
    if isinstance(source, bytes):
        size, handle, shown = len(source), io.BytesIO(source), name or "uploaded table"
    else:
        path = Path(source)
        if not path.is_file():
            raise UserError(f"CSV file not found: {path}")
        size, handle, shown = path.stat().st_size, path, name or path.name
    if size > max_bytes:
        raise UserError(
            f"{shown} is {size / 2**20:.0f} MB; the limit is {max_bytes / 2**20:.0f} MB"
        )
    if size == 0:
        raise UserError(f"{shown} is empty")
    try:
        frame = pd.read_csv(handle, skipinitialspace=True)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as error:
        raise UserError(f"{shown} could not be read as CSV: {error}") from error
    return from_frame(frame, label, protected, positive, name=shown)


def from_frame(
    frame: pd.DataFrame,
    label: str,
    protected: tuple[str, ...] | list[str],
    positive: str | None = None,
    name: str = "table",
    max_categories: int = MAX_CATEGORIES,
) -> Dataset:
    """Validate a table and turn it into a Dataset.

    The label must have two values (or `positive` names the positive one); protected columns must
    exist and not be empty; every other column is a feature, numeric or categorical, and a text
    column that is mostly numbers but holds some junk, or has too many distinct values to one-hot
    encode, is an error naming the column.
    """
    frame = frame.rename(columns=lambda c: str(c).strip())
    _require_columns(frame, [label, *protected], name)
    if not protected:
        raise UserError("choose at least one protected column")
    if len(frame) < MIN_ROWS:
        raise UserError(f"{name} has {len(frame)} rows; at least {MIN_ROWS} are needed")
    y = _binary_label(frame[label], label, positive)
    for column in protected:
        if frame[column].isna().all():
            raise UserError(f"protected column '{column}' is empty")
    features = [c for c in frame.columns if c != label]
    numeric, categorical = [], []
    for column in features:
        kind, values = _feature_kind(frame[column], column, max_categories, column in protected)
        frame[column] = values
        (numeric if kind == "numeric" else categorical).append(column)
    return Dataset(
        name=name,
        frame=frame[features].reset_index(drop=True),
        label=y,
        numeric=tuple(numeric),
        categorical=tuple(categorical),
        protected=tuple(protected),
        label_name=f"{label} = {positive}" if positive is not None else label,
    )


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


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
    text = column.astype(str).str.strip()
    values = sorted(text.unique())
    if positive is not None:
        if str(positive) not in values:
            raise UserError(
                f"'{positive}' does not occur in label column '{label}' "
                f"(its values: {', '.join(values[:10])})"
            )
        if len(values) < 2:
            raise UserError(f"label column '{label}' has only the value '{positive}'")
        return (text == str(positive)).to_numpy(dtype=np.int8)
    if len(values) != 2:
        shown = ", ".join(values[:10]) + (" ..." if len(values) > 10 else "")
        raise UserError(
            f"label column '{label}' must have two values, it has {len(values)} ({shown}); "
            "name the positive value to turn it into a yes/no label"
        )
    for pair in (("0", "1"), ("False", "True"), ("false", "true"), ("no", "yes")):
        if values == sorted(pair):
            return (text == pair[1]).to_numpy(dtype=np.int8)
    raise UserError(
        f"label column '{label}' has the values '{values[0]}' and '{values[1]}'; "
        "name which one is the positive outcome"
    )


def _feature_kind(
    column: pd.Series, name: str, max_categories: int, is_protected: bool
) -> tuple[str, pd.Series]:
    if pd.api.types.is_bool_dtype(column):
        return "numeric", column.astype(float)
    if pd.api.types.is_numeric_dtype(column):
        return "numeric", column
    present = column.dropna().astype(str).str.strip()
    as_numbers = pd.to_numeric(present, errors="coerce")
    junk = present[as_numbers.isna()]
    if len(junk) > 0 and as_numbers.notna().mean() >= NUMERIC_SHARE:
        examples = ", ".join(repr(v) for v in junk.unique()[:3])
        raise UserError(
            f"column '{name}' is numeric but has {len(junk)} non-numeric values such as {examples}"
        )
    if len(present) and junk.empty:
        return "numeric", pd.to_numeric(column, errors="coerce")
    distinct = present.nunique()
    if distinct > max_categories and not is_protected:
        raise UserError(
            f"column '{name}' has {distinct} distinct text values, more than the "
            f"{max_categories} that can be one-hot encoded; drop it or group its values"
        )
    return "categorical", column.astype("string").str.strip()
