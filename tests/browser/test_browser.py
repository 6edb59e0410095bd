"""The app in a real browser: choose Adult, set I and κ, run IDCA, see real data plotted."""

from __future__ import annotations

import pytest
from browser_support import ARTIFACTS

pytestmark = pytest.mark.browser

POINTS_IN_PLOT = """([index, minimum]) => {
    const plots = document.querySelectorAll('.js-plotly-plot');
    if (plots.length <= index) return false;
    const data = plots[index]._fullData || [];
    return data.some(trace => trace.x && trace.x.length >= minimum);
}"""


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
    page.wait_for_function(POINTS_IN_PLOT, arg=[0, 2], timeout=60_000)  # live trajectory
    trajectory_points = page.evaluate(
        "() => Math.max(...document.querySelector('.js-plotly-plot')._fullData.map(t => t.x.length))"
    )
    assert trajectory_points >= 2
    page.get_by_text("Exact metrics (held-out test set").first.wait_for(timeout=90_000)
    page.wait_for_function(POINTS_IN_PLOT, arg=[1, 100], timeout=30_000)  # the CDF figure
    cdf_points = page.evaluate(
        "() => document.querySelectorAll('.js-plotly-plot')[1]._fullData"
        ".filter(t => t.mode && t.mode.includes('lines')).map(t => t.x.length)"
    )
    assert max(cdf_points) > 100  # real per-group step functions, not an empty frame
    page.screenshot(path=str(ARTIFACTS / "explore.png"), full_page=True)
    for name, path in (("frontier", "/frontier"), ("runs", "/runs"), ("about", "/about")):
        page.goto(f"{url}{path}")
        page.wait_for_timeout(2500)
        assert page.locator("[data-testid='stException']").count() == 0
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.goto(f"{url}/runs")
    page.get_by_text("done").first.wait_for(timeout=30_000)
