"""Long stretches of runs with the store read as the app reads it, and what a consistent store
holds afterwards; used by the run tests and by bench/endurance.py."""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass, field

import numpy as np
import psutil

from engine.runs import Store, wait
from engine.runs.store import RunRow
from engine.runs.submit import submit
from engine.status import FINAL, WITH_MODEL

READ_PAUSE_SECONDS = 0.005


@dataclass
class PollingReader:
    """A thread that reads the store over and over while runs are written, as the app's pages
    do: the counts, the running runs and their trajectories. It keeps the errors it meets (a
    reader must never be refused, however busy the writers are)."""

    store: Store
    reads: int = 0
    errors: list[sqlite3.OperationalError] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> PollingReader:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                self.store.counts()
                for row in self.store.runs(status="running"):
                    self.store.records(row.id)
                self.reads += 1
            except sqlite3.OperationalError as error:
                self.errors.append(error)
            time.sleep(READ_PAUSE_SECONDS)


@dataclass(frozen=True)
class Soak:
    """How a soak went: each run's status at the end, the reader's reads and errors, the time."""

    statuses: dict[str, str]
    reads: int
    errors: list[sqlite3.OperationalError]
    seconds: float

    @property
    def lost(self) -> list[str]:
        """The runs that never reached a final status."""
        return [r for r, s in self.statuses.items() if s not in FINAL]


def soak(store: Store, specs: list, timeout: float, workers: int = 2) -> Soak:
    """Submit the runs to a background runner of `workers` and wait for every one to end,
    with a reader polling the store all along."""
    started = time.monotonic()
    with PollingReader(store) as reader:
        ids = submit(specs, store, workers=workers)
        statuses = wait(store, ids, timeout=timeout)
    return Soak(statuses, reader.reads, reader.errors, time.monotonic() - started)


def result_problems(store: Store, run_id: str) -> list[str]:
    """What is wrong with a finished run's result (nothing: []): its exact metrics, its
    parameters and its test scores must all be there and readable."""
    problems = []
    if store.metrics(run_id).get("test", {}).get("accuracy") is None:
        problems.append("no test accuracy")
    try:
        if not store.load_params(run_id):
            problems.append("no parameters")
        scores, groups = store.load_scores(run_id)
        if not (len(scores) == len(groups) > 0 and np.isfinite(scores).all()):
            problems.append("bad test scores")
    except (OSError, ValueError, KeyError) as error:
        problems.append(f"unreadable files: {error}")
    return problems


def store_problems(store: Store) -> list[str]:
    """What makes the store inconsistent once no runner is working on it: a run not in a final
    status, or a finished run whose result is not whole."""
    problems = [f"{r.id} is {r.status}" for r in store.runs() if r.status not in FINAL]
    for row in store.runs():
        if row.status in WITH_MODEL:
            problems += [f"{row.id}: {p}" for p in result_problems(store, row.id)]
    return problems


def solved_by(store: Store, runner: int) -> list[RunRow]:
    """The runs marked running, once the runner of process id `runner` has taken over: every
    one of them is then solved by one of its workers (none is, while runs a dead runner left
    'running' are still marked so)."""
    try:
        workers = {p.pid for p in psutil.Process(runner).children()}
    except psutil.NoSuchProcess:
        return []
    rows = store.runs(status="running")
    return rows if rows and {r.pid for r in rows} <= workers else []
