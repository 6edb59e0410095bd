"""Open SQLite connections to run stores, kept per thread and reused.

Opening and closing a connection for every statement makes each close a WAL checkpoint with an
fsync: about 10 ms here, most of the cost of a small write (a worker's batch of records, a
status change), and most of the wall time of a short run's bookkeeping. A thread keeps its
last few connections open instead; one whose file was replaced or removed since (a store
folder deleted and made again) is closed and opened afresh, and the least recently used is
closed when the thread has too many, so a process that touches many stores holds few files.
A thread's connections close when it ends.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

OPEN_PER_THREAD = 4  # connections a thread keeps open, to as many stores
BUSY_TIMEOUT_SECONDS = 60


class _ThreadConnections(threading.local):
    def __init__(self) -> None:
        # path → (the file's identity when opened, the connection), least recently used first
        self.open: OrderedDict[Path, tuple[tuple[int, int], sqlite3.Connection]] = OrderedDict()
        self.pid = os.getpid()


_THREAD = _ThreadConnections()


def store_connection(path: Path) -> sqlite3.Connection:
    """This thread's connection to the SQLite file at `path` (made if there is none, or if the
    file is not the one it was opened on): autocommit, WAL, synchronous NORMAL."""
    if _THREAD.pid != os.getpid():  # a forked child never uses its parent's connections
        _THREAD.open = OrderedDict()
        _THREAD.pid = os.getpid()
    kept = _THREAD.open.pop(path, None)
    if kept is not None:
        identity, db = kept
        if identity == _identity(path):
            _THREAD.open[path] = kept
            return db
        db.close()
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}")
    _THREAD.open[path] = (_identity(path), db)
    while len(_THREAD.open) > OPEN_PER_THREAD:
        _, (_, oldest) = _THREAD.open.popitem(last=False)
        oldest.close()
    return db


def _identity(path: Path) -> tuple[int, int]:
    """The file's device and inode: another file at the same path has another."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return (-1, -1)
    return (status.st_dev, status.st_ino)
