"""The data sidebar and summary alone, as a page for the upload tests."""

import streamlit as st

from engine.errors import UserError
from pages.shared.data_controls import data_controls, prepared_data
from pages.shared.data_summary import data_summary

try:
    spec, options = data_controls()
    prepared = prepared_data(spec, options)
except UserError as error:
    st.error(str(error))
else:
    st.session_state["spec"] = spec
    data_summary(prepared)
