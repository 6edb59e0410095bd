"""Tables that set runs side by side (Explore's, the Runs page's, the report's, the command
line's): one quantity per column, named in its header.

A fairness column holds one exact quantity (`engine.runs.quantities`) for every run: a run held
to it shows its constrained value, any other run the value it reports of it, and a run that
stores it under no name an empty cell. A table's fairness columns are the quantities its runs'
verdicts speak of (a run's constraint's; for a run without one, the quantity of the view it is
shown in, of its measure, or what every run of its task reports), each once. A score column
holds one stored metric. A missing value is None (an interval's cell ""), never another
quantity's value and never text; the pages and the report show it as "—". No torch, no
Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from engine.fairness.constraint_spec import ConstraintSpec
from engine.model_quality import HIGH, LOW
from engine.runs.quantities import Quantity, distinct, held_quantity, quantity_of, task_quantity
from engine.runs.results import interval_text, measure_view, run_verdict
from engine.runs.spec import RunSpec
from engine.runs.store import Store
from engine.task import Task

Metrics = dict[str, dict[str, float | None]]

# the test metrics a comparison table shows of a model, by the task of its label, as header →
# metric: a classifier's accuracy beside always predicting the majority class, and its AUC; a
# regression's RMSE beside predicting the training mean label, and its R²
SCORE_COLUMNS = MappingProxyType(
    {
        Task.CLASSIFICATION: {
            "test accuracy": "accuracy",
            "majority": "majority",
            "test AUC": "auc",
        },
        Task.REGRESSION: {"test RMSE": "rmse", "baseline RMSE": "baseline_rmse", "test R²": "r2"},
    }
)
INTERVAL_SUFFIX = " 95 %"  # the header of a value's 95 % interval: "test pSP 95 %"


@dataclass(frozen=True)
class Column:
    """One column of a table of runs, by its `header`: the stored `metric` on `split` (a
    score), or the fairness `quantity` on `split`, as its value or, with `interval`, its 95 %
    interval ("low–high"); a column with neither holds a fact of the run (its verdict, κ, how
    it ended), which the table fills itself."""

    header: str
    split: str | None = None
    metric: str | None = None
    quantity: Quantity | None = None
    interval: bool = False

    @property
    def measured(self) -> bool:
        """Whether its cells are read from the runs' stored metrics."""
        return self.split is not None

    def source(self, spec: RunSpec) -> str | None:
        """The stored metric a run of `spec` holds this column's value under (None: none)."""
        return self.quantity.source(spec) if self.quantity is not None else self.metric

    def cell(self, spec: RunSpec, metrics: Metrics) -> float | str | None:
        """The column's cell for a run of `spec` and stored `metrics`: the number (None when
        the run has none, or a NaN), or the interval's text ("" without one)."""
        source = self.source(spec)
        values = metrics.get(self.split or "", {})
        if self.interval:
            if source is None:
                return ""
            return interval_text(values.get(source + LOW), values.get(source + HIGH))
        return None if source is None else finite(values.get(source))


@dataclass(frozen=True)
class ComparisonTable:
    """Columns, and one row per run as {header: cell}, in the columns' order."""

    columns: tuple[Column, ...]
    rows: tuple[dict[str, Any], ...]

    def column(self, header: str) -> Column:
        return next(c for c in self.columns if c.header == header)


def finite(value: float | None) -> float | None:
    """A stored number for a cell: None for a missing, NaN or infinite one."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def shown_quantity(spec: RunSpec, view: ConstraintSpec | None = None) -> Quantity:
    """The quantity a run's verdict speaks of (`engine.runs.results.spec_verdict`): its
    constraint's; for a run without one, that of `view`, else of its measure's exact
    counterpart (`measure_view`), else what every run of its task reports (pSP on I)."""
    own = held_quantity(spec)
    if own is not None:
        return own
    shown = view or measure_view(spec)
    return quantity_of(shown) if shown is not None else task_quantity(spec.task)


def quantity_columns(
    quantities: Iterable[Quantity],
    splits: Sequence[str] = ("test", "train"),
    interval_splits: Sequence[str] = ("test",),
) -> list[Column]:
    """Each quantity on each split ("test DP gap"), followed on `interval_splits` by its 95 %
    interval ("test DP gap 95 %")."""
    columns = []
    for quantity in quantities:
        for split in splits:
            header = f"{split} {quantity.name}"
            columns.append(Column(header, split, quantity=quantity))
            if split in interval_splits:
                columns.append(
                    Column(header + INTERVAL_SUFFIX, split, quantity=quantity, interval=True)
                )
    return columns


def score_columns(tasks: Iterable[Task]) -> list[Column]:
    """The test scores of `SCORE_COLUMNS` for the runs' tasks, in order, accuracy with its 95 %
    interval beside it."""
    columns = []
    for task in dict.fromkeys(tasks):
        for header, metric in SCORE_COLUMNS[task].items():
            columns.append(Column(header, "test", metric))
            if metric == "accuracy":
                columns.append(Column(header + INTERVAL_SUFFIX, "test", metric, interval=True))
    return columns


def comparison_table(
    store: Store,
    run_ids: Sequence[str],
    view: ConstraintSpec | None = None,
    compact: bool = False,
) -> ComparisonTable:
    """One row per run, test first: the run, its solver and verdict, κ, each fairness quantity
    of the runs (`shown_quantity`; a run without constraint shows the quantity of the
    constraint `view` where it reports it) on test with its 95 % interval and on train, the
    test scores of `SCORE_COLUMNS` (a classifier's accuracy with its interval, against the
    majority class, and AUC; a regression's RMSE against the baseline, and R²), and how the
    run ended.

    A `compact` table (Explore's, which must fit a laptop's width) shows a quantity on train
    only where a run holds κ on it, since the training value says whether the solve held κ
    where it trained, and has no κ column when no run has a κ."""
    runs = [store.run(run_id) for run_id in run_ids]
    metrics = {row.id: store.metrics(row.id) for row in runs}
    quantities = distinct([shown_quantity(row.spec, view) for row in runs])
    held = {q.key for q in (held_quantity(row.spec) for row in runs) if q is not None}
    fairness = [
        column
        for quantity in quantities
        for column in quantity_columns(
            [quantity], ("test", "train") if quantity.key in held or not compact else ("test",)
        )
    ]
    measured = [*fairness, *score_columns(r.spec.task for r in runs)]
    facts = ("run", "solver", "verdict", "κ")
    columns = (*(Column(h) for h in facts), *measured, Column("status"), Column("seconds"))
    rows = []
    for row in runs:
        verdict = run_verdict(store, row, view, metrics[row.id])
        cells = {c.header: c.cell(row.spec, metrics[row.id]) for c in measured}
        rows.append(
            {
                "run": row.id,
                "solver": row.spec.solver,
                "verdict": verdict.summary,
                "κ": verdict.kappa,
                **cells,
                "status": row.status,
                "seconds": finite(row.seconds),
            }
        )
    if compact and all(row["κ"] is None for row in rows):
        columns = tuple(c for c in columns if c.header != "κ")
        rows = [{h: cell for h, cell in row.items() if h != "κ"} for row in rows]
    return ComparisonTable(tuple(columns), tuple(rows))


@dataclass(frozen=True)
class RunLine:
    """One run as a long table of runs keeps it between refreshes: its own cells (`facts`, by
    header), the spec and stored metrics its measured columns are read from, and the quantity
    its verdict speaks of (`shown_quantity`)."""

    facts: dict[str, Any]
    spec: RunSpec
    metrics: Metrics
    shown: Quantity


def line_rows(
    lines: Sequence[RunLine], columns: Sequence[Column], after: str
) -> list[dict[str, Any]]:
    """Each line's facts with the cells of the measured `columns` set after the fact `after`."""
    rows = []
    for line in lines:
        row: dict[str, Any] = {}
        for header, value in line.facts.items():
            row[header] = value
            if header == after:
                row |= {c.header: c.cell(line.spec, line.metrics) for c in columns}
        rows.append(row)
    return rows
