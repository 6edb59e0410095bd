"""App latency in a real browser (Debian's Chromium through Playwright), on Adult.

Prints: seconds from server start to an interactive page (target < 5 s), from clicking Run to the
first plotted trajectory point (target < 2 s), and for the page to reflect a changed κ when that
κ's result is already stored (target < 1 s).

    .venv/bin/python bench/app_latency.py
"""

from __future__ import annotations

import os
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

FIRST_POINT = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).some(plot =>
    (plot._fullData || []).some(t => (t.name || '').includes('surrogate') && t.x && t.x.length >= 1))"""


def set_number(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")


def wait_runs_done(home: Path) -> None:
    store = Store(home)
    while not store.runs() or any(r.status not in FINAL for r in store.runs()):
        time.sleep(0.1)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        home, cache = Path(folder) / "runs", Path(folder) / "cache"
        started = time.perf_counter()
        server, url = start_server(home, cache)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(url)
            page.get_by_role("button", name="Run").wait_for(timeout=60_000)
            interactive = time.perf_counter() - started
            page.wait_for_timeout(10_000)  # a person sets data, I and κ meanwhile; workers warm up
            set_number(page, "Time budget per run (s)", "3")
            page.wait_for_timeout(1000)
            clicked = time.perf_counter()
            page.get_by_role("button", name="Run").click()
            page.wait_for_function(FIRST_POINT, timeout=60_000, polling=50)
            first_point = time.perf_counter() - clicked
            wait_runs_done(home)
            set_number(page, "Tolerance κ", "0.1")
            page.get_by_role("button", name="Run").click()  # now κ = 0.1 is stored too
            page.wait_for_timeout(500)
            wait_runs_done(home)
            changed = time.perf_counter()
            set_number(page, "Tolerance κ", "0.05")
            page.get_by_text("Exact metrics (held-out test set").first.wait_for(timeout=30_000)
            page.get_by_text("κ = 0.05 on I").first.wait_for(timeout=30_000)
            cached = time.perf_counter() - changed
        finally:
            browser.close()
            stop_runners(home)
            os.killpg(server.pid, 9)
    print(f"{'measure':<46}{'seconds':>9}{'target':>9}")
    print(f"{'server start → interactive page':<46}{interactive:>9.2f}{'< 5':>9}")
    print(f"{'click Run → first plotted trajectory point':<46}{first_point:>9.2f}{'< 2':>9}")
    print(f"{'changed κ (stored result) → page updated':<46}{cached:>9.2f}{'< 1':>9}")


if __name__ == "__main__":
    main()
