"""What a worker process does with one run: claim it, solve it (or, for a reference run already
trained at another I, evaluate that model at its own I: `engine.runs.reference_reuse`), stream its
trajectory into the store in batches, and record how it ended (never leaving it 'running')."""

from __future__ import annotations

import os
import time
import traceback

import torch

from engine.errors import UserError
from engine.fairness.families import quantity_name
from engine.models import Params
from engine.runs.continuation import infeasible_start
from engine.runs.execute import build_problem, execute
from engine.runs.reference_reuse import reference_source, reused_solution
from engine.runs.spec import RunSpec
from engine.runs.store import Store
from engine.runs.warm_up import warm_solver
from engine.solvers import IterationRecord
from engine.status import RunStatus, StopCode, StopReason

FLUSH_EVERY_SECONDS = 0.5
CANCEL_POLL_SECONDS = 0.5


class RecordWriter:
    """Collects iteration records and writes them in one transaction every half second."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store, self.run_id = store, run_id
        self.pending: list[dict] = []
        self.written = 0
        self.last_flush = -FLUSH_EVERY_SECONDS  # the first record goes out at once

    def __call__(self, record: IterationRecord) -> None:
        self.pending.append(record.to_dict())
        if time.monotonic() - self.last_flush >= FLUSH_EVERY_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.store.append_records(self.run_id, self.pending, self.written)
            self.written += len(self.pending)
            self.pending = []
        self.last_flush = time.monotonic()


class CancelPoller:
    """`should_stop` for the driver: asks the store at most twice a second."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store, self.run_id = store, run_id
        self.last, self.cancelled = 0.0, False

    def __call__(self) -> bool:
        now = time.monotonic()
        if not self.cancelled and now - self.last >= CANCEL_POLL_SECONDS:
            self.last = now
            self.cancelled = self.store.cancel_requested(self.run_id)
        return self.cancelled


def warm_start(store: Store, spec: RunSpec) -> tuple[Params | None, str]:
    """The model a run starts from, and what its stop reason should say of it: the model of
    the run `spec.warm_start` when it is a feasible tighter model for this run
    (`continuation.infeasible_start` says what that takes); otherwise a cold start, with why."""
    if spec.warm_start is None:
        return None, ""
    source = spec.warm_start
    try:
        row = store.run(source)
    except UserError:
        return None, f"started cold: run {source}, its warm start, is gone"
    if not row.has_model:
        return None, (
            f"started cold: run {source}, its warm start, ended {row.status} without a model"
        )
    alpha, beta = row.spec.interval
    at = f" (κ = {row.spec.kappa:g}, I = [{alpha:g}, {beta:g}))" if row.spec.constraint else ""
    train = store.metrics(source).get("train", {}).get("constraint")
    why = infeasible_start(row.spec, train, spec)
    if why:
        return None, f"started cold: the model of run {source}{at}, its warm start, {why}"
    quantity = quantity_name(spec.constraint.family)
    return store.load_params(source), (
        f"started from the model of run {source}{at}, whose exact training {quantity} "
        f"{train:.4g} ≤ κ = {spec.constraint.kappa:g}"
    )


def execute_run(home: str, run_id: str) -> str:
    """Run one queued run to its end in this process; returns its final status."""
    torch.set_num_threads(1)
    store = Store(home)
    spec_dict = store.claim(run_id, os.getpid())
    if spec_dict is None:
        return "skipped"
    writer = RecordWriter(store, run_id)
    try:
        spec = RunSpec.from_dict(spec_dict)
        source = reference_source(spec, store)
        started = ""  # what the stop reason says of a warm start
        if source is not None:  # a reference already trained at another I: evaluated, not trained
            solution = reused_solution(spec, build_problem(spec), source, store, writer)
        else:
            warm_solver(spec.solver)  # off the run's clock, which starts in the solver
            start, started = warm_start(store, spec)
            poller = CancelPoller(store, run_id)
            solution = execute(spec, start=start, log=writer, should_stop=poller)
        stop = solution.stop
        if started:
            stop = StopReason(stop.code, f"{stop.text}; {started}")
        writer.flush()
        store.save_artifacts(run_id, solution.params, solution.test_scores, solution.test_groups)
        store.finish(run_id, stop, solution.iterations, solution.seconds, solution.metrics)
        return str(solution.status)
    except UserError as error:
        writer.flush()
        store.finish(run_id, StopReason(StopCode.USER_ERROR, str(error)), error=str(error))
    except Exception as error:  # an internal error must still end the run, with its trace
        writer.flush()
        stop = StopReason(
            StopCode.INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}"
        )
        store.finish(run_id, stop, error=traceback.format_exc())
    return str(RunStatus.FAILED)
