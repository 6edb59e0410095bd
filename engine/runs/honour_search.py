"""A run's search (`engine.solvers.exact_train`, `engine.solvers.honour`) read back from its
records: one row per solve (its κ′, its surrogate's resolution, its exact values on the
training data and on the honoured split), the chosen one marked, and the sentence that says what
was done and why.

It reads the records of a Solution made in this process and those a store returns alike, and
imports no solver code, so that the pages can show it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.solvers.honour_rules import SPLIT_WORDS
from engine.solvers.records import IterationRecord, RecordKind


@dataclass(frozen=True)
class InnerSolveRow:
    """One solve of the search: its inner tolerance κ′, the size of pSP's grid Î (None for
    another family) and the surrogate's width τ, what was refined before it (words, "" for
    none), the exact constrained value of its model on the training data and on the honoured
    split and its accuracy there (None where it could not be computed), its iterations,
    whether the honoured value meets κ and whether the run reports this model."""

    solve: int
    kappa_prime: float
    value: float | None
    accuracy: float | None
    iterations: int
    meets_kappa: bool | None
    chosen: bool
    train_value: float | None = None
    levels: int | None = None
    temperature: float | None = None
    refined: str = ""


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
    search = [(values, state) for kind, values, state in found if kind == RecordKind.HONOUR]
    if not search:
        return None
    kappa = float(search[0][0]["kappa_prime"])  # the first solve is at κ itself
    rows = []
    for index, (values, state) in enumerate(search, start=1):
        value = _number(values.get("value"))
        levels = _number(values.get("levels"))
        rows.append(
            InnerSolveRow(
                solve=index,
                kappa_prime=float(values["kappa_prime"]),
                value=value,
                accuracy=_number(values.get("accuracy")),
                iterations=int(values.get("iterations") or 0),
                meets_kappa=None if value is None else value <= kappa,
                chosen=state.get("chosen") == "yes",
                train_value=_number(values.get("train_value")),
                levels=None if levels is None else int(levels),
                temperature=_number(values.get("temperature")),
                refined=str(state.get("refined") or ""),
            )
        )
    sentence = next((str(s["sentence"]) for _, s in search if s.get("sentence")), "")
    first = search[0][0]
    split_rows = _number(first.get("rows"))
    return HonourSearch(
        str(search[0][1]["split"]),
        kappa,
        tuple(rows),
        sentence,
        _number(first.get("sigma")),
        None if split_rows is None else int(split_rows),
    )


def search_table(search: HonourSearch) -> list[dict[str, Any]]:
    """One flat row per solve, for a table or CSV: solve, κ′, |Î| (pSP) and τ of its
    surrogate, what was refined before it, the exact training value, the exact value and
    accuracy on the honoured split (validation only: on train they are the training value and
    accuracy), iterations, whether it meets κ, whether it is the chosen model."""
    validation = search.split != "train"
    return [
        {
            "solve": row.solve,
            "kappa_prime": row.kappa_prime,
            "levels": row.levels,
            "temperature": row.temperature,
            "refined": row.refined,
            "train_value": row.value if row.train_value is None else row.train_value,
            **({"value": row.value} if validation else {}),
            "accuracy": row.accuracy,
            "iterations": row.iterations,
            "meets_kappa": row.meets_kappa,
            "chosen": row.chosen,
        }
        for row in search.rows
    ]


def search_titles(search: HonourSearch, quantity: str) -> dict[str, tuple[str, str]]:
    """The title and help of each column of `search_table`, for a page or a report."""
    where = search.split_words
    honoured = {
        "value": (f"{quantity} ({where})", f"exact {quantity} of the solve's model on {where}")
    }
    return {
        "solve": ("solve", "the solves in the order they ran"),
        "kappa_prime": ("κ′", "the inner tolerance the surrogate constraint was held to"),
        "levels": (
            "|Î|",
            "the ranks of pSP's grid Î (paper 003, eq. 15): the paper's grid, "
            "then the ranks where the exact gap exceeded κ",
        ),
        "temperature": (
            "τ",
            "the width of the surrogate's ramp (or the sigmoid's temperature), in score units",
        ),
        "refined": ("refined", "what was refined before this solve"),
        "train_value": (
            f"{quantity} (train)",
            f"exact {quantity} of the solve's model on the training data",
        ),
        **(honoured if search.split != "train" else {}),
        "accuracy": (f"accuracy ({where})", f"accuracy of the solve's model on {where}"),
        "iterations": ("iterations", "the solver's iterations in this solve"),
        "meets_kappa": (
            f"≤ κ = {search.kappa:g}",
            f"whether the exact {quantity} on {where} is at most κ: the value "
            "itself, which the solves steer by"
            + (
                ""
                if search.split == "train"
                else "; the run's verdict judges a held-out value with its 95 % interval"
            ),
        ),
        "chosen": ("reported", "◆: the model the run reports"),
    }


def _fields(record: IterationRecord | Mapping[str, Any]) -> tuple[str, dict, dict]:
    if isinstance(record, IterationRecord):
        return record.kind, record.values, record.state
    return record["kind"], record.get("values") or {}, record.get("state") or {}


def _number(value: Any) -> float | None:
    return None if value is None or not math.isfinite(float(value)) else float(value)
