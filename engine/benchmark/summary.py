"""Mean ± standard deviation per solver over runs, the best solver of each column marked
(paper 000, Table 4: "mean value and standard deviation over 10 runs", best in bold).

Each column is a metric; smaller is better for all of them (losses, violations, the criteria of
`engine.fairness.criteria`, the realised constraint) except the accuracies. A value of None or
NaN is a run without that metric: it is left out of the column's mean and std, and `runs`
counts the values used. The std is the sample standard deviation (n − 1 in the denominator),
undefined for a single run. Every solver whose mean equals the column's best, up to float
rounding, is marked best.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.errors import UserError

TIE_TOLERANCE = 1e-9  # relative: means this close are the same value


def is_accuracy(metric: str) -> bool:
    """True for "accuracy" and split-prefixed forms ("test accuracy", "train.accuracy", "Acc")."""
    return re.split(r"[\s._/-]+", metric.strip().lower())[-1] in ("accuracy", "acc")


@dataclass(frozen=True)
class Summary:
    """Solvers (rows) × metrics (columns): mean, std and number of runs with a value; `best`
    marks each column's best solvers; `larger_is_better[metric]` says which way is best."""

    mean: pd.DataFrame
    std: pd.DataFrame
    runs: pd.DataFrame
    best: pd.DataFrame
    larger_is_better: dict[str, bool]

    def table(self, digits: int = 4) -> pd.DataFrame:
        """The text "mean ± std" per cell (the mean alone for one run, "—" for none), for
        display with `best` as its highlight mask."""

        def cell(mean: float, std: float) -> str:
            if math.isnan(mean):
                return "—"
            return f"{mean:.{digits}f}" + ("" if math.isnan(std) else f" ± {std:.{digits}f}")

        text = {
            metric: [cell(m, s) for m, s in zip(self.mean[metric], self.std[metric], strict=True)]
            for metric in self.mean.columns
        }
        return pd.DataFrame(text, index=self.mean.index)

    def plain(self) -> pd.DataFrame:
        """One flat numeric frame for CSV: "<metric> mean", "… std", "… runs", "… best"."""
        columns = {}
        for metric in self.mean.columns:
            columns[f"{metric} mean"] = self.mean[metric]
            columns[f"{metric} std"] = self.std[metric]
            columns[f"{metric} runs"] = self.runs[metric]
            columns[f"{metric} best"] = self.best[metric]
        return pd.DataFrame(columns, index=self.mean.index)


def _best(means: pd.Series, larger: bool) -> pd.Series:
    if means.isna().all():
        return pd.Series(False, index=means.index)
    target = means.max() if larger else means.min()
    return pd.Series(np.isclose(means, target, rtol=TIE_TOLERANCE, atol=0.0), index=means.index)


def summarise(
    results: Mapping[str, Sequence[Mapping[str, float | None]]],
    larger_is_better: Collection[str] | None = None,
) -> Summary:
    """Table 4 of paper 000 from `results[solver]`: one dict of final metrics per run. The
    metrics in `larger_is_better` (by default those `is_accuracy` names) are best when largest,
    all others when smallest."""
    if not results:
        raise UserError("summarise needs the runs of at least one solver.")
    metrics = list(dict.fromkeys(key for runs in results.values() for run in runs for key in run))
    solvers = pd.Index(list(results), name="solver")
    values = {}
    for solver, runs in results.items():
        for metric in metrics:
            given = np.array([run.get(metric) for run in runs], dtype=np.float64)  # None -> NaN
            values[solver, metric] = given[~np.isnan(given)]

    def frame(statistic: Callable[[np.ndarray], float]) -> pd.DataFrame:
        data = {m: [statistic(values[s, m]) for s in solvers] for m in metrics}
        return pd.DataFrame(data, index=solvers, columns=pd.Index(metrics, dtype=object))

    mean = frame(lambda v: float(v.mean()) if v.size else math.nan)
    std = frame(lambda v: float(v.std(ddof=1)) if v.size > 1 else math.nan)
    runs = frame(lambda v: v.size)
    larger = {
        m: (is_accuracy(m) if larger_is_better is None else m in larger_is_better) for m in metrics
    }
    best = pd.DataFrame(
        {m: _best(mean[m], larger[m]) for m in metrics},
        index=solvers,
        columns=pd.Index(metrics, dtype=object),
    )
    return Summary(mean, std, runs, best, larger)
