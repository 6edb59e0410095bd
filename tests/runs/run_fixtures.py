"""Helpers for run tests: specs on the small CSV data set, and waiting for a condition."""

from __future__ import annotations

import time

from engine.data.grouping import GroupingSpec
from engine.data.prepare import PrepareOptions
from engine.fairness.constraints import ConstraintSpec
from engine.models import ModelSpec
from engine.runs import RunSpec
from engine.solvers import Budget

INTERVAL = (0.1, 0.5)


def make_spec(data, solver="idca", kappa=0.1, seconds=None, iterations=None, seed=0, config=None):
    constraint = None if solver == "unconstrained" else ConstraintSpec("pSP", kappa, INTERVAL)
    return RunSpec(
        data=data,
        prepare=PrepareOptions(grouping=(GroupingSpec("g"),), seed=seed),
        model=ModelSpec(cross_terms=True),
        constraint=constraint,
        interval=INTERVAL,
        solver=solver,
        config=config or {},
        budget=Budget(max_iterations=iterations, max_seconds=seconds),
        seed=seed,
    )


def lasting_spec(data, seconds: float, seed: int = 0):
    """An IDCA run that only its time budget ends: no early stop and more outer iterations than
    the toy data could use up, so it is still running when a test acts on it."""
    config = {"outer_iterations": 10**7, "patience": 0}
    return make_spec(data, seconds=seconds, seed=seed, config=config)


def wait_for(condition, timeout: float = 60.0, poll: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError("condition not met in time")
