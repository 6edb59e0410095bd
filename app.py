"""FairFront — the entry point: page set-up and navigation between the four pages."""

import streamlit as st

st.set_page_config(page_title="FairFront", page_icon=":material/balance:", layout="wide")
navigation = st.navigation(
    [
        st.Page("pages/explore.py", title="Explore", icon=":material/tune:", default=True),
        st.Page(
            "pages/frontier.py", title="Frontier", icon=":material/show_chart:", url_path="frontier"
        ),
        st.Page("pages/runs.py", title="Runs", icon=":material/history:", url_path="runs"),
        st.Page("pages/about.py", title="About", icon=":material/menu_book:", url_path="about"),
    ]
)
navigation.run()
