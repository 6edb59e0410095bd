"""Starting a real FairFront server on a free localhost port; where Chromium is."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
ARTIFACTS = PROJECT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# the verdict sentence of a constrained run on the Explore page about its test value: meets,
# misses or cannot tell, the value, its 95 % interval and κ
VERDICT = (
    r"(Meets κ on|Misses κ on|Cannot tell at this size: on) the test set:? {quantity} = "
    r"(\d\.\d{{4}}), 95 % interval (\d\.\d{{3}})–(\d\.\d{{3}}), (?:all [≤>]|which "
    r"contains) κ = (\d+(?:\.\d+)?)"
)
# every run of the view has ended and the constrained one has its verdict on `quantity`
SETTLED = """([pattern]) => !document.body.innerText.match(/\\b(running|queued)\\b/)
    && new RegExp(pattern).test(document.body.innerText)"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(home: Path, cache: Path, port: int | None = None) -> tuple[subprocess.Popen, str]:
    """A server on `port` (default: a free one), once it answers; it leads its own process
    group."""
    port = port or free_port()
    env = {**os.environ, "FAIRFRONT_HOME": str(home), "FAIRFRONT_CACHE": str(cache)}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
        ],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://localhost:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
                if response.status == 200:
                    return server, url
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the Streamlit server did not start")
