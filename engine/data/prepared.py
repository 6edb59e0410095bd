"""Prepared data: encoded train/validation/test arrays with integer group ids."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from engine.data.encoding import Design, Encoder
from engine.data.group_map import GroupMap
from engine.data.subgroups import Subgroups
from engine.task import Task

SPLITS = ("train", "val", "test")
# what the summary says of each group's labels: the share of positives, or the mean label
LABEL_STATISTIC = {Task.CLASSIFICATION: "label_rate", Task.REGRESSION: "label_mean"}
LABEL_STATISTIC_WORDS = {"label_rate": "positive rate", "label_mean": "mean label"}


@dataclass(frozen=True)
class SplitArrays:
    # (n, d): dense float64, or for large one-hot data (engine.data.prepare.SPARSE_FROM_BYTES) a
    # scipy.sparse.csr_array of float32
    X: Design
    y: np.ndarray  # (n,) int8, 1 = positive label; float64 for a real-valued label (regression)
    groups: np.ndarray  # (n,) int64 in 0..G-1
    # (n, k) 0/1 membership of the overlapping subgroups (`Prepared.subgroups`), or None
    members: sparse.csr_matrix | None = None

    def __len__(self) -> int:
        return len(self.y)


@dataclass(frozen=True)
class Prepared:
    train: SplitArrays
    val: SplitArrays
    test: SplitArrays
    feature_names: tuple[str, ...]
    group_names: tuple[str, ...]
    encoder: Encoder
    dataset_name: str
    label_name: str
    synthetic: bool = False
    missing_features: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    key: str = ""
    subgroups: Subgroups | None = None
    task: Task = Task.CLASSIFICATION
    # how the raw protected column(s) give the group ids, for rows not prepared here (an
    # exported model's new rows); None for data prepared without one
    group_map: GroupMap | None = None

    @property
    def n_groups(self) -> int:
        return len(self.group_names)

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    def split(self, name: str) -> SplitArrays:
        return {"train": self.train, "val": self.val, "test": self.test}[name]

    def group_sizes(self, split: str | None = None) -> dict[str, int]:
        """Rows per group name in `split`, or in all splits together."""
        parts = [self.split(split)] if split else [self.split(s) for s in SPLITS]
        counts = sum(np.bincount(p.groups, minlength=self.n_groups) for p in parts)
        return {name: int(n) for name, n in zip(self.group_names, counts, strict=True)}

    def summary(self) -> dict:
        """Rows, features, and per group the size and, in every split, the positive-label rate
        ("label_rate") or, for a real-valued label, the mean label ("label_mean")."""
        statistic = LABEL_STATISTIC[self.task]
        groups = []
        for g, name in enumerate(self.group_names):
            entry: dict = {"name": name}
            for split_name in SPLITS:
                part = self.split(split_name)
                members = part.groups == g
                size = int(members.sum())
                mean = float(part.y[members].mean()) if size else None
                entry[split_name] = {"size": size, statistic: mean}
            groups.append(entry)
        return {
            "dataset": self.dataset_name,
            "label": self.label_name,
            "task": str(self.task),
            "synthetic": self.synthetic,
            "reduced": bool(self.missing_features),
            "missing_features": list(self.missing_features),
            "rows": {s: len(self.split(s)) for s in SPLITS},
            "features": self.n_features,
            "groups": groups,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "key": self.key,
        }


def group_table(summary: dict) -> list[dict]:
    """One row per group: its size and positive-label rate (mean label, for a real-valued
    label) in each split (for tables)."""
    statistic = summary_statistic(summary)
    rows = []
    for group in summary["groups"]:
        row = {"group": group["name"]}
        for split in SPLITS:
            row[f"{split} size"] = group[split]["size"]
            row[f"{split} {LABEL_STATISTIC_WORDS[statistic]}"] = group[split][statistic]
        rows.append(row)
    return rows


def summary_statistic(summary: dict) -> str:
    """The per-group label statistic of a `Prepared.summary()`: "label_rate" or "label_mean"
    (a summary written before regression has no "task" and is a classification's)."""
    return LABEL_STATISTIC[Task(summary.get("task", Task.CLASSIFICATION))]
