"""The runner: one background process per store that starts queued runs on a bounded pool of
reusable worker processes (joblib's loky backend), one run per worker at a time.

Each worker slot is a single-process loky executor, so a worker that dies (killed, out of
memory) fails only its own run; the slot gets a fresh process and the other runs go on. A worker
never outlives its runner, however the runner ends. The runner holds an exclusive lock on the
store while it lives; whoever can take the lock knows that no runner is alive, so runs still
marked 'running' were orphaned and are marked interrupted.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

from joblib.externals.loky import ProcessPoolExecutor

from engine.data.paths import PROJECT_ROOT
from engine.errors import UserError
from engine.runs.store import Store
from engine.status import StopCode, StopReason

POLL_SECONDS = 0.05  # while runs are going
IDLE_POLL_SECONDS = 0.2  # while waiting for work: still well under the 0.5 s start target
IDLE_EXIT_SECONDS = 30.0
VISITOR_IDLE_EXIT_SECONDS = 900.0  # a page that runs solvers keeps its workers ready this long
LOCK_NAME = "runner.lock"
SPAWNED_NAME = "runner.spawned"  # process ids of runners started by ensure_runner
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
WORKER_NICENESS = 10  # solving yields the processor to the app's server and the browser
WORKERS_CAP = "FAIRFRONT_WORKERS"  # at most this many workers in a runner started here
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>: the signal a process gets when its parent ends
PARENT_POLL_SECONDS = 0.2  # where that request does not exist, how often a worker looks


def _end_with_runner(runner: int) -> None:
    """Run first in every worker process: the worker is killed as soon as its runner ends.

    A runner stopped by a signal it can handle shuts its workers down itself, but SIGKILL (or
    the out-of-memory killer) gives it no chance, and loky's workers would live on: an orphan
    goes on solving and writes into the store after the next runner has marked its run
    interrupted, and into the new attempt of that run once someone re-runs it."""
    if sys.platform == "linux":
        # the kernel kills the worker, whatever it is doing, when the thread that started it
        # ends: the runner's serving thread, which ends only with the runner
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    else:
        threading.Thread(target=_watch_runner, args=(runner,), daemon=True).start()
    if os.getppid() != runner:  # the runner ended before the request above was made
        os.kill(os.getpid(), signal.SIGKILL)


def _watch_runner(runner: int) -> None:
    while os.getppid() == runner:
        time.sleep(PARENT_POLL_SECONDS)
    os.kill(os.getpid(), signal.SIGKILL)


def _warm_up(workers: int) -> int:
    os.nice(WORKER_NICENESS)
    from engine.runs.warm_up import warm_up
    from engine.threads import share_of_cores

    return warm_up(share_of_cores(workers))


def _execute_run(home: str, run_id: str) -> str:
    from engine.runs.worker import execute_run

    return execute_run(home, run_id)


class Slot:
    """One reusable worker process and the run it is busy with."""

    def __init__(self, workers: int) -> None:
        self.workers = workers  # the slots solving side by side, which share the cores
        self.executor = self._fresh_executor()
        self.future: Future | None = None
        self.run_id: str | None = None

    def _fresh_executor(self) -> ProcessPoolExecutor:
        executor = ProcessPoolExecutor(
            max_workers=1, initializer=_end_with_runner, initargs=(os.getpid(),)
        )
        # start the process and ready it now, not at the first run
        executor.submit(_warm_up, self.workers)
        return executor

    def start(self, home: str, run_id: str) -> None:
        self.run_id = run_id
        self.future = self.executor.submit(_execute_run, home, run_id)

    def replace_process(self) -> None:
        self.close()
        self.executor = self._fresh_executor()

    def close(self) -> None:
        """Kill the worker process and its descendants, and wait until they are gone."""
        self.executor.shutdown(wait=True, kill_workers=True)


class Runner:
    def __init__(self, home: Path | str, workers: int = 2, idle_exit: float = IDLE_EXIT_SECONDS):
        self.store = Store(home)
        self.home = str(self.store.home)
        self.workers = workers
        self.idle_exit = idle_exit
        self.stopped_by: signal.Signals | None = None

    def serve(self) -> bool:
        """Run until idle for `idle_exit` seconds, or until SIGTERM or SIGINT (then `stopped_by`
        names the signal); False if another runner owns the store."""
        with _handling(STOP_SIGNALS, self._stop):
            return self._serve()

    def _stop(self, signum: int, _frame: object) -> None:
        self.stopped_by = signal.Signals(signum)

    def _serve(self) -> bool:
        while True:
            lock = open(self.store.home / LOCK_NAME, "a")  # noqa: SIM115 (held while serving)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lock.close()
                return False
            lock.truncate(0)
            lock.write(str(os.getpid()))
            lock.flush()
            try:
                self.store.mark_orphans_interrupted()
                self._loop()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
                lock.close()
            if self.stopped_by or not self.store.queued(1):  # queued while the lock was let go
                return True

    def _loop(self) -> None:
        slots = [Slot(self.workers) for _ in range(self.workers)]
        idle_since = time.monotonic()
        try:
            while self.stopped_by is None:
                for slot in slots:
                    if slot.future is not None and slot.future.done():
                        self._settle(slot)
                free = [s for s in slots if s.future is None]
                for slot, run_id in zip(free, self.store.queued(len(free)), strict=False):
                    slot.start(self.home, run_id)
                busy = any(s.future is not None for s in slots)
                if busy:
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since >= self.idle_exit:
                    return
                time.sleep(POLL_SECONDS if busy else IDLE_POLL_SECONDS)
        finally:
            for slot in slots:
                slot.close()
            if self.stopped_by is not None:
                self._interrupt([s.run_id for s in slots if s.run_id is not None])

    def _interrupt(self, run_ids: list[str]) -> None:
        """Mark the runs whose workers a stop signal killed (a run not yet claimed stays queued
        for the next runner)."""
        stop = StopReason(StopCode.INTERRUPTED, f"the runner was stopped ({self.stopped_by.name})")
        for run_id in run_ids:
            self.store.finish(run_id, stop)

    def _settle(self, slot: Slot) -> None:
        """A run's future is done: a worker that died takes only its own run down with it."""
        try:
            slot.future.result()
        except Exception as error:  # the worker process died, or could not run the task
            reason = f"the worker process died: {error}".split("\n")[0]
            self.store.finish(
                slot.run_id, StopReason(StopCode.WORKER_DIED, reason), error=str(error)
            )
            slot.replace_process()
        slot.future, slot.run_id = None, None


@contextlib.contextmanager
def _handling(signals: tuple[signal.Signals, ...], handler: Callable) -> Iterator[None]:
    """`handler` receives `signals` inside the block, and the previous handlers come back after
    it. Only the main thread may set handlers: elsewhere the block runs with the defaults."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in signals}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def runner_alive(home: Path | str) -> bool:
    path = Path(home) / LOCK_NAME
    if not path.exists():
        return False
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def runner_pid(home: Path | str) -> int | None:
    """The process id of the live runner of this store, if there is one."""
    if not runner_alive(home):
        return None
    text = (Path(home) / LOCK_NAME).read_text().strip()
    return int(text) if text.isdigit() else None


def capped_workers(workers: int) -> int:
    """`workers`, at most $FAIRFRONT_WORKERS where that is set: on a machine shared with other
    work (another service, a test suite) the runners started there stay smaller than the app or
    a command asks; runs then wait for a worker instead of sharing the cores with more."""
    text = os.environ.get(WORKERS_CAP, "").strip()
    if not text:
        return workers
    if not text.isdigit() or int(text) < 1:
        raise UserError(f"${WORKERS_CAP} must be a whole number ≥ 1, not {text!r}")
    return min(workers, int(text))


def ensure_runner(home: Path | str, workers: int = 2, idle_exit: float = IDLE_EXIT_SECONDS) -> None:
    """Start a detached runner for this store unless one is alive, with `workers` worker
    processes (`capped_workers`); it outlives this process and stops after `idle_exit` seconds
    without work."""
    if runner_alive(home):
        return
    workers = capped_workers(workers)
    log = open(Path(home) / "runner.log", "a")  # noqa: SIM115 (handed to the child)
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "engine.runs",
            "--home",
            str(home),
            "--workers",
            str(workers),
            "--idle-exit",
            str(idle_exit),
        ],
        cwd=PROJECT_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
    )
    log.close()
    with open(Path(home) / SPAWNED_NAME, "a") as spawned:
        spawned.write(f"{child.pid}\n")


def stop_runners(home: Path | str, settle_seconds: float = 10.0) -> None:
    """Kill every runner started for this store, with its workers (each runner leads its own
    process group), whether it is serving, starting up, or already gone; return once no runner
    holds the store's lock (the kernel lets it go only after the last thread of the group has
    exited, a moment after the processes look dead), or after `settle_seconds`."""
    path = Path(home) / SPAWNED_NAME
    if not path.exists():
        return
    for line in path.read_text().split():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(int(line), signal.SIGKILL)
    path.unlink()
    deadline = time.monotonic() + settle_seconds
    while runner_alive(home) and time.monotonic() < deadline:
        time.sleep(0.02)


def serve_and_say(home: Path | str, workers: int, idle_exit: float) -> int:
    """Serve the store in this process (the command lines' runner) and say how it ended; the
    exit code is 128 + the signal number when a signal stopped it, as shells expect."""
    started = time.monotonic()
    runner = Runner(home, workers, idle_exit)
    if not runner.serve():
        print("another runner serves this store", file=sys.stderr)
        return 0
    after = f"after {time.monotonic() - started:.0f} s"
    if runner.stopped_by is not None:
        print(f"runner stopped by {runner.stopped_by.name} {after}", file=sys.stderr)
        return 128 + runner.stopped_by
    print(f"runner done {after}", file=sys.stderr)
    return 0
