"""Reading fields of a JSON document that came from a file: each field of the expected type, or
a `UserError` that names it, so that a damaged or hand-edited document is refused with a
sentence rather than a traceback deep inside the code that would use it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from engine.errors import UserError


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    """`value` when it is a JSON object (a dict with text keys)."""
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise UserError(f"{what} is not a JSON object")
    return value


def entry(document: Mapping[str, Any], name: str, kind: type | tuple[type, ...], what: str) -> Any:
    """`document[name]`, which must be there and of `kind` (a bool is not a number here)."""
    if name not in document:
        raise UserError(f"{what} has no '{name}'")
    value = document[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise UserError(f"'{name}' of {what} is not {_kind_words(kinds)}")
    if not isinstance(value, kinds):
        raise UserError(f"'{name}' of {what} is not {_kind_words(kinds)}")
    return value


def number(document: Mapping[str, Any], name: str, what: str) -> float:
    """A finite number."""
    value = float(entry(document, name, (int, float), what))
    if not math.isfinite(value):
        raise UserError(f"'{name}' of {what} is not a finite number")
    return value


def texts(document: Mapping[str, Any], name: str, what: str) -> tuple[str, ...]:
    """A list of text values."""
    values = entry(document, name, list, what)
    if not all(isinstance(v, str) for v in values):
        raise UserError(f"'{name}' of {what} is not a list of text values")
    return tuple(values)


def text_map(document: Mapping[str, Any], name: str, values: type, what: str) -> dict[str, Any]:
    """An object from text to values of type `values`."""
    found = mapping(entry(document, name, dict, what), f"'{name}' of {what}")
    if not all(isinstance(v, values) and not isinstance(v, bool) for v in found.values()):
        raise UserError(f"'{name}' of {what} holds values that are not {_kind_words((values,))}")
    return dict(found)


def _kind_words(kinds: tuple[type, ...]) -> str:
    if int in kinds and float in kinds:
        kinds = tuple(k for k in kinds if k is not int)  # "a number" says both
    words = {
        str: "text",
        int: "a whole number",
        float: "a number",
        bool: "true or false",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }
    return " or ".join(dict.fromkeys(words.get(k, k.__name__) for k in kinds))
