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
HASH_LENGTH = 24
KEY = re.compile(rf"([0-9a-f]{{{HASH_LENGTH}}})/(.+)")


def save_upload(content: bytes, name: str, root: Path | None = None) -> Path:
    """Write uploaded bytes once, as `<root>/uploads/<content hash>/<name>`; the size is checked
    first and the name reduced to a plain file name."""
    shown = safe_file_name(name)
    check_size(len(content), shown)
    folder = (root or cache_root()) / "uploads" / hashlib.sha256(content).hexdigest()[:HASH_LENGTH]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / shown
    if not path.exists():
        path.write_bytes(content)
    return path


def safe_file_name(name: str) -> str:
    """The last part of `name` with unusual characters replaced by "_" ("upload.csv" if none)."""
    base = UNSAFE.sub("_", name.replace("\\", "/").rsplit("/", 1)[-1]).strip(" .")
    return base[-MAX_NAME:] or "upload.csv"


def upload_key(path: Path) -> str:
    """What names a saved upload in a link: "<content hash>/<file name>"."""
    return f"{path.parent.name}/{path.name}"


def find_upload(key: str, root: Path | None = None) -> tuple[str, Path | None]:
    """The file name a link's upload `key` names, and the saved file when this machine still
    keeps it (None otherwise, and for a key that is not one: a hand-edited link must not
    reach outside the uploads folder)."""
    match = KEY.fullmatch(key)
    if match is None or safe_file_name(match[2]) != match[2]:
        return safe_file_name(key), None
    path = (root or cache_root()) / "uploads" / match[1] / match[2]
    return match[2], path if path.is_file() else None
