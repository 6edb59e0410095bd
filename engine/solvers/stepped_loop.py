"""An optimiser that owns its loop (scipy's SLSQP), driven one function evaluation at a time.

The shared driver steps a solver in small calls so that it can log, keep budgets and cancel
(DESIGN.md: "Solvers that own their loop plug into the driver through an adapter"). scipy's
`minimize` cannot be paused, so it runs in a thread of its own: whenever it asks for the value
at a point it hands the point over and waits, and the solver's `step` evaluates it on the
caller's thread, on the solver's clock. A loop left unfinished (a budget ran out, the run was
cancelled) is stopped when the `SteppedLoop` is collected.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

Ask = Callable[[np.ndarray], Any]  # the optimiser's function: a point in, the caller's answer out


class _Stopped(Exception):
    """Raised inside the optimiser's thread to end a loop nobody is stepping any more."""


_STOP = object()


class SteppedLoop:
    """Runs `optimise(ask)` in a thread; `next_point` returns each point it asks about (None
    once it has returned, with its return value in `result`), and `answer` replies."""

    def __init__(self, optimise: Callable[[Ask], Any]) -> None:
        self._asks: queue.Queue = queue.Queue()
        self._answers: queue.Queue = queue.Queue()
        self.result: Any = None
        threading.Thread(
            target=_run, args=(optimise, self._asks, self._answers), daemon=True
        ).start()
        # the thread holds the queues, never `self`: collecting `self` ends the loop
        weakref.finalize(self, self._answers.put, _STOP)

    def next_point(self) -> np.ndarray | None:
        kind, payload = self._asks.get()
        if kind == "error":
            raise payload
        if kind == "done":
            self.result = payload
            return None
        return payload

    def answer(self, value: Any) -> None:
        self._answers.put(value)


def _run(optimise: Callable[[Ask], Any], asks: queue.Queue, answers: queue.Queue) -> None:
    def ask(point: np.ndarray) -> Any:
        asks.put(("ask", np.array(point, dtype=np.float64)))
        reply = answers.get()
        if reply is _STOP:
            raise _Stopped
        return reply

    try:
        result = optimise(ask)
    except _Stopped:
        return
    except Exception as error:  # handed to the stepping thread, which raises it
        asks.put(("error", error))
        return
    asks.put(("done", result))
