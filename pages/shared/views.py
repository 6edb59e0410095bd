"""Views of runs from the store: live status and trajectories, score distributions, metrics."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import plots
from engine.fairness.distributions import candidate_intervals, interval_scan
from engine.runs import Store
from engine.runs.results import metrics_rows

ACTIVE = ("queued", "running")


def run_label(spec: dict) -> str:
    constraint = spec.get("constraint")
    if spec["solver"] == "unconstrained" or constraint is None:
        return "unconstrained"
    return f"{spec['solver']} (κ = {constraint['kappa']:g})"


def live_phase(store: Store, run_ids: list[str]) -> str:
    """'starting' while a queued or running run has recorded nothing yet, 'running' while any is
    queued or running, else 'idle'."""
    active = [r for r in run_ids if store.run(r).status in ACTIVE]
    if any(store.progress(r)[0] == 0 for r in active):
        return "starting"
    return "running" if active else "idle"


def status_line(store: Store, run_ids: list[str]) -> None:
    """One status badge per run, with the iteration a running one has reached."""
    rows = [store.run(r) for r in run_ids]
    columns = st.columns(max(len(rows), 1))
    for column, row in zip(columns, rows, strict=False):
        _, last = store.progress(row.id) if row.status == "running" else (0, None)
        progress = f" · iteration {last:,}" if last is not None else ""
        colour = {"done": "green", "running": "blue", "queued": "gray", "diverged": "orange"}
        badge = f":{colour.get(row.status, 'red')}-badge[{row.status}]"
        column.markdown(f"**{run_label(row.spec)}** {badge}{progress}")
        if row.status in ("failed", "interrupted", "diverged", "cancelled") and row.reason:
            column.caption(row.reason)
        elif row.budget_end is not None:
            column.caption(f"Stopped by its {row.budget_end}, before converging: a longer run "
                           "may give another model (and realised fairness nearer κ).")  # fmt: skip


def trajectories(store: Store, run_ids: list[str]) -> None:
    """The runs' trajectories so far; empty panels while they are queued or starting, so that the
    chart is ready to draw the first point as soon as it is recorded."""
    rows = [store.run(r) for r in run_ids]
    # a finished run's trajectory never changes: key the cache on how far each run has got
    progress = tuple((r.id, r.status, r.finished, store.progress(r.id)[0]) for r in rows)
    st.plotly_chart(_trajectory_figure(str(store.home), progress), key="trajectory",
                    width="stretch")  # fmt: skip


@st.cache_resource(max_entries=16, show_spinner=False)
def _trajectory_figure(home: str, progress: tuple):
    store = Store(home)
    runs = [(run_label(store.run(run_id).spec), store.records(run_id)) for run_id, *_ in progress]
    return plots.trajectory_figure([(label, records) for label, records in runs if records])


def metrics_table(store: Store, run_ids: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(metrics_rows(store, run_ids))
    frame.insert(1, "model", [run_label(store.run(r).spec) for r in run_ids])
    st.dataframe(frame.drop(columns=["run"]), hide_index=True, width="stretch")
    return frame


def finished(store: Store, run_ids: list[str]) -> list[str]:
    done = [r for r in run_ids if store.run(r).status in ("done", "diverged")]
    return [r for r in done if (store.artifacts(r) / "scores.npz").is_file()]


def score_figures(
    store: Store,
    run_id: str,
    reference_id: str | None,
    group_names: tuple[str, ...],
    interval: tuple[float, float],
    kappa: float,
) -> list[tuple[str, object]]:
    """CDFs with the interval band, the rank–rank curve and the densities of one run (and the
    unconstrained reference beside it), as (caption, figure) pairs; built once per finished run
    and shared by every rerun and session (never modified: drawing a figure copies it)."""
    versions = tuple(store.run(r).finished for r in (run_id, reference_id) if r is not None)
    return _score_figures(str(store.home), run_id, reference_id, tuple(group_names), interval,
                          kappa, versions)  # fmt: skip


@st.cache_resource(max_entries=32, show_spinner=False)
def _score_figures(home, run_id, reference_id, group_names, interval, kappa, versions):
    store = Store(home)
    scores, groups = store.load_scores(run_id)
    label = run_label(store.run(run_id).spec)
    alpha, beta = interval
    figures = [
        (f"Score CCDF per group — {label}", plots.cdf_figure(scores, groups, group_names, alpha, beta,
                                                            kappa=kappa)),
        (f"Rank–rank curve — {label}", plots.rank_rank_figure(scores, groups, group_names, alpha,
                                                              beta, kappa)),
    ]  # fmt: skip
    models = [(label, scores, groups)]
    if reference_id is not None and reference_id != run_id:
        ref_scores, ref_groups = store.load_scores(reference_id)
        models.insert(0, ("unconstrained", ref_scores, ref_groups))
    figures.append(
        ("Score densities per group", plots.density_figure(models, group_names, alpha, beta))
    )
    return figures


def interval_scan_figure(store: Store, reference_id: str):
    """The App. B helper figure for the unconstrained model's test scores (cached per run)."""
    return _interval_scan_figure(str(store.home), reference_id, store.run(reference_id).finished)


@st.cache_resource(max_entries=8, show_spinner=False)
def _interval_scan_figure(home: str, reference_id: str, version: float | None):
    scores, groups = Store(home).load_scores(reference_id)
    return plots.interval_scan_figure(interval_scan(scores, groups, 0.0, candidate_intervals()))
