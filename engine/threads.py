"""How many threads one process's solving may use in the compiled loops of the solvers
(`engine.solvers.paper003.idca_kernel` splits a step's passes over the rows among threads). Torch's
operations stay on one thread: the driver (`engine.solvers.driver.solve`) sets that, since a
solver's tensor operations are many and small.

Processes that solve side by side (the runner's workers, a Dask worker's tasks) share the cores:
more threads than cores make every step wait for a thread that is not running."""

from __future__ import annotations

import os

import numba


def share_of_cores(processes: int) -> int:
    """The threads each of `processes` solving processes may use on this machine (at least 1)."""
    return max(1, (os.cpu_count() or 1) // max(1, processes))


def use_threads(threads: int) -> None:
    """Let this process's compiled loops (called from this thread) use `threads` threads."""
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
