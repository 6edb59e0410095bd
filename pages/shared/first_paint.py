"""Controls first, charts a moment later: a session's first view is drawn without Plotly charts.

The browser evaluates Plotly's script (several MB) the first time a page holds a chart, which
holds back the whole first view by a second or more. So the first run of a session draws the
controls and text only, and arms a one-shot timer; once that view shows, the timer reruns the
page, and charts are drawn from then on, while the person is still reading the controls.
"""

from __future__ import annotations

import streamlit as st

PAINTED = "_first_view_painted"
ARMED = "_first_view_timer_armed"
CHARTS_AFTER_SECONDS = 2.0


def charts_ready() -> bool:
    """True once this session's first view has been shown; until then draw no Plotly chart."""
    if st.session_state.get(PAINTED):
        return True
    _rerun_once_painted()
    return False


def _rerun_once_painted() -> None:
    @st.fragment(run_every=CHARTS_AFTER_SECONDS)
    def rerun_once_painted() -> None:
        # runs inline when defined (arming it), then on the browser's timer, which starts
        # only after the view arrived; also a later full run of the page ends the wait
        if st.session_state.get(ARMED):
            st.session_state[PAINTED] = True
            st.rerun()
        st.session_state[ARMED] = True

    rerun_once_painted()
