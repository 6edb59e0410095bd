"""Sidebar widgets for paper 004's AUC-gap constraint: which metric of App. A it holds to κ,
and c1, c2 of its square-loss surrogate c1 (t − c2)²."""

from __future__ import annotations

import streamlit as st

from engine.fairness.constraint_spec import OptionValue
from engine.fairness.families import AUC_GAP_DEFAULTS, AUC_GAP_VARIANTS, auc_gap_options
from pages.shared.state import initial

KEYS = ("auc_variant", "auc_c1", "auc_c2")
VARIANT_WORDS = {
    "group": "Ex. 1 group AUC",
    "inter": "Ex. 2 inter-group pairwise AUC (xAUC)",
    "intra": "Ex. 3 intra-group pairwise AUC",
    "average_positive": "Ex. 4 positive average equality gap",
    "average_negative": "Ex. 4 negative average equality gap",
    "bpsn": "Ex. 5 BPSN vs BNSP AUC",
}


def auc_gap_controls() -> tuple[tuple[str, OptionValue], ...]:
    """The example of paper 004, App. A and the surrogate's c1, c2, as the constraint's options
    (only those that differ from the defaults)."""
    initial("auc_variant", AUC_GAP_DEFAULTS["variant"])
    initial("auc_c1", AUC_GAP_DEFAULTS["c1"], float)
    initial("auc_c2", AUC_GAP_DEFAULTS["c2"], float)
    variant = st.sidebar.selectbox("AUC metric (paper 004, App. A)", AUC_GAP_VARIANTS,
                                   key="auc_variant", format_func=VARIANT_WORDS.get,
                                   help="|AUC(G1, G1′) − AUC(G2, G2′)| for the sets of "
                                   "the example; a group is compared with each other one")  # fmt: skip
    c1 = st.sidebar.number_input("Surrogate c1", min_value=0.0, step=0.5, format="%g",
                                 key="auc_c1", help="c1 > 0 of c1 (t − c2)²; paper 004 uses "
                                 "0.5 or 1")  # fmt: skip
    c2 = st.sidebar.number_input("Surrogate c2", min_value=0.0, step=0.5, format="%g",
                                 key="auc_c2", help="c2 > 0 of c1 (t − c2)²; paper 004 uses 1")  # fmt: skip
    return tuple(auc_gap_options(variant=variant, c1=float(c1), c2=float(c2)).items())
