"""Widget values that survive page changes and live in the URL, so a link reproduces a view.

Streamlit forgets a widget's value when its page is left; each value is therefore mirrored in a
plain session key, and written to the query string. On a fresh visit the query string wins.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

_KEEP = "keep:"


def initial(key: str, default: Any, cast=str) -> None:
    """Set the widget `key`'s starting value: URL, then the value kept from another page,
    then `default`. Call before creating the widget with `key=key` (and no `value`)."""
    if key in st.session_state:
        # a value set by a widget of another page is dropped unless it is set again here
        st.session_state[key] = st.session_state[key]
        return
    if key in st.query_params and f"{_KEEP}{key}" not in st.session_state:
        try:
            st.session_state[key] = _parse(st.query_params.get_all(key), default, cast)
            return
        except (TypeError, ValueError):
            pass  # a hand-edited URL with a bad value falls back to the default
    st.session_state[key] = st.session_state.get(f"{_KEEP}{key}", default)


def remember(*keys: str) -> None:
    """Keep the current values of `keys` and write them to the URL."""
    for key in keys:
        if key not in st.session_state:
            continue
        value = st.session_state[key]
        st.session_state[f"{_KEEP}{key}"] = value
        if isinstance(value, list | tuple):
            st.query_params[key] = [str(v) for v in value]
        else:
            st.query_params[key] = str(value)


def _parse(values: list[str], default: Any, cast) -> Any:
    if isinstance(default, list | tuple):
        return type(default)(cast(v) for v in values)
    if isinstance(default, bool):
        return values[-1].lower() == "true"
    return cast(values[-1])
