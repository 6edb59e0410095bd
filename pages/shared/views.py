"""Views of runs from the store: live status and trajectories, score distributions, metrics."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
import streamlit as st

from engine.data.group_checks import rank_band_problems
from engine.data.subgroups import Subgroups
from engine.fairness.constraint_spec import ConstraintSpec
from engine.fairness.distributions import candidate_intervals, interval_scan, rank_profile
from engine.fairness.families import family_entry, quantity_name
from engine.plots import intervals as interval_figures
from engine.plots import scores as score_plots
from engine.plots import trajectory
from engine.runs import Store
from engine.runs.comparison import ComparisonTable, comparison_table
from engine.runs.describe import run_label
from engine.runs.frontier import SCORE_NAMES, Frontier, is_gap
from engine.runs.frontier_text import front_table
from engine.runs.honour_search import honour_search, search_table, search_titles
from engine.runs.quantities import QUANTITY_NAMES
from engine.runs.reference_key import reused_from
from engine.runs.results import run_verdict
from engine.solvers.catalogue import solver_card
from engine.solvers.records import RecordKind
from engine.status import ACTIVE, RunStatus
from engine.task import Task
from engine.verdict import Label, Verdict
from pages.shared.layout import MISSING
from pages.shared.problem_controls import REGRESSION_FAIRNESS, interval_words
from pages.shared.problem_controls import Problem as ViewProblem
from pages.shared.state import initial, remember

LABEL_COLOUR = {
    Label.MEETS: "green",
    Label.MISSES: "orange",
    Label.SURROGATE_ONLY: "orange",
    Label.CANNOT_TELL: "violet",
    Label.NEAR_MAJORITY: "orange",
    Label.LIKELY_LEAK: "red",
    Label.NOT_CONVERGED: "orange",
    Label.DEGENERATE: "red",
    Label.DIVERGED: "red",
    Label.FAILED: "red",
    Label.INTERRUPTED: "red",
    Label.RUNNING: "blue",
}


def live_phase(store: Store, run_ids: list[str]) -> str:
    """'starting' while a queued or running run has recorded nothing yet, 'running' while any is
    queued or running, else 'idle'."""
    active = [r for r in run_ids if store.run(r).status in ACTIVE]
    if any(store.progress(r)[0] == 0 for r in active):
        return "starting"
    return "running" if active else "idle"


def constraint_sentence(problem: ViewProblem, subgroups: Subgroups | None = None) -> str:
    """ "Constraint pSP ≤ κ = 0.05 on I = [5 %, 30 %): each group's top 5 %–30 % of scores." —
    the interval only for the families defined on one; the data's overlapping `subgroups` for
    the family that constrains them. A regression has none (`REGRESSION_FAIRNESS`)."""
    if problem.objective.task is Task.REGRESSION:
        return REGRESSION_FAIRNESS
    entry = family_entry(problem.family)
    text = f"Constraint {entry.quantity} ≤ κ = {problem.kappa:g}"
    if entry.uses_subgroups and subgroups is not None:
        columns = ", ".join(subgroups.attributes)
        return (
            f"{text} ({entry.source}) in each of {len(subgroups):,} overlapping subgroups: "
            f"rows whose {columns} are each at least a quantile threshold."
        )
    if not entry.uses_interval:
        return f"{text} ({entry.source})."
    alpha, beta = problem.interval
    return f"{text} on I = [{alpha:.0%}, {beta:.0%}): {interval_words(problem.interval)}."


def show_group_problems(
    prepared, family: str, kappas: list[float], intervals: list[tuple[float, float]]
) -> bool:
    """Say, before anything runs, which groups are too small for the rank band of any κ and I to
    be run, with what fixes it; True when there is something to fix."""
    sentences = dict.fromkeys(
        sentence
        for kappa in kappas
        for interval in intervals
        for sentence in rank_band_problems(
            prepared.group_sizes("train"), family, kappa, interval, sizes=prepared.group_sizes()
        )
    )
    for sentence in sentences:
        st.error(sentence)
    return bool(sentences)


def verdict_badge(verdict: Verdict) -> str:
    """The verdict as a coloured Streamlit badge ("meets κ" green, "misses κ" orange, ...)."""
    return " ".join(
        f":{LABEL_COLOUR.get(label, 'gray')}-badge[{label}]"
        for label in (verdict.label, *verdict.flags)
    )


def status_line(store: Store, run_ids: list[str], view: ConstraintSpec | None = None) -> None:
    """One badge per run: its verdict once it has a model (its headline, the other findings in
    a folded "Details"), else its status, with the iteration a running one has reached. `view` is the constraint whose
    quantity a run without constraint shows."""
    rows = [store.run(r) for r in run_ids]
    columns = st.columns(max(len(rows), 1))
    for column, row in zip(columns, rows, strict=False):
        _, last = store.progress(row.id) if row.status == RunStatus.RUNNING else (0, None)
        progress = f" · iteration {last:,}" if last is not None else ""
        verdict = run_verdict(store, row, view)
        status = "" if verdict.label == row.status else f" · {row.status}"
        if row.status not in ACTIVE and row.seconds is not None:
            status += f" · {row.seconds:.1f} s"
        column.markdown(f"**{run_label(row.spec)}** {verdict_badge(verdict)}{status}{progress}")
        if row.status in ACTIVE:
            continue
        trained_in = reused_from(store, row.id)
        if trained_in is not None:  # a reference at a new I (`engine.runs.reference_reuse`)
            column.caption(
                f"Reuses the model of run {trained_in[:8]}, trained at another I: a reference "
                "does not depend on I, only pSP and pDP do."
            )
        for finding in verdict.at_a_glance:  # what else the verdict found, one click away
            column.caption(finding)
        details = verdict.findings[len(verdict.at_a_glance) :]
        if details:
            with column.expander(f"Details ({len(details)})", key=f"verdict_details:{row.id}"):
                for finding in details:
                    st.caption(finding)


def trajectories(store: Store, run_ids: list[str], view: ConstraintSpec | None, x: str) -> None:
    """The runs' trajectories so far, one column per run over its own span, against `x`
    (one of `trajectory.TRAJECTORY_AXES`); empty panels while they are queued or starting, so that
    the chart is ready to draw the first point as soon as it is recorded."""
    rows = [store.run(r) for r in run_ids]
    # a finished run's trajectory never changes: key the cache on how far each run has got
    progress = tuple((r.id, r.status, r.finished, store.progress(r.id)[0]) for r in rows)
    st.plotly_chart(
        _trajectory_figure(str(store.home), progress, view, x), key="trajectory", width="stretch"
    )


def trajectory_axis(key: str = "trajectory_x") -> str:
    """The trajectories' horizontal axis, chosen by the user: iterations, solver seconds, data
    passes or oracle calls (`trajectory.TRAJECTORY_AXES`)."""
    initial(key, "iteration")
    if st.session_state[key] not in trajectory.TRAJECTORY_AXES:  # a hand-edited link
        st.session_state[key] = "iteration"
    choice = st.segmented_control(
        "Trajectories against",
        list(trajectory.TRAJECTORY_AXES),
        key=key,
        help="data passes: rows whose scores the solver computed, over "
        "the training rows. oracle calls: gradients of the objective "
        "and of the constraint rows the solver evaluated (paper 001 "
        "counts them because methods differ in cost per iteration).",
    )
    remember(key)  # a link shows the trajectories against the same axis
    return choice or "iteration"


@st.cache_resource(max_entries=16, show_spinner=False)
def _trajectory_figure(home: str, progress: tuple, view: ConstraintSpec | None, x: str):
    store = Store(home)
    runs = []
    for run_id, *_ in progress:
        spec = store.run(run_id).spec
        runs.append(trajectory.trajectory_run(run_label(spec), spec, store.records(run_id), view))
    return trajectory.trajectory_figure(runs, x)


def metrics_table(
    store: Store, run_ids: list[str], view: ConstraintSpec | None = None
) -> pd.DataFrame:
    """The compact comparison table (`engine.runs.comparison`), test first: κ, each fairness
    quantity of the runs on test with its 95 % interval and, where a run holds κ on it, on
    train, one column each, accuracy beside the majority-class rate, AUC (a regression's RMSE beside the
    baseline's, R²); numbers to four places, "—" where a run has no value."""
    table = comparison_table(store, run_ids, view, compact=True)
    # each run's verdict, how it ended and its seconds stand in the status line above it
    frame = comparison_frame(table).drop(columns=["run", "solver", "verdict", "status", "seconds"])
    specs = [store.run(r).spec for r in run_ids]
    frame.insert(0, "model", [run_label(spec) for spec in specs])
    number = st.column_config.NumberColumn
    st.dataframe(
        frame,
        hide_index=True,
        width="content",
        placeholder=MISSING,
        column_config={
            **comparison_config(table, short=True),
            "κ": number(format="%g"),
        },
    )
    ranking = [run_label(spec) for spec in specs if not spec.thresholded]
    if ranking:
        st.caption(
            f"{', '.join(ranking)} train{'s' if len(ranking) == 1 else ''} paper 004's "
            "pairwise AUC loss, which only ranks the scores: accuracy at the threshold "
            "says nothing of such a model (a shift of every score leaves its loss alone), "
            "so read its test AUC."
        )
    return frame


def comparison_frame(table: ComparisonTable) -> pd.DataFrame:
    """The table's rows as a frame, its columns in their order."""
    return pd.DataFrame(list(table.rows), columns=[c.header for c in table.columns])


_SPLIT_WORDS = {"test": "the test set", "train": "the training set", "val": "validation"}


def comparison_config(table: ComparisonTable, short: bool = False) -> dict[str, object]:
    """How a page shows the measured columns of a comparison table: each quantity and score to
    four places with what it is in its help, a 95 % interval as its text; `short` heads each
    interval "95 %" after the column of its value (the table fits a laptop's width)."""
    number, text = st.column_config.NumberColumn, st.column_config.TextColumn
    config: dict[str, object] = {}
    for column in table.columns:
        if not column.measured:
            continue
        where = _SPLIT_WORDS.get(column.split or "", column.split)
        label = "95 %" if short and column.header.endswith(" 95 %") else None
        if column.quantity is None:
            config[column.header] = _SCORE_CONFIG.get(column.header)
            if label and config[column.header] is not None:
                config[column.header] = {**config[column.header], "label": label}
        elif column.interval:
            config[column.header] = text(
                label,
                help=f"95 % interval of {column.quantity.name} "
                f"on new data like {where}: {where} is a sample",
            )
        else:
            config[column.header] = number(
                format="%.4f", help=f"exact {column.quantity.name} on {where}"
            )
    return {header: entry for header, entry in config.items() if entry is not None}


_SCORE_CONFIG = {
    "test accuracy": st.column_config.NumberColumn(format="%.4f"),
    "test accuracy 95 %": st.column_config.TextColumn(
        help="95 % interval of the accuracy on new data like the test set"
    ),
    "majority": st.column_config.NumberColumn(
        "majority rate", format="%.4f", help="test accuracy of always predicting the majority class"
    ),
    "test AUC": st.column_config.NumberColumn(format="%.4f"),
    "test RMSE": st.column_config.NumberColumn(format="%.4f"),
    "baseline RMSE": st.column_config.NumberColumn(
        format="%.4f", help="test RMSE of predicting the training mean label"
    ),
    "test R²": st.column_config.NumberColumn(
        format="%.4f",
        help="1 − SSE/SST on the test set; "
        "≤ 0 is no better than predicting the test set's "
        "mean label",
    ),
}


def honour_search_view(store: Store, run_id: str) -> None:
    """The search of a run that holds κ on the training data and honours it on validation
    (`engine.solvers.exact_train`, `engine.solvers.honour`): a title, the sentence that says
    what was done and why, and one row per solve (κ′, the surrogate's grid and width, the exact
    constrained value on train and on the honoured split, accuracy, iterations, whether it
    meets κ), the chosen one marked ◆. Nothing for a run without one."""
    search = honour_search(store.records(run_id, kind=RecordKind.HONOUR))
    if search is None:
        return
    spec = store.run(run_id).spec
    quantity = quantity_name(spec.family)
    where = search.split_words
    st.markdown(f"**Solves of {run_label(spec)}**, holding κ on {where}")
    if search.sentence:
        st.caption(f"{search.sentence}.")
    if search.sigma is not None and search.split_rows is not None and search.split != "train":
        st.caption(
            f"Sampling noise of {quantity} on {where} ({search.split_rows:,} rows): "
            f"σ ≈ {search.sigma:.4f}; values closer than σ cannot be told apart."
        )
    frame = pd.DataFrame(search_table(search)).dropna(axis="columns", how="all")
    frame["meets_kappa"] = frame["meets_kappa"].map({True: "✓", False: "✗"}).fillna("—")
    frame["chosen"] = frame["chosen"].map({True: "◆", False: ""})
    titles = search_titles(search, quantity)
    formats = {
        "kappa_prime": "%.4g",
        "temperature": "%.3g",
        "train_value": "%.4f",
        "value": "%.4f",
        "accuracy": "%.4f",
    }
    texts = ("refined", "meets_kappa", "chosen")
    st.dataframe(
        frame,
        hide_index=True,
        width="content",
        placeholder=MISSING,
        column_config={
            key: (
                st.column_config.TextColumn(title, help=help)
                if key in texts
                else st.column_config.NumberColumn(title, help=help, format=formats.get(key))
            )
            for key, (title, help) in titles.items()
        },
    )


def front_words(solvers: Iterable[str]) -> str:
    """What the fronts of these solvers' runs are and which model each run reports (their
    cards' `front_words`), then how the models are marked."""
    said = dict.fromkeys(solver_card(name).front_words for name in solvers)
    return " ".join(
        [
            *filter(None, said),
            "Grey: dominated on these axes by another model of "
            "the same front; ◆: the model the run reports.",
        ]
    )


def front_table_view(result: Frontier, quantity: str) -> None:
    """The models of the frontier's fronts, one row each in their runs' order: the run, the
    model's label and coordinates, its score and fairness, the realised constrained value
    (`quantity`, when there is one), whether another model of its front dominates it, and which
    one the run reports (◆)."""
    points = [p for front in result.fronts.values() for p in front]
    names = list(dict.fromkeys(name for p in points for name, _ in p.coordinates))
    frame = pd.DataFrame(front_table(points))
    for name in names:
        frame[name] = [row.get(name) for row in frame["coordinates"]]
    frame["run"] = frame["run"].str[:8]
    frame["reported"] = frame["chosen"].map({True: "◆", False: ""})
    columns = [
        "run",
        "solver",
        "label",
        *names,
        "score",
        "fairness",
        "constraint",
        "dominated",
        "reported",
    ]
    if frame["constraint"].isna().all():  # a run without constraint, measured by no other
        columns.remove("constraint")
    number = st.column_config.NumberColumn
    st.dataframe(
        frame[columns],
        hide_index=True,
        width="content",
        placeholder=MISSING,
        column_config={
            "label": st.column_config.TextColumn("model", width="medium"),
            "score": number(f"{SCORE_NAMES[result.score]} ({result.split})", format="%.4f"),
            "fairness": number(fairness_title(result, quantity), format="%.4f"),
            "constraint": number(f"{quantity} ({result.split})", format="%.4f"),
        },
    )


def fairness_title(result: Frontier, quantity: str) -> str:
    """The header of a frontier's fairness column: what its metric holds, turned around for a
    gap ("1 − pSP"); `quantity` names the "constraint" metric."""
    metric = result.metric
    name = quantity if metric == "constraint" else QUANTITY_NAMES.get(metric, metric)
    return f"1 − {name}" if is_gap(metric) else name


def finished(store: Store, run_ids: list[str]) -> list[str]:
    done = [r for r in run_ids if store.run(r).has_model]
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
    return _score_figures(
        str(store.home), run_id, reference_id, tuple(group_names), interval, kappa, versions
    )


@st.cache_resource(max_entries=32, show_spinner=False)
def _score_figures(home, run_id, reference_id, group_names, interval, kappa, versions):
    store = Store(home)
    scores, groups = store.load_scores(run_id)
    label = run_label(store.run(run_id).spec)
    alpha, beta = interval
    figures = [
        (
            f"Score CCDF per group — {label}",
            score_plots.cdf_figure(scores, groups, group_names, alpha, beta, kappa=kappa),
        ),
        (
            f"Rank–rank curve — {label}",
            score_plots.rank_rank_figure(scores, groups, group_names, alpha, beta, kappa),
        ),
    ]
    models = [(label, scores, groups)]
    if reference_id is not None and reference_id != run_id:
        ref_scores, ref_groups = store.load_scores(reference_id)
        models.insert(0, ("unconstrained", ref_scores, ref_groups))
    figures.append(
        ("Score densities per group", score_plots.density_figure(models, group_names, alpha, beta))
    )
    return figures


def interval_helper_figures(
    store: Store, reference_id: str, group_names: tuple[str, ...], interval: tuple[float, float]
) -> tuple[object, object]:
    """The interval helper's figures for the unconstrained model's test scores (cached per run
    and interval): where its groups differ in the rank range, and App. B's heat map."""
    version = store.run(reference_id).finished
    return _interval_helper_figures(
        str(store.home), reference_id, tuple(group_names), tuple(interval), version
    )


@st.cache_resource(max_entries=8, show_spinner=False)
def _interval_helper_figures(home, reference_id, group_names, interval, version):
    scores, groups = Store(home).load_scores(reference_id)
    scan = interval_scan(scores, groups, 0.0, candidate_intervals())
    return (
        interval_figures.rank_profile_figure(rank_profile(scores, groups), group_names, interval),
        interval_figures.interval_scan_figure(scan),
    )
