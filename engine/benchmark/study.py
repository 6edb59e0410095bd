"""A benchmark study read back from the run store: many seeded runs of each variant (a solver, or
a solver at one point of a hyper-parameter grid), their saved iterates as bands over the solvers'
own time, their final metrics as a table, the criteria as a spider chart (paper 000, §3–4).

Everything here reads the store only; the page and the `benchmark` command draw what it gives.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from engine.benchmark.bands import BIN_SECONDS, Band, band
from engine.benchmark.summary import Summary, summarise
from engine.errors import UserError
from engine.runs.grid import OPTION, Grid, axis, grid_points
from engine.runs.results import run_verdict
from engine.runs.spec import RunSpec
from engine.runs.store import Store
from engine.solvers.budget import BudgetClock
from engine.solvers.records import RecordKind, rows_of
from engine.status import RunStatus

SEED_AXES = ("seed", "solver.seed")
# the runs a study shows: those that ran to their end; a failed, cancelled, interrupted or
# diverged run is left out of every figure and table (the page says how many)
USABLE = (RunStatus.CONVERGED, RunStatus.BUDGET)
SPLITS = ("train", "test")
BAND_COLUMNS = (
    "quantity",
    "variant",
    "split",
    "seconds",
    "mean",
    "q1",
    "median",
    "q3",
    "runs",
)  # paper 000 re-evaluates every saved iterate on these
# the final metrics a study's table shows (paper 000, Table 4), as "split.metric" keys, with the
# words its columns carry; the five criteria of Table 2 follow the accuracy and the constraint
TABLE_METRICS = {
    "test.loss": "test loss",
    "test.violation": "test violation",
    "test.constraint": "test constraint",
    "test.accuracy": "test accuracy",
    "train.loss": "train loss",
    "train.violation": "train violation",
    **{
        f"test.{key}": f"test {name}"
        for key, name in (
            ("independence", "Ind"),
            ("separation", "Sp"),
            ("sufficiency", "Sf"),
            ("inaccuracy", "Ina"),
            ("accuracy_gap", "DifAcc"),
            ("probability_wasserstein", "Wd"),
        )
    },
}
# paper 000, Fig. 4: the spider chart's axes and the report metrics behind them
SPIDER = {
    "Ind": "independence",
    "Sp": "separation",
    "Sf": "sufficiency",
    "Ina": "inaccuracy",
    "DifAcc": "accuracy_gap",
}


@dataclass(frozen=True)
class StudyRun:
    """One run of a study: its variant, seed, status, saved iterates and final metrics."""

    run_id: str
    variant: str
    seed: int
    status: str
    verdict: str  # engine.verdict's label ("meets κ", "misses κ", "degenerate", ...)
    kappa: float | None
    iterates: list[dict[str, Any]]
    metrics: dict[str, dict[str, float | None]]


def study_grid(solvers: Sequence[str], runs: int, extra: Mapping[str, Sequence[Any]]) -> Grid:
    """The grid of a study: each solver, at each point of `extra` (hyper-parameters, model,
    κ ...), `runs` times with solver seeds 0..runs−1 on one split (paper 000: seed = run index)."""
    own = [name for name in extra if name in ("solver", *SEED_AXES)]
    if own:
        raise UserError(
            f"the study sets {', '.join(own)} itself (the solvers and the runs per "
            "solver); the grid varies the other settings"
        )
    return {
        "solver": list(solvers),
        **{k: list(v) for k, v in extra.items()},
        "solver.seed": list(range(runs)),
    }


def study_points(
    base: RunSpec, grid: Mapping[str, Sequence[Any]], configs: dict[str, dict] | None = None
) -> list[tuple[dict[str, Any], RunSpec]]:
    """The study's runs (`engine.runs.grid.grid_points`), every solver under the base's
    constraint: a reference solver such as SGD ignores it while training, and its runs are then
    judged against the same κ as the others (paper 000, Table 4). Their time budget is the
    solver's own time (`BudgetClock.SOLVER`): each saved iterate is evaluated off the clock, so
    solvers are compared at equal solver time however long their evaluations take."""
    budget = dataclasses.replace(base.budget, clock=BudgetClock.SOLVER)
    return grid_points(
        dataclasses.replace(base, budget=budget), grid, configs, keep_constraint=True
    )


def variant_label(
    point: Mapping[str, Any], spec: RunSpec, grid: Mapping[str, Sequence[Any]]
) -> str:
    """The solver, with the settings of the point that vary across the grid and apply to it
    ("ssl_alm · option.rho=0.5"): what the runs of one variant share."""
    shown = []
    for name, values in grid.items():
        if name in SEED_AXES or name == "solver" or len(values) < 2:
            continue
        if name.startswith(OPTION) and name.removeprefix(OPTION) not in spec.config:
            continue
        shown.append(f"{name}={axis(name).show(point[name])}")
    return " · ".join([spec.solver, *shown])


def study_variants(
    points: Sequence[tuple[dict[str, Any], RunSpec]], grid: Mapping[str, Sequence[Any]]
) -> dict[str, str]:
    """run id → variant label of a study's points (`engine.runs.grid.grid_points`)."""
    return {spec.run_id: variant_label(point, spec, grid) for point, spec in points}


def load_study(store: Store, variants: Mapping[str, str]) -> list[StudyRun]:
    """The study's runs that the store holds (`variants`: run id → variant label); only the
    `USABLE` ones carry their saved iterates and final metrics."""
    known = {row.id: row for row in store.runs() if row.id in variants}
    runs = []
    for run_id, row in known.items():
        usable = row.status in USABLE
        metrics = store.metrics(run_id) if usable else {}
        runs.append(
            StudyRun(
                run_id=run_id,
                variant=variants[run_id],
                seed=row.spec.seed,
                status=row.status,
                verdict=run_verdict(store, row, metrics=metrics).label,
                kappa=row.spec.kappa,
                iterates=[r for r in store.records(run_id) if r["kind"] == RecordKind.ITERATE]
                if usable
                else [],
                metrics=metrics,
            )
        )
    return runs


def verdict_counts(runs: Sequence[StudyRun]) -> dict[str, dict[str, int]]:
    """counts[variant][verdict label]: how many of each variant's finished runs meet κ, miss
    it, or are degenerate (engine.verdict), so a table of means never hides them."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for run in runs:
        if run.metrics:
            counts[run.variant][run.verdict] += 1
    return {variant: dict(per) for variant, per in counts.items()}


def verdict_words(runs: Sequence[StudyRun]) -> list[str]:
    """One sentence per variant: "ssl_alm: meets κ in 3 of 5 runs, misses κ in 2"."""
    lines = []
    for variant, per in verdict_counts(runs).items():
        total = sum(per.values())
        parts = [
            f"{label} in {count}" for label, count in sorted(per.items(), key=lambda kv: -kv[1])
        ]
        lines.append(
            f"{variant}: {parts[0]} of {total} runs" + "".join(f", {p}" for p in parts[1:])
        )
    return lines


def band_rows(runs: Sequence[StudyRun]) -> list[str]:
    """The constraint rows a band figure shows: each two-sided gap once, by its upper row (its
    lower row is the same gap negated, which the figure's −δ line covers)."""
    names = dict.fromkeys(
        row
        for run in runs
        for record in run.iterates[:1]
        for row in rows_of(record["values"], "train")
    )
    return [
        n for n in names if not (n.endswith(":lower") and n[: -len("lower")] + "upper" in names)
    ]


def study_bands(
    runs: Sequence[StudyRun], width: float = BIN_SECONDS
) -> dict[str, dict[str, dict[str, Band]]]:
    """bands[quantity][variant][split]: the loss, then each shown constraint row as the gap it
    bounds (row + κ: the rows are gap − κ ≤ 0), over the runs of each variant (paper 000,
    Figs. 1–2)."""
    quantities = {"loss": ("loss", 0.0)}
    for row in band_rows(runs):
        quantities[_gap_name(row)] = (f"row.{row}", 1.0)
    by_variant = _by_variant(runs, "iterates")
    out: dict[str, dict[str, dict[str, Band]]] = {}
    for quantity, (key, add_kappa) in quantities.items():
        out[quantity] = {}
        for variant, members in by_variant.items():
            out[quantity][variant] = {}
            for split in SPLITS:
                paths = [
                    _path(run, f"{split}.{key}", add_kappa * (run.kappa or 0.0)) for run in members
                ]
                paths = [p for p in paths if len(p)]
                if paths:
                    out[quantity][variant][split] = band(paths, width)
    return out


def group_bands(
    runs: Sequence[StudyRun], split: str = "test", width: float = BIN_SECONDS
) -> dict[str, dict[str, dict[str, Band]]]:
    """bands[quantity][variant][group]: each group's loss and positive rate on `split` over
    solver time (paper 000 §6: per-group loss curves and positive rates)."""
    prefix = f"{split}.group."
    groups = dict.fromkeys(
        key.removeprefix(prefix).rsplit(".", 1)[0]
        for run in runs
        for record in run.iterates[:1]
        for key in record["values"]
        if key.startswith(prefix)
    )
    out: dict[str, dict[str, dict[str, Band]]] = {}
    for quantity, name in (("loss", "loss"), ("positive_rate", "positive rate")):
        title = f"{name} by group ({split})"
        out[title] = {}
        for variant, members in _by_variant(runs, "iterates").items():
            paths = {g: [_path(r, f"{prefix}{g}.{quantity}", 0.0) for r in members] for g in groups}
            out[title][variant] = {
                g: band([p for p in ps if len(p)], width)
                for g, ps in paths.items()
                if any(len(p) for p in ps)
            }
    return out


def band_bounds(runs: Sequence[StudyRun]) -> dict[str, float]:
    """The ±κ lines of each constraint row's gap."""
    kappas = {run.kappa for run in runs if run.kappa is not None}
    if len(kappas) != 1:
        return {}
    kappa = kappas.pop()
    return {_gap_name(row): kappa for row in band_rows(runs)}


def _gap_name(row: str) -> str:
    return row.removesuffix(":upper")


def _path(run: StudyRun, key: str, shift: float) -> np.ndarray:
    points = [(r["seconds"], r["values"].get(key)) for r in run.iterates]
    kept = [(t, v + shift) for t, v in points if v is not None]
    return np.array(kept, dtype=np.float64).reshape(-1, 2)


def final_values(run: StudyRun) -> dict[str, float | None]:
    """A finished run's final metrics as "split.metric", with each split's violation
    max(constraint − κ, 0)."""
    values = {
        f"{split}.{name}": v
        for split, metrics in run.metrics.items()
        for name, v in metrics.items()
    }
    for split in run.metrics:
        constraint = values.get(f"{split}.constraint")
        if constraint is not None and run.kappa is not None:
            values[f"{split}.violation"] = max(constraint - run.kappa, 0.0)
    return values


def study_table(
    runs: Sequence[StudyRun], metrics: Mapping[str, str] = TABLE_METRICS
) -> Summary | None:
    """Mean ± std over each variant's finished runs of `metrics` ("split.metric" key → column,
    by default `TABLE_METRICS`), best marked (paper 000, Table 4); None before any run has
    finished."""
    per_variant: dict[str, list[dict[str, float | None]]] = defaultdict(list)
    for run in runs:
        if run.metrics:
            values = final_values(run)
            per_variant[run.variant].append(
                {name: values.get(key) for key, name in metrics.items()}
            )
    return summarise(per_variant) if per_variant else None


def spider_values(runs: Sequence[StudyRun]) -> dict[str, dict[str, dict[str, float | None]]]:
    """values[split][variant][criterion]: each criterion's mean over the variant's finished
    runs (paper 000, Fig. 4), None where no run defines it."""
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for split in SPLITS:
        out[split] = {}
        for variant, members in _by_variant(runs).items():
            out[split][variant] = {
                axis: _mean([run.metrics.get(split, {}).get(metric) for run in members])
                for axis, metric in SPIDER.items()
            }
    return out


def _by_variant(runs: Sequence[StudyRun], having: str = "metrics") -> dict[str, list[StudyRun]]:
    """The runs that have `having` ("metrics" or "iterates"), by variant."""
    grouped: dict[str, list[StudyRun]] = defaultdict(list)
    for run in runs:
        if getattr(run, having):
            grouped[run.variant].append(run)
    return grouped


def first_runs(runs: Sequence[StudyRun]) -> dict[str, StudyRun]:
    """Each variant's run of the lowest seed among `runs`: the one a view of single runs shows."""
    first: dict[str, StudyRun] = {}
    for run in sorted(runs, key=lambda r: r.seed):
        first.setdefault(run.variant, run)
    return first


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def grid_heatmap(
    runs: Sequence[StudyRun],
    points: Sequence[tuple[dict[str, Any], RunSpec]],
    grid: Mapping[str, Sequence[Any]],
) -> tuple[str, list[Any], str, list[Any], np.ndarray, np.ndarray] | None:
    """For a study of one solver over two varying settings: (x axis, its values, y axis, its
    values, mean final validation loss, mean validation violation), each (len y × len x), NaN
    where no run finished (paper 000, Tables 5–12); None for any other study."""
    varying = [n for n, v in grid.items() if len(v) > 1 and n not in SEED_AXES]
    if len(varying) != 2 or "solver" in varying:
        return None
    (x, y), finished = varying, {run.run_id: final_values(run) for run in runs if run.metrics}
    cells: dict[tuple[int, int], list[dict[str, float | None]]] = defaultdict(list)
    for point, spec in points:
        if spec.run_id in finished:
            cells[(grid[y].index(point[y]), grid[x].index(point[x]))].append(finished[spec.run_id])
    loss, violation = (np.full((len(grid[y]), len(grid[x])), np.nan) for _ in range(2))
    for (i, j), values in cells.items():
        for target, key in ((loss, "val.loss"), (violation, "val.violation")):
            mean = _mean([v.get(key) for v in values])
            target[i, j] = np.nan if mean is None else mean
    return x, list(grid[x]), y, list(grid[y]), loss, violation


# ---- the study's tables as frames (the page's downloads, the command's files) --------------


def criteria_frame(spider: Mapping[str, Mapping[str, Mapping[str, float | None]]]) -> pd.DataFrame:
    """One row per split × variant: the spider chart's criteria (means over the variant's runs),
    empty where no run defines one."""
    rows = [
        {"split": split, "variant": variant, **{name: values.get(name) for name in SPIDER}}
        for split, per_variant in spider.items()
        for variant, values in per_variant.items()
    ]
    return pd.DataFrame(rows, columns=["split", "variant", *SPIDER])


def bands_frame(bands: Mapping[str, Mapping[str, Mapping[str, Band]]]) -> pd.DataFrame:
    """The bands in long form: one row per quantity × variant × split × time bin."""
    rows = [
        (quantity, variant, split, *values)
        for quantity, per_variant in bands.items()
        for variant, per_split in per_variant.items()
        for split, band in per_split.items()
        for values in zip(
            band.seconds, band.mean, band.q1, band.median, band.q3, band.runs, strict=True
        )
    ]
    return pd.DataFrame(rows, columns=list(BAND_COLUMNS))


def grid_frame(
    x: str, xs: list, y: str, ys: list, loss: np.ndarray, violation: np.ndarray
) -> pd.DataFrame:
    """The hyper-parameter grid as the page's download: one row per cell, empty where no run
    finished."""
    return pd.DataFrame(
        {
            x: [a for _ in ys for a in xs],
            y: [b for b in ys for _ in xs],
            "val loss": loss.ravel(),
            "val violation": violation.ravel(),
        }
    )
