"""The command-line flags of the constraint families' own options, rendered from their
declarations (`engine.fairness.family_options`): a family's short name heads its flags, as in
`--loss-condition` for group_loss_gap's condition and `--auc-variant` for auc_gap's variant."""

from __future__ import annotations

import argparse

from engine.errors import UserError
from engine.fairness.families import family_entry, family_names, set_options
from engine.options import OptionField, config_fields


def _flag(family: str, option: OptionField) -> str:
    return f"--{family_entry(family).short}-{option.name.replace('_', '-')}"


def _dest(family: str, option: OptionField) -> str:
    return f"family_option.{family}.{option.name}"


def _declared() -> list[tuple[str, OptionField]]:
    return [
        (f, option) for f in family_names() for option in config_fields(family_entry(f).options)
    ]


def add_family_option_arguments(group: argparse._ArgumentGroup) -> None:
    """A flag for each option every family declares, with its help, choices and default; a
    value is read and checked by the family's declaration, not by argparse."""
    for family, option in _declared():
        words = f"{family}: {option.help}; default {option.default}"
        if option.range_words:
            words += f" ({option.range_words})"
        group.add_argument(
            _flag(family, option),
            dest=_dest(family, option),
            choices=option.choices or None,
            metavar=None if option.choices else option.kind.__name__.upper(),
            help=words.replace("%", "%%"),
        )


def family_options_from_args(args: argparse.Namespace, family: str) -> dict:
    """The options of `family` its flags set (those that differ from the defaults); a flag of
    another family's option is refused, saying which family it sets."""
    for other, option in _declared():
        if other != family and getattr(args, _dest(other, option)) is not None:
            flags = [_flag(other, o) for o in config_fields(family_entry(other).options)]
            sets = "sets" if len(flags) == 1 else "set"
            raise UserError(f"{_words(flags)} {sets} the {other} constraint only")
    given = {
        option.name: getattr(args, _dest(family, option))
        for option in config_fields(family_entry(family).options)
    }
    return set_options(family, given)


def _words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
