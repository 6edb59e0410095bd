"""Benchmark: many seeded runs of each solver under one wall-clock budget, every saved iterate
re-evaluated on the full train and test sets, shown as mean and Q1–Q3 bands over time, per-group
predicted probabilities, a spider chart of paper 000's criteria, a table with the best values
marked and, for a hyper-parameter grid, heat maps (paper 000, §3–4)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

from engine.benchmark import figures
from engine.benchmark.study import (
    USABLE,
    band_bounds,
    bands_frame,
    criteria_frame,
    first_runs,
    grid_frame,
    grid_heatmap,
    group_bands,
    load_study,
    spider_values,
    study_bands,
    study_grid,
    study_points,
    study_variants,
    verdict_words,
)
from engine.benchmark.tables import final_summary, final_tables
from engine.errors import UserError
from engine.runs import RunSpec, Store, parse_grid, submit_sweep
from engine.runs.submit import submit
from engine.status import ACTIVE, FINAL
from pages.shared.data_controls import data_controls, prepared_data
from pages.shared.layout import compact_page
from pages.shared.problem_controls import base_spec, problem_controls
from pages.shared.state import initial, remember
from pages.shared.tuning_view import TunedView, tuned_view, tuning_lines
from pages.shared.views import trajectories

EXPORT_FORMATS = ("png", "svg")
STUDY_AFTER_TUNING = "bench_study_after_tuning"  # Run was pressed while the trials were to run
BEST_STYLE = "font-weight: bold; background-color: #e6f4ea"
NO_BREAK = "\u00a0"


def main() -> None:
    compact_page()
    st.title("Benchmark")
    st.caption(
        "Many seeded runs of each solver under one time budget; every saved iterate is "
        "re-evaluated on the full train and test sets, off the solver's clock (paper 000)."
    )
    store = Store()
    try:
        data_spec, prepare = data_controls()
        group_names = prepared_data(data_spec, prepare).group_names
        problem = problem_controls(n_groups=len(group_names))
        st.sidebar.header("Study")
        initial("bench_runs", 5, int)
        initial("bench_save_seconds", 0.1, float)
        initial("bench_grid", "")
        runs = int(st.sidebar.number_input("Runs per solver (seeds)", 0, 50, key="bench_runs"))
        if runs < 1:
            raise UserError("a study needs at least one run per solver")
        save_seconds = float(
            st.sidebar.number_input(
                "Save the iterate every … s of solver time",
                0.01,
                60.0,
                key="bench_save_seconds",
                format="%g",
                help="each saved iterate is evaluated on train and test, off the "
                "solver's clock; paper 000 saves every 100 iterations, a few points per 0.5 s bin "
                "whatever the solver's speed",
            )
        )
        grid_text = st.sidebar.text_area(
            "Hyper-parameter grid (optional)",
            key="bench_grid",
            help="one setting per line, e.g. option.rho=0.5,1 or model.hidden=64x32,32; "
            "`python -m engine sweep --help` lists every setting",
        )
        initial("bench_tune", False)
        tune = st.sidebar.checkbox(
            "Tune each solver first",
            key="bench_tune",
            help="each solver whose paper gives a grid (`python -m engine solvers`) runs one "
            "trial per setting on the first seed, and the study runs with the options its "
            "rule picks on validation (paper 000 tuned so, App. B)",
        )
        remember("bench_runs", "bench_save_seconds", "bench_grid", "bench_tune")
        if not problem.solvers:
            raise UserError("choose at least one solver that can run this constraint and model")
        base = base_spec(data_spec, prepare, problem)
        base = dataclasses.replace(
            base, budget=dataclasses.replace(base.budget, save_seconds=save_seconds)
        )
        extra = parse_grid([line for line in grid_text.splitlines() if line.strip()])
        grid = study_grid(problem.solvers, runs, extra)
        firsts = study_points(base, {"solver": list(problem.solvers)}, configs=problem.configs)
        tuning = tuned_view(store, [spec for _, spec in firsts], tune)
        points = study_points(base, grid, configs={**problem.configs, **tuned_configs(tuning)})
    except UserError as error:
        st.error(str(error))
        return
    specs = [spec for _, spec in points]
    tuned = all(t.tuned is not None for t in tuning.tunings)
    label = f"Run study ({len(specs)} runs)" if tuned else "Tune, then run the study"
    if st.sidebar.button(label, type="primary", key="bench_run"):
        if tuned:
            submit_sweep(f"benchmark: {len(specs)} runs", specs, grid, store, workers=2)
        else:  # the study follows once every solver's options are chosen
            submit([t for tunings in tuning.tunings for t in tunings.trials], store)
            st.session_state[STUDY_AFTER_TUNING] = True
            st.rerun()
    if tuned and st.session_state.pop(STUDY_AFTER_TUNING, False):
        submit_sweep(f"benchmark: {len(specs)} runs", specs, grid, store, workers=2)
    tuning_lines(store, tuning)
    if not tuned:
        started = any(t.stored for t in tuning.tunings)
        st.info(
            "The study runs once the tuning has chosen each solver's options."
            if started
            else f"Press **{label}**: each solver's trials first, then the study with the "
            "options its paper's rule picks."
        )
        return
    _view(store, points, grid, group_names)


def tuned_configs(view: TunedView) -> dict[str, dict]:
    """Each tuned solver's options, chosen by its paper's rule (none before its trials end)."""
    chosen = [t.tuned.final for t in view.tunings if t.tuned is not None]
    return {final.solver: dict(final.config) for final in chosen if final is not None}


def _view(store: Store, points, grid, group_names: tuple[str, ...]) -> None:
    variants = study_variants(points, grid)
    spec = points[0][1]  # the study's constraint and objective, shared by its runs
    known = [r for r in store.runs() if r.id in variants]
    if not known:
        st.info(
            "Press **Run study**: the figures fill in as runs finish, and runs computed "
            "before with the same settings are reused."
        )
        return
    active = any(r.status in ACTIVE for r in known)
    export = st.segmented_control(
        "Figure export", EXPORT_FORMATS, key="bench_export", default="png"
    )

    @st.fragment(run_every=2.0 if active else None)
    def live() -> None:
        runs = load_study(store, variants)
        done = [r for r in runs if r.metrics]
        st.progress(len(done) / len(variants), text=f"{len(done)} of {len(variants)} runs finished")
        failed = [r for r in runs if r.status in FINAL and r.status not in USABLE]
        if failed:
            st.warning(
                f"{len(failed)} run(s) ended {', '.join(sorted({r.status for r in failed}))}; "
                "they are left out of the table and the charts."
            )
        _bands(runs, export)
        _summary(runs, spec)
        _spider(runs, export)
        if "grouping" not in grid:  # the groups would differ between variants
            _probabilities(store, runs, group_names, export)
        _heatmap(runs, points, grid, export)
        _solver_state(store, runs)

    live()


def _config(export: str | None, name: str) -> dict:
    return {"toImageButtonOptions": {"format": export or "png", "filename": name}}


def _bands(runs, export) -> None:
    st.subheader("Loss and constraints over wall-clock time")
    bands = study_bands(runs)
    if not any(per for per in bands.get("loss", {}).values()):
        st.caption("No saved iterates yet: the bands appear as runs save them.")
        return
    st.caption(
        "Mean over runs with the Q1–Q3 band, on 0.5 s bins of the solver's clock; train "
        "solid, test dashed; the dotted lines are ±δ. A constraint row is drawn as the gap "
        "it bounds (paper 000, Figs. 1–2)."
    )
    st.plotly_chart(
        figures.band_figure(bands, band_bounds(runs)),
        width="stretch",
        key="bench_bands",
        config=_config(export, "bands"),
    )
    st.download_button(
        "Download the bands (CSV)",
        bands_frame(bands).to_csv(index=False).encode(),
        "bands.csv",
        "text/csv",
        key="bench_bands_csv",
    )
    with st.expander("Each group's loss and positive rate over time (test set)"):
        st.plotly_chart(
            figures.band_figure(group_bands(runs), dashed=()),
            width="stretch",
            key="bench_group_bands",
            config=_config(export, "groups"),
        )


def _summary(runs, spec: RunSpec) -> None:
    summary = final_summary(runs)
    if summary is None:
        return
    st.subheader("Final models: mean ± std over runs")
    family = spec.constraint.family if spec.constraint else None
    for table in final_tables(summary, family, spec.objective.name):
        st.markdown(f"**{table.title}**")
        # a static table as wide as its column: long solver names and headers wrap, a
        # "mean ± std" cell does not (non-breaking spaces), and nothing is cut off at the right
        best = table.best.to_numpy()
        cells = table.text.map(lambda cell: cell.replace(" ", NO_BREAK))
        st.table(
            cells.style.apply(
                lambda shown, best=best: pd.DataFrame(
                    np.where(best, BEST_STYLE, ""), index=shown.index, columns=shown.columns
                ),
                axis=None,
            )
        )
        st.caption("; ".join(f"{name}: {words}" for name, words in table.notes.items()) + ".")
    st.caption(
        "Bold: the best value of each column among the solvers, on each split (smallest; "
        "largest for accuracy)."
    )
    st.markdown(
        "**Verdicts on the test set** (every solver against the same κ):\n"
        + "\n".join(f"- {line}" for line in verdict_words(runs))
    )
    st.download_button(
        "Download the table (CSV)",
        summary.plain().to_csv().encode(),
        "benchmark.csv",
        "text/csv",
        key="bench_csv",
    )


def _spider(runs, export) -> None:
    values = spider_values(runs)
    if not any(values.get("test", {}).values()):
        return
    st.subheader("Fairness criteria (smaller is better)")
    st.plotly_chart(
        figures.spider_figure(values),
        width="stretch",
        key="bench_spider",
        config=_config(export, "criteria"),
    )
    st.download_button(
        "Download the criteria (CSV)",
        criteria_frame(values).to_csv(index=False).encode(),
        "criteria.csv",
        "text/csv",
        key="bench_criteria_csv",
    )
    st.caption(
        "Independence, separation, sufficiency (paper 000, Table 2), inaccuracy and the "
        "groups' accuracy difference, means over runs (Fig. 4)."
    )


def _probabilities(store: Store, runs, group_names: tuple[str, ...], export) -> None:
    first = first_runs([run for run in runs if run.metrics])
    if not first:
        return
    st.subheader("Predicted probabilities per group (test set)")
    models = {variant: store.load_scores(run.run_id) for variant, run in first.items()}
    st.plotly_chart(
        figures.probability_figure(models, group_names),
        width="stretch",
        key="bench_probabilities",
        config=_config(export, "probabilities"),
    )
    st.caption(
        "The first seed's model of each solver; Wd: the 1-Wasserstein distance between the "
        "groups' predicted probabilities, the largest over pairs (paper 000, Fig. 3)."
    )


def _heatmap(runs, points, grid, export) -> None:
    heat = grid_heatmap(runs, points, grid)
    if heat is None:
        return
    st.subheader("Hyper-parameter grid: final validation loss and violation")
    st.plotly_chart(
        figures.heatmap_figure(*heat),
        width="stretch",
        key="bench_heatmap",
        config=_config(export, "grid"),
    )
    st.download_button(
        "Download the grid (CSV)",
        grid_frame(*heat).to_csv(index=False).encode(),
        "grid.csv",
        "text/csv",
        key="bench_grid_csv",
    )


def _solver_state(store: Store, runs) -> None:
    first = first_runs(runs)  # finished or not: their state is live
    with st.expander("Solver state of each solver's first run (duals, slacks, branches)"):
        trajectories(store, [run.run_id for run in first.values()], None, "seconds")


main()
