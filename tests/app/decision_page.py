"""The decision view alone, as a page for its tests: the run is the session's "decision_run"."""

import streamlit as st

from engine.runs import Store
from pages.shared.decision_view import decision_view

decision_view(Store(), st.session_state["decision_run"])
