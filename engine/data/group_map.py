"""How the raw values of the protected column(s) give each row's group id, as decided when the
data was prepared.

`engine.data.grouping.make_groups` learns the groups from the data: the most frequent value of a
binary grouping, the k most frequent of a top-k one, bin edges (quantiles when none are given),
names that differ only in case or spacing, the small groups merged into "other". A `GroupMap`
keeps what was learned, so that rows never seen at preparation (a new table given to an exported
model) get the group the same rows got then.

A value never seen at preparation gets the group its grouping implies: "not <top>" for a binary
grouping, "other" for top-k, its bin for bins, the group of a known spelling of it (case and
spacing aside); a combination of known values that never occurred together is one of the small
groups merged into "other" when the grouping has that group. Anything else is a `UserError`
naming the column, the value and the groups there are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from engine import json_fields as fields
from engine.errors import UserError

OTHER = "other"
MISSING = "(missing)"
JOIN = " × "  # between the groups of the attributes of an intersection


def value_key(value: object) -> str:
    """A raw value as the map looks it up: numbers by their value (1 and 1.0 alike), text on
    one line with single spaces, missing and blank values as MISSING."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return MISSING
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
        return str(int(number)) if number.is_integer() else repr(number)
    return " ".join(str(value).split()) or MISSING


def fold(name: str) -> str:
    """A name without regard to case or spacing (how merged spellings are told apart)."""
    return " ".join(name.split()).casefold()


def bin_labels(values: pd.Series, edges: tuple[float, ...], names: tuple[str, ...]) -> pd.Series:
    """Each value's bin name: bins are [lo, hi) between −∞, `edges` and +∞; a value that is not
    a number is MISSING."""
    numbers = pd.to_numeric(values, errors="coerce")
    cut = pd.cut(numbers, (-np.inf, *edges, np.inf), right=False, labels=list(names))
    return cut.astype("string").fillna(MISSING)


@dataclass(frozen=True)
class AttributeMap:
    """One protected column's part of a row's group name.

    `kind` "values": `labels` gives the part of each raw value seen (by `value_key`),
    `spellings` that of each seen value's name without regard to case and spacing, and `unseen`
    that of any other value (None: such a value has no group). `kind` "bins": the value's bin
    among `edges`, named by `bin_names`.
    """

    column: str
    kind: str
    labels: dict[str, str] = field(default_factory=dict)
    spellings: dict[str, str] = field(default_factory=dict)
    unseen: str | None = None
    edges: tuple[float, ...] = ()
    bin_names: tuple[str, ...] = ()

    def parts(self, values: pd.Series) -> tuple[np.ndarray, list[str | None]]:
        """Each row's code into a list of parts (None where a value has none), computed once per
        distinct value."""
        if self.kind == "bins":
            codes, uniques = pd.factorize(bin_labels(values, self.edges, self.bin_names))
            return codes, list(uniques)
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        return codes, [self.part(v) for v in uniques]

    def part(self, value: object) -> str | None:
        key = value_key(value)
        if key in self.labels:
            return self.labels[key]
        if isinstance(value, str):  # "1.0" read as text for the code 1
            try:
                as_number = value_key(float(key))
            except ValueError:
                as_number = None
            if as_number in self.labels:
                return self.labels[as_number]
        return self.spellings.get(fold(key), self.unseen)

    def known(self) -> list[str]:
        """The parts this column gives, in their first order."""
        if self.kind == "bins":
            return list(self.bin_names)
        return list(dict.fromkeys(self.labels.values()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "kind": self.kind,
            "labels": self.labels,
            "spellings": self.spellings,
            "unseen": self.unseen,
            "edges": list(self.edges),
            "bin_names": list(self.bin_names),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AttributeMap:
        what = "a protected column's grouping"
        data = fields.mapping(data, what)
        kind = fields.entry(data, "kind", str, what)
        if kind not in ("values", "bins"):
            raise UserError(f"{what} has the unknown kind '{kind}'")
        edges = fields.entry(data, "edges", list, what)
        numbers = all(isinstance(e, int | float) and not isinstance(e, bool) for e in edges)
        if not numbers or not all(map(math.isfinite, edges)) or edges != sorted(set(edges)):
            raise UserError(f"the bin edges of {what} are not increasing numbers")
        names = fields.texts(data, "bin_names", what)
        if kind == "bins" and len(names) != len(edges) + 1:
            raise UserError(f"{what} has {len(edges)} bin edges but {len(names)} bin names")
        return cls(
            column=fields.entry(data, "column", str, what),
            kind=kind,
            labels=fields.text_map(data, "labels", str, what),
            spellings=fields.text_map(data, "spellings", str, what),
            unseen=fields.entry(data, "unseen", (str, type(None)), what),
            edges=tuple(float(e) for e in edges),
            bin_names=names,
        )


@dataclass(frozen=True)
class GroupMap:
    """The protected `columns` (one, or several for an intersection), the part each gives of a
    row's group name (`attributes`), the group id of each name seen at preparation
    (`label_ids`, names joined by " × " before small groups were merged), the group `names`, and
    `other`, the id of the group the small groups were merged into (None without one)."""

    columns: tuple[str, ...]
    attributes: tuple[AttributeMap, ...]
    label_ids: dict[str, int]
    names: tuple[str, ...]
    other: int | None = None

    def ids(self, frame: pd.DataFrame) -> np.ndarray:
        """Each row's group id (int64); a missing column, or a value or combination that has no
        group, is a `UserError`."""
        if len(frame) == 0:
            return np.zeros(0, dtype=np.int64)
        codes, parts = [], []
        for attribute in self.attributes:
            code, part = attribute.parts(frame[self._column(frame, attribute.column)])
            unknown = [i for i, p in enumerate(part) if p is None]
            if unknown:
                self._refuse_value(frame, attribute, code, unknown[0])
            codes.append(code)
            parts.append(part)
        shape = tuple(len(p) for p in parts)
        combined = np.ravel_multi_index(tuple(codes), shape) if len(codes) > 1 else codes[0]
        present, inverse = np.unique(combined, return_inverse=True)
        ids = np.empty(len(present), dtype=np.int64)
        for i, flat in enumerate(present):
            chosen = np.unravel_index(flat, shape)
            label = JOIN.join(part[c] for part, c in zip(parts, chosen, strict=True))
            ids[i] = self._id_of(label)
        return ids[inverse.reshape(-1)]

    def _id_of(self, label: str) -> int:
        if label in self.label_ids:
            return self.label_ids[label]
        if self.other is not None:  # a combination never seen: fewer rows than any group had
            return self.other
        raise UserError(
            f"some rows fall in the group {label!r} of {', '.join(self.columns)}, "
            "which no row had when the model was trained; its groups are "
            f"{', '.join(self.names)}"
        )

    def _refuse_value(
        self, frame: pd.DataFrame, attribute: AttributeMap, codes: np.ndarray, unknown: int
    ) -> None:
        column = self._column(frame, attribute.column)
        value = frame[column].iloc[int(np.flatnonzero(codes == unknown)[0])]
        raise UserError(
            f"the protected column '{attribute.column}' has the value "
            f"{value_key(value)!r}, never seen when the model was trained; the "
            f"values it knows are grouped as {', '.join(attribute.known())}"
        )

    @staticmethod
    def _column(frame: pd.DataFrame, name: str) -> str:
        """The frame's spelling of a column: the exact name, else one equal without regard to
        case."""
        if name in frame.columns:
            return name
        by_lower = {str(c).lower(): c for c in frame.columns}
        if name.lower() not in by_lower:
            raise UserError(f"the table has no column '{name}', which gives the rows' groups")
        return by_lower[name.lower()]

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "attributes": [a.to_dict() for a in self.attributes],
            "label_ids": self.label_ids,
            "names": list(self.names),
            "other": self.other,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GroupMap:
        what = "the group map"
        data = fields.mapping(data, what)
        names = fields.texts(data, "names", what)
        label_ids = fields.text_map(data, "label_ids", int, what)
        other = fields.entry(data, "other", (int, type(None)), what)
        ids = [*label_ids.values(), *([] if other is None else [other])]
        if not all(0 <= i < len(names) for i in ids):
            raise UserError(f"{what} has a group id outside its {len(names)} groups")
        attributes = tuple(
            AttributeMap.from_dict(a) for a in fields.entry(data, "attributes", list, what)
        )
        columns = fields.texts(data, "columns", what)
        if columns != tuple(a.column for a in attributes) or not columns:
            raise UserError(f"the columns of {what} do not match its attributes")
        return cls(columns, attributes, label_ids, names, other)
