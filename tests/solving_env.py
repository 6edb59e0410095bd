"""The environment of a program a test starts that solves: beside the other test processes
(pytest-xdist) it solves on its share of the cores, as they do (tests/conftest.py). Threads
beyond that share only wait for a core, and spin while they wait."""

from __future__ import annotations

import os

from engine.threads import share_of_cores


def test_process_threads() -> int | None:
    """The solving threads each test process has beside the others, None when it runs alone."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return share_of_cores(workers) if workers > 1 else None


def solving_env() -> dict[str, str]:
    """This process's environment, with numba's and torch's threads limited to the share of
    the cores each test process has."""
    env = dict(os.environ)
    threads = test_process_threads()
    if threads is not None:
        env |= {"NUMBA_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    return env
