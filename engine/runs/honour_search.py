"""A run's κ′ search (`engine.solvers.honour`) read back from its records: one row per inner
solve, the chosen one marked, and the sentence that says which κ′ was used and why.

It reads the records of a Solution made in this process and those a store returns alike, and
imports no solver code, so that the pages can show it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.solvers.honour_rules import HONOUR, SPLIT_WORDS
from engine.solvers.records import IterationRecord


@dataclass(frozen=True)
class InnerSolveRow:
    """One solve of the search: its inner tolerance κ′, the exact constrained value and the
    accuracy of its model on the honoured split (None where it could not be computed), its
    iterations, whether that value meets κ and whether the run reports this model."""

    solve: int
    kappa_prime: float
    value: float | None
    accuracy: float | None
    iterations: int
    meets_kappa: bool | None
    chosen: bool


@dataclass(frozen=True)
class HonourSearch:
    """The search of one run: the split κ was honoured on ("val" or "train"), κ itself (the
    first solve's κ′), its solves in order, and what it did in words ("" when the records do
    not say); `sigma`, the standard error of the constrained value on that split
    (`engine.fairness.noise`), and `split_rows`, its rows, when the records hold them."""

    split: str
    kappa: float
    rows: tuple[InnerSolveRow, ...]
    sentence: str
    sigma: float | None = None
    split_rows: int | None = None

    @property
    def chosen(self) -> InnerSolveRow | None:
        return next((row for row in self.rows if row.chosen), None)

    @property
    def split_words(self) -> str:
        return SPLIT_WORDS[self.split]


def honour_search(
    records: Iterable[IterationRecord | Mapping[str, Any]],
) -> HonourSearch | None:
    """The κ′ search in a run's records (`Solution.trajectory` or `Store.records`), None for a
    run that did not honour κ."""
    found = [_fields(r) for r in records]
    search = [(values, state) for kind, values, state in found if kind == HONOUR]
    if not search:
        return None
    kappa = float(search[0][0]["kappa_prime"])  # the first solve is at κ itself
    rows = []
    for index, (values, state) in enumerate(search, start=1):
        value = _number(values.get("value"))
        rows.append(InnerSolveRow(
            solve=index, kappa_prime=float(values["kappa_prime"]), value=value,
            accuracy=_number(values.get("accuracy")),
            iterations=int(values.get("iterations") or 0),
            meets_kappa=None if value is None else value <= kappa,
            chosen=state.get("chosen") == "yes",
        ))  # fmt: skip
    sentence = next((str(s["sentence"]) for _, s in search if s.get("sentence")), "")
    first = search[0][0]
    split_rows = _number(first.get("rows"))
    return HonourSearch(str(search[0][1]["split"]), kappa, tuple(rows), sentence,
                        _number(first.get("sigma")),
                        None if split_rows is None else int(split_rows))  # fmt: skip


def search_table(search: HonourSearch) -> list[dict[str, Any]]:
    """One flat row per solve, for a table or CSV: solve, κ′, the exact value and accuracy on
    the honoured split, iterations, whether it meets κ, whether it is the chosen model."""
    return [
        {
            "solve": row.solve,
            "kappa_prime": row.kappa_prime,
            "value": row.value,
            "accuracy": row.accuracy,
            "iterations": row.iterations,
            "meets_kappa": row.meets_kappa,
            "chosen": row.chosen,
        }
        for row in search.rows
    ]


def _fields(record: IterationRecord | Mapping[str, Any]) -> tuple[str, dict, dict]:
    if isinstance(record, IterationRecord):
        return record.kind, record.values, record.state
    return record["kind"], record.get("values") or {}, record.get("state") or {}


def _number(value: Any) -> float | None:
    return None if value is None or not math.isfinite(float(value)) else float(value)
