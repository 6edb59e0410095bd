"""One path from a run specification to a model: the Problem a `RunSpec` describes, solved by the
driver under the spec's solver, options, honoured split, budget and seed. A background run
(`engine.runs.worker`), a command-line run made in the foreground (`engine.cli.run_commands`)
and the scikit-learn estimators (`engine.estimator`) all train through `execute`, so a spec
trains the same model wherever it is run."""

from __future__ import annotations

from collections.abc import Callable

from engine.data.prepared import Prepared
from engine.data.sources import load_prepared
from engine.models import Params
from engine.problem import Problem
from engine.runs.spec import RunSpec
from engine.solvers.driver import Log
from engine.solvers.honour import solve_run
from engine.solvers.records import Solution


def build_problem(
    spec: RunSpec, start: Params | None = None, *, prepared: Prepared | None = None
) -> Problem:
    """The Problem of `spec`, starting from the model `start` when given: its model, constraint,
    I and objective on its data set, loaded and prepared as the spec says, or on `prepared`,
    data the caller has prepared itself (the estimator's rows in memory, a command-line run's
    read with its cache flags)."""
    if prepared is None:
        prepared = load_prepared(spec.data, spec.prepare)
    return Problem(
        prepared,
        spec.model,
        spec.constraint,
        interval=spec.interval,
        objective=spec.objective,
        start=start,
    )


def execute(
    spec: RunSpec,
    problem: Problem | None = None,
    *,
    start: Params | None = None,
    log: Log | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Solution:
    """The solution of `spec` (`engine.solvers.honour.solve_run`), each record passed to `log`
    as it is made, stopped early once `should_stop` says so. Its options are read through the
    solver's card before any data is: a problem built here (`build_problem`, from `start`) is
    built after them. `problem`, when given, is the spec's own, built by the caller: a caller
    that reports on it before solving, or that solves several specs differing only in their
    options on it (the estimator's tuning trials)."""
    config = spec.options
    if problem is None:
        problem = build_problem(spec, start)
    return solve_run(
        problem, spec.solver, spec.honour, config, spec.budget, log, spec.seed, should_stop
    )
