"""Sidebar widgets for the training objective: the logistic loss, or paper 004's pairwise AUC
square loss with its c1 and c2."""

from __future__ import annotations

import streamlit as st

from engine.errors import UserError
from engine.objectives import LogisticLoss, Objective, PairwiseAUCLoss
from pages.shared.state import initial

KEYS = ("objective", "objective_c1", "objective_c2")
OBJECTIVE_WORDS = {"logistic": "logistic loss", "pairwise_auc": "pairwise AUC (paper 004)"}


def objective_controls() -> Objective:
    """The objective select, with c1 and c2 for the pairwise AUC loss (paper 004, eq. 3)."""
    initial("objective", "logistic")
    initial("objective_c1", PairwiseAUCLoss.c1, float)
    initial("objective_c2", PairwiseAUCLoss.c2, float)
    with st.sidebar.expander("Objective"):
        name = st.selectbox("Objective", list(OBJECTIVE_WORDS), key="objective",
                            format_func=OBJECTIVE_WORDS.get,
                            help="what training minimises; the pairwise AUC loss is "
                            "c1 (h(ξ) − h(ξ′) − c2)² over (positive, negative) pairs")  # fmt: skip
        if name == "logistic":
            return LogisticLoss()
        c1 = st.number_input("c1", min_value=0.0, step=0.5, format="%g", key="objective_c1",
                             help="> 0; paper 004 uses 0.5 or 1")  # fmt: skip
        c2 = st.number_input("c2", min_value=0.0, step=0.5, format="%g", key="objective_c2",
                             help="> 0; paper 004 uses 1")  # fmt: skip
        try:
            return PairwiseAUCLoss(float(c1), float(c2))
        except UserError as error:
            st.error(f"{error}; using c1 = {PairwiseAUCLoss.c1:g}, c2 = {PairwiseAUCLoss.c2:g}")
            return PairwiseAUCLoss()
