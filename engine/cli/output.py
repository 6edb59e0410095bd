"""Result files the commands write."""

from __future__ import annotations

from pathlib import Path

from engine.errors import UserError


def write_output(path: Path, text: str) -> None:
    """Write a result file; a path that cannot be written is the user's to fix."""
    try:
        path.write_text(text)
    except OSError as error:
        raise UserError(f"cannot write {path}: {error.strerror or error}") from None
