"""Start-up work of the server process, done once before anyone connects: import what the pages
use and prepare the default data, so that the first visitor does not wait for them.

The order follows the Explore page's: the data modules and the default data first, then the
charts, then the problem controls and the solver catalogue. None of it imports torch: solvers
run in the worker processes. A page that needs a module still being imported waits only for
that module.
"""

from __future__ import annotations

import contextlib
import importlib
import threading

from engine.errors import UserError

AFTER_THE_DATA = (
    "pages.shared.data_summary",
    "pages.shared.views",
    "engine.report",
    "pages.shared.problem_controls",
    "engine.runs.submit",
    "engine.runs.frontier",
    "engine.runs.results",
)


def preload() -> None:
    from pages.shared import data_controls

    with contextlib.suppress(UserError):  # the page says why when it prepares the same data
        data_controls.prepared_data(*data_controls.default_data())
    for name in AFTER_THE_DATA:
        importlib.import_module(name)


def prepare_default_data() -> None:
    """Prepare the default view's data into the data cache. Setup does this once, so that a
    server's first start reads the arrays from disk instead of preparing them."""
    from engine.data.sources import load_prepared
    from pages.shared.data_controls import default_data

    load_prepared(*default_data())


def start_preload() -> threading.Thread:
    """Preload in a daemon thread: the server answers requests meanwhile."""
    thread = threading.Thread(target=preload, name="preload", daemon=True)
    thread.start()
    return thread
