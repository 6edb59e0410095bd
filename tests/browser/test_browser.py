"""The app in a real browser: choose Adult, set I and κ, run IDCA, see real data plotted."""

from __future__ import annotations

import pytest
from browser_support import ARTIFACTS

pytestmark = pytest.mark.browser

# a plot is found by text in its title or trace names; its points are read from _fullData
LABEL = "((plot.layout.title || {}).text || '') + (plot._fullData || []).map(t => t.name).join(' ')"
PLOTTED = f"""([text, minimum]) => Array.from(document.querySelectorAll('.js-plotly-plot')).some(
    plot => ({LABEL}).includes(text) && (plot._fullData || []).some(t => t.x && t.x.length >= minimum))"""
POINTS = f"""([text]) => Math.max(0, ...Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(plot => ({LABEL}).includes(text))
    .flatMap(plot => (plot._fullData || []).filter(t => t.mode && t.mode.includes('lines'))
    .map(t => t.x.length)))"""


def sidebar_number(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    page.wait_for_timeout(300)


def test_run_idca_on_adult_in_a_browser(server, browser):
    url, _ = server
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1500, "height": 2600})
    page.goto(f"{url}/?interval=5&interval=30")
    page.get_by_text("Adult (UCI)").first.wait_for(timeout=60_000)
    sidebar_number(page, "Tolerance κ", "0.05")
    sidebar_number(page, "Time budget per run (s)", "6")
    page.get_by_role("button", name="Run").click()
    page.wait_for_function(PLOTTED, arg=["surrogate", 2], timeout=60_000)  # live
    assert page.evaluate(POINTS, ["surrogate"]) >= 2
    page.get_by_text("Exact metrics (held-out test set").first.wait_for(timeout=90_000)
    page.wait_for_function(PLOTTED, arg=["CCDF", 100], timeout=30_000)
    assert page.evaluate(POINTS, ["CCDF"]) > 100  # real per-group step functions
    page.screenshot(path=str(ARTIFACTS / "explore.png"), full_page=True)
    page.goto(f"{url}/frontier")
    page.get_by_label("κ values", exact=True).wait_for(timeout=60_000)
    page.get_by_label("κ values", exact=True).fill("0.2, 0.05")
    page.get_by_label("κ values", exact=True).press("Enter")
    sidebar_number(page, "Time budget per run (s)", "3")
    page.get_by_role("button", name="Run sweep").click()
    page.get_by_text("3 of 3 runs finished").wait_for(timeout=120_000)
    page.wait_for_function(PLOTTED, arg=["Accuracy–fairness frontier", 1], timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "frontier.png"), full_page=True)
    for name, path in (("runs", "/runs"), ("about", "/about")):
        page.goto(f"{url}{path}")
        page.wait_for_timeout(2500)
        assert page.locator("[data-testid='stException']").count() == 0
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.goto(f"{url}/runs")
    page.get_by_text("done").first.wait_for(timeout=30_000)
