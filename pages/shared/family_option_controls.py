"""The sidebar widgets of a constraint family's own options (group_loss_gap's losses compared,
auc_gap's metric and surrogate, pSP's ramp means), drawn from the family's declaration
(`engine.fairness.family_options`); their keys, and so the page's links, are the family's short
name and the option's ("auc_variant")."""

from __future__ import annotations

import streamlit as st

from engine.fairness.constraint_spec import OptionValue
from engine.fairness.families import FAMILIES, family_entry, set_options
from engine.options import OptionField, config_fields
from pages.shared.option_widgets import option_widget
from pages.shared.state import initial

_CASTS = {bool: bool, int: int, float: float, str: str}


def option_key(family: str, option: OptionField) -> str:
    return f"{family_entry(family).short}_{option.name}"


# every family option's widget key, for the page's links
KEYS = tuple(
    option_key(family, option)
    for family, entry in FAMILIES.items()
    for option in config_fields(entry.options)
)


def family_option_controls(family: str) -> tuple[tuple[str, OptionValue], ...]:
    """The widgets of `family`'s options, folded in the sidebar under the family's quantity,
    and the options they set (those that differ from the defaults, as the constraint's spec
    stores them)."""
    entry = family_entry(family)
    options = config_fields(entry.options)
    if not options:
        return ()
    values = {}
    with st.sidebar.expander(f"{entry.quantity} options"):
        for option in options:
            key = option_key(family, option)
            initial(key, option.default, _CASTS[option.kind])
            values[option.name] = option_widget(option, key)
    return tuple(set_options(family, values).items())
