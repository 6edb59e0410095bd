"""Readying a worker process for runs, so that the first-call work on a run's path (lazy imports,
compiled kernels, torch's first operations) is never charged to a run's clock: at the process's
start, import what a run uses and solve a tiny problem once with each default solver; before a
run of any other solver, do the same for that solver, once per process. Warming all the solvers
at the start would hold a fresh process's first run back by seconds, for solvers most visitors
never run."""

from __future__ import annotations

import functools
import importlib
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
from engine.solvers import Budget, solve, solver_card
from engine.solvers.catalogue import DEFAULT_SOLVERS
from engine.threads import use_threads

WARM_UP_ROWS = 400
WARM_UP_INTERVAL = (0.05, 0.3)
_warmed: set[str] = set()  # the solvers this process has warmed up


def warm_up(threads: int = 1) -> int:
    """Ready this process for runs, each solving on `threads` threads; returns its process id."""
    use_threads(threads)
    importlib.import_module("engine.runs.worker")  # a run's own imports: data sources, store
    for name in DEFAULT_SOLVERS:
        warm_solver(name)
    return os.getpid()


def warm_solver(name: str) -> None:
    """Solve a tiny problem once with solver `name`, unless this process already has; a solver
    that takes other problems (another model, task or family) is left to warm up on its run."""
    if name in _warmed:
        return
    _warmed.add(name)
    card = solver_card(name)
    card.load()  # the solver's imports
    constraint = ConstraintSpec("pSP", 0.05, WARM_UP_INTERVAL) if card.constrained else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny problem may warn about its narrow rank band
        try:
            problem = Problem(
                _tiny_data(), ModelSpec(cross_terms=True), constraint, interval=WARM_UP_INTERVAL
            )
            card.check_problem(problem)
        except UserError:
            return
        solve(problem, name, budget=Budget(max_iterations=2))


@functools.cache
def _tiny_data():
    """Two groups of unequal label rates, WARM_UP_ROWS rows, prepared like any data set."""
    rng = np.random.default_rng(0)
    group = rng.integers(0, 2, WARM_UP_ROWS)
    x = rng.normal(size=(WARM_UP_ROWS, 2)) + 0.5 * group[:, None]
    label = (x[:, 0] + rng.normal(size=WARM_UP_ROWS) > 0.3).astype(np.int8)
    frame = pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "group": np.array(["a", "b"])[group]})
    dataset = Dataset(
        name="warm-up",
        frame=frame,
        label=label,
        numeric=("x0", "x1"),
        categorical=(),
        protected=("group",),
        label_name="y",
    )
    return prepare(dataset, PrepareOptions(grouping=(GroupingSpec("group"),), min_group_size=10))
