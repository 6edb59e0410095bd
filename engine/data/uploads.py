"""Uploaded files on disk: one folder per content hash (so identical uploads share a cache entry)
holding the file under its own name (so the data set is shown by the name the user knows)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from engine.data.csv_text import check_size
from engine.data.paths import cache_root

UNSAFE = re.compile(r"[^\w.\- ()]+")  # anything that could leave the folder or trouble a shell
MAX_NAME = 120


def save_upload(content: bytes, name: str, root: Path | None = None) -> Path:
    """Write uploaded bytes once, as `<root>/uploads/<content hash>/<name>`; the size is checked
    first and the name reduced to a plain file name."""
    shown = safe_file_name(name)
    check_size(len(content), shown)
    folder = (root or cache_root()) / "uploads" / hashlib.sha256(content).hexdigest()[:24]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / shown
    if not path.exists():
        path.write_bytes(content)
    return path


def safe_file_name(name: str) -> str:
    """The last part of `name` with unusual characters replaced by "_" ("upload.csv" if none)."""
    base = UNSAFE.sub("_", name.replace("\\", "/").rsplit("/", 1)[-1]).strip(" .")
    return base[-MAX_NAME:] or "upload.csv"
