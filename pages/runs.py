"""Runs: the history in the store, newest first — filter, compare side by side, cancel, re-run,
delete, export. While a run is queued or running the table refreshes itself. Runs that a restart
of the app or of its runner interrupted are named above the table, with a button that queues
them again."""

from __future__ import annotations

import datetime
import functools
import io
import zipfile
from pathlib import Path

import pandas as pd
import streamlit as st

from engine.data.acs import ACSSpec, SyntheticACSSpec
from engine.data.adult import AdultSpec
from engine.data.csv_source import CSVSpec
from engine.errors import UserError
from engine.fairness.families import family_entry
from engine.model_file import model_bytes
from engine.plots import trajectory
from engine.runs import STATUSES, Store
from engine.runs.comparison import (
    RunLine,
    comparison_table,
    finite,
    line_rows,
    quantity_columns,
    shown_quantity,
)
from engine.runs.export import stored_run_model
from engine.runs.fronts import run_front
from engine.runs.quantities import distinct, held_quantity
from engine.runs.results import export_runs, front_frontier, run_quantity, run_verdict
from engine.runs.runner import ensure_runner
from engine.runs.spec import RunSpec
from engine.runs.store import RunRow
from engine.status import ACTIVE, RETRYABLE, RunStatus
from pages.shared.layout import MISSING, compact_page
from pages.shared.views import (
    front_table_view,
    front_words,
    honour_search_view,
    run_label,
)

POLL_SECONDS = 2.0
MODEL_HELP = (
    "the model with its preprocessing (encoding, standardisation, groups), for "
    "`python -m engine predict MODEL CSV`"
)
TABLE = "runs_table"  # the table's widget key: its state is the selection, as row positions
SHOWN_IDS = "runs_table_ids"  # the run ids in the order the table last showed them
PENDING_DELETE = "runs_pending_delete"  # the run ids a Delete waits to have confirmed for
PENDING_RERUN = "runs_pending_rerun"  # the run ids a Re-run of finished runs waits on
NOTICES = "runs_notices"  # what an action did, shown after the rerun it asks for
INTERRUPTED_VERDICT = "interrupted — re-run it"
RERUN_HELP = (
    "queue the selected failed, cancelled or interrupted runs again under their own "
    "settings; finished runs keep their results unless you confirm"
)
VERDICTS = (
    "Verdict: **meets κ** / **misses κ** — the exact test value against κ; **surrogate only** — "
    "the solver's surrogate rows hold but the exact value misses κ; **degenerate** — no better "
    "than always predicting the majority class; **not converged** — a budget ended it."
)
_number = st.column_config.NumberColumn
_text = st.column_config.TextColumn
# the history's columns, which add up to what a 1400 px wide window leaves beside the sidebar
COLUMNS = {
    "id": None,
    "created": _text(width=84),
    "model": _text(width=150, help="solver · model"),
    "data": _text(width=90, help="data source · protected attribute(s)"),
    "quantity": _text(width=80, help="the quantity the run's constraint holds to κ"),
    "κ": _number(format="%g", width=44),
    "I": _text(width=66, help="the percentile interval, for the families defined on one"),
    "verdict": _text(
        width=150, help="the verdict on the test set, and its flags (not converged, diverged)"
    ),
    "test accuracy": _number("test acc.", format="%.4f", width=64),
    "status": _text(width=76),
    "reason": _text(width=140),
}


def main() -> None:
    compact_page()
    st.title("Runs")
    store = Store()
    for show, text in st.session_state.pop(NOTICES, []):
        getattr(st, show)(text)
    if PENDING_DELETE in st.session_state:
        _confirm_delete(store, st.session_state[PENDING_DELETE])
    if PENDING_RERUN in st.session_state:
        _confirm_rerun(store, st.session_state[PENDING_RERUN])
    runs = store.runs(newest_first=True)
    left, right = st.columns(2)
    status = left.multiselect("Status", list(STATUSES), key="filter_status")
    solver = right.multiselect("Solver", sorted({r.spec.solver for r in runs}), key="filter_solver")
    _history(store, status, solver, live=_any_active(runs))


def _any_active(runs: list[RunRow]) -> bool:
    return any(r.status in ACTIVE for r in runs)


def _interrupted_note(store: Store, interrupted: list[str]) -> None:
    """Runs that the app's or the runner's end cut short have no result, through no fault of
    their own: say so above the table, with one button that queues them all again."""
    if not interrupted:
        return
    many, one = _count(len(interrupted)), len(interrupted) == 1
    note, button = st.columns([4, 1], vertical_alignment="center")
    note.warning(
        f"**{many.capitalize()} interrupted**: the app or its runner stopped while "
        f"{'it' if one else 'they'} ran, so there is no result. Re-run "
        f"{'it' if one else 'them'} under the same settings."
    )
    if button.button(
        f"Re-run {many}",
        key="rerun_interrupted",
        type="primary",
        help="queue every interrupted run again under its own settings",
    ):
        _rerun(store, interrupted)


def _history(store: Store, status: list[str], solver: list[str], live: bool) -> None:
    """The table, and what to do with the selected runs; it polls the store while `live`."""

    @st.fragment(run_every=POLL_SECONDS if live else None)
    def history() -> None:
        runs = store.runs(newest_first=True)
        if _any_active(runs) != live:
            st.rerun()  # start or stop polling
        st.caption(
            " · ".join(f"{n} {s}" for s, n in sorted(store.counts().items())) or "No runs yet."
        )
        _interrupted_note(store, [r.id for r in runs if r.status == RunStatus.INTERRUPTED])
        shown = [
            r
            for r in runs
            if (not status or r.status in status) and (not solver or r.spec.solver in solver)
        ]
        if not shown:
            st.info("No runs match. Runs started on the Explore or Frontier page appear here.")
            return
        chosen = _table(store, shown)
        st.caption(VERDICTS)
        if not chosen:
            st.caption("Select rows to compare, cancel, re-run, delete or export runs.")
            return
        _actions(store, chosen)
        _comparison(store, chosen)

    history()


def history_row(store: Store, row: RunRow) -> RunLine:
    """One line of the history: what ran on what, the quantity its constraint holds against κ
    with the verdict on it, accuracy, and how the run stands or ended; its test metrics, from
    which the table reads each quantity's column (`history_frame`)."""
    family = row.spec.family
    metrics = store.metrics(row.id)
    verdict = run_verdict(store, row, metrics=metrics)
    held = held_quantity(row.spec)
    uses_interval = family is not None and family_entry(family).uses_interval
    facts = {
        "id": row.id,
        "created": datetime.datetime.fromtimestamp(row.created).strftime("%d %b %H:%M"),
        "model": model_label(row.spec),
        "data": data_label(row.spec),
        "quantity": held.name if held is not None else "—",
        "κ": row.spec.kappa,
        "I": "[{:.0%}, {:.0%})".format(*row.spec.interval) if uses_interval else "—",
        "verdict": INTERRUPTED_VERDICT if row.status == RunStatus.INTERRUPTED else verdict.summary,
        "test accuracy": finite(metrics.get("test", {}).get("accuracy")),
        "status": row.status,
        "reason": row.reason,
    }
    return RunLine(facts, row.spec, {"test": metrics.get("test", {})}, shown_quantity(row.spec))


def history_frame(lines: list[RunLine]) -> tuple[pd.DataFrame, dict[str, object]]:
    """The history's table: each line's facts with, after its verdict, one column per quantity
    the runs' verdicts speak of ("test pSP", "test DP gap"), each run's value of it on test
    (empty where it stores none); and the configuration of those columns."""
    quantities = distinct([line.shown for line in lines])
    columns = quantity_columns(quantities, ("test",), ())
    config = {
        c.header: _number(
            format="%.4f",
            width=max(64, 7 * len(c.header)),
            help=f"exact {c.quantity.name} on the test set",
        )
        for c in columns
        if c.quantity is not None
    }
    return pd.DataFrame(line_rows(lines, columns, after="verdict")), config


def _line(store: Store, row: RunRow) -> RunLine:
    if row.status in ACTIVE:
        return history_row(store, row)
    return _final_row(str(store.home), row.id, row.finished, store, row)


@st.cache_data(max_entries=20_000, show_spinner=False)
def _final_row(home: str, run_id: str, finished: float, _store: Store, _row: RunRow) -> RunLine:
    """`history_row` of a run that has ended: it no longer changes (a run made again under the
    same id ends at another time), so a refresh of a long history reads only the live runs."""
    return history_row(_store, _row)


def model_label(spec: RunSpec) -> str:
    """The solver and the model: "idca · linear+cross" (with the group cross
    terms of paper 003, Sec. 7.1), "fairret · MLP 64-32"."""
    model = spec.model
    if model.kind == "mlp":
        shape = "MLP " + "-".join(str(h) for h in model.hidden)
    else:
        shape = "linear+cross" if model.cross_terms else "linear"
    return f"{spec.solver} · {shape}"


def data_label(spec: RunSpec) -> str:
    """The source and the protected attributes: "Adult · sex", "ACS income CA+NY 2018 · RAC1P",
    "toy.csv · g"; a classic data set by its kind ("compas")."""
    data = spec.data
    if isinstance(data, AdultSpec):
        source = "Adult"
    elif isinstance(data, ACSSpec):
        source = f"ACS {data.task} {'+'.join(data.states)} {data.year}"
    elif isinstance(data, SyntheticACSSpec):
        source = f"synthetic ACS {data.task} {data.state} {data.year}"
    elif isinstance(data, CSVSpec):
        source = Path(data.path).name
    else:
        source = data.kind
    attributes = "×".join(g.attribute for g in spec.prepare.grouping)
    return f"{source} · {attributes}"


def _table(store: Store, rows: list[RunRow]) -> list[str]:
    """Draw the history; the ids of the selected runs."""
    ids = [r.id for r in rows]
    _keep_selection(ids)
    frame, quantities = history_frame([_line(store, r) for r in rows])
    event = st.dataframe(
        frame,
        hide_index=True,
        column_config={**COLUMNS, **quantities},
        on_select="rerun",
        selection_mode="multi-row",
        key=TABLE,
        placeholder=MISSING,
    )
    return [ids[i] for i in event.selection.rows if i < len(ids)] if event else []


def _keep_selection(ids: list[str]) -> None:
    """A selection is a list of row positions: when runs come, go or are filtered out above the
    selected ones, move the selection with its runs rather than onto the rows now in their
    place (a Delete must never reach runs nobody chose)."""
    before = st.session_state.get(SHOWN_IDS)
    st.session_state[SHOWN_IDS] = ids
    state = st.session_state.get(TABLE)
    if not before or before == ids or not state:
        return
    chosen = {before[i] for i in state["selection"]["rows"] if i < len(before)}
    rows = [position for position, run_id in enumerate(ids) if run_id in chosen]
    st.session_state[TABLE] = {"selection": {"rows": rows, "columns": [], "cells": []}}


def _actions(store: Store, chosen: list[str]) -> None:
    many = _count(len(chosen))
    rows = [store.run(r) for r in chosen]
    active = [r.id for r in rows if r.status in ACTIVE]
    cancel, rerun, delete, as_json, as_csv, model = st.columns([0.8, 0.8, 0.9, 1.3, 1.3, 1.5])
    if cancel.button(
        "Cancel",
        key="cancel",
        disabled=not active,
        help="stop the selected runs that are queued or running",
    ):
        _cancel(store, active)
    _rerun_button(rerun, store, rows)
    if delete.button("Delete…", key="delete", help=f"delete {many} (asks first)"):
        st.session_state[PENDING_DELETE] = chosen
        st.rerun()
    for column, fmt in ((as_json, "json"), (as_csv, "csv")):
        column.download_button(
            f"Export {fmt.upper()} ({many})",
            functools.partial(export_runs, store, chosen, fmt),
            file_name=_file_name("run", chosen, fmt),
            on_click="ignore",
            key=f"export_{fmt}",
        )
    _model_download(model, store, chosen)


def _cancel(store: Store, run_ids: list[str]) -> None:
    """Cancel queued runs at once and ask running ones to stop; the page reruns to show it."""
    after = [store.request_cancel(r) for r in run_ids]
    cancelled, asked = after.count(RunStatus.CANCELLED), after.count(RunStatus.RUNNING)
    said = [
        f"cancelled {_count(cancelled)}" if cancelled else "",
        f"asked {_count(asked)} to stop" if asked else "",
    ]
    _notify("success", "; ".join(s for s in said if s).capitalize() + ".")
    st.rerun()


def _rerun_button(column, store: Store, rows: list[RunRow]) -> None:
    """Re-run queues the selected failed, cancelled and interrupted runs again at once; a run
    that ended with a model is re-run only once the user confirms it (the same settings give the
    same model again, so a re-run loses its result for nothing unless a time budget ended it);
    a queued or running run is on its way already."""
    again = [r.id for r in rows if r.status in RETRYABLE]
    finished = [r.id for r in rows if r.has_model]
    if column.button("Re-run", key="rerun", disabled=not (again or finished), help=RERUN_HELP):
        if finished:
            st.session_state[PENDING_RERUN] = again + finished
            st.rerun()
        else:
            _rerun(store, again)
    if not again and not finished:
        column.caption("Queued or running: on its way already.")


def _rerun(store: Store, run_ids: list[str], replace: bool = False) -> None:
    """Queue the runs again under their own specs and make sure a runner works on them."""
    queued = [r for r in run_ids if store.rerun(r, replace=replace)]
    if queued:
        ensure_runner(store.home)
        _notify("success", f"Queued {_count(len(queued))} again.")
    st.rerun()


def _forget_rerun() -> None:
    st.session_state.pop(PENDING_RERUN, None)


@st.dialog("Re-run runs", on_dismiss=_forget_rerun)
def _confirm_rerun(store: Store, run_ids: list[str]) -> None:
    rows = [store.run(r) for r in run_ids]
    finished = [r.id for r in rows if r.has_model]
    again = [r.id for r in rows if r.status in RETRYABLE]
    st.markdown(
        f"**{_count(len(finished)).capitalize()} with a result** "
        f"{'is' if len(finished) == 1 else 'are'} selected. Re-running replaces "
        "the model, metrics and trajectory; the same settings give the same model "
        "again, unless a time budget ended the run."
    )
    replace, keep = st.columns(2)
    if replace.button(
        f"Re-run {_count(len(finished) + len(again))}", type="primary", key="confirm_rerun"
    ):
        _forget_rerun()
        _rerun(store, again + finished, replace=True)
    if keep.button(
        f"Only the {_count(len(again))} without a result" if again else "Keep them",
        key="keep_results",
    ):
        _forget_rerun()
        _rerun(store, again)


def _model_download(column, store: Store, chosen: list[str]) -> None:
    """The model file (engine.model_file: the model with its preprocessing, for `python -m
    engine predict`) of one finished run, or those of several in one .zip."""
    rows = [store.run(r) for r in chosen]
    models = [
        r.id for r in rows if r.has_model and (store.artifacts(r.id) / "params.npz").is_file()
    ]
    if not models:
        column.caption("No model in the selection.")
        return
    if len(models) == 1:
        row = store.run(models[0])
        content, problem = _cached_model_file(str(store.home), row.id, row.finished, store)
        if problem:
            column.caption(f"No model file: {problem}")
            return
        column.download_button(
            "Download model",
            content,
            file_name=f"model-{row.id}.npz",
            on_click="ignore",
            key="export_model",
            help=MODEL_HELP,
        )
    else:
        column.download_button(
            f"Model files (.zip, {_count(len(models))})",
            functools.partial(models_zip, store, models),
            file_name=_file_name("models", models, "zip"),
            on_click="ignore",
            key="export_model",
            help=MODEL_HELP,
        )
    if len(models) < len(chosen):
        column.caption(f"{len(chosen) - len(models)} selected without a model.")


def model_file(store: Store, run_id: str) -> tuple[bytes, str]:
    """The model file of a finished run, or why there is none (its data changed or went away)."""
    try:
        return model_bytes(stored_run_model(store, run_id)), ""
    except UserError as error:
        return b"", str(error)


@st.cache_data(max_entries=50, show_spinner="Preparing the model file…")
def _cached_model_file(
    home: str, run_id: str, finished: float | None, _store: Store
) -> tuple[bytes, str]:
    """`model_file`, made once per run (a run made again under the same id ends at another
    time)."""
    return model_file(_store, run_id)


def models_zip(store: Store, run_ids: list[str]) -> bytes:
    """A zip of the runs' model files, `model-<run id>.npz` each; a run whose model cannot be
    exported is named, with the reason, in `not-exported.txt`."""
    buffer = io.BytesIO()
    refused = []
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for run_id in run_ids:
            content, problem = model_file(store, run_id)
            if problem:
                refused.append(f"{run_id}: {problem}")
            else:
                archive.writestr(f"model-{run_id}.npz", content)
        if refused:
            archive.writestr("not-exported.txt", "\n".join(refused) + "\n")
    return buffer.getvalue()


def _file_name(stem: str, run_ids: list[str], extension: str) -> str:
    if len(run_ids) == 1:
        return f"{stem}-{run_ids[0]}.{extension}"
    return f"{stem}-{len(run_ids)}-runs.{extension}"


def _forget_delete() -> None:
    st.session_state.pop(PENDING_DELETE, None)


@st.dialog("Delete runs", on_dismiss=_forget_delete)
def _confirm_delete(store: Store, run_ids: list[str]) -> None:
    many = _count(len(run_ids))
    st.markdown(
        f"Delete **{many}**, with their trajectories, metrics and model files? "
        "This cannot be undone."
    )
    st.markdown("\n".join(f"- `{run_id}` {_named(store, run_id)}" for run_id in run_ids))
    confirm, keep = st.columns(2)
    if confirm.button(f"Delete {many}", type="primary", key="confirm_delete"):
        _delete(store, run_ids)
    if keep.button("Keep them", key="keep_runs"):
        _forget_delete()
        st.rerun()


def _named(store: Store, run_id: str) -> str:
    """A run as the delete dialog names it: its label and how it ended."""
    try:
        row = store.run(run_id)
    except UserError:
        return "(no longer stored)"
    return f"{run_label(row.spec)}, {row.status}"


def _delete(store: Store, run_ids: list[str]) -> None:
    """Delete what can be deleted; a queued or running run stays, and the store says why."""
    refused = []
    for run_id in run_ids:
        try:
            store.delete(run_id)
        except UserError as error:
            refused.append(str(error))
    if len(refused) < len(run_ids):
        _notify("success", f"Deleted {_count(len(run_ids) - len(refused))}.")
    for reason in refused:
        _notify("error", reason)
    _forget_delete()
    st.rerun()


def _notify(show: str, text: str) -> None:
    st.session_state.setdefault(NOTICES, []).append((show, text))


def _count(runs: int) -> str:
    return f"{runs} run" if runs == 1 else f"{runs} runs"


def _comparison(store: Store, chosen: list[str]) -> None:
    st.subheader("Side by side")
    frame = side_by_side(store, chosen)
    # wide enough for a model's label and a verdict with its flag: three runs fit a laptop
    widths = {"": _text(width=150), **{run: _text(width=200) for run in frame.columns[1:]}}
    st.dataframe(frame, hide_index=True, width="content", height="content", column_config=widths)
    _fronts(store, chosen)
    for run_id in chosen:
        honour_search_view(store, run_id)
    rows = [store.run(r) for r in chosen]
    runs = [
        trajectory.trajectory_run(
            f"{run_label(row.spec)} [{row.id[:6]}]", row.spec, store.records(row.id)
        )
        for row in rows
    ]
    runs = [run for run in runs if run.records]
    if runs:
        st.plotly_chart(trajectory.trajectory_figure(runs), width="stretch", key="compare")


def side_by_side(store: Store, chosen: list[str]) -> pd.DataFrame:
    """The chosen runs as columns, headed by their ids' first characters, and one row per fact
    or measured column of their comparison table (`comparison_table`): a few runs compared
    fit a laptop's width however many quantities they report. Cells are text: numbers to four
    places (κ as given, seconds to one), "—" where a run has none."""
    table = comparison_table(store, chosen)
    shown = [c for c in table.columns if c.header not in ("run", "solver")]
    frame = pd.DataFrame({"": ["model", *(_ROW_NAMES.get(c.header, c.header) for c in shown)]})
    for run_id, row in zip(chosen, table.rows, strict=True):
        cells = [_cell_text(c.header, row[c.header]) for c in shown]
        frame[run_id[:8]] = [model_label(store.run(run_id).spec), *cells]
    return frame


# the side-by-side rows that are not named by a split and quantity
_ROW_NAMES = {"majority": "majority rate (test)", "seconds": "seconds", "status": "how it ended"}


_FORMATS = {"κ": "{:g}", "seconds": "{:.1f}"}  # every other number to four places


def _cell_text(header: str, value: object) -> str:
    if value is None or value == "":
        return MISSING
    if isinstance(value, float):
        return _FORMATS.get(header, "{:.4f}").format(value)
    return str(value)


def _fronts(store: Store, chosen: list[str]) -> None:
    """The front of each selected run that yields one: its models in the run's order, on the
    test split, with the one the run reports."""
    for run_id in chosen:
        members = run_front(store, run_id)
        if not members:
            continue
        row = store.run(run_id)
        result = front_frontier(row.id, row.spec, members, store.metrics(row.id))
        st.markdown(
            f"**Front of {run_label(row.spec)} [{run_id[:6]}]**: {len(members)} models, "
            "in the run's order, on the test split."
        )
        st.caption(front_words([row.spec.solver]))
        front_table_view(result, run_quantity(row.spec))


main()
