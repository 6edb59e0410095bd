"""A clicked frontier point's model, as a case to decide on: its verdict with intervals, its cost
against the unconstrained reference in one sentence, what it does to each group, the solves
that held κ, its score views, and the form that chooses it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from engine.runs import Store
from engine.runs.decision_record import reference_run, run_cost
from engine.runs.describe import run_label
from engine.runs.model_case import group_rows
from engine.runs.results import run_verdict
from engine.task import Task
from pages.shared.decision_view import decision_view
from pages.shared.layout import MISSING
from pages.shared.views import honour_search_view, score_figures, verdict_badge


def model_case_view(store: Store, run_id: str, prepared, kappa: float) -> None:
    """The case of run `run_id`'s model, on the page's `prepared` data (its test split is the
    one the run's stored scores come from) with the κ its score views draw."""
    row = store.run(run_id)
    verdict = run_verdict(store, row)
    st.markdown(f"#### {run_label(row.spec)} {verdict_badge(verdict)}")
    for finding in verdict.findings:
        st.caption(finding)
    reference = reference_run(store, row)
    if reference is not None:
        cost = run_cost(store, row, reference, prepared.group_names)
        if cost:
            st.markdown(
                f"**What fairness costs** against the unconstrained model, on the test set: {cost}."
            )
    _group_table(store, run_id, prepared)
    honour_search_view(store, run_id)
    figures = score_figures(
        store,
        run_id,
        reference.id if reference else None,
        prepared.group_names,
        row.spec.interval,
        kappa,
    )
    left, right = st.columns(2)
    for view, (column, (_, figure)) in enumerate(zip([left, right, st], figures, strict=False)):
        column.plotly_chart(figure, width="stretch", key=f"selected_view_{view}")
    decision_view(store, run_id)


def _group_table(store: Store, run_id: str, prepared) -> None:
    """Per group on the test set: rows, selection rate, TPR, FPR and accuracy of the model's
    decisions; nothing for a regression, or when the page's test split is not the run's."""
    if prepared.task is not Task.CLASSIFICATION:
        return
    scores, groups = store.load_scores(run_id)
    test = prepared.test
    if len(test) != scores.size or not np.array_equal(np.asarray(test.groups), groups):
        st.caption(
            "Per-group rates: the page's data are not this run's; choose its data to see them."
        )
        return
    rows = group_rows(scores, groups, np.asarray(test.y), prepared.group_names)
    frame = pd.DataFrame([vars(r) for r in rows])
    number = st.column_config.NumberColumn
    st.markdown("**Per group, on the test set** (decisions at the model's threshold)")
    st.dataframe(
        frame,
        hide_index=True,
        width="content",
        placeholder=MISSING,
        column_config={
            "name": st.column_config.TextColumn("group"),
            "rows": number("rows", format="%d"),
            "selection_rate": number("selected", format="%.3f", help="share predicted positive"),
            "tpr": number(
                "TPR", format="%.3f", help="share of the group's positives predicted positive"
            ),
            "fpr": number(
                "FPR", format="%.3f", help="share of the group's negatives predicted positive"
            ),
            "accuracy": number("accuracy", format="%.3f"),
        },
    )
