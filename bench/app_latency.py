"""App latency in a real browser (Debian's Chromium through Playwright), on Adult.

Prints two tables. The first: seconds from server start to an interactive page (target < 5 s),
from clicking Run to the first plotted trajectory point (target < 2 s; three runs, for three κ),
and for the page to reflect a changed κ when that κ's result is already stored (target < 1 s;
three changes). The server starts twice: first on an empty data cache, then (for a new visitor)
on the cache the first start filled, as a start after `make app`'s setup finds it. The browser is
running before the server starts, as a visitor's is; its own launch time is printed apart.

The second: the Frontier page's default sweep (Adult by sex, the page's interval and κ list,
IDCA with its defaults and the unconstrained reference, on the page's 2 workers), from pressing
"Run sweep" until every point is drawn (target ≤ 45 s for 6 κ and the reference), on the second
server, whose Explore page the visitor came from started the runner; then where that time went:
the first run's start, each run's queueing, its solver seconds, its other seconds and its holding-κ solves (from
the store), the seconds the page lags behind the store, the processor seconds of the workers, the
server and the browser meanwhile, the 95 % intervals of one run's model (timed apart, in this
process), and the same runs submitted again to a fresh store without a page (`submit_sweep`).
`--kappas` types another κ list into the page first.

A run's first trajectory point is an exact record, made where the run starts
(`engine.solvers.run_clock`); its surrogate records follow its solver's steps, so a short run
may draw none.

    NUMBA_NUM_THREADS=1 .venv/bin/python bench/app_latency.py [--sweep-only] [--kappas LIST]
        [--quick]

--quick checks in about half a minute that the bench runs: one Explore run of 1 s, no second
server start, pauses of 1 s instead of 10 s (and 2 s), a sweep of one κ (0.1, unless --kappas
says) with the reference at 2 s per run, and no second sweep without a page.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import psutil  # noqa: E402
from browser_support import CHROMIUM, CHROMIUM_FLAGS, start_server  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from engine.runs import FINAL, Store, submit_sweep, wait  # noqa: E402
from engine.runs.runner import runner_pid, stop_runners  # noqa: E402
from engine.runs.store import RunRow  # noqa: E402
from engine.runs.worker import build_problem  # noqa: E402
from engine.solvers.records import RecordKind  # noqa: E402

KAPPAS = ("0.05", "0.08", "0.11")  # one new IDCA run each; the unconstrained one is shared
SWEEP_TARGET = 45.0  # seconds, the page's default sweep
SWEEP_TIMEOUT = 900.0
WORKERS = 2  # as the Frontier page's runner
# the run ids of the points drawn on the page's figures (each point's customdata names its run)
DRAWN = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .flatMap(plot => (plot._fullData || []).flatMap(t => Array.from(t.customdata || [])))
    .map(c => String(Array.isArray(c) ? c[0] : c))"""


@dataclass(frozen=True)
class Pace:
    """What the bench does: the κ of the Explore runs, their time budget (s), the pause (ms) a
    person takes before running, the pause (ms) on a settled page before a κ is changed to one
    whose result is stored, whether the server starts a second time, the κ list typed into
    the Frontier page (None: the page's own) and its runs' time budget (None: the page's; not
    the Explore runs', or the sweep would reuse their reference and make one run fewer than its
    button says), and whether the sweep's runs are submitted again without a page."""

    kappas: tuple[str, ...]
    budget: str
    pause: int
    settle: int
    restart: bool
    sweep_kappas: str | None
    sweep_budget: str | None
    again: bool


FULL = Pace(KAPPAS, "3", 10_000, 2_000, True, None, None, True)
QUICK = Pace(KAPPAS[:1], "1", 1_000, 500, False, "0.1", "2", False)


def first_point(label: str) -> str:
    """JavaScript: the trajectory chart shows a point of the run labelled `label` (its first
    record is exact, at its start: `engine.solvers.run_clock`)."""
    return f"""() => Array.from(document.querySelectorAll('.js-plotly-plot')).some(plot =>
        (plot._fullData || []).some(t => t.legendgroup === '{label}' && t.x && t.x.length >= 1))"""


def set_number(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")


def settle(page, kappa: str) -> None:
    """Wait until the page shows the view of κ = `kappa`, then a moment more."""
    page.get_by_text(f"κ = {float(kappa):g} on I").first.wait_for(timeout=30_000)
    page.wait_for_timeout(1000)


def start_and_open(page, home: Path, cache: Path):
    """Start a server and open its page; the server and the seconds until Run is shown."""
    started = time.perf_counter()
    server, url = start_server(home, cache)
    page.goto(url)
    page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
    return server, url, time.perf_counter() - started


def wait_runs_done(home: Path) -> None:
    store = Store(home)
    while not store.runs() or any(r.status not in FINAL for r in store.runs()):
        time.sleep(0.1)


def explore_latencies(page, home: Path, pace: Pace) -> tuple[list[float], list[float]]:
    """Click Run → first plotted point for each κ of `pace`, then changed κ → page updated for
    the same ones (stored results: nothing runs)."""
    page.wait_for_timeout(pace.pause)  # a person sets data, I and κ meanwhile; workers warm up
    set_number(page, "Time budget per run (s)", pace.budget)
    first_points = []
    for kappa in pace.kappas:
        set_number(page, "Tolerance κ", kappa)
        settle(page, kappa)
        clicked = time.perf_counter()
        page.get_by_role("button", name="Run", exact=True).click()
        label = f"idca (κ = {float(kappa):g})"
        page.wait_for_function(first_point(label), timeout=60_000, polling=50)
        first_points.append(time.perf_counter() - clicked)
        wait_runs_done(home)
        page.get_by_text("Download report (HTML)").wait_for(timeout=30_000)
    changes = []
    shown = pace.kappas[-1]
    for kappa in pace.kappas:
        if kappa == shown:  # the page shows this κ already: another first, so that it changes
            away = next(k for k in KAPPAS if k not in pace.kappas)
            set_number(page, "Tolerance κ", away)
            settle(page, away)
        page.wait_for_timeout(pace.settle)  # from a settled page
        changed = time.perf_counter()
        set_number(page, "Tolerance κ", kappa)
        page.get_by_text("Exact metrics, test set first").first.wait_for(timeout=30_000)
        page.get_by_text(f"κ = {float(kappa):g} on I").first.wait_for(timeout=30_000)
        changes.append(time.perf_counter() - changed)
        shown = kappa
    return first_points, changes


@dataclass(frozen=True)
class SweepTiming:
    """The browser's view of one sweep: when it was clicked (the store's clock), its runs, and
    seconds after the click until the reference and every point were drawn; processor seconds
    meanwhile of the runner and its workers, the server and the browser."""

    clicked: float
    run_ids: list[str]
    reference_drawn: float
    all_drawn: float
    cpu: dict[str, float]


def _processes(server_pid: int, home: Path) -> dict[str, list[psutil.Process]]:
    """This bench's processes by role: the store's runner with its workers, the server, and the
    browser (Playwright's driver and Chromium: the bench's other descendants)."""
    runner = runner_pid(home)
    engine = [] if runner is None else [psutil.Process(runner)]
    engine += [child for process in engine for child in process.children(recursive=True)]
    known = {server_pid, *(p.pid for p in engine)}
    browser = [p for p in psutil.Process().children(recursive=True) if p.pid not in known]
    return {
        "runner and workers": engine,
        "server": [psutil.Process(server_pid)],
        "browser": browser,
    }


def _cpu(processes: dict[str, list[psutil.Process]]) -> dict[int, tuple[str, float]]:
    seconds = {}
    for role, members in processes.items():
        for process in members:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            seconds[process.pid] = (role, times.user + times.system)
    return seconds


def frontier_sweep(page, url: str, home: Path, server_pid: int, pace: Pace) -> SweepTiming:
    """Go from the Explore page (which starts the runner) to the Frontier page, type the κ list
    and time budget of `pace` where it has them, press Run sweep after a moment, as a person
    reading the page would, and watch until every run of the sweep is drawn."""
    page.goto(f"{url}/frontier")
    page.get_by_label("κ values", exact=True).wait_for(timeout=60_000)
    if pace.sweep_kappas is not None:
        set_number(page, "κ values", pace.sweep_kappas)
    if pace.sweep_budget is not None:
        set_number(page, "Time budget per run (s)", pace.sweep_budget)
    button = page.get_by_role("button", name=re.compile(r"^Run sweep \(\d+ runs\)"))
    button.wait_for(timeout=60_000)
    page.wait_for_timeout(pace.pause)
    count = int(re.search(r"\((\d+) runs\)", button.inner_text()).group(1))
    store = Store(home)
    before = _cpu(_processes(server_pid, home))
    clicked, started = time.time(), time.perf_counter()
    button.click()
    run_ids: list[str] = []
    references: set[str] = set()
    reference_drawn = all_drawn = None
    while all_drawn is None and time.perf_counter() - started < SWEEP_TIMEOUT:
        if len(run_ids) < count:
            rows = [r for r in store.runs() if r.created >= clicked]
            run_ids = [r.id for r in rows]
            references = {r.id for r in rows if r.spec.constraint is None}
        drawn = set(page.evaluate(DRAWN)) & set(run_ids)
        now = time.perf_counter() - started
        if reference_drawn is None and references and references <= drawn:
            reference_drawn = now
        if len(run_ids) == count and len(drawn) == count:
            all_drawn = now
        page.wait_for_timeout(100)
    if all_drawn is None:
        raise RuntimeError(f"the sweep was not drawn within {SWEEP_TIMEOUT:g} s")
    after = _cpu(_processes(server_pid, home))
    cpu: dict[str, float] = {}
    for pid, (role, seconds) in after.items():
        cpu[role] = cpu.get(role, 0.0) + seconds - before.get(pid, (role, 0.0))[1]
    return SweepTiming(clicked, run_ids, reference_drawn, all_drawn, cpu)


@dataclass(frozen=True)
class RunCost:
    """Where one run's time went, in seconds: waiting in the queue once it could start (after
    the click, or after the run it starts from ended: `follows`), solving (the solver's clock),
    the rest of its time on a worker (loading data, exact metrics, records, intervals,
    writing), how many holding-κ solves it made; and what it found: its model's exact test
    accuracy and pSP, and the exact training value of its constrained quantity (None without
    a constraint)."""

    row: RunRow
    follows: bool
    queued: float
    solver: float
    other: float
    solves: int
    accuracy: float
    psp: float
    train_value: float | None

    @property
    def label(self) -> str:
        spec = self.row.spec
        return spec.solver if spec.kappa is None else f"{spec.solver} κ = {spec.kappa:g}"

    @property
    def start(self) -> str:
        reason = self.row.reason
        if "started cold" in reason:
            return "cold (its start was refused)"
        found = re.search(r"started from the model of run \w+ \(κ = ([\d.e-]+)", reason)
        return f"from κ = {found.group(1)}" if found else "cold"


def run_costs(store: Store, run_ids: list[str], since: float) -> list[RunCost]:
    rows = {r: store.run(r) for r in run_ids}
    costs = []
    for row in sorted(rows.values(), key=lambda r: r.started):
        source = row.spec.warm_start
        ready = max(since, rows[source].finished) if source in rows else since
        wall = row.finished - row.started
        solves = len(store.records(row.id, kind=RecordKind.HONOUR))
        test, train = (store.metrics(row.id).get(split, {}) for split in ("test", "train"))
        costs.append(
            RunCost(
                row,
                source in rows,
                row.started - ready,
                row.seconds or 0.0,
                wall - (row.seconds or 0.0),
                solves,
                test.get("accuracy", math.nan),
                test.get("psp", math.nan),
                train.get("constraint"),
            )
        )
    return costs


def interval_seconds(store: Store, run_id: str) -> float:
    """The seconds of the 95 % intervals of a run's model on its held-out splits, in this
    process (a worker computes them once per run, after its solves)."""
    problem = build_problem(store.run(run_id).spec)
    params = store.load_params(run_id)
    problem.interval_report(params)  # the first call loads what the intervals use
    started = time.perf_counter()
    problem.interval_report(params)
    return time.perf_counter() - started


def engine_sweep(store: Store, run_ids: list[str]) -> tuple[float, list[RunCost]]:
    """The same runs submitted to a fresh store, with no page: when they were submitted (the
    store's clock), and their costs."""
    specs = [store.run(r).spec for r in run_ids]
    with tempfile.TemporaryDirectory() as folder:
        fresh = Store(Path(folder) / "runs")
        try:
            submitted = time.time()
            submit_sweep("bench", specs, {}, fresh, workers=WORKERS)
            wait(fresh, [s.run_id for s in specs], timeout=SWEEP_TIMEOUT)
            costs = run_costs(fresh, [s.run_id for s in specs], submitted)
        finally:
            stop_runners(fresh.home)
    return submitted, costs


def print_latencies(rows: list[tuple[str, list[float], str]]) -> None:
    print(f"{'measure':<46}{'median':>8}{'worst':>8}{'target':>8}   each")
    for name, values, target in rows:
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"{name:<46}{statistics.median(values):>8.2f}{max(values):>8.2f}{target:>8}   {each}")


def print_runs(title: str, costs: list[RunCost], since: float) -> None:
    print(f"\n{title}; train: the exact training value of the constrained quantity")
    print(
        f"{'run':<22}{'start':<30}{'queued':>7}{'began':>7}{'ended':>7}{'solver':>8}"
        f"{'other':>7}{'solves':>7}{'test acc':>9}{'test pSP':>9}{'train':>8}"
    )
    for c in costs:
        train = "—" if c.train_value is None else f"{c.train_value:.4f}"
        print(
            f"{c.label:<22}{c.start:<30}{c.queued:>7.1f}{c.row.started - since:>7.1f}"
            f"{c.row.finished - since:>7.1f}{c.solver:>8.1f}{c.other:>7.1f}{c.solves:>7}"
            f"{c.accuracy:>9.4f}{c.psp:>9.4f}{train:>8}"
        )


def print_sweep(
    timing: SweepTiming,
    costs: list[RunCost],
    engine: tuple[float, list[RunCost]] | None,
    intervals: float,
) -> None:
    """The sweep's table and its runs; then, if `engine` holds them (when they were submitted,
    and their costs), the same runs without a page."""
    last = max(c.row.finished for c in costs) - timing.clicked
    first = min(c.row.started for c in costs) - timing.clicked
    rows = [
        (
            f"click Run sweep → every point drawn ({len(costs)} runs)",
            timing.all_drawn,
            f"≤ {SWEEP_TARGET:g}",
        ),
        ("  → the first run started (runner, workers)", first, ""),
        ("  → the reference drawn", timing.reference_drawn, ""),
        ("  → the last run ended (store)", last, ""),
        ("  last run ended → drawn (page polling)", timing.all_drawn - last, ""),
        ("run seconds on workers, all runs", sum(c.solver + c.other for c in costs), ""),
        ("  of which solving (the solvers' clocks)", sum(c.solver for c in costs), ""),
        ("  of which the rest (data, metrics, records)", sum(c.other for c in costs), ""),
        ("  of which one run's intervals (in this process)", intervals, ""),
        (
            "queued after the run it starts from ended",
            sum(c.queued for c in costs if c.follows),
            "",
        ),
        ("holding-κ solves, all runs", sum(c.solves for c in costs), ""),
        *[(f"processor seconds: {role}", seconds, "") for role, seconds in timing.cpu.items()],
    ]
    if engine is not None:
        submitted, again = engine
        rows += [
            (
                "the same runs without a page (submit_sweep)",
                max(c.row.finished for c in again) - submitted,
                "",
            ),
            (
                "  of which its runner's start (a fresh store's)",
                min(c.row.started for c in again) - submitted,
                "",
            ),
        ]
    print(f"\n{'Frontier page default sweep':<52}{'seconds':>9}{'target':>9}")
    for name, value, target in rows:
        print(f"{name:<52}{value:>9.1f}{target:>9}")
    print_runs("the sweep's runs (seconds after the click)", costs, timing.clicked)
    if engine is not None:
        print_runs("the same runs without a page (seconds after submitting)", *reversed(engine))
    print(
        f"\nload average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        f"NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS', 'unset')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sweep-only", action="store_true", help="time the Frontier sweep only")
    parser.add_argument("--kappas", help="a κ list to type into the Frontier page first")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one Explore run of 1 s, one server start, short pauses, a sweep of one κ (0.1 "
        "unless --kappas says) at 2 s per run, and no second sweep without a page",
    )
    args = parser.parse_args()
    pace = QUICK if args.quick else FULL
    pace = dataclasses.replace(pace, sweep_kappas=args.kappas or pace.sweep_kappas)
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        home, cache = Path(folder) / "runs", Path(folder) / "cache"
        launched = time.perf_counter()
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        launch = time.perf_counter() - launched
        server, url, interactive = start_and_open(page, home, cache)
        try:
            if not args.sweep_only:
                first_points, changes = explore_latencies(page, home, pace)
            if pace.restart and not args.sweep_only:
                os.killpg(server.pid, 9)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                server, url, cached_start = start_and_open(page, home, cache)
            timing = frontier_sweep(page, url, home, server.pid, pace)
        finally:
            browser.close()
            stop_runners(home)
            os.killpg(server.pid, 9)
        store = Store(home)
        costs = run_costs(store, timing.run_ids, timing.clicked)
        constrained = next(c.row.id for c in costs if c.row.spec.constraint is not None)
        intervals = interval_seconds(store, constrained)
        engine = engine_sweep(store, timing.run_ids) if pace.again else None
    if not args.sweep_only:
        rows = [
            ("(browser launch, before the server starts)", [launch], ""),
            ("server start → interactive page", [interactive], "< 5"),
        ]
        if pace.restart:
            rows.append(("  the same, default data cached (as after setup)", [cached_start], "< 5"))
        rows += [
            ("click Run → first plotted trajectory point", first_points, "< 2"),
            ("changed κ (stored result) → page updated", changes, "< 1"),
        ]
        print_latencies(rows)
    print_sweep(timing, costs, engine, intervals)


if __name__ == "__main__":
    main()
