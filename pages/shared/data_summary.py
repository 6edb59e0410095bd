"""The prepared data at a glance: rows, label, warnings (small groups, columns that leak the label),
notes, and each group's size and positive-label rate (mean label, for a real-valued label) per
split (a chart, and a table under it)."""

from __future__ import annotations

import streamlit as st

from engine.data.prepared import Prepared, group_table, summary_statistic
from engine.plots import data_summary as summary_figures


def data_summary(prepared: Prepared, chart: bool = True, folded: bool = False) -> None:
    """The summary line, warnings and notes, then the groups' chart and table; `folded` puts
    the chart and table in one folded expander (once there are results, they come first)."""
    summary = prepared.summary()
    rows = summary["rows"]
    st.markdown(
        f"**{summary['dataset']}** — {rows['train']:,} training, {rows['val']:,} "
        f"validation, {rows['test']:,} test rows; label: {summary['label']}."
    )
    if summary["synthetic"]:
        st.warning("Synthetic data: generated records in the census layout, not real people.")
    for warning in summary["warnings"]:
        st.warning(warning)
    for note in summary["notes"]:
        st.caption(f"Note: {note}.")
    rates = summary_statistic(summary) == "label_rate"
    what = "label rates" if rates else "mean labels"
    if folded:
        groups = st.expander(
            f"Groups: sizes and {what} per split", key="groups_folded", on_change="rerun"
        )
        if groups.open:  # drawn only when opened: a folded chart still costs a redraw
            with groups:
                if chart:
                    st.plotly_chart(
                        _groups_figure(prepared.key, summary), width="stretch", key="groups"
                    )
                st.markdown(groups_markdown(summary))
        return
    if chart:
        st.plotly_chart(_groups_figure(prepared.key, summary), width="stretch", key="groups")
    else:  # the chart's room, so that nothing below moves when it arrives
        st.container(height=summary_figures.GROUPS_FIGURE_HEIGHT, border=False)
    with st.expander(f"Groups and {what} as a table"):
        st.markdown(groups_markdown(summary))


@st.cache_resource(max_entries=8, show_spinner=False)
def _groups_figure(key: str, _summary: dict):
    """One figure per prepared data set (`key` names it), shared by every rerun; never modified."""
    return summary_figures.groups_figure(_summary)


def groups_markdown(summary: dict) -> str:
    """The groups table as Markdown: drawn at once, without the data-grid component; rates as
    percentages, mean labels as numbers."""
    rows = group_table(summary)
    rates = summary_statistic(summary) == "label_rate"
    header = "| " + " | ".join(rows[0]) + " |\n|" + " ---: |" * len(rows[0])
    lines = ["| " + " | ".join(_cell(v, rates) for v in row.values()) + " |" for row in rows]
    return "\n".join([header, *lines])


def _cell(value, rates: bool) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.1%}" if rates else f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value).replace("|", "\\|")
