"""New rows for a trained model, read from a table laid out as the training data's files.

A model reads the columns of its data set's frame (`engine.data.dataset.Dataset.frame`): for a
CSV upload, the upload's own header; for ACS, the PUMS column names (a file of 2019 or later
names two of them anew, `RENAMED_FROM_2019`); for Adult, the names FairFront gives the columns
of adult.data and adult.test, which have no header and write a missing value as "?". A
`FileLayout` says how a source's files differ from a CSV file whose header names the columns, so
that a file in the source's own layout can be read as it is.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from engine import json_fields as fields
from engine.data import adult
from engine.data.acs_tasks import RENAMED_FROM_2019
from engine.errors import UserError

SNIFF_BYTES = 1 << 16


@dataclass(frozen=True)
class FileLayout:
    """`columns`: a file without a header holds these columns in this order (the last, the
    label, may be absent); `missing`: text that stands for a missing value; `comment`: lines
    starting with it are not rows; `renames`: {a file's column name: the model's}, used where
    the model's name is absent."""

    columns: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    comment: str | None = None
    renames: dict[str, str] = field(default_factory=dict)

    def describe(self, needed: tuple[str, ...]) -> str:
        """What else than a CSV file with a header naming the `needed` columns can be read."""
        said = []
        if self.columns:
            said.append(
                f"a file without a header with the columns {', '.join(self.columns)} "
                "in this order (the last may be left out)"
            )
        renames = [f"'{new}' for '{old}'" for new, old in self.renames.items() if old in needed]
        if renames:
            said.append(f"the column{'s' if len(renames) > 1 else ''} {', '.join(renames)}")
        if self.missing:
            said.append(f"{', '.join(repr(m) for m in self.missing)} for a missing value")
        return "; ".join(said)

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "missing": list(self.missing),
            "comment": self.comment,
            "renames": self.renames,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FileLayout:
        what = "the file layout"
        data = fields.mapping(data, what)
        comment = fields.entry(data, "comment", (str, type(None)), what)
        if comment is not None and len(comment) != 1:
            raise UserError(f"the comment mark of {what} is not one character")
        return cls(
            columns=fields.texts(data, "columns", what),
            missing=fields.texts(data, "missing", what),
            comment=comment,
            renames=fields.text_map(data, "renames", str, what),
        )


def source_layout(kind: str) -> FileLayout:
    """The layout of the files of a data source (`DataSpec.kind`)."""
    if kind == "adult":
        return FileLayout(columns=adult.COLUMNS, missing=("?",), comment="|")  # adult.test's
    if kind in ("acs", "synthetic"):
        return FileLayout(renames=dict(RENAMED_FROM_2019))
    return FileLayout()


def read_rows(path: str | Path, needed: tuple[str, ...], layout: FileLayout) -> pd.DataFrame:
    """The `needed` columns of every row of a CSV file, in the file's order: found by the
    header's names (or their renames, without regard to case), else, for a layout with
    `columns`, by position in a file without a header. A missing column is left out (the model
    names what it lacks)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"CSV file not found: {path}")
    with open(path, "rb") as handle:
        start = handle.read(SNIFF_BYTES)
    if not start.strip():
        raise UserError(f"{path.name} is empty")
    if b"\x00" in start:
        raise UserError(f"{path.name} is not a text CSV (it holds NUL bytes); save it as a CSV")
    encoding = _encoding(path)
    header = _read(path, encoding, layout, nrows=0).columns
    wanted = _wanted(header, needed, layout)
    if wanted or not layout.columns:
        frame = _read(path, encoding, layout, usecols=list(wanted))
        return frame.rename(columns=wanted)
    first = _read(path, encoding, layout, header=None, nrows=1)
    if first.shape[1] > len(layout.columns):
        raise UserError(
            f"{path.name} has no header naming the columns the model reads, and "
            f"{first.shape[1]} columns, more than the {len(layout.columns)} of a "
            f"file without one ({', '.join(layout.columns)})"
        )
    present = layout.columns[: first.shape[1]]
    return _read(
        path,
        encoding,
        layout,
        header=None,
        names=list(present),
        usecols=[c for c in present if c in needed],
    )


def _wanted(header: pd.Index, needed: tuple[str, ...], layout: FileLayout) -> dict[str, str]:
    """{the header's name: the model's} of the needed columns the header holds."""
    by_lower = {" ".join(str(c).split()).lower(): c for c in header}
    wanted = {}
    for name in needed:
        for candidate in (name, *(new for new, old in layout.renames.items() if old == name)):
            if candidate.lower() in by_lower:
                wanted[by_lower[candidate.lower()]] = name
                break
    return wanted


def _encoding(path: Path) -> str:
    """UTF-8 (with or without a byte-order mark) when the file decodes as such, else Latin-1."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            while handle.read(1 << 20):
                pass
    except UnicodeDecodeError:
        return "latin-1"
    return "utf-8-sig"


def _read(path: Path, encoding: str, layout: FileLayout, **options) -> pd.DataFrame:
    try:
        return pd.read_csv(
            path,
            encoding=encoding,
            skipinitialspace=True,
            low_memory=False,
            na_values=list(layout.missing),
            comment=layout.comment,
            **options,
        )
    except pd.errors.EmptyDataError as error:
        raise UserError(f"{path.name} holds no table (it is blank)") from error
    except (pd.errors.ParserError, csv.Error, ValueError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UserError(f"{path.name} could not be read as CSV: {reason}") from error
