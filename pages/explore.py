"""Explore: choose data, attribute, I and κ, run solvers in the background, watch them live.

The page describes runs through the solver catalogue and never loads a solver (torch): the
solvers run in the worker processes.
"""

from __future__ import annotations

import contextlib

import streamlit as st

from engine.errors import UserError
from engine.fairness.constraint_spec import ConstraintSpec
from engine.report import store_report
from engine.runs.runner import VISITOR_IDLE_EXIT_SECONDS, ensure_runner
from engine.runs.store import Store
from engine.runs.submit import submit
from engine.status import RETRYABLE
from engine.task import Task
from pages.shared.data_controls import data_controls, prepared_data
from pages.shared.data_summary import data_summary
from pages.shared.first_paint import charts_ready
from pages.shared.layout import compact_page
from pages.shared.problem_controls import problem_controls, run_specs
from pages.shared.tuning_view import queue_chosen, tuned_view, tuning_lines
from pages.shared.views import (
    constraint_sentence,
    finished,
    honour_search_view,
    interval_helper_figures,
    live_phase,
    metrics_table,
    run_label,
    score_figures,
    show_group_problems,
    status_line,
    trajectories,
    trajectory_axis,
)

# how often the live view refreshes: often until the first points arrive, then about as often as
# a redrawn trajectory chart stays readable (each redraw costs the browser a few hundred ms)
POLL_SECONDS = {"starting": 0.2, "running": 1.0, "idle": None}


def main() -> None:
    charts = charts_ready()
    compact_page()
    st.title("FairFront")
    st.caption(
        "Train classifiers under (partial) fairness constraints and see what fairness costs."
    )
    try:
        data_spec, prepare = data_controls()
        with st.spinner("Preparing data"):
            progress = st.empty()
            prepared = prepared_data(data_spec, prepare, _download_progress(progress))
            progress.empty()
    except UserError as error:
        _without_data(error)
        return
    summary = st.container()  # filled once it is known whether the view has results
    constraint_line = st.empty()  # filled once the problem controls are read
    store = Store()
    results = False
    try:
        results = _problem_and_runs(store, data_spec, prepare, prepared, constraint_line, charts)
    finally:
        with summary:  # folded under results, so that on a laptop they start on the first screen
            data_summary(prepared, chart=charts, folded=results)
        if charts:  # once the first view shows: the workers' warm-up would hold it back
            ensure_runner(store.home, idle_exit=VISITOR_IDLE_EXIT_SECONDS)


def _problem_and_runs(
    store: Store, data_spec, prepare, prepared, constraint_line, charts: bool
) -> bool:
    """The problem's controls, the Run button and the view's runs; whether it has any."""
    try:
        problem = problem_controls(
            task=prepared.task, honour_choice=True, tune_choice=True, n_groups=prepared.n_groups
        )
        specs = run_specs(data_spec, prepare, problem)
    except UserError as error:
        st.error(str(error))
        return False
    tuning = tuned_view(store, specs, problem.tune)
    queued_by_run = tuning.queued_by_run()
    missing = [s for s in queued_by_run if _status(store, s.run_id) in (None, *RETRYABLE)]
    classifier = prepared.task is Task.CLASSIFICATION  # a regression has no rank band to check
    too_small = classifier and show_group_problems(
        prepared, problem.family, [problem.kappa], [problem.interval]
    )
    if st.sidebar.button(
        "Run" if missing else "Run again",
        type="primary",
        width="stretch",
        key="run",
        disabled=bool(too_small),
        help="fix the group sizes named on the page first" if too_small else None,
    ):
        try:
            submit(
                missing or queued_by_run,
                store,
                force=not missing,
                idle_exit=VISITOR_IDLE_EXIT_SECONDS,
            )
            tuning = tuned_view(store, specs, problem.tune)
        except UserError as error:
            st.error(str(error))
    constraint_line.markdown(constraint_sentence(problem, prepared.subgroups))
    queue_chosen(store, tuning, VISITOR_IDLE_EXIT_SECONDS)
    tuning_lines(store, tuning)
    known = [r for r in tuning.shown() if _status(store, r) is not None]
    if not known and not any(t.stored for t in tuning.tunings):
        st.info(
            "Press **Run** to train the chosen solvers; results you computed before for the "
            "same settings appear here at once."
        )
        return False
    if not known or not charts:
        return bool(known)  # the runs' views follow once the controls show
    view = next((s.constraint for s in specs if s.constraint is not None), None)
    phase = live_phase(store, known)
    if phase == "idle":  # all ended: the verdicts and exact metrics first, then how they ran
        status_line(store, known, view)
        _metrics(store, known, prepared, view)
    _live(store, known, view, phase)
    if phase != "idle":
        _metrics(store, known, prepared, view)
    _results(
        store,
        known,
        prepared,
        problem,
        view,
        f"FairFront — {constraint_sentence(problem, prepared.subgroups)}",
    )
    return True


def _without_data(error: UserError) -> None:
    """The data cannot be read: say why, keep the rest of the sidebar as it was (its settings
    stay for when the data is back) and point to the runs already computed."""
    st.error(str(error))
    st.caption("Runs computed before are kept: the Runs page lists them all.")
    with contextlib.suppress(UserError):  # the message that matters is the data's
        problem_controls(honour_choice=True, tune_choice=True)


def _status(store: Store, run_id: str) -> str | None:
    try:
        return store.run(run_id).status
    except UserError:
        return None


def _download_progress(slot):
    def show(received: int, total: int | None) -> None:
        fraction = min(received / total, 1.0) if total else 0.0
        slot.progress(fraction, text=f"Downloading census data: {received / 2**20:.1f} MB")

    return show


def _live(store: Store, run_ids: list[str], view: ConstraintSpec | None, phase: str) -> None:
    """The trajectories, refreshed while runs go on, with the runs' status line above them
    until all have ended (then the verdicts stand above the metrics instead)."""
    x = trajectory_axis()

    @st.fragment(run_every=POLL_SECONDS[phase])
    def live() -> None:
        if phase != "idle":
            status_line(store, run_ids, view)
        trajectories(store, run_ids, view, x)
        if live_phase(store, run_ids) != phase:
            st.rerun()  # poll at the new phase's pace; once the runs end, draw the score views

    live()


def _results(
    store: Store, run_ids: list[str], prepared, problem, view: ConstraintSpec | None, title: str
) -> None:
    done = finished(store, run_ids)
    if not done:
        return
    classifier = prepared.task is Task.CLASSIFICATION
    for run_id in done:
        honour_search_view(store, run_id)
    reference = next((r for r in done if store.run(r).spec.constraint is None), None)
    constrained = [r for r in done if r != reference]
    labels = {r: run_label(store.run(r).spec) for r in constrained or done}
    chosen = st.selectbox("Model to inspect", list(labels), format_func=labels.get, key="inspect")
    figures = score_figures(
        store, chosen, reference, prepared.group_names, problem.interval, problem.kappa
    )
    left, right = st.columns(2)
    # keys by position: another model's figure then updates the chart in place (quicker than a
    # new chart)
    for view, (column, (_, figure)) in enumerate(zip([left, right, st], figures, strict=False)):
        column.plotly_chart(figure, width="stretch", key=f"score_view_{view}")
    if reference is not None and classifier:  # it looks for where a classifier's pSP is large
        _interval_helper(store, reference, prepared.group_names, problem.interval)
    _report(store, done, figures, title)


def _metrics(store: Store, run_ids: list[str], prepared, view: ConstraintSpec | None) -> None:
    """The finished runs' exact metrics, test set first."""
    done = finished(store, run_ids)
    if not done:
        return
    classifier = prepared.task is Task.CLASSIFICATION
    # a bold line, its explanation on hover: a heading and a caption would push the table
    # below a laptop's first screen
    st.markdown(
        "**Exact metrics, test set first**",
        help="Exact values, no surrogate: the constrained quantity beside κ on the test "
        "and training sets, and "
        + (
            "accuracy beside always predicting the majority class."
            if classifier
            else "RMSE beside predicting the training mean label, and R²."
        ),
    )
    metrics_table(store, done, view)


def _interval_helper(store: Store, reference: str, group_names, interval) -> None:
    helper = st.expander(
        "Where does fairness matter? (interval helper, paper 003 App. B)",
        key="interval_helper",
        on_change="rerun",
    )
    if not helper.open:
        return  # drawn only when opened: every chart on the page costs the browser a redraw
    profile, scan = interval_helper_figures(store, reference, group_names, interval)
    with helper:
        st.caption(
            "The unconstrained model's groups, rank by rank: how much of each group is "
            "above a threshold that lets the top share of everyone through. Choose an I "
            "(a band of group ranks) where the curves part, around the positive rate."
        )
        st.plotly_chart(profile, width="stretch", key="rank_profile")
        st.caption(
            "App. B's scan: the exact pSP of the unconstrained model on candidate "
            "intervals (pSP is scaled by the width of I, so it is near 1 wherever the "
            "groups differ at all); App. B picks the most unfair I that holds the "
            "positive rate."
        )
        st.plotly_chart(scan, width="stretch", key="interval_scan")


def _report(store: Store, run_ids, figures, title: str) -> None:
    """The download button of the HTML report (`title` on top): settings in words, a verdict
    block per run, exact metrics, trajectories and the score figures."""

    def document() -> str:  # built only when the button is pressed
        return store_report(store, run_ids, title, figures)

    st.download_button(
        "Download report (HTML)",
        document,
        file_name="fairfront-report.html",
        mime="text/html",
        key="report",
    )


main()
