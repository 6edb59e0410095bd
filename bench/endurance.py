"""Endurance: many people at once, long uptimes, and restarts; three tables measured in one run.

1. Sessions: SESSIONS browser sessions (Debian's Chromium through Playwright) at once on one
   server, ROUNDS times over: each starts an IDCA run on the Explore page and a two-κ sweep on
   the Frontier page on Adult, with κ values of its own, and reads its results
   (tests/browser/endurance_support.py). Per round: runs, sessions complete, sessions that saw
   another's κ or result, sessions whose pages did not name all their own κ values, the
   server's resident memory (before, peak, after) and the time.
2. Soak: SOAK runs on 2 workers of a background runner while a reader polls the store all
   along (tests/runs/soak.py, as the 50-run test): the runs' final statuses, runs lost, the
   reader's reads and errors, the peak memory of the runner with its workers, the time.
3. Kills: while a stream of runs goes on and a browser watches the Runs page, the app server
   (SIGKILL) and the runner (SIGKILL or SIGTERM) are killed at random moments while runs are
   solving, and restarted: the server on its port, the runner as the app restarts it
   (`ensure_runner`). Per kill: the runs running, those it interrupted, and how long until the
   Runs page is drawn again (server) or runs are solving again (runner: it takes over and its
   workers warm up). Then: every run finished, failed or interrupted, none stuck 'running',
   every finished result whole; and the interrupted runs re-run with the one button of the
   Runs page.

    nice .venv/bin/python bench/endurance.py [--sessions 10] [--rounds 2] [--soak 200] [--kills 8]
        [--phases sessions soak kills] [--quick]

--phases runs only the tables named (the browser starts only for sessions and kills). --quick: one
session for one round, a soak of 10 runs, and one kill while 6 runs go on, unless the other flags
say; `--quick --phases soak` checks in seconds, with no browser, that the bench runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for folder in (ROOT, ROOT / "tests", ROOT / "tests" / "browser", ROOT / "tests" / "runs"):
    sys.path.insert(0, str(folder))

import psutil  # noqa: E402
from browser_support import CHROMIUM, CHROMIUM_FLAGS, free_port, start_server  # noqa: E402
from endurance_support import MemoryWatch, rss_mb, run_sessions, visit  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from run_fixtures import lasting_spec, make_spec, wait_for  # noqa: E402
from soak import soak, solved_by, store_problems  # noqa: E402
from toy_tables import write_toy_csv  # noqa: E402

from engine.runs import Store, wait  # noqa: E402
from engine.runs.runner import ensure_runner, runner_pid, stop_runners  # noqa: E402
from engine.runs.submit import submit  # noqa: E402
from engine.status import RunStatus  # noqa: E402

RUNS_UNDER_FIRE = 60  # the stream of runs the kills cut into
RUN_SECONDS = 1.5  # the time budget of each of them
KILL_GAP_SECONDS = (0.5, 4.0)  # a kill comes this long after runs are going again
VICTIMS = ("app server", "runner SIGKILL", "runner SIGTERM")
WAIT_SECONDS = 1800
PHASES = ("sessions", "soak", "kills")
BROWSER_PHASES = ("sessions", "kills")
DEFAULTS = {"sessions": 10, "rounds": 2, "soak": 200, "kills": 8, "runs": RUNS_UNDER_FIRE}
QUICK = {"sessions": 1, "rounds": 1, "soak": 10, "kills": 1, "runs": 6}


def print_table(title: str, header: list[str], rows: list[list]) -> None:
    cells = [header, *[[_cell(v) for v in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(f"\n{title}")
    for n, row in enumerate(cells):
        aligned = (c.rjust(w) if n else c.ljust(w) for c, w in zip(row, widths, strict=True))
        print("  " + "  ".join(aligned))


def _cell(value) -> str:
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def sessions_phase(browser, folder: Path, count: int, rounds: int) -> None:
    home, cache = folder / "runs", folder / "cache"
    server, url = start_server(home, cache)
    rows = []
    try:
        visit(browser, url)
        for round_ in range(rounds):
            before, started = rss_mb(server.pid), time.monotonic()
            with MemoryWatch(lambda: rss_mb(server.pid)) as memory:
                sessions = run_sessions(browser, url, home, count, first=round_ * count)
            seconds = time.monotonic() - started
            statuses = Counter(r.status for r in Store(home).runs())
            for session in sessions:
                for problem in session.foreign + session.missing:
                    print(f"session {session.number}: {problem}")
            rows.append(
                [
                    round_ + 1,
                    count,
                    3 * count,
                    sum(statuses.values()),
                    sum(s.run_value is not None and bool(s.sweep_kappas) for s in sessions),
                    sum(bool(s.foreign) for s in sessions),
                    sum(bool(s.missing) for s in sessions),
                    before,
                    memory.peak_mb,
                    rss_mb(server.pid),
                    seconds,
                ]
            )
    finally:
        stop_runners(home)
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    print_table(
        f"{count} concurrent browser sessions on one server, each an Explore run and a "
        "two-κ sweep on Adult",
        [
            "round",
            "sessions",
            "runs",
            "runs in store",
            "complete",
            "saw another's",
            "own κ missing",
            "RSS before MB",
            "RSS peak MB",
            "RSS after MB",
            "seconds",
        ],
        rows,
    )


def runner_rss_mb(home: Path) -> float:
    """The resident memory of the store's runner and its workers, in MB (0 with no runner)."""
    pid = runner_pid(home)
    if pid is None:
        return 0.0
    total = 0.0
    try:
        runner = psutil.Process(pid)
        for process in (runner, *runner.children(recursive=True)):
            total += process.memory_info().rss / 2**20
    except psutil.NoSuchProcess:
        pass  # one ended between the listing and the reading
    return total


def soak_phase(folder: Path, runs: int) -> None:
    store = Store(folder / "runs")
    data = write_toy_csv(folder)
    specs = [make_spec(data, solver="unconstrained", iterations=3, seed=s) for s in range(runs)]
    try:
        with MemoryWatch(lambda: runner_rss_mb(store.home)) as memory:
            result = soak(store, specs, timeout=WAIT_SECONDS)
    finally:
        stop_runners(store.home)
    counts = Counter(result.statuses.values())
    print_table(
        f"soak: {runs} runs on 2 workers, a reader polling the store every 5 ms",
        [
            "runs",
            "finished",
            "failed",
            "interrupted",
            "lost",
            "reads",
            "read errors",
            "runner+workers peak RSS MB",
            "seconds",
            "runs/s",
        ],
        [
            [
                runs,
                counts[RunStatus.BUDGET] + counts[RunStatus.CONVERGED],
                counts[RunStatus.FAILED],
                counts[RunStatus.INTERRUPTED],
                len(result.lost),
                result.reads,
                len(result.errors),
                memory.peak_mb,
                result.seconds,
                runs / result.seconds,
            ]
        ],
    )


def solving_again(store: Store) -> None:
    """Wait until the live runner solves runs (once it has taken over and its workers have
    warmed up), or none is left to solve."""

    def solving() -> bool:
        runner = runner_pid(store.home)
        return bool(runner and solved_by(store, runner)) or not store.runs(status=RunStatus.QUEUED)

    wait_for(solving, timeout=WAIT_SECONDS)


def kill_runner(home: Path, sig: signal.Signals) -> None:
    """Kill the live runner, and wait until it is gone."""
    os.kill(wait_for(lambda: runner_pid(home), timeout=WAIT_SECONDS), sig)
    wait_for(lambda: runner_pid(home) is None, timeout=60)


def kills_phase(browser, folder: Path, kills: int, runs: int, rng: random.Random) -> None:
    """`kills` kills at random moments while a stream of `runs` runs goes on."""
    home, cache = folder / "runs", folder / "cache"
    store = Store(home)
    data = write_toy_csv(folder)
    port = free_port()
    server, url = start_server(home, cache, port)
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    started = time.monotonic()
    events = []
    try:
        ids = submit([lasting_spec(data, RUN_SECONDS, seed=s) for s in range(runs)], store)
        page.goto(f"{url}/runs")
        for _ in range(kills):
            solving_again(store)
            time.sleep(rng.uniform(*KILL_GAP_SECONDS))
            victim = rng.choice(VICTIMS)
            at = time.monotonic() - started
            interrupted_before = len(store.runs(status=RunStatus.INTERRUPTED))
            solving = len(store.runs(status=RunStatus.RUNNING))
            if victim == "app server":
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
                restart = time.monotonic()
                server, url = start_server(home, cache, port)
                page.goto(f"{url}/runs")
                page.locator("[data-testid='stDataFrame']").first.wait_for(timeout=120_000)
                back = time.monotonic() - restart
            else:
                sig = signal.SIGKILL if victim.endswith("SIGKILL") else signal.SIGTERM
                kill_runner(home, sig)
                restart = time.monotonic()
                ensure_runner(home)  # as the app does on the next run or visit
                solving_again(store)
                back = time.monotonic() - restart
            cut = len(store.runs(status=RunStatus.INTERRUPTED)) - interrupted_before
            events.append([victim, at, solving, cut, back])
        before = wait(store, ids, timeout=WAIT_SECONDS)
        kills_seconds = time.monotonic() - started
        problems = store_problems(store)
        interrupted = [r for r, s in before.items() if s == RunStatus.INTERRUPTED]
        after, rerun_seconds = before, 0.0
        if interrupted:
            page.goto(f"{url}/runs")
            button = page.get_by_role("button", name=re.compile(r"^Re-run \d+ runs?$")).first
            button.wait_for(timeout=120_000)
            clicked = time.monotonic()
            button.click()
            wait_for(lambda: store.run(interrupted[0]).status != RunStatus.INTERRUPTED, timeout=60)
            after = wait(store, ids, timeout=WAIT_SECONDS)
            rerun_seconds = time.monotonic() - clicked
            problems += store_problems(store)
    finally:
        stop_runners(home)
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        page.close()
    print_table(
        f"kills at random moments while {runs} runs of {RUN_SECONDS:g} s go on "
        "(restart: the server on its port, the runner by ensure_runner)",
        ["kill", "victim", "at s", "runs running", "runs interrupted", "back after s"],
        [[n + 1, *event] for n, event in enumerate(events)],
    )
    for problem in problems:
        print(f"inconsistent: {problem}")
    print_table(
        "the store after the kills, and after one click on “Re-run” of the Runs page",
        ["", "finished", "failed", "interrupted", "stuck running/queued", "seconds"],
        [
            ["after the kills", *_outcome(before), kills_seconds],
            ["after the re-run", *_outcome(after), rerun_seconds],
        ],
    )
    print(f"  inconsistencies found: {len(problems)}")


def _outcome(statuses: dict[str, RunStatus]) -> list[int]:
    """Finished (with a model), failed, interrupted, and not final."""
    counts = Counter(statuses.values())
    return [
        counts[RunStatus.BUDGET] + counts[RunStatus.CONVERGED] + counts[RunStatus.DIVERGED],
        counts[RunStatus.FAILED],
        counts[RunStatus.INTERRUPTED],
        counts[RunStatus.QUEUED] + counts[RunStatus.RUNNING],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    counts = {
        "sessions": "browser sessions at once",
        "rounds": "rounds of them",
        "soak": "runs of the soak",
        "kills": "kills",
    }
    for name, what in counts.items():
        parser.add_argument(
            f"--{name}", type=int, help=f"{what} (default {DEFAULTS[name]}, --quick {QUICK[name]})"
        )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--phases",
        nargs="+",
        choices=PHASES,
        default=list(PHASES),
        help="the tables to measure (default all)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK['sessions']} session, {QUICK['rounds']} round, a soak of {QUICK['soak']} "
        f"runs and {QUICK['kills']} kill while {QUICK['runs']} runs go on, unless the flags "
        "above say",
    )
    args = parser.parse_args()
    sizes = QUICK if args.quick else DEFAULTS
    given = {name: getattr(args, name) for name in counts}
    sessions, rounds, soak, kills = (
        sizes[name] if value is None else value for name, value in given.items()
    )
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        folder = Path(tmp)
        os.environ["FAIRFRONT_CACHE"] = str(folder / "cache")  # the workers' and the bench's
        browser = None
        if set(args.phases) & set(BROWSER_PHASES):
            playwright = stack.enter_context(sync_playwright())
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            stack.callback(browser.close)
        phases = {
            "sessions": lambda f: sessions_phase(browser, f, sessions, rounds),
            "soak": lambda f: soak_phase(f, soak),
            "kills": lambda f: kills_phase(
                browser, f, kills, sizes["runs"], random.Random(args.seed)
            ),
        }
        for name in PHASES:
            if name in args.phases:
                (folder / name).mkdir()
                phases[name](folder / name)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
