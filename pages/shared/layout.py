"""The house page layout, set once for every page: less empty space above the title, so that a
laptop's first screen (1280×720) holds a page's results, not only its heading."""

from __future__ import annotations

import streamlit as st

# Streamlit's main column starts 6rem down and its title is 2.75rem high; the toolbar above the
# column is 3.75rem, so 4rem clears it
COMPACT_TOP = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 4rem; padding-bottom: 3rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2.1rem; padding-top: 0.25rem; }
</style>"""


# what a table shows in a cell without a value (`st.dataframe`'s placeholder), as the report and
# the command line do; Streamlit's own is the word "None"
MISSING = "—"


def compact_page() -> None:
    st.html(COMPACT_TOP)  # style tags alone: applied to the page without taking room in it
