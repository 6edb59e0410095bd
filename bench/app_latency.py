"""App latency in a real browser (Debian's Chromium through Playwright), on Adult.

Prints: seconds from server start to an interactive page (target < 5 s), from clicking Run to the
first plotted trajectory point (target < 2 s; three runs, for three κ), and for the page to
reflect a changed κ when that κ's result is already stored (target < 1 s; three changes).

The server starts twice: first on an empty data cache, then (for a new visitor) on the cache
the first start filled, as a start after `make app`'s setup finds it. The browser is running
before the server starts, as a visitor's is; its own launch time is printed apart.

    .venv/bin/python bench/app_latency.py
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from browser_support import CHROMIUM, CHROMIUM_FLAGS, start_server  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from engine.runs import FINAL, Store  # noqa: E402
from engine.runs.runner import stop_runners  # noqa: E402

KAPPAS = ("0.05", "0.08", "0.11")  # one new IDCA run each; the unconstrained one is shared


def first_point(label: str) -> str:
    """JavaScript: the trajectory chart shows a surrogate point of the run labelled `label`."""
    return f"""() => Array.from(document.querySelectorAll('.js-plotly-plot')).some(plot =>
        (plot._fullData || []).some(t => t.legendgroup === '{label}' &&
            (t.name || '').includes('surrogate') && t.x && t.x.length >= 1))"""


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
    page.get_by_role("button", name="Run").wait_for(timeout=60_000)
    return server, time.perf_counter() - started


def wait_runs_done(home: Path) -> None:
    store = Store(home)
    while not store.runs() or any(r.status not in FINAL for r in store.runs()):
        time.sleep(0.1)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        home, cache = Path(folder) / "runs", Path(folder) / "cache"
        launched = time.perf_counter()
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        launch = time.perf_counter() - launched
        server, interactive = start_and_open(page, home, cache)
        try:
            page.wait_for_timeout(10_000)  # a person sets data, I and κ meanwhile; workers warm up
            set_number(page, "Time budget per run (s)", "3")
            first_points = []
            for kappa in KAPPAS:
                set_number(page, "Tolerance κ", kappa)
                settle(page, kappa)
                clicked = time.perf_counter()
                page.get_by_role("button", name="Run").click()
                label = f"idca (κ = {float(kappa):g})"
                page.wait_for_function(first_point(label), timeout=60_000, polling=50)
                first_points.append(time.perf_counter() - clicked)
                wait_runs_done(home)
                page.get_by_text("Download report (HTML)").wait_for(timeout=30_000)
            changes = []
            for kappa in ("0.05", "0.08", "0.11"):  # stored results: nothing runs
                page.wait_for_timeout(2000)  # from a settled page
                changed = time.perf_counter()
                set_number(page, "Tolerance κ", kappa)
                page.get_by_text("Exact metrics (held-out test set").first.wait_for(timeout=30_000)
                page.get_by_text(f"κ = {float(kappa):g} on I").first.wait_for(timeout=30_000)
                changes.append(time.perf_counter() - changed)
            os.killpg(server.pid, 9)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            server, cached_start = start_and_open(page, home, cache)
        finally:
            browser.close()
            stop_runners(home)
            os.killpg(server.pid, 9)
    rows = [
        ("(browser launch, before the server starts)", [launch], ""),
        ("server start → interactive page", [interactive], "< 5"),
        ("  the same, default data cached (as after setup)", [cached_start], "< 5"),
        ("click Run → first plotted trajectory point", first_points, "< 2"),
        ("changed κ (stored result) → page updated", changes, "< 1"),
    ]
    print(f"{'measure':<46}{'median':>8}{'worst':>8}{'target':>8}   each")
    for name, values, target in rows:
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"{name:<46}{statistics.median(values):>8.2f}{max(values):>8.2f}{target:>8}   {each}")


if __name__ == "__main__":
    main()
