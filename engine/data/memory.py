"""Whether loading and preparing a data set fits in this machine's memory, judged before it starts.

A job that does not fit is refused with the numbers, rather than killed by the system halfway.
The estimate is on the high side: every person row counts as passing the task's filter, and a
dense design as large as it may be. Measured on pooled synthetic ACS income data (all 51 states,
3.4 M persons, 14 columns read, 1.66 M rows prepared as CSR): a peak of 0.6 GB, estimated 1.4 GB.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.data.prepare import SPARSE_FROM_BYTES
from engine.errors import UserError

GB = 2**30
BASE_BYTES = 200 * 2**20  # a fresh worker's numpy, pandas, scipy and folktables
READ_BYTES_PER_VALUE = 24  # one state's chosen columns as parsed, before they are narrowed
# the pooled float32 columns, group ids, splits, the CSR design (float32 value and int32 column
# of about one entry per column) and the encoding's scratch; measured about 10
PREPARED_BYTES_PER_VALUE = 16
SAMPLE_BYTES = 1 << 16  # the head of a file whose lines give its mean line length


def estimate_acs_load(paths: tuple[Path, ...], n_columns: int) -> int:
    """Peak bytes of reading `n_columns` columns of the person files `paths` state by state and
    preparing the result: one state's parsed columns at a time, the pooled rows and their
    encoded design (a dense one is at most SPARSE_FROM_BYTES)."""
    rows = [estimated_rows(p) for p in paths]
    reading = max(rows, default=0) * n_columns * READ_BYTES_PER_VALUE
    prepared = sum(rows) * n_columns * PREPARED_BYTES_PER_VALUE
    return BASE_BYTES + reading + prepared + SPARSE_FROM_BYTES


def estimated_rows(path: Path) -> int:
    """Data lines of a CSV file, from its size and the mean length of its first lines."""
    size = Path(path).stat().st_size
    with open(path, "rb") as handle:
        head = handle.read(SAMPLE_BYTES)
    lines = head.count(b"\n")
    if lines < 2 or size <= len(head):
        return max(lines - 1, 0)
    return int(size / (len(head) / lines))


def available_bytes() -> int | None:
    """Memory this process can still take: /proc/meminfo's MemAvailable, lowered to what a
    container's memory limit leaves (cgroup v2); the system's free pages elsewhere; None when
    nothing says."""
    found = [b for b in (_meminfo_available(), _cgroup_headroom()) if b is not None]
    if found:
        return min(found)
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_fits(needed: int, what: str) -> None:
    """Raise UserError when `needed` bytes are more than this machine has available."""
    available = available_bytes()
    if available is None or needed <= available:
        return
    raise UserError(
        f"{what} needs about {needed / GB:.1f} GB of memory, and {available / GB:.1f} GB are "
        "available; choose fewer states (or fewer synthetic persons), close other programs, or "
        "use a machine with more memory"
    )


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_headroom() -> int | None:
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit == "max":
            return None
        return int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text())
    except (OSError, ValueError):
        return None
