"""What the 95 % intervals of a run's held-out values cost (`engine.fairness.intervals`).

A run stores `interval_metrics` for its validation and test splits once, when it ends. This
times it on Adult (bundled, groups by sex, with group cross-terms) for the scores of a fixed
linear model (scikit-learn's logistic regression fitted on the train split), for pSP on
I = [5 %, 30 %) (what every classifier run reports), the DP gap and the EO gap at θ̂ = 0, each
with the accuracy and AUC intervals. Printed, one row per split and quantity: the split's rows,
the median wall time in seconds over the repeats, and that time as a share of a 30 s run
(seconds / 30), the budget the intervals should stay well within.

    .venv/bin/python bench/interval_cost.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.data.adult import AdultSpec  # noqa: E402
from engine.data.grouping import GroupingSpec  # noqa: E402
from engine.data.prepare import PrepareOptions  # noqa: E402
from engine.data.sources import load_prepared  # noqa: E402
from engine.fairness.constraint_spec import ConstraintSpec  # noqa: E402
from engine.fairness.intervals import interval_metrics  # noqa: E402

INTERVAL = (0.05, 0.30)
THRESHOLD = 0.0
RUN_SECONDS = 30.0
QUANTITIES = {  # label -> the constraint whose value is bounded (None: pSP on I, as every run)
    "pSP [0.05, 0.30)": None,
    "DP gap": ConstraintSpec("DP", 0.05),
    "EO gap": ConstraintSpec("EO", 0.05),
}


def seconds(spec: ConstraintSpec | None, h: np.ndarray, groups, y, repeats: int) -> float:
    """Median wall time of `interval_metrics` over `repeats` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        interval_metrics(spec, INTERVAL, THRESHOLD, h, groups, y)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    prepared = load_prepared(
        AdultSpec(), PrepareOptions(grouping=(GroupingSpec("sex"),), cross_terms=True)
    )
    model = LogisticRegression(max_iter=300).fit(prepared.train.X, prepared.train.y)
    print(f"{'split':<6} {'quantity':<18} {'rows':>7} {'seconds':>8} {'/ 30 s run':>11}")
    for split in ("val", "test"):
        part = prepared.split(split)
        h = model.decision_function(part.X)
        for label, spec in QUANTITIES.items():
            took = seconds(spec, h, part.groups, part.y, args.repeats)
            print(f"{split:<6} {label:<18} {len(h):>7,} {took:>8.3f} {took / RUN_SECONDS:>11.4f}")


if __name__ == "__main__":
    main()
