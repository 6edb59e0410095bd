"""Runs: the history in the store — filter, compare side by side, cancel, delete, export."""

from __future__ import annotations

import datetime

import pandas as pd
import streamlit as st

from engine import plots
from engine.errors import UserError
from engine.runs import STATUSES, Store
from engine.runs.results import export_run, metrics_rows
from pages.shared.views import run_label


def table(store: Store, status: list[str], solver: list[str]) -> pd.DataFrame:
    rows = []
    for row in store.runs():
        if status and row.status not in status or solver and row.spec["solver"] not in solver:
            continue
        data = row.spec["data"]
        rows.append({
            "id": row.id,
            "created": datetime.datetime.fromtimestamp(row.created).strftime("%Y-%m-%d %H:%M"),
            "status": row.status,
            "model": run_label(row.spec),
            "data": data.get("kind", ""),
            "I": "[{:.0%}, {:.0%})".format(*row.spec["interval"]),
            "seed": row.spec["seed"],
            "test accuracy": store.metrics(row.id).get("test", {}).get("accuracy"),
            "test pSP": store.metrics(row.id).get("test", {}).get("psp"),
            "reason": row.reason,
        })  # fmt: skip
    return pd.DataFrame(rows)


def main() -> None:
    st.title("Runs")
    store = Store()
    counts = store.counts()
    st.caption(" · ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "No runs yet.")
    left, right = st.columns(2)
    status = left.multiselect("Status", list(STATUSES), key="filter_status")
    solver = right.multiselect("Solver", sorted({r.spec["solver"] for r in store.runs()}),
                               key="filter_solver")  # fmt: skip
    frame = table(store, status, solver)
    if frame.empty:
        st.info("No runs match. Runs started on the Explore or Frontier page appear here.")
        return
    event = st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="multi-row", key="runs_table")  # fmt: skip
    chosen = [frame.iloc[i]["id"] for i in event.selection.rows] if event else []
    if not chosen:
        st.caption("Select rows to compare, cancel, delete or export runs.")
        return
    _actions(store, chosen)
    st.subheader("Side by side")
    st.dataframe(pd.DataFrame(metrics_rows(store, chosen)), hide_index=True, width="stretch")
    runs = [(run_label(store.run(r).spec) + f" [{r[:6]}]", store.records(r)) for r in chosen]
    runs = [(label, records) for label, records in runs if records]
    if runs:
        st.plotly_chart(plots.trajectory_figure(runs), width="stretch", key="compare")


def _actions(store: Store, chosen: list[str]) -> None:
    columns = st.columns(4)
    if columns[0].button("Cancel", key="cancel"):
        said = [f"{r[:8]}: {store.request_cancel(r)}" for r in chosen]
        st.success("; ".join(said))
    if columns[1].button("Delete", key="delete"):
        try:
            for run_id in chosen:
                store.delete(run_id)
            st.success(f"deleted {len(chosen)} run(s)")
            st.rerun()
        except UserError as error:
            st.error(str(error))
    run_id = chosen[0]
    columns[2].download_button("Export JSON", export_run(store, run_id, "json"),
                               file_name=f"run-{run_id}.json", key="export_json")  # fmt: skip
    columns[3].download_button("Export CSV", export_run(store, run_id, "csv"),
                               file_name=f"run-{run_id}.csv", key="export_csv")  # fmt: skip
    params = store.artifacts(run_id) / "params.npz"
    if params.is_file():
        st.download_button("Model file (.npz)", params.read_bytes(), file_name=f"model-{run_id}.npz",
                           key="export_model")  # fmt: skip


main()
