"""Bytes to a table: size limit, text decoding and CSV parsing, each problem told in one sentence.

A file is read as UTF-8 (a byte-order mark is allowed) and, failing that, as Latin-1 when it
looks like text: Latin-1 decodes any bytes, so without that check binary data would come through
as a table of junk. A file with NUL bytes is never a text CSV.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from engine.errors import UserError

MAX_BYTES = 200 * 1024 * 1024  # as Streamlit's default upload limit, so both refuse alike
CONTROL_SHARE = 0.01  # Latin-1 text may hold a few stray control characters, binary data many
_CONTROL_BYTES = bytes(b for b in range(256) if not chr(b).isprintable() and chr(b) not in "\t\r\n")


def check_size(size: int, shown: str, max_bytes: int = MAX_BYTES) -> None:
    if size > max_bytes:
        raise UserError(
            f"{shown} is {_size(size)}, over the limit of {_size(max_bytes)} for a CSV file"
        )
    if size == 0:
        raise UserError(f"{shown} is empty")


def read_table(
    source: str | Path | bytes, name: str | None = None, max_bytes: int = MAX_BYTES
) -> tuple[pd.DataFrame, str]:
    """The table in a CSV file or in uploaded bytes, and the name to show it by."""
    if isinstance(source, bytes):
        content, shown = source, name or "uploaded table"
        check_size(len(content), shown, max_bytes)
    else:
        path = Path(source)
        shown = name or path.name
        if not path.is_file():
            raise UserError(f"CSV file not found: {path}")
        check_size(path.stat().st_size, shown, max_bytes)
        try:
            content = path.read_bytes()
        except OSError as error:
            raise UserError(f"{shown} could not be read: {error.strerror or error}") from error
    return parse_csv(decode(content, shown), shown), shown


def decode(content: bytes, shown: str) -> str:
    if b"\x00" in content:
        raise UserError(f"{shown} is not a text CSV (it holds NUL bytes); save it as a UTF-8 CSV")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    if not _latin1_text_like(content):
        raise UserError(f"{shown} is not a text CSV (it is neither UTF-8 nor Latin-1 text)")
    return content.decode("latin-1")


def parse_csv(text: str, shown: str) -> pd.DataFrame:
    try:
        frame = pd.read_csv(io.StringIO(text), skipinitialspace=True, low_memory=False)
    except pd.errors.EmptyDataError as error:
        raise UserError(f"{shown} holds no table (it is blank)") from error
    except (pd.errors.ParserError, csv.Error) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UserError(f"{shown} could not be read as CSV: {reason}") from error
    if frame.shape[1] < 2:
        raise UserError(
            f"{shown} has a single column ({frame.columns[0]!r}) but needs a label, a protected "
            "column and features separated by commas"
        )
    return frame


def _latin1_text_like(content: bytes) -> bool:
    """Few bytes that Latin-1 turns into control characters (counted in C, not per character)."""
    control = len(content) - len(content.translate(None, _CONTROL_BYTES))
    return control <= CONTROL_SHARE * len(content)


def _size(n: int) -> str:
    return f"{n / 2**20:.4g} MB" if n >= 2**20 else f"{n:,} bytes"
