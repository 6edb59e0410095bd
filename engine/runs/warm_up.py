"""Readying a fresh worker process before its first run: import what a run uses (the worker, the
data sources, every solver) and solve a tiny problem once with each solver that accepts it, so
that the first-call work on a run's path (lazy imports, compiled kernels, torch's first
operations) is done before a run arrives."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions, prepare
from engine.errors import UserError
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.problem import Problem
from engine.runs import worker  # noqa: F401  (a run's own imports: data sources, store, specs)
from engine.solvers import Budget, solve, solver_card, solver_names
from engine.threads import use_threads

WARM_UP_ROWS = 400
WARM_UP_INTERVAL = (0.05, 0.3)


def warm_up(threads: int = 1) -> int:
    """Ready this process for runs, each solving on `threads` threads; returns its process id."""
    use_threads(threads)
    data = _tiny_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny problem may warn about its narrow rank band
        for name in solver_names():
            card = solver_card(name)
            constraint = ConstraintSpec("pSP", 0.05, WARM_UP_INTERVAL) if card.constrained else None
            card.load()  # every solver's imports
            try:
                problem = Problem(data, ModelSpec(cross_terms=True), constraint,
                                  interval=WARM_UP_INTERVAL)  # fmt: skip
                card.check_problem(problem)
            except UserError:
                continue  # this solver takes other problems: it warms up on its first run
            solve(problem, name, budget=Budget(max_iterations=2))
    return os.getpid()


def _tiny_data():
    """Two groups of unequal label rates, WARM_UP_ROWS rows, prepared like any data set."""
    rng = np.random.default_rng(0)
    group = rng.integers(0, 2, WARM_UP_ROWS)
    x = rng.normal(size=(WARM_UP_ROWS, 2)) + 0.5 * group[:, None]
    label = (x[:, 0] + rng.normal(size=WARM_UP_ROWS) > 0.3).astype(np.int8)
    frame = pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "group": np.array(["a", "b"])[group]})
    dataset = Dataset(name="warm-up", frame=frame, label=label, numeric=("x0", "x1"),
                      categorical=(), protected=("group",), label_name="y")  # fmt: skip
    return prepare(dataset, PrepareOptions(grouping=(GroupingSpec("group"),), min_group_size=10))
