"""A self-contained HTML report for someone who was not at the screen: the configuration in words,
a verdict on each run, the exact metrics, the trajectories and the figures, in one file that opens
in any browser without FairFront (plotly.js is embedded once). A missing number prints "—"."""

from __future__ import annotations

import datetime
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from engine.plots.trajectory import TrajectoryAxis, trajectory_figure, trajectory_run
from engine.runs.comparison import comparison_table
from engine.runs.describe import Setting, describe_spec, run_label, split_settings
from engine.runs.honour_search import HonourSearch, honour_search, search_table, search_titles
from engine.runs.results import run_verdict
from engine.runs.store import Store
from engine.solvers.records import RecordKind
from engine.verdict import Verdict

MISSING = "—"
_MEETS = {True: "✓", False: "✗", None: MISSING}


@dataclass(frozen=True)
class ReportRun:
    """One run's block: its label, the verdict on it, the settings it does not share with the
    other runs of the report (e.g. its solver and κ), and the κ′ search of a run that honours κ
    (`engine.runs.honour_search`), None for a run that does not."""

    label: str
    verdict: Verdict
    settings: Sequence[Setting] = ()
    search: HonourSearch | None = None


def html_report(
    title: str,
    configuration: Sequence[Setting],
    runs: Sequence[ReportRun],
    rows: Sequence[dict[str, Any]],
    figures: Sequence[tuple[str, go.Figure]],
    notes: Sequence[str] = (),
) -> str:
    """The page: `configuration` as (setting, value) rows, one verdict block per run, the
    metrics `rows` as a table, then each (caption, figure)."""
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>{datetime.datetime.now():%Y-%m-%d %H:%M} · FairFront</p>",
    ]
    parts += [f"<p class='note'>{html.escape(n)}</p>" for n in notes]
    parts.append("<h2>Configuration</h2>" + _settings_table(configuration))
    if runs:
        parts.append("<h2>Verdicts</h2>" + "".join(_verdict_block(run) for run in runs))
    if rows:
        parts.append("<h2>Exact metrics</h2>" + _table(rows))
    for index, (caption, figure) in enumerate(figures):
        plot = pio.to_html(
            figure, include_plotlyjs="inline" if index == 0 else False, full_html=False
        )
        parts.append(f"<h2>{html.escape(caption)}</h2>{plot}")
    return _PAGE.format(title=html.escape(title), body="\n".join(parts))


def store_report(
    store: Store,
    run_ids: Sequence[str],
    title: str,
    figures: Sequence[tuple[str, go.Figure]] = (),
    x: TrajectoryAxis = "iteration",
) -> str:
    """The report of stored runs: the settings they share, one verdict block per run with its
    own settings, their exact metrics, their trajectories over `x`, then `figures`."""
    rows = [store.run(run_id) for run_id in run_ids]
    labels = [run_label(row.spec) for row in rows]
    # a run without constraint shows the quantity its constrained neighbours are held to
    view = next((r.spec.constraint for r in rows if r.spec.constraint is not None), None)
    shared, own = split_settings([describe_spec(row.spec) for row in rows])
    blocks = [
        ReportRun(
            label,
            run_verdict(store, row, view),
            settings,
            honour_search(store.records(row.id, kind=RecordKind.HONOUR)),
        )
        for label, row, settings in zip(labels, rows, own, strict=True)
    ]
    table = comparison_table(store, list(run_ids), view)
    metrics = [
        {"model": label, **line, "run": line["run"][:8]}
        for label, line in zip(labels, table.rows, strict=True)
    ]
    runs = [
        trajectory_run(label, row.spec, store.records(row.id), view)
        for label, row in zip(labels, rows, strict=True)
    ]
    trajectories = (
        "Trajectories (surrogate: the solver's view; exact: the metrics)",
        trajectory_figure(runs, x),
    )
    return html_report(title, shared, blocks, metrics, [trajectories, *figures])


def _verdict_block(run: ReportRun) -> str:
    verdict = run.verdict
    findings = "".join(f"<li>{html.escape(f)}</li>" for f in verdict.findings)
    settings = _settings_table(run.settings) if run.settings else ""
    search = "" if run.search is None else _search_block(run.search, verdict.quantity)
    return (
        f"<div class='verdict {html.escape(str(verdict.level))}'>"
        f"<h3>{html.escape(run.label)} <span class='badge'>{html.escape(verdict.summary)}"
        f"</span></h3><ul>{findings}</ul>{search}{settings}</div>"
    )


def _search_block(search: HonourSearch, quantity: str) -> str:
    """A run's search: what it did in words, then one row per solve, the reported one ◆."""
    titles = search_titles(search, quantity)
    marks = {
        "meets_kappa": lambda v: _MEETS[v],
        "chosen": lambda v: "◆" if v else "",
        "kappa_prime": lambda v: f"{v:.4g}",
        "temperature": lambda v: f"{v:.3g}",
    }
    # a number the solve has none of stays None, which `_text` shows as "—"
    rows = [
        {
            titles[key][0]: value
            if value is None and key != "chosen"
            else marks.get(key, lambda v: v)(value)
            for key, value in row.items()
        }
        for row in search_table(search)
    ]
    said = f"Holding κ on {search.split_words}" + (
        f": {search.sentence}." if search.sentence else ""
    )
    return f"<p class='search'>{html.escape(said)}</p>{_table(rows)}"


def _settings_table(settings: Sequence[Setting]) -> str:
    return _table([{"setting": name, "value": value} for name, value in settings])


def _table(rows: Sequence[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_text(row.get(c)))}</td>" for c in columns) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _text(value: Any) -> str:
    """A cell: numbers to four decimals, "—" for a missing one (None, NaN or infinite)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return MISSING
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }}
th, td {{ border: 1px solid #ddd; padding: 0.3rem 0.6rem; text-align: right; }}
th {{ background: #f4f4f4; }} td:first-child, th:first-child {{ text-align: left; }}
.meta, .note {{ color: #666; }}
.verdict {{ border-left: 6px solid #888; padding: 0.2rem 1rem; margin: 0.8rem 0; }}
.verdict h3 {{ margin: 0.4rem 0; }}
.badge {{ font-size: 0.8rem; padding: 0.1rem 0.5rem; border-radius: 0.6rem; color: #fff;
          background: #888; vertical-align: middle; }}
.verdict.ok {{ border-color: #1a7f37; }} .ok .badge {{ background: #1a7f37; }}
.verdict.info {{ border-color: #0969da; }} .info .badge {{ background: #0969da; }}
.verdict.warning {{ border-color: #bf8700; }} .warning .badge {{ background: #bf8700; }}
.verdict.error {{ border-color: #cf222e; }} .error .badge {{ background: #cf222e; }}
</style></head><body>
{body}
</body></html>
"""
