"""Frontier: sweep κ (and intervals) for the chosen solvers and seeds; accuracy or AUC against
exact fairness on held-out data, with confidence intervals or standard errors over the seeds;
click a point to see that model. A run that yields a set of models (a front) is drawn as a line
through them, whether it is in the sweep or chosen from the store."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.families import quantity_name
from engine.model_quality import FEW_DISTINCT_SCORES
from engine.plots.frontier import frontier_figure, kappa_interval_figure
from engine.runs import Store, submit_sweep, sweep_specs
from engine.runs.describe import run_label, sweep_progress
from engine.runs.frontier import SCORE_NAMES, SPREADS, frontier, spread_name
from engine.runs.frontier_text import MARK_WORDS, frontier_table
from engine.runs.results import frontier_axes, interval_text, run_results
from engine.runs.runner import VISITOR_IDLE_EXIT_SECONDS, ensure_runner
from engine.solvers.catalogue import solver_card, solver_names
from engine.solvers.records import RecordKind
from engine.status import ACTIVE
from pages.shared.data_controls import data_controls, prepared_data
from pages.shared.layout import MISSING, compact_page
from pages.shared.model_case_view import model_case_view
from pages.shared.problem_controls import base_spec, problem_controls
from pages.shared.state import initial, remember
from pages.shared.tuning_view import queue_chosen, tuned_view, tuning_lines
from pages.shared.views import (
    fairness_title,
    front_table_view,
    front_words,
    show_group_problems,
)

WORKERS = 2  # the runner's worker processes, and so the chains of a continuation sweep
POLL_SECONDS = 1.0  # how often a running sweep's page looks for ended runs

WARM_SOLVERS = [name for name in solver_names() if solver_card(name).warm_start]


def parse_numbers(text: str, name: str) -> list[float]:
    try:
        values = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise UserError(
            f"{name}: write numbers separated by commas, e.g. 0.01, 0.05, 0.1"
        ) from None
    if not values:
        raise UserError(f"{name}: give at least one value")
    return values


def parse_intervals(text: str) -> list[tuple[float, float]]:
    intervals = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            low, high = (float(v) for v in part.replace("%", "").split("-"))
        except ValueError:
            raise UserError(
                f"intervals are written like 5-30, 5-50 (percent), not '{part}'"
            ) from None
        if not 0 <= low < high <= 100:
            raise UserError(f"interval {part}: needs 0 ≤ start < end ≤ 100")
        intervals.append((low / 100, high / 100))
    return intervals


def main() -> None:
    compact_page()
    st.title("Fairness frontier")
    st.caption(
        "Each point: the exact accuracy or AUC and fairness on held-out data of one κ, "
        "averaged over seeds; the unconstrained model is the star. Click a point for its "
        "model's case."
    )
    store = Store()
    try:
        data_spec, prepare = data_controls()
        prepared = prepared_data(data_spec, prepare)
        problem = problem_controls(
            task=prepared.task, honour_choice=True, tune_choice=True, n_groups=prepared.n_groups
        )
        st.sidebar.header("Sweep")
        initial("kappas", "0.28, 0.2, 0.1, 0.05, 0.01")
        initial("extra_intervals", "")
        initial("n_seeds", 1, int)
        initial("continuation", True, bool)
        kappas = parse_numbers(st.sidebar.text_input("κ values", key="kappas"), "κ values")
        extra = parse_intervals(
            st.sidebar.text_input("More intervals (%, e.g. 5-50, 5-90)", key="extra_intervals")
        )
        seeds = list(range(int(st.sidebar.number_input("Seeds (splits)", 1, 10, key="n_seeds"))))
        warm = st.sidebar.checkbox(
            "Start each κ from its neighbour's model",
            key="continuation",
            help=f"a continuation sweep: from tight to loose κ, each point of a solver that can "
            f"start from a model ({', '.join(WARM_SOLVERS)}) starts from the model of the "
            "point before it (two chains, as two runs go at once), which ends most runs far "
            "sooner; off, every point starts afresh. A sweep tuned first has none: each "
            "point runs the options its own trials chose",
        )
        remember("kappas", "extra_intervals", "n_seeds", "continuation")
        base = base_spec(data_spec, prepare, problem)
        intervals = [problem.interval, *[i for i in extra if i != problem.interval]]
        chains = WORKERS if warm and not problem.tune else 0
        specs = sweep_specs(
            base,
            kappas,
            intervals,
            list(problem.solvers),
            seeds,
            configs=problem.configs,
            chains=chains,
        )
        for spec in specs:
            spec.validate()
    except UserError as error:
        st.error(str(error))
        return
    too_small = show_group_problems(prepared, problem.family, kappas, intervals)
    tuning = tuned_view(store, specs, problem.tune)
    queued = tuning.queued_by_run()
    label = (
        f"Tune, then sweep ({len(queued)} runs)"
        if tuning.tunings
        else f"Run sweep ({len(specs)} runs)"
    )
    if st.sidebar.button(label, type="primary", key="sweep", disabled=too_small):
        grid = {
            "kappas": kappas,
            "intervals": intervals,
            "solvers": list(problem.solvers),
            "seeds": seeds,
        }
        submit_sweep(
            f"{len(queued)} runs",
            queued,
            grid,
            store,
            workers=WORKERS,
            idle_exit=VISITOR_IDLE_EXIT_SECONDS,
        )
        tuning = tuned_view(store, specs, problem.tune)
    queue_chosen(store, tuning, VISITOR_IDLE_EXIT_SECONDS)
    axes = frontier_axes(specs)
    try:
        tuning_started = any(t.stored for t in tuning.tunings)
        _view(store, tuning.shown(), prepared, problem, base.constraint, axes, tuning_started)
        # a line per tuned point, under the frontier: on a laptop the chart starts on the first
        # screen however many points were tuned
        tuning_lines(store, tuning)
    finally:  # once the page shows: workers warm while the sweep is set up, not after its click
        ensure_runner(store.home, WORKERS, idle_exit=VISITOR_IDLE_EXIT_SECONDS)


def _view(
    store: Store,
    run_ids: list[str],
    prepared,
    problem,
    constraint: ConstraintSpec | None,
    axes: tuple[str, str],
    tuning_started: bool = False,
) -> None:
    """The sweep's frontier as its runs finish; its runs without constraint are measured by the
    sweep's `constraint` (the unconstrained reference of an auc_gap sweep carries its variant's
    gap), on the score axis and with the spread of `axes` unless the user picks others."""
    known = {r.id: r for r in store.runs() if r.id in set(run_ids)}
    fronts = _front_choice(store, set(run_ids))
    if not known and not fronts:
        st.info(
            "A tuned point appears once its trials have chosen its options and its run has ended."
            if tuning_started
            else "Press **Run sweep**: points appear as runs "
            "finish; runs computed before for the same settings are reused."
        )
        return
    active = any(r.status in ACTIVE for r in known.values())
    names = {
        "constraint": quantity_name(problem.family),
        "psp": "pSP",
        "pdp": "pDP",
        "sp": "SP (pSP on all ranks)",
        "dp": "DP gap",
    }
    # the view's controls in one row, so that the chart starts within a laptop's first screen
    axis_column, split_column, score_column, spread_column = st.columns([3, 1.2, 1.8, 1.6])
    metric = axis_column.selectbox(
        "Fairness axis (exact, held-out)",
        list(names),
        key="metric",
        format_func=lambda m: (
            f"1 − {names[m]}" + (" (the constrained quantity)" if m == "constraint" else "")
        ),
    )
    split = split_column.radio("Evaluated on", ["test", "val"], horizontal=True, key="split")
    score, spread = _axes_controls(axes, score_column, spread_column)
    if active:
        _poll(store, run_ids, _ended({r.id: r.status for r in known.values()}))
    done = [r for r in known.values() if r.has_model]
    if known:
        progress = sweep_progress({r.id: r.status for r in known.values()}, run_ids)
        st.progress(progress.share, text=progress.text)
    done += [store.run(r) for r in fronts]
    results = [x for r in done for x in run_results(r, store, constraint)]
    result = frontier(results, metric=metric, split=split, score=score, spread=spread)
    if not result.points:
        return
    if result.fronts:
        solvers = [p.solver for front in result.fronts.values() for p in front]
        st.caption(
            f"Each line with markers is one run's front, its models in the run's "
            f"order. {front_words(solvers)}"
        )
    if any(p.few_scores for p in result.points):
        st.caption(
            f"A point labelled “n scores” has at most {FEW_DISTINCT_SCORES} distinct "
            "scores: a randomised classifier (fairlearn's) is scored by its "
            "probability of a positive decision, and its metrics are those of its "
            "majority vote. Its ties have no order, so pSP and other measures on "
            "ranks are coarse for it."
        )
    event = st.plotly_chart(
        frontier_figure(result, quantity_name(problem.family)),
        on_select="rerun",
        selection_mode="points",
        key="frontier",
        width="stretch",
    )
    if result.ordinary:
        _table(result, quantity_name(problem.family))
        _kappa_by_interval(result, quantity_name(problem.family))
    if result.fronts:
        st.markdown("**Fronts**")
        front_table_view(result, quantity_name(problem.family))
    _selected(store, event, prepared, problem)


def _ended(statuses: dict[str, str]) -> frozenset[str]:
    """The runs that have ended, of these runs and statuses: the page is drawn again when this
    set grows."""
    return frozenset(run_id for run_id, status in statuses.items() if status not in ACTIVE)


def _poll(store: Store, run_ids: list[str], drawn: frozenset[str]) -> None:
    """While the sweep runs, look at the store every second and draw the page again once a run
    has ended: the frontier, its tables and the chosen point's case are built once per ended
    run, not once a second (the workers share the machine with the page)."""

    @st.fragment(run_every=POLL_SECONDS)
    def poll() -> None:
        if _ended(store.statuses(run_ids)) != drawn:
            st.rerun()

    poll()


def _front_choice(store: Store, sweep: set[str]) -> list[str]:
    """The runs outside the sweep that yield a front and that the user chose to draw beside it
    (none to choose from: no control)."""
    with_front = store.runs_with(RecordKind.FRONT) - sweep
    rows = [r for r in store.runs(newest_first=True) if r.id in with_front and r.has_model]
    if not rows:
        return []
    labels = {r.id: f"{run_label(r.spec)} [{r.id[:6]}]" for r in rows}
    return st.multiselect(
        "Fronts of other runs",
        list(labels),
        key="front_runs",
        format_func=labels.get,
        help="runs in the store that yield a set of models (a front), drawn "
        "on the same axes as the sweep",
    )


def _axes_controls(
    default: tuple[str, str], score_column: DeltaGenerator, spread_column: DeltaGenerator
) -> tuple[str, str]:
    """The score axis and the spread over seeds, in their columns, set to `default`
    (`frontier_axes`: paper 004's AUC with standard errors for its sweeps, paper 003's accuracy
    with confidence intervals for the others) on arrival and whenever the sweep's kind
    changes."""
    if st.session_state.get("axes_default") != default or "score_axis" not in st.session_state:
        st.session_state["axes_default"] = default
        st.session_state["score_axis"], st.session_state["spread"] = default
    score = score_column.radio(
        "Score axis (exact, held-out)",
        list(SCORE_NAMES),
        horizontal=True,
        key="score_axis",
        format_func=SCORE_NAMES.get,
    )
    spread = spread_column.radio(
        "± over seeds", SPREADS, horizontal=True, key="spread", format_func=spread_name
    )
    return score, spread


def _table(result, quantity: str) -> None:
    """The points as a compact table: κ, I, seeds, score and fairness with their 95 % bands
    (a single seed's held-out interval, or the mean ± the spread over seeds), the realised
    constrained value and what the split says of it against κ (meets, misses, cannot tell)."""
    frame = pd.DataFrame(frontier_table(result.ordinary))
    frame["κ verdict"] = frame["state"].fillna("—")
    frame["I"] = [f"[{a:.0%}, {b:.0%})" for a, b in zip(frame["alpha"], frame["beta"], strict=True)]
    for axis in ("score", "fairness"):
        frame[f"{axis} 95 %"] = [
            interval_text(low, high)
            for low, high in zip(frame[f"{axis}_low"], frame[f"{axis}_high"], strict=True)
        ]
    frame["note"] = [_note(p) for p in result.ordinary]
    columns = [
        "marks",
        "solver",
        "kappa",
        "I",
        "n",
        "score",
        "score 95 %",
        "fairness",
        "fairness 95 %",
        "constraint",
        "κ verdict",
        "note",
    ]
    if not frame["note"].any():
        columns.remove("note")
    number, text = st.column_config.NumberColumn, st.column_config.TextColumn
    band = (
        "95 % band: one seed's held-out interval, or over seeds the mean ± "
        f"{spread_name(result.spread, result.confidence)}"
    )
    st.dataframe(
        frame[columns],
        hide_index=True,
        width="content",
        placeholder=MISSING,
        column_config={
            "marks": text(
                "", help=", ".join(words for words, _ in MARK_WORDS.values()) + ", · dominated"
            ),
            "solver": text(width="small"),
            "kappa": number("κ", format="%g"),
            "n": number("seeds"),
            "score": number(SCORE_NAMES[result.score], format="%.4f"),
            "score 95 %": text("95 %", help=band),
            "fairness": number(fairness_title(result, quantity), format="%.4f"),
            "fairness 95 %": text("95 %", help=band),
            "constraint": number(f"{quantity} ({result.split})", format="%.4f"),
            "κ verdict": text(
                help="meets κ: the whole interval is ≤ κ; misses κ: it lies above "
                "κ; cannot tell: κ lies inside it"
            ),
        },
    )


def _kappa_by_interval(result, quantity: str) -> None:
    """The κ × I view of one solver's points, when the sweep has several intervals."""
    points = [p for p in result.ordinary if not p.unconstrained]
    if len({p.interval for p in points}) < 2:
        return
    solvers = list(dict.fromkeys(p.solver for p in points))
    solver = (
        solvers[0] if len(solvers) == 1 else st.selectbox("κ × I of", solvers, key="grid_solver")
    )
    st.plotly_chart(
        kappa_interval_figure(result, solver, quantity), width="stretch", key="kappa_interval"
    )


def _note(point) -> str:
    """What the marks of a point stand for, in words, for the table's last column."""
    notes = []
    if point.degenerate is not None:
        notes.append(str(point.degenerate[0]))
    if point.unconverged:
        notes.append(f"not converged ({point.unconverged} of {point.n} runs)")
    if point.few_scores:
        notes.append(f"only {point.distinct_scores} distinct scores: pSP coarse")
    return "; ".join(notes)


def _selected(store: Store, event, prepared, problem) -> None:
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    if not points:
        st.caption(
            "Click a point to see that model's case: its verdict, what fairness costs, "
            "its groups, and the button that chooses it."
        )
        return
    run_ids = points[0].get("customdata") or []
    run_id = run_ids[0] if isinstance(run_ids, list) else run_ids
    if str(points[0].get("legendgroup", "")).startswith("front ") and len(run_ids) == 2:
        st.caption(
            f"{run_ids[1]}: a model of the front of run {run_id[:8]}. The store keeps the "
            "score distributions of the model the run reports (the diamond) only."
        )
        return
    kappa = store.run(run_id).spec.kappa
    kappa = problem.kappa if kappa is None else kappa
    model_case_view(store, run_id, prepared, kappa)


main()
