"""Several people on one server at once (bench/endurance.py runs ten, and more): each browser
session starts its own run and κ sweep on Adult; every one completes, each session sees its own
settings and results and never another's, and the server's memory stays bounded."""

from __future__ import annotations

import pytest
from endurance_support import MemoryWatch, rss_mb, run_sessions, visit

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SESSIONS = 2  # at once, each with its own κ values: enough to show a page another's results
# the server's growth over the sessions: measured, 15 MB for three, and 7 MB over two rounds of
# ten in bench/endurance.py (memory held per session or per poll would show here)
GROWTH_LIMIT_MB = 150


def test_concurrent_sessions_see_their_own_runs_and_the_server_memory_stays_bounded(
    app_server, browser
):
    visit(browser, app_server.url)
    before = rss_mb(app_server.pid)
    with MemoryWatch(lambda: rss_mb(app_server.pid)) as memory:
        sessions = run_sessions(browser, app_server.url, app_server.home, SESSIONS)
    for session in sessions:
        assert (session.foreign, session.missing) == ([], []), session.number
    print(f"server RSS {before:.0f} MB before, {memory.peak_mb:.0f} MB at most")
    assert memory.peak_mb - before < GROWTH_LIMIT_MB
