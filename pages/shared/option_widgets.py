"""A widget for one declared option (`engine.options`), rendered from its declaration: a list
for a text option with choices (each shown by its words), a checkbox, or a number input that
keeps to the option's bounds; an optional option is a text box whose empty text means unset.
The solvers' options and the constraint families' own options are both drawn with it."""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from engine.options import OptionField

FROM_STATE = object()  # the widget's value is the one `pages.shared.state.initial` set


def option_widget(option: OptionField, key: str, shown: Any = FROM_STATE) -> Any:
    """The widget of `option` under `key`, starting at `shown`, or at the session's value for
    `key` when none is given (a widget whose value comes from the URL)."""
    label = option.label or option.name
    start = {} if shown is FROM_STATE else {"value": shown}
    if option.optional:
        unset = f"{option.help}. Leave it empty for unset."
        return st.text_input(label, key=key, help=unset, **start)
    if option.choices:
        words = dict(option.choice_words)
        index = {} if shown is FROM_STATE else {"index": option.choices.index(shown)}
        return st.selectbox(
            label,
            option.choices,
            key=key,
            help=option.help,
            format_func=lambda choice: words.get(choice, choice),
            **index,
        )
    if option.kind is bool:
        return st.checkbox(label, key=key, help=option.help, **start)
    if option.kind is int:
        return st.number_input(
            label, step=1, format="%d", key=key, help=option.help, **start, **number_limits(option)
        )
    if option.kind is float:
        value = option.default if shown is FROM_STATE else shown
        return st.number_input(
            label,
            step=_float_step(value),
            format="%g",
            key=key,
            help=option.help,
            **start,
            **number_limits(option),
        )
    return st.text_input(label, key=key, help=option.help, **start)


def number_limits(option: OptionField) -> dict[str, int | float]:
    """The option's bounds as a number input's `min_value` and `max_value`, which include their
    limit: an open bound (> 0) becomes the next whole number inside it for an int (1), the next
    float for a float (math.nextafter), so the widget offers exactly the values the config
    accepts. Streamlit wants them of the value's type."""
    limits: dict[str, int | float] = {}
    whole = option.kind is int
    if option.minimum is not None:
        limits["min_value"] = math.ceil(option.minimum) if whole else float(option.minimum)
    elif option.above is not None:
        above = option.above
        limits["min_value"] = math.floor(above) + 1 if whole else math.nextafter(above, math.inf)
    if option.maximum is not None:
        limits["max_value"] = math.floor(option.maximum) if whole else float(option.maximum)
    elif option.below is not None:
        below = option.below
        limits["max_value"] = math.ceil(below) - 1 if whole else math.nextafter(below, -math.inf)
    return limits


def _float_step(value: float) -> float | None:
    """One unit of the value's leading digit (ε = 0.001 steps by 0.001); Streamlit's 0.01 for 0."""
    return 10.0 ** math.floor(math.log10(abs(value))) if value else None
