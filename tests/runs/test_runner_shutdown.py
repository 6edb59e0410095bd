"""Stopping a runner leaves no process behind: its workers and loky's resource trackers go with
it, and the runs it was solving do not stay 'running'."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from run_fixtures import lasting_spec, wait_for

from engine.runs.runner import Runner, runner_pid, stop_runners
from engine.runs.submit import submit

pytestmark = pytest.mark.slow  # tests of several seconds each, started first (conftest.py)

PROJECT = Path(__file__).resolve().parents[2]
GONE_WITHIN_SECONDS = 5.0


def family(pid: int) -> list[psutil.Process]:
    """The live processes that descend from `pid` or belong to its process group, `pid` itself
    included."""
    return [p for p in psutil.process_iter() if related(p, pid) and alive(p)]


def related(process: psutil.Process, pid: int) -> bool:
    try:
        return (
            process.pid == pid
            or os.getpgid(process.pid) == pid
            or any(parent.pid == pid for parent in process.parents())
        )
    except (psutil.NoSuchProcess, ProcessLookupError):
        return False


def alive(process: psutil.Process) -> bool:
    """Running and not a zombie (a runner that `ensure_runner` started here stays a zombie until
    this process reaps it); one re-parented to init after its runner went counts too."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def is_resource_tracker(process: psutil.Process) -> bool:
    return "resource_tracker" in " ".join(process.cmdline())


def solving(store, csv_spec, start_runner: bool = True) -> str:
    (run_id,) = submit([lasting_spec(csv_spec, seconds=60.0)], store, start_runner=start_runner)
    return run_id


def wait_until_gone(processes: list[psutil.Process]) -> float:
    """Seconds until every one of `processes` has ended."""
    started = time.monotonic()
    wait_for(lambda: not any(alive(p) for p in processes), timeout=GONE_WITHIN_SECONDS, poll=0.02)
    return time.monotonic() - started


def test_sigterm_stops_the_workers_and_resource_trackers_and_interrupts_the_run(store, csv_spec):
    run_id = solving(store, csv_spec)
    wait_for(lambda: store.records(run_id), timeout=90)
    pid = runner_pid(store.home)
    before = family(pid)
    assert store.run(run_id).pid in {p.pid for p in before}
    assert any(is_resource_tracker(p) for p in before)
    os.kill(pid, signal.SIGTERM)
    seconds = wait_until_gone(before)
    assert family(pid) == []
    print(f"runner, {len(before) - 1} descendants gone {seconds:.2f} s after SIGTERM")
    run = store.run(run_id)
    assert (run.status, run.reason) == ("interrupted", "the runner was stopped (SIGTERM)")
    assert "runner stopped by SIGTERM" in (store.home / "runner.log").read_text()


def test_sigint_stops_a_foreground_runner_without_touching_its_process_group(store, csv_spec):
    run_id = solving(store, csv_spec, start_runner=False)
    runner = subprocess.Popen(
        [sys.executable, "-m", "engine", "runner", "--home", str(store.home)],
        cwd=PROJECT,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert os.getpgid(runner.pid) == os.getpgrp()  # it shares this test's group
    wait_for(lambda: store.records(run_id), timeout=90)
    before = family(runner.pid)
    runner.send_signal(signal.SIGINT)
    runner.wait(timeout=GONE_WITHIN_SECONDS)
    assert "Traceback" not in runner.stderr.read()  # it stopped, rather than broke off
    wait_until_gone(before)
    assert store.run(run_id).reason == "the runner was stopped (SIGINT)"
    assert os.getpgid(os.getpid()) == os.getpgrp()  # this process and its group are still here


def test_stop_runners_kills_the_runner_group_and_the_next_runner_interrupts_its_run(
    store, csv_spec
):
    run_id = solving(store, csv_spec)
    wait_for(lambda: store.records(run_id), timeout=90)
    before = family(runner_pid(store.home))
    stop_runners(store.home)
    wait_until_gone(before)
    assert runner_pid(store.home) is None
    assert store.run(run_id).status == "running"  # SIGKILL gave it no time to say so
    assert Runner(store.home, idle_exit=0.0).serve()
    run = store.run(run_id)
    assert (run.status, run.reason) == ("interrupted", "the process running it ended")
