"""The Benchmark page at a laptop's 1280×720 and at 1400×1000, after a small study: its
final-models tables fit the main column without scrolling sideways, and the labels of its
spider chart stand clear of each other and inside the chart."""

from __future__ import annotations

import pytest
from browser_support import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# two solvers, two seeds each, a linear model for two seconds: four quick runs
QUERY = (
    "family=group_loss_gap&kappa=0.02&model=linear&solvers=sgd&solvers=ssl_alm&seconds=2"
    "&bench_runs=2&bench_save_seconds=0.5"
)
VIEWPORTS = ((1280, 720), (1400, 1000))
GAP = 2  # px: labels closer than this run into each other

# Each final-models table (the tables between the heading "Final models" and the next one)
# against the main column: its box, and its widest content against what it shows. A static
# table (st.table) scrolls inside its element when it is wider; Streamlit's dataframe draws its
# cells on a canvas inside a scroller whose scrollWidth exceeds its clientWidth when columns
# are cut off on the right.
TABLES = """() => {
    const main = document.querySelector('[data-testid=stMainBlockContainer]');
    const headings = Array.from(main.querySelectorAll('h1, h2, h3'));
    const start = headings.findIndex(h => h.textContent.includes('Final models'));
    if (start < 0) return [];
    const [first, next] = [headings[start], headings[start + 1]];
    const after = (a, b) => a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING;
    const column = main.getBoundingClientRect();
    return Array.from(main.querySelectorAll('[data-testid=stTable], [data-testid=stDataFrame]'))
        .filter(table => after(first, table) && (!next || after(table, next)))
        .map(table => {
            const scroller = table.querySelector('.dvn-scroller') || table;
            const inner = table.dataset.testid === 'stTable'
                ? table.querySelector('table') || table : table;
            const box = table.getBoundingClientRect(), drawn = inner.getBoundingClientRect();
            return {kind: table.dataset.testid, left: Math.min(box.left, drawn.left),
                    right: Math.max(box.right, drawn.right), mainLeft: column.left,
                    mainRight: column.right, scrollWidth: scroller.scrollWidth,
                    clientWidth: scroller.clientWidth};
        });
}"""
# The spider chart's text: the radial axis's tick labels, the criteria on the angular axis, the
# splits' titles and the legend, as boxes on the screen; the pairs closer than `gap` px (the
# legend's own entries aside) and the labels that stick out of the chart.
SPIDER_LABELS = """([gap]) => {
    const plot = Array.from(document.querySelectorAll('.js-plotly-plot'))
        .find(p => p.querySelector('.polarlayer .angular-axis text'));
    if (!plot) return null;
    const frame = plot.getBoundingClientRect();
    const kinds = {radial: '.polarlayer .radial-axis text', angular: '.polarlayer .angular-axis text',
                   title: '.annotation text', legend: '.legend text'};
    const boxes = [];
    for (const [kind, selector] of Object.entries(kinds))
        for (const text of plot.querySelectorAll(selector)) {
            const box = text.getBoundingClientRect();
            if (text.textContent && box.width > 0)
                boxes.push({kind, text: text.textContent, left: box.left, right: box.right,
                            top: box.top, bottom: box.bottom});
        }
    const near = [];
    for (let i = 0; i < boxes.length; i++)
        for (let j = i + 1; j < boxes.length; j++) {
            const a = boxes[i], b = boxes[j];
            if (a.kind === 'legend' && b.kind === 'legend') continue;
            if (a.left < b.right + gap && b.left < a.right + gap
                && a.top < b.bottom + gap && b.top < a.bottom + gap)
                near.push(`${a.kind} ${a.text} × ${b.kind} ${b.text}`);
        }
    const outside = boxes.filter(b => b.left < frame.left || b.right > frame.right
        || b.top < frame.top || b.bottom > frame.bottom).map(b => `${b.kind} ${b.text}`);
    const counts = {};
    for (const box of boxes) counts[box.kind] = (counts[box.kind] || 0) + 1;
    return {near, outside, counts};
}"""


def test_the_benchmark_tables_and_spider_fit_a_laptop_screen(server, browser):
    url, _ = server
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{url}/benchmark?{QUERY}")
    page.get_by_role("button", name="Run study (4 runs)").click(timeout=90_000)
    page.get_by_text("4 of 4 runs finished").wait_for(timeout=90_000)
    page.wait_for_function(
        f"() => document.querySelector('.polarlayer .angular-axis text') && ({TABLES})().length",
        timeout=30_000,
    )
    for width, height in VIEWPORTS:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(1_000)  # the dataframes and the chart size themselves again
        tables = page.evaluate(TABLES)
        assert tables, "no final-models table"
        for table in tables:
            assert table["scrollWidth"] <= table["clientWidth"] + 1, (width, height, table)
            assert table["mainLeft"] <= table["left"] and table["right"] <= table["mainRight"] + 1
        labels = page.evaluate(SPIDER_LABELS, [GAP])
        assert labels is not None, "no spider chart"
        assert labels["counts"].get("angular") == 10, labels  # five criteria, train and test
        assert labels["counts"].get("radial", 0) >= 4, labels  # at least two labels a panel
        assert labels["near"] == [], (width, height, labels["near"])
        assert labels["outside"] == [], (width, height, labels["outside"])
        page.get_by_role("heading", name="Final models").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"benchmark-tables-{width}x{height}.png"))
        page.locator("[data-testid=stPlotlyChart]").filter(
            has=page.locator(".polarlayer .angular-axis text")
        ).scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"benchmark-spider-{width}x{height}.png"))
