"""Fixtures: a real FairFront server and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest
from browser_support import CHROMIUM, CHROMIUM_FLAGS, start_server

from engine.runs.runner import stop_runners


class Served(NamedTuple):
    url: str
    home: Path  # the server's run store
    pid: int  # the server's process


@pytest.fixture
def app_server(tmp_path, isolated_cache):
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    home = tmp_path / "runs"
    process, url = start_server(home, isolated_cache)
    yield Served(url, home, process.pid)
    stop_runners(home)
    os.killpg(process.pid, 9)
    process.wait()


@pytest.fixture
def server(app_server):
    """The server's address and run store."""
    return app_server.url, app_server.home


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()
