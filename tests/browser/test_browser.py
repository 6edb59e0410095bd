"""The app in a real browser: run IDCA on Adult, then DP and EO runs, a κ sweep, the run history
and the report; the verdicts and constrained values on the page are those of the store."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from browser_support import ARTIFACTS, SETTLED, VERDICT

from engine.runs.decision import decisions
from engine.runs.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# a plot is found by text in its title or trace names; its points are read from _fullData
LABEL = "((plot.layout.title || {}).text || '') + (plot._fullData || []).map(t => t.name).join(' ')"
PLOTTED = f"""([text, minimum]) => Array.from(document.querySelectorAll('.js-plotly-plot')).some(
    plot => ({LABEL}).includes(text) && (plot._fullData || []).some(t => t.x && t.x.length >= minimum))"""
POINTS = f"""([text]) => Math.max(0, ...Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(plot => ({LABEL}).includes(text))
    .flatMap(plot => (plot._fullData || []).filter(t => t.mode && t.mode.includes('lines'))
    .map(t => t.x.length)))"""
# the frontier's points: (trace name, x values) of its marker traces
FRONTIER = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(plot => ((plot.layout.title || {}).text || '').includes('frontier'))
    .flatMap(plot => plot._fullData.filter(t => t.mode && t.mode.includes('markers'))
    .map(t => [t.name, Array.from(t.x)]))"""


def sidebar_number(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    page.wait_for_timeout(400)


def choose_family(page, family: str) -> None:
    page.locator("[data-testid='stSelectbox']:has-text('Constraint')").first.click()
    page.get_by_role("option", name=family, exact=True).click()
    page.wait_for_timeout(600)


def toggle_solver(page, name: str, group: str | None = None) -> None:
    """Tick or untick solver `name`, opening its folded `group` of the picker first."""
    box = page.locator("[data-testid='stSidebar']").get_by_text(name, exact=True).first
    if group is not None and not box.is_visible():
        page.locator("[data-testid='stSidebar'] summary", has_text=group).first.click()
        box.wait_for(state="visible")
    box.click()
    page.wait_for_timeout(400)


def run_and_settle(page, quantity: str) -> None:
    page.get_by_role("button", name=re.compile("^Run")).click()
    pattern = VERDICT.format(quantity=re.escape(quantity))
    page.wait_for_function(SETTLED, arg=[pattern], timeout=120_000)
    page.wait_for_timeout(2500)  # the score views of the finished runs


def verdict_on_page(page, quantity: str) -> tuple[str, float, float]:
    """The verdict sentence of the constrained run on its test value: "Meets", "Misses" or
    "Cannot tell", the value and κ; the state is checked against the interval beside it."""
    match = re.search(VERDICT.format(quantity=re.escape(quantity)), page.inner_text("body"))
    assert match, f"no verdict on {quantity} on the page"
    said = match.group(1).split(" κ")[0].split(" at")[0]
    value, low, high, kappa = (float(match.group(i)) for i in range(2, 6))
    assert low <= value <= high
    assert said == ("Meets" if high <= kappa else "Misses" if low > kappa else "Cannot tell")
    return said, value, kappa


def stored_test_value(home, solver: str, family: str) -> float:
    (row,) = [r for r in Store(home).runs() if r.spec.solver == solver and r.spec.family == family]
    return Store(home).metrics(row.id)["test"]["constraint"]


def test_verdicts_and_constrained_values_in_a_browser(server, browser):
    url, home = server
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 3600}, accept_downloads=True)
    page.goto(f"{url}/?interval=5&interval=30")
    page.get_by_text("Adult (UCI)").first.wait_for(timeout=60_000)
    sidebar_number(page, "Tolerance κ", "0.05")
    sidebar_number(page, "Time budget per run (s)", "5")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function(PLOTTED, arg=["surrogate", 2], timeout=60_000)  # live
    page.wait_for_function(SETTLED, arg=[VERDICT.format(quantity="pSP")], timeout=120_000)
    page.get_by_text("Exact metrics, test set first").first.wait_for(timeout=30_000)
    # real per-group step functions: a point per distinct score of a group (over 100 for any
    # model that moved; a 5 s run on a loaded machine may not have, and has as few steps)
    (idca,) = [r.id for r in Store(home).runs() if r.spec.solver == "idca"]
    scores, ids = Store(home).load_scores(idca)
    steps = min(100, max(np.unique(scores[ids == k]).size for k in np.unique(ids)))
    page.wait_for_function(f"(args) => ({POINTS})(args) > {steps}", arg=["CCDF"], timeout=30_000)
    said, value, kappa = verdict_on_page(page, "pSP")
    assert kappa == 0.05 and value == pytest.approx(
        stored_test_value(home, "idca", "pSP"), abs=5e-5
    )
    assert said in ("Meets", "Misses", "Cannot tell")
    assert "Constraint pSP ≤ κ = 0.05 on I = [5%, 30%)" in page.inner_text("body")
    page.screenshot(path=str(ARTIFACTS / "explore-idca.png"), full_page=True)
    on_a_laptop_the_verdicts_and_metrics_start_on_the_first_screen(page)
    with page.expect_download() as download:
        page.get_by_role("button", name="Download report (HTML)").click()
    report = ARTIFACTS / "report.html"
    download.value.save_as(str(report))

    choose_family(page, "DP")
    toggle_solver(page, "idca", group="Paper 003")  # DP's proposed solver is PLADA
    toggle_solver(page, "ssg", group="Paper 003")
    run_and_settle(page, "DP gap")
    said, value, kappa = verdict_on_page(page, "DP gap")
    assert value == pytest.approx(stored_test_value(home, "ssg", "DP"), abs=5e-5)
    assert said in ("Meets", "Misses", "Cannot tell")
    assert "Constraint DP gap ≤ κ = 0.05 (paper 001" in page.inner_text("body")

    choose_family(page, "EO")
    run_and_settle(page, "EO gap")
    verdict_on_page(page, "EO gap")
    page.screenshot(path=str(ARTIFACTS / "explore-eo.png"), full_page=True)

    page.goto(f"{url}/frontier")
    page.get_by_label("κ values", exact=True).wait_for(timeout=60_000)
    page.get_by_label("κ values", exact=True).fill("0.2, 0.1, 0.05, 0.02")
    page.get_by_label("κ values", exact=True).press("Enter")
    sidebar_number(page, "Time budget per run (s)", "3")
    page.get_by_role("button", name="Run sweep").click()
    page.get_by_text("5 of 5 runs finished").wait_for(timeout=180_000)
    page.wait_for_function(PLOTTED, arg=["frontier", 1], timeout=30_000)
    page.wait_for_timeout(1500)
    plotted = dict(page.evaluate(FRONTIER))
    assert len(plotted.pop("unconstrained reference")) == 1
    assert sum(len(x) for x in plotted.values()) == 4  # IDCA's, in its series or marked
    page.screenshot(path=str(ARTIFACTS / "frontier.png"), full_page=True)
    on_a_laptop_the_frontier_starts_on_the_first_screen(page)
    choose_a_point(page, home)

    for name, path in (("runs", "/runs"), ("about", "/about")):
        page.goto(f"{url}{path}")
        page.wait_for_timeout(2500)
        assert page.locator("[data-testid='stException']").count() == 0
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.goto(report.as_uri())
    page.get_by_text("Verdicts").first.wait_for(timeout=30_000)
    assert page.locator(".js-plotly-plot").count() >= 4  # trajectories and the score views
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)


# the frontier chart's plotting area, top and bottom, in page coordinates; and by how many
# pixels the widest element of the main column overflows it, scrolled content (a table's
# columns) left out
LAPTOP_LAYOUT = """() => { const plot = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .find(p => ((p.layout.title || {}).text || '').includes('frontier'));
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const scroller = main.closest('[data-testid="stMain"]') || document.scrollingElement;
    const top = plot.getBoundingClientRect().top + scroller.scrollTop + plot._fullLayout.yaxis._offset;
    const scrolled = e => { for (let a = e.parentElement; a && a !== main; a = a.parentElement) {
        if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(a).overflowX)) return true; }
        return false; };
    const overflow = Math.max(...Array.from(main.querySelectorAll('*')).filter(e => !scrolled(e))
        .map(e => e.getBoundingClientRect().right)) - main.getBoundingClientRect().right;
    return [top, top + plot._fullLayout.yaxis._length, overflow]; }"""


# Explore after a run, scrolled to the top: the top of the first verdict headline and of the
# metrics table, by how many pixels the table's columns overflow its width (0: none hidden),
# and by how many the table reaches past the main column
EXPLORE_LAYOUT = """() => { const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const scroller = main.closest('[data-testid="stMain"]') || document.scrollingElement;
    scroller.scrollTop = 0;
    const headline = Array.from(main.querySelectorAll('p')).find(p =>
        /^(Meets κ on|Misses κ on|Cannot tell at this size)/.test(p.innerText));
    const table = main.querySelector('[data-testid="stDataFrame"]');
    const grid = table.querySelector('.dvn-scroller');
    return [headline.getBoundingClientRect().top, table.getBoundingClientRect().top,
            grid ? grid.scrollWidth - grid.clientWidth : 0,
            table.getBoundingClientRect().right - main.getBoundingClientRect().right]; }"""


def on_a_laptop_the_verdicts_and_metrics_start_on_the_first_screen(page) -> None:
    """At 1280×720, after a run, the constrained run's verdict and the first row of the exact
    metrics are on the first screen, and no column of the table is hidden to its right."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.wait_for_timeout(1500)
    headline, table, hidden, past = page.evaluate(EXPLORE_LAYOUT)
    page.screenshot(path=str(ARTIFACTS / "explore-1280.png"))
    assert headline < 720 - 40, f"the verdict starts at {headline:.0f} px"
    assert table < 720 - 70, f"the metrics table starts at {table:.0f} px"  # header and a row
    assert hidden <= 1 and past <= 1, f"the table hides {hidden:.0f} px, overflows {past:.0f} px"
    page.set_viewport_size({"width": 1400, "height": 3600})
    page.wait_for_timeout(1000)


def on_a_laptop_the_frontier_starts_on_the_first_screen(page) -> None:
    """At 1280×720 at least half of the frontier's plotting area is on the first screen, and
    nothing in the page's column reaches past its right edge unless it scrolls there."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.wait_for_timeout(1500)
    top, bottom, overflow = page.evaluate(LAPTOP_LAYOUT)
    page.screenshot(path=str(ARTIFACTS / "frontier-1280.png"))
    assert 720 - top >= 0.5 * (bottom - top), f"the plotting area spans {top:.0f}–{bottom:.0f} px"
    assert overflow <= 1, f"an element reaches {overflow:.0f} px past the column"
    page.set_viewport_size({"width": 1400, "height": 3600})
    page.wait_for_timeout(1000)


# the page position of the frontier's first point of trace `name` and its run id
POINT = """([name]) => { const plot = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .find(p => ((p.layout.title || {}).text || '').includes('frontier'));
    const trace = plot._fullData.find(t => t.name === name);
    const box = plot.getBoundingClientRect(), xa = plot._fullLayout.xaxis, ya = plot._fullLayout.yaxis;
    return [box.x + xa._offset + xa.l2p(trace.x[0]), box.y + ya._offset + ya.l2p(trace.y[0]),
            trace.customdata[0][0]]; }"""

# the rounded pixel where the frontier draws run [id]'s point, null when it draws none
RUN_POINT = """([id]) => { const plot = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .find(p => ((p.layout.title || {}).text || '').includes('frontier'));
    const xa = plot._fullLayout.xaxis, ya = plot._fullLayout.yaxis;
    for (const t of plot._fullData) { const i = (t.customdata || []).findIndex(c => c[0] === id);
        if (i >= 0) return [Math.round(xa.l2p(t.x[i])), Math.round(ya.l2p(t.y[i]))]; }
    return null; }"""


def clicked(page, run_id: str) -> list[int] | None:
    return page.evaluate(RUN_POINT, [run_id])


def choose_a_point(page, home) -> None:
    """Click the reference's star, then an IDCA point: its case opens; choose it with a note and
    download the decision record, which names the run and its model file's checksum."""
    names = [name for name, _ in page.evaluate(FRONTIER) if name != "unconstrained reference"]
    page.get_by_text("Accuracy–fairness frontier").first.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    x, y, run_id = page.evaluate(POINT, [names[0]])
    page.mouse.click(x, y)
    page.get_by_text("Choose this model", exact=True).first.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)
    assert "Per group, on the test set" in page.inner_text("body")
    page.screenshot(path=str(ARTIFACTS / "frontier-case.png"), full_page=True)
    page.get_by_role("textbox", name="Why this model").fill("the loosest κ our reviewers accept")
    page.get_by_role("button", name="Choose this model").click()
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Download the decision record (HTML)").click()
    record = Path(download.value.path()).read_text()
    # the case that opened is of the run under the click: the point's, or one drawn on it
    store = Store(home)
    (decision,) = [d for row in store.runs() for d in decisions(store, row.id)]
    assert decision.run_id == run_id or clicked(page, run_id) == clicked(page, decision.run_id)
    assert decision.run_id[:8] in record and decision.checksum in record
    assert "the loosest κ our reviewers accept" in record
    (ARTIFACTS / "decision-record.html").write_text(record)


# (solver, split, number of time bins) of each mean line of the benchmark's band figure
BAND_MEANS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .flatMap(plot => (plot._fullData || []).filter(t => t.meta && t.meta.kind === 'mean')
    .map(t => [t.meta.solver, t.meta.split, t.meta.quantity, t.x.length]))"""


def test_a_small_benchmark_study_draws_its_bands(server, browser):
    url, home = server
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 3600})
    query = (
        "family=group_loss_gap&kappa=0.02&model=mlp&hidden=16&solvers=sgd&solvers=ssl_alm"
        "&seconds=3&bench_runs=3&bench_save_seconds=0.25"
    )
    page.goto(f"{url}/benchmark?{query}")
    page.get_by_role("button", name="Run study (6 runs)").click()
    page.get_by_text("6 of 6 runs finished").wait_for(timeout=180_000)
    page.wait_for_function(f"() => ({BAND_MEANS})().length >= 8", timeout=30_000)
    means = page.evaluate(BAND_MEANS)
    page.screenshot(path=str(ARTIFACTS / "benchmark.png"), full_page=True)
    # loss and the one gap row, train and test, for both solvers: a 3 s run spans ~6 bins
    shown = {(solver, split, quantity) for solver, split, quantity, _ in means}
    assert {(s, split, "loss") for s in ("sgd", "ssl_alm") for split in ("train", "test")} <= shown
    assert all(bins >= 5 for *_, bins in means), means
    runs = Store(home).runs()
    assert len(runs) == 6 and all(r.has_model for r in runs)
    assert "Fairness criteria" in page.inner_text("main")


# the titles of the page list in the sidebar, and the main column's width
NAVIGATION = """() => [Array.from(document.querySelectorAll('[data-testid=stSidebarNav] a'))
    .map(a => a.innerText.split('\\n').pop()),
    document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect().width]"""


def test_a_link_to_a_page_opened_first_after_a_start_gets_the_apps_frame(server, browser):
    """The first visit to a fresh server is a link to a page other than Explore (a shared
    Frontier view): the page list names the five pages and the layout is the app's wide one,
    not Streamlit's list of the files in pages/."""
    url, _ = server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/runs")
    page.get_by_text("Runs").first.wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=stSidebarNav] a').length")
    titles, width = page.evaluate(NAVIGATION)
    assert titles == ["Explore", "Frontier", "Benchmark", "Runs", "About"]
    assert width > 900  # the wide layout of app.py's page set-up
