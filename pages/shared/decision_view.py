""" "Choose this model": a run's decision form, the decision record to download once it is made,
and the decisions already stored for the run (`engine.runs.decision`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.errors import UserError
from engine.runs import Store
from engine.runs.decision import Decision, add_decision, chosen_run, decide, decisions
from engine.runs.decision_record import decision_record
from engine.runs.decision_words import interval_label
from pages.shared.layout import MISSING

RECORD_KEY = "decision_record_{run_id}"  # session state: the HTML record of the choice just made


def decision_view(store: Store, run_id: str) -> None:
    """The decision form of run `run_id` in `store` (a note and a "Choose this model" button);
    once the model is chosen, a download of its decision record; then the run's stored
    decisions. A run without a model to choose (still running, failed, its data gone) gets a
    caption saying why instead of the form."""
    try:
        row = chosen_run(store, run_id)
    except UserError as error:
        st.caption(f"Choose this model: {error}.")
        return
    key = RECORD_KEY.format(run_id=row.id)
    with st.form(f"decide_{row.id}"):
        note = st.text_area(
            "Why this model",
            key=f"decision_note_{row.id}",
            placeholder="Who chooses it, for what, and why",
            help="Goes into the decision record as it is written",
        )
        chosen = st.form_submit_button("Choose this model")
    if chosen:
        try:
            decision = decide(store, row.id, note)
            record = decision_record(store, decision)
        except UserError as error:
            st.error(str(error))
        else:
            add_decision(store, decision)
            st.session_state[key] = record
    if key in st.session_state:
        st.download_button(
            "Download the decision record (HTML)",
            st.session_state[key],
            file_name=f"decision-{row.id[:8]}.html",
            mime="text/html",
            key=f"decision_download_{row.id}",
        )
    made = decisions(store, row.id)
    if made:
        st.caption(f"Decisions on this run ({len(made)})")
        st.dataframe(_decisions_frame(made), hide_index=True, width="stretch", placeholder=MISSING)


def _decisions_frame(made: list[Decision]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "when": f"{d.made.astimezone():%Y-%m-%d %H:%M}",
                "κ": "—" if d.kappa is None else f"{d.kappa:g}",
                "I": interval_label(d.interval),
                "verdict": d.verdict,
                "model file SHA-256": d.checksum,
                "note": d.note,
            }
            for d in made
        ]
    )
