"""The tiny table command-line tests run on: the solver tests' two groups, written as CSV."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "solvers"))
from solver_data import two_groups_frame  # noqa: E402

TABLE_FLAGS = ("--source", "csv", "--label", "y", "--attribute", "sex", "--min-group-size", "10")


def write_table(folder: Path) -> Path:
    """600 rows, two groups (sex F/M), label y, four numeric features; use with TABLE_FLAGS and
    `--csv PATH`."""
    path = folder / "two_groups.csv"
    two_groups_frame().to_csv(path, index=False)
    return path
