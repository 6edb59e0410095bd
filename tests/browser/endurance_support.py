"""Many people on one FairFront server at once, each in a browser session of their own: each
starts an IDCA run on the Explore page and a small κ sweep on the Frontier page, on Adult, with
κ values no other session uses, waits for the results and reads what its page shows. Used by
tests/browser/test_endurance.py (a few sessions) and bench/endurance.py (ten, and more).

The sessions act at the same time: every session starts its work before any waits for a result,
and each page keeps polling the server while the others are read."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from browser_support import SETTLED, VERDICT
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from engine.runs.store import Store

EXPLORE_SECONDS = 2  # the time budget of a session's IDCA run: small, so it ends in seconds
SWEEP_SECONDS = 1  # and of each run of its sweep (the page's smallest)
WAIT_MS = int(
    os.environ.get("ENDU_WAIT_MS", 900_000)
)  # generous: ten sessions queue thirty runs on two workers of a busy machine
KAPPA_SHOWN = re.compile(r"κ = (\d+(?:\.\d+)?)")
RUN_BUTTON = re.compile("^Run")  # "Run", or "Run again" where the results are stored already
SWEEP_BUTTON = re.compile("^Run sweep")
RSS_SAMPLE_SECONDS = 0.25
CHART = ".js-plotly-plot"  # the Explore page draws its charts once its first view is shown
# every point's hover text on the page's frontier (a label may be left out where it would collide)
HOVERS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(plot => ((plot.layout.title || {}).text || '').includes('frontier'))
    .flatMap(plot => plot._fullData.flatMap(t => Array.from(t.hovertext || []))).join(' ')"""
NAMED = f"(labels) => labels.every(l => ({HOVERS})().includes(l))"
POINTS_WAIT_MS = 30_000


@dataclass
class Session:
    """One person's browser session (a context of its own: cookies, Streamlit session, view),
    and what its pages showed."""

    number: int
    page: object  # playwright.sync_api.Page
    run_kappas: frozenset[float] = frozenset()  # the κ values its Explore page named
    run_value: float | None = None  # the exact test pSP of its verdict
    stored_value: float | None = None  # the store's value for its run
    sweep_kappas: frozenset[float] = frozenset()  # the κ values its Frontier page named

    @property
    def kappa(self) -> float:
        """The κ of its Explore run: its own, as are its sweep's (for up to 40 sessions no value
        is used twice, by the same session or another)."""
        return round(0.02 + 0.005 * self.number, 3)

    @property
    def sweep(self) -> tuple[float, float]:
        return round(0.25 + 0.005 * self.number, 3), round(0.5 + 0.005 * self.number, 3)

    @property
    def foreign(self) -> list[str]:
        """What its pages showed of other sessions: κ values not its own, a verdict value that
        is not its run's (nothing: [])."""
        said = []
        if self.run_kappas - {self.kappa}:
            said.append(f"Explore named κ {sorted(self.run_kappas - {self.kappa})}")
        if self.sweep_kappas - set(self.sweep):
            said.append(f"Frontier named κ {sorted(self.sweep_kappas - set(self.sweep))}")
        if self.stored_value is None or self.run_value != round(self.stored_value, 4):
            said.append(f"Explore showed pSP {self.run_value}, the store holds {self.stored_value}")
        return said

    @property
    def missing(self) -> list[str]:
        """Its own κ values that its pages did not name (nothing: [])."""
        said = []
        if self.kappa not in self.run_kappas:
            said.append(f"Explore did not name κ = {self.kappa}")
        if set(self.sweep) - self.sweep_kappas:
            said.append(f"Frontier did not name κ {sorted(set(self.sweep) - self.sweep_kappas)}")
        return said


def visit(browser, url: str) -> None:
    """Open the Explore page once and wait until it is ready: the server has then imported and
    prepared what every session uses, and its memory is a baseline."""
    page = browser.new_page()
    page.goto(f"{url}/?solvers=idca")
    _wait_until_ready(page)
    page.close()


def run_sessions(browser, url: str, home: Path, count: int, first: int = 0) -> list[Session]:
    """`count` sessions at once, numbered from `first`, each through its run and its sweep;
    what each saw."""
    sessions = [
        Session(n, browser.new_context(viewport={"width": 1400, "height": 2400}).new_page())
        for n in range(first, first + count)
    ]
    try:
        for session in sessions:
            query = f"kappa={session.kappa}&seconds={EXPLORE_SECONDS}&solvers=idca"
            session.page.goto(f"{url}/?{query}&interval=5&interval=30")
        for session in sessions:
            _wait_until_ready(session.page)
            session.page.get_by_role("button", name=RUN_BUTTON).click()
        for session in sessions:
            _read_run(session, home)
        for session in sessions:
            kappas = ",".join(str(k) for k in session.sweep)
            query = f"kappas={kappas}&seconds={SWEEP_SECONDS}&solvers=idca"
            session.page.goto(f"{url}/frontier?{query}&interval=5&interval=30")
            button = session.page.get_by_role("button", name=SWEEP_BUTTON)
            button.wait_for(timeout=WAIT_MS)
            button.click()
        for session in sessions:
            _read_sweep(session)
    finally:
        for session in sessions:
            session.page.context.close()
    return sessions


def _wait_until_ready(page) -> None:
    """Wait until the Explore page has drawn its charts: its first view (controls only) is
    rerun once shown, and a click before that rerun may go unheard."""
    page.get_by_role("button", name=RUN_BUTTON).wait_for(timeout=WAIT_MS)
    page.locator(CHART).first.wait_for(timeout=WAIT_MS)


def _read_run(session: Session, home: Path) -> None:
    """Wait until the session's run has its verdict, and read it and the κ values named."""
    pattern = VERDICT.format(quantity="pSP")
    session.page.wait_for_function(SETTLED, arg=[pattern], timeout=WAIT_MS)
    text = session.page.inner_text("main")
    session.run_kappas = _kappas(text)
    session.run_value = float(re.search(pattern, text).group(2))
    session.stored_value = stored_value(home, session.kappa)


def _read_sweep(session: Session) -> None:
    """Wait until every run of the session's sweep has finished and its frontier is drawn with
    a point for each κ (a while at most: then what it shows is read as it is)."""
    runs = len(session.sweep)
    session.page.get_by_text(f"{runs} of {runs} runs finished").wait_for(timeout=WAIT_MS)
    session.page.get_by_text("Accuracy–fairness frontier").first.wait_for(timeout=WAIT_MS)
    labels = [f"κ = {kappa:g}" for kappa in session.sweep]
    with contextlib.suppress(PlaywrightTimeout):
        session.page.wait_for_function(NAMED, arg=labels, timeout=POINTS_WAIT_MS)
    session.sweep_kappas = _kappas(session.page.evaluate(HOVERS))


def stored_value(home: Path, kappa: float) -> float | None:
    """The exact test pSP the store holds for the IDCA run of this κ made on the Explore page
    (its time budget tells it from the sweeps' runs)."""
    store = Store(home)
    rows = [
        r
        for r in store.runs()
        if r.spec.solver == "idca"
        and r.spec.budget.max_seconds == EXPLORE_SECONDS
        and r.spec.kappa == kappa
    ]
    return store.metrics(rows[0].id)["test"]["constraint"] if len(rows) == 1 else None


def _kappas(text: str) -> frozenset[float]:
    return frozenset(float(k) for k in KAPPA_SHOWN.findall(text))


def rss_mb(pid: int) -> float:
    """The resident memory of a process, in MB (VmRSS of /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise ValueError(f"process {pid} has no VmRSS")


@dataclass
class MemoryWatch:
    """The largest value of `measure` (memory in MB, e.g. `rss_mb` of a process) while the
    block runs, sampled in a thread; a measure that fails (its process is gone) counts 0."""

    measure: Callable[[], float]
    peak_mb: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> MemoryWatch:
        self._sample()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(RSS_SAMPLE_SECONDS):
            self._sample()

    def _sample(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.peak_mb = max(self.peak_mb, self.measure())
