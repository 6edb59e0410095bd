"""Restarts of the runner mid-run: killed outright (SIGKILL) or stopped (SIGTERM) at random
moments, again and again, then started anew. The store stays consistent: a killed runner's
workers die with it (they write nothing more), the next runner marks what they were solving
interrupted, every other run ends as usual with its metrics and files, and the interrupted runs
can be re-run to completion (`runs rerun`)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest
from run_fixtures import lasting_spec, make_spec, wait_for
from soak import result_problems, solved_by, store_problems
from test_runner_shutdown import PROJECT, family, wait_until_gone

from engine.cli import main
from engine.runs import Store, wait
from engine.runs.submit import submit
from engine.status import WITH_MODEL, StopCode, StopReason

KILLS = (signal.SIGKILL, signal.SIGKILL, signal.SIGTERM)  # the last leaves no run 'running'
RUNS = 12  # enough that every restart finds queued runs: a cycle ends at most three
RUN_SECONDS = 1.0
LONGEST_WAIT_AFTER_A_START = 0.8  # the kill comes this long after the first run starts, at most
REASONS = {
    signal.SIGKILL: "the process running it ended",
    signal.SIGTERM: "the runner was stopped (SIGTERM)",
}


def start_runner(home) -> subprocess.Popen:
    """A runner as `ensure_runner` starts one (`python -m engine.runs`), in its own session."""
    return subprocess.Popen(
        [sys.executable, "-m", "engine.runs", "--home", str(home), "--workers", "2"],
        cwd=PROJECT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def kill_at_random(store: Store, sig: signal.Signals, rng: random.Random) -> list[str]:
    """Start a runner, let it take over and solve, stop it with `sig` at a random moment;
    the runs it cut short: left 'running' (SIGKILL) or marked interrupted (SIGTERM)."""
    runner = start_runner(store.home)
    try:
        wait_for(lambda: solved_by(store, runner.pid), timeout=120)
        time.sleep(rng.uniform(0.0, LONGEST_WAIT_AFTER_A_START))
        processes = family(runner.pid)
        before = {r.id for r in store.runs(status="interrupted")}
        os.kill(runner.pid, sig)
        runner.wait(timeout=10)
        wait_until_gone(processes)  # its workers and loky's resource trackers too
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait()
    return [
        r.id
        for r in store.runs()
        if r.status == "running" or (r.status == "interrupted" and r.id not in before)
    ]


def assert_killed_runs_stay_untouched(store: Store, cut: list[str]) -> None:
    """After SIGKILL no process is left to write the cut runs' records or end them."""
    before = {r: len(store.records(r)) for r in cut}
    time.sleep(1.0)
    assert {r: len(store.records(r)) for r in cut} == before
    assert {store.run(r).status for r in cut} == {"running"}


@pytest.mark.slow
def test_random_kills_and_restarts_of_the_runner_leave_the_store_consistent(
    store, csv_spec, capsys
):
    rng = random.Random(17)
    specs = [lasting_spec(csv_spec, seconds=RUN_SECONDS, seed=s) for s in range(RUNS)]
    ids = submit(specs, store, start_runner=False)
    interrupted: dict[str, signal.Signals] = {}
    for sig in KILLS:
        cut = kill_at_random(store, sig, rng)
        assert cut
        if sig == signal.SIGKILL:
            assert_killed_runs_stay_untouched(store, cut)
        interrupted |= dict.fromkeys(cut, sig)
    assert not store.runs(status="running")  # the next runner took over each SIGKILLed one
    assert {r.id for r in store.runs(status="interrupted")} == set(interrupted)
    for run_id, sig in interrupted.items():
        assert store.run(run_id).reason == REASONS[sig]

    finished = [r.id for r in store.runs() if r.status in WITH_MODEL]
    assert [p for r in finished for p in result_problems(store, r)] == []  # metrics, files
    assert main(["runs", "rerun", "--home", str(store.home), *interrupted]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{r}: queued again (it was interrupted)" for r in interrupted
    ]

    statuses = wait(store, ids, timeout=180)
    assert set(statuses.values()) == {"budget"}  # each ran to its time budget, once re-run
    assert store_problems(store) == []


def test_rerun_keeps_results_and_running_runs_unless_told(store, csv_spec, monkeypatch, capsys):
    asked = []
    monkeypatch.setattr("engine.cli.runs_commands.ensure_runner", lambda *a: asked.append(a))
    running, finished = (make_spec(csv_spec, iterations=5, seed=s).run_id for s in (0, 1))
    for seed, run_id in enumerate((running, finished)):
        store.enqueue(run_id, make_spec(csv_spec, iterations=5, seed=seed).to_dict())
        store.claim(run_id, pid=1)
    store.finish(
        finished, StopReason(StopCode.CONVERGED, "converged"), metrics={"test": {"accuracy": 0.8}}
    )
    rerun = ["runs", "rerun", "--home", str(store.home)]
    assert main([*rerun, running[:8], finished]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{running}: already running",
        f"{finished}: kept, it is converged with a model (--replace re-runs it)",
    ]
    assert store.metrics(finished) and asked == []
    assert main([*rerun, "--replace", finished]) == 0
    assert capsys.readouterr().out == f"{finished}: queued again (it was converged)\n"
    assert store.run(finished).status == "queued" and store.metrics(finished) == {}
    assert asked == [(store.home, 2)]
    assert main([*rerun, "nosuchrun"]) == 2
    assert "no run nosuchrun" in capsys.readouterr().err
