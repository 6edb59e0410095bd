"""FairFront — the entry point of `streamlit run app.py`.

The server imports this module once and serves `app`, whose start-up preloads the engine; every
session then runs this file as its script: page set-up and navigation between the five pages.
"""

from contextlib import asynccontextmanager

import streamlit as st

if __name__ == "__main__":  # a session's script run
    st.set_page_config(page_title="FairFront", page_icon=":material/balance:", layout="wide")
    navigation = st.navigation(
        [
            st.Page("pages/explore.py", title="Explore", icon=":material/tune:", default=True),
            st.Page(
                "pages/frontier.py",
                title="Frontier",
                icon=":material/show_chart:",
                url_path="frontier",
            ),
            st.Page(
                "pages/benchmark.py",
                title="Benchmark",
                icon=":material/leaderboard:",
                url_path="benchmark",
            ),
            st.Page("pages/runs.py", title="Runs", icon=":material/history:", url_path="runs"),
            st.Page("pages/about.py", title="About", icon=":material/menu_book:", url_path="about"),
        ]
    )
    navigation.run()
else:  # imported by the server

    @asynccontextmanager
    async def _start_up(_app):
        from streamlit.runtime.pages_manager import PagesManager

        from pages.shared.preload import start_preload

        # Streamlit takes a `pages/` folder beside the entry point for its legacy page list
        # until some session has run `st.navigation`: a link to /frontier opened first after a
        # start would run that page alone, without this file's set-up and navigation.
        PagesManager.uses_pages_directory = False
        start_preload()
        yield

    app = st.App("app.py", lifespan=_start_up)
