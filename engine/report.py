"""A self-contained HTML report: configuration, exact metrics and figures in one file that opens
in any browser without FairFront (plotly.js is embedded once)."""

from __future__ import annotations

import datetime
import html
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio


def html_report(
    title: str,
    configuration: dict[str, Any],
    rows: list[dict[str, Any]],
    figures: list[tuple[str, go.Figure]],
    notes: list[str] | None = None,
) -> str:
    parts = [f"<h1>{html.escape(title)}</h1>",
             f"<p class='meta'>{datetime.datetime.now():%Y-%m-%d %H:%M} · FairFront</p>"]  # fmt: skip
    parts += [f"<p class='note'>{html.escape(n)}</p>" for n in notes or []]
    parts.append("<h2>Configuration</h2>" + _table([{"setting": k, "value": _text(v)}
                                                   for k, v in configuration.items()]))  # fmt: skip
    if rows:
        parts.append("<h2>Exact metrics</h2>" + _table(rows))
    for index, (caption, figure) in enumerate(figures):
        plot = pio.to_html(figure, include_plotlyjs="inline" if index == 0 else False,
                           full_html=False)  # fmt: skip
        parts.append(f"<h2>{html.escape(caption)}</h2>{plot}")
    return _PAGE.format(title=html.escape(title), body="\n".join(parts))


def _table(rows: list[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_text(row.get(c)))}</td>" for c in columns) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _text(value: Any) -> str:
    if value is None:
        return "—"
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
</style></head><body>
{body}
</body></html>
"""
