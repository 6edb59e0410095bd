"""Sidebar widgets for the training objective: those defined for the data's label (a classifier's
logistic loss, squared hinge or paper 004's pairwise AUC square loss with its c1 and c2; a
regression's squared loss)."""

from __future__ import annotations

import streamlit as st

from engine.errors import UserError
from engine.objectives import (
    DEFAULT_OBJECTIVE,
    Objective,
    PairwiseAUCLoss,
    objective_type,
    objectives_for,
)
from engine.task import Task
from pages.shared.state import initial

KEYS = ("objective", "objective_c1", "objective_c2")


def objective_controls(task: Task = Task.CLASSIFICATION) -> Objective:
    """The objective select among those of `task`, with c1 and c2 for the pairwise AUC loss
    (paper 004, eq. 3)."""
    names = objectives_for(task)
    initial("objective", DEFAULT_OBJECTIVE[task])
    if st.session_state["objective"] not in names:  # kept from data with another kind of label
        st.session_state["objective"] = DEFAULT_OBJECTIVE[task]
    initial("objective_c1", PairwiseAUCLoss.c1, float)
    initial("objective_c2", PairwiseAUCLoss.c2, float)
    with st.sidebar.expander("Objective"):
        name = st.selectbox(
            "Objective",
            names,
            key="objective",
            format_func=lambda n: objective_type(n).words,
            help="what training minimises; the pairwise AUC loss is "
            "c1 (h(ξ) − h(ξ′) − c2)² over (positive, negative) pairs",
        )
        if name != PairwiseAUCLoss.name:
            return objective_type(name)()
        c1 = st.number_input(
            "c1",
            min_value=0.0,
            step=0.5,
            format="%g",
            key="objective_c1",
            help="> 0; paper 004 uses 0.5 or 1",
        )
        c2 = st.number_input(
            "c2",
            min_value=0.0,
            step=0.5,
            format="%g",
            key="objective_c2",
            help="> 0; paper 004 uses 1",
        )
        try:
            return PairwiseAUCLoss(float(c1), float(c2))
        except UserError as error:
            st.error(f"{error}; using c1 = {PairwiseAUCLoss.c1:g}, c2 = {PairwiseAUCLoss.c2:g}")
            return PairwiseAUCLoss()
