"""The final models of a study as the Benchmark page's tables: mean ± std over each variant's
runs with the best of each column marked (paper 000, Table 4), laid out to fit a laptop's main
column (about 700 px at 1280×720) without scrolling sideways.

A cell "0.3244 ± 0.0002" is about 106 px wide, so a table holds at most four quantities beside
its solver labels. The objective, the constrained quantity, its violation and the accuracy get
one row per solver and split (test, then train); the criteria of paper 000 (Table 2's Ind, Sp,
Sf, then Ina, DifAcc, Wd) on the test set come as two tables of three. Every column holds one
quantity, its header naming it with its unit; the best of a column is taken within a split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from engine.benchmark.study import StudyRun, study_table
from engine.benchmark.summary import Summary
from engine.fairness.families import family_entry

SPLITS = ("test", "train")  # the splits of the outcome table, in its row order
FRACTION = "fraction"  # the unit of a rate, a probability or a difference of them
# the unit of each training objective's value (engine.objectives): the logistic loss is in nats
# (natural logarithm); the squared losses are in squared score or label units
LOSS_UNITS = {
    "logistic": "nats",
    "pairwise_auc": "score²",
    "squared_hinge": "score²",
    "squared": "label²",
}
# the constraint families whose quantity is not a rate: a gap of group losses (in the loss's
# unit) and an excess of hinge losses (in score units)
LOSS_FAMILIES = ("group_loss_gap",)
HINGE_FAMILIES = ("intersectional_hinge",)
# column → the run report's metric behind it, and what it is
OUTCOMES = {
    "loss": ("loss", "the training objective's value"),
    "constraint": ("constraint", "the exact value that the constraint holds to κ"),
    "violation": ("violation", "max(constraint − κ, 0) (paper 000, Table 4)"),
    "accuracy": ("accuracy", "the share of correct predictions, σ(h) > 0.5"),
}
CRITERIA = {
    "Ind": (
        "independence",
        "independence, the mean absolute deviation of the groups' positive rates",
    ),
    "Sp": ("separation", "separation, that of their true and false positive rates"),
    "Sf": ("sufficiency", "sufficiency, that of their positive and negative predictive values"),
    "Ina": ("inaccuracy", "inaccuracy, P(Ŷ ≠ Y)"),
    "DifAcc": ("accuracy_gap", "the largest minus the smallest group accuracy"),
    "Wd": (
        "probability_wasserstein",
        "the largest 1-Wasserstein distance between two groups' "
        "predicted probabilities σ(h) (paper 000, Fig. 3)",
    ),
}
# "split.metric" → the column of `final_summary` that holds it
FINAL_METRICS = {
    **{
        f"{split}.{metric}": f"{split} {column}"
        for split in SPLITS
        for column, (metric, _) in OUTCOMES.items()
    },
    **{f"test.{metric}": f"test {column}" for column, (metric, _) in CRITERIA.items()},
}
CRITERIA_TABLES = (
    ("Group-rate criteria on the test set (paper 000, Table 2)", ("Ind", "Sp", "Sf")),
    ("Error and score criteria on the test set", ("Ina", "DifAcc", "Wd")),
)


@dataclass(frozen=True)
class Table:
    """One table as shown: `text` the "mean ± std" cells (rows: solver, or solver and split;
    columns: headers with units), `best` True where a cell is its column's best within its
    split, `notes[name]` what the column of each quantity `name` (its header without the unit)
    holds."""

    title: str
    text: pd.DataFrame
    best: pd.DataFrame
    notes: dict[str, str]


def loss_unit(objective: str) -> str:
    """The unit of the training objective named `objective`."""
    return LOSS_UNITS.get(objective, "objective units")


def constraint_unit(family: str | None, objective: str) -> str:
    """The unit of the quantity that the constraint `family` holds to κ: the loss's for a gap of
    group losses, score units for a hinge-loss excess, a fraction for the rest (gaps of rates,
    of percentile rates or of AUCs)."""
    if family in LOSS_FAMILIES:
        return loss_unit(objective)
    if family in HINGE_FAMILIES:
        return "score"
    return FRACTION


def final_summary(runs: Sequence[StudyRun]) -> Summary | None:
    """Mean ± std over each variant's finished runs of the outcomes on every split of `SPLITS`
    and of the criteria on the test set, as columns "<split> <column>" ("test loss", "test Ind");
    None before any run has finished."""
    return study_table(runs, FINAL_METRICS)


def _outcome_headers(family: str | None, objective: str) -> dict[str, tuple[str, str, str]]:
    """column → (quantity, its header with unit, what it is) of the outcome table."""
    quantity = family_entry(family).quantity if family else "constraint"
    unit = constraint_unit(family, objective)
    names = {
        "loss": "loss",
        "constraint": quantity,
        "violation": "violation",
        "accuracy": "accuracy",
    }
    units = {
        "loss": loss_unit(objective),
        "constraint": unit,
        "violation": unit,
        "accuracy": FRACTION,
    }
    return {
        column: (names[column], f"{names[column]} ({units[column]})", words)
        for column, (_, words) in OUTCOMES.items()
    }


def final_tables(summary: Summary, family: str | None, objective: str = "logistic") -> list[Table]:
    """The outcome table (rows: solver and split) and the two criteria tables (rows: solver) of
    `final_summary`'s `summary`, for a study under the constraint `family` (None: without one)
    and the training objective named `objective`. A column without any value is left out."""
    text, best = summary.table(), summary.best
    solvers = summary.mean.index
    tables = []
    headers = _outcome_headers(family, objective)
    rows = pd.MultiIndex.from_tuples(
        [(s, split) for s in solvers for split in SPLITS], names=[solvers.name or "solver", "split"]
    )
    cells: dict[str, list[str]] = {}
    marks: dict[str, list[bool]] = {}
    for column, (_, header, _) in headers.items():
        keys = [(s, f"{split} {column}") for s in solvers for split in SPLITS]
        if all(pd.isna(summary.mean.loc[s, key]) for s, key in keys):
            continue
        cells[header] = [text.loc[s, key] for s, key in keys]
        marks[header] = [bool(best.loc[s, key]) for s, key in keys]
    tables.append(
        Table(
            "Objective, constraint and accuracy",
            pd.DataFrame(cells, index=rows),
            pd.DataFrame(marks, index=rows),
            {name: words for name, header, words in headers.values() if header in cells},
        )
    )
    for title, columns in CRITERIA_TABLES:
        shown = [c for c in columns if summary.mean[f"test {c}"].notna().any()]
        if not shown:
            continue
        names = {f"test {c}": f"{c} ({FRACTION})" for c in shown}
        tables.append(
            Table(
                title,
                text[list(names)].rename(columns=names),
                best[list(names)].rename(columns=names).astype(bool),
                {c: CRITERIA[c][1] for c in shown},
            )
        )
    return tables
