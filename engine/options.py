"""Declared options, without torch: a frozen dataclass of `option` fields says each option's
default, help, kind, choices and bounds, so that a page, the command line and the estimator can
render, parse and check them from the declaration alone. A solver's config (beside its card,
`engine.solvers.catalogue`) and a constraint family's options (`engine.fairness.families`) are
declared this way.

An option whose default is None is *unset* until given: the owner then chooses (e.g. the
quadratic baselines' step η = 1/L). Text that means "leave it unset" (`UNSET_WORDS`) is read as
None, so a page's empty text box and a command line's `--option step=auto` ask for the same thing.

An option declares its bounds (`option(..., above=0)`) and its choices; every declaration is an
`Options`, whose construction refuses a value outside them with the same sentence for every
owner ("option epsilon must be > 0, not -1"), so each checks by hand only what relates options
to each other.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import typing
from dataclasses import dataclass, field
from typing import Any

from engine.errors import UserError

UNSET_WORDS = frozenset({"", "none", "auto"})
_KIND_WORDS = {bool: "true or false", int: "a whole number", float: "a finite number", str: "text"}
_BOUNDS = ("minimum", "above", "maximum", "below")  # an option's bounds (`option`)


@dataclass(frozen=True)
class OptionField:
    """One declared option: `kind` is the type of a set value (bool, int, float or str);
    `optional` options default to None, meaning unset (the owner chooses); `choices` are the
    values a text option may take (empty: any). A number's bounds: `minimum` (value ≥ it) or
    `above` (value > it), and `maximum` (≤) or `below` (<); None where it has none. `label` is
    its short name on a page (empty: its name) and `choice_words` says what each choice is,
    as (choice, words) pairs (empty: the choices speak for themselves)."""

    name: str
    default: Any
    help: str
    kind: type
    optional: bool
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    above: float | None = None
    maximum: float | None = None
    below: float | None = None
    label: str = ""
    choice_words: tuple[tuple[str, str], ...] = ()

    @property
    def range_words(self) -> str:
        """The bounds as "> 0", "≥ 1", "in (0, 1]", or empty text where there are none."""
        low = self.minimum if self.minimum is not None else self.above
        high = self.maximum if self.maximum is not None else self.below
        if low is not None and high is not None:
            opening = "[" if self.minimum is not None else "("
            closing = "]" if self.maximum is not None else ")"
            return f"in {opening}{_number(low)}, {_number(high)}{closing}"
        if low is not None:
            return f"{'≥' if self.minimum is not None else '>'} {_number(low)}"
        if high is not None:
            return f"{'≤' if self.maximum is not None else '<'} {_number(high)}"
        return ""

    def refusal(self, value: Any) -> str | None:
        """Why `value` is refused for this option (None: it is not): outside its choices or its
        bounds, or a number that is not finite. An unset optional option is not checked."""
        if value is None and self.optional:
            return None
        if self.choices and value not in self.choices:
            return f"option {self.name} must be one of {', '.join(self.choices)}, not '{value}'"
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None
        if not math.isfinite(value):
            return f"option {self.name} must be a finite number, not {value}"
        if not self._within(value):
            return f"option {self.name} must be {self.range_words}, not {_number(value)}"
        return None

    def _within(self, value: float) -> bool:
        return (
            (self.minimum is None or value >= self.minimum)
            and (self.above is None or value > self.above)
            and (self.maximum is None or value <= self.maximum)
            and (self.below is None or value < self.below)
        )

    def to_dict(self) -> dict[str, Any]:
        bounds = {bound: getattr(self, bound) for bound in _BOUNDS}
        return {
            "name": self.name,
            "default": self.default,
            "help": self.help,
            "type": self.kind.__name__,
            "optional": self.optional,
            "choices": list(self.choices),
            **bounds,
            "range": self.range_words,
        }


def config_fields(config_class: type) -> list[OptionField]:
    """Every option of a declaration (a solver's config, a family's options), with its default,
    help (the field's `doc`), type, choices and bounds."""
    return list(_option_fields(config_class))


@functools.cache
def _option_fields(config_class: type) -> tuple[OptionField, ...]:
    # cached: every construction of a config checks its options (`Options`)
    hints = typing.get_type_hints(config_class)
    return tuple(
        OptionField(
            f.name,
            f.default,
            f.metadata.get("doc", ""),
            *_kind(hints[f.name]),
            f.metadata.get("choices", ()),
            **{bound: f.metadata.get(bound) for bound in _BOUNDS},
            label=f.metadata.get("label", ""),
            choice_words=f.metadata.get("choice_words", ()),
        )
        for f in dataclasses.fields(config_class)
    )


def _number(value: float) -> str:
    """A bound or a value as the messages show it: 1, 0.5, 1e-09, 1000000000."""
    return str(value) if isinstance(value, int) else f"{value:g}"


@dataclass(frozen=True)
class Options:
    """The base of every declaration of options, a frozen dataclass of `option` fields:
    constructing one, directly or by `config_from_dict`, refuses a set option outside its choices
    or bounds, or a float that is not finite. A declaration that also checks options against
    each other extends `__post_init__`, calling this one first (`super().__post_init__()`)."""

    def __post_init__(self) -> None:
        for option_field in config_fields(type(self)):
            refusal = option_field.refusal(getattr(self, option_field.name))
            if refusal is not None:
                raise UserError(refusal)


def _kind(hint: Any) -> tuple[type, bool]:
    """(value type, optional) of an annotation such as `float` or `float | None`."""
    members = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    optional = type(None) in typing.get_args(hint)
    if len(members) != 1 or members[0] not in _KIND_WORDS:
        raise TypeError(f"options are bool, int, float or str (or one of them | None): {hint!r}")
    return members[0], optional


def config_from_dict(config_class: type, values: dict[str, Any] | None) -> Any:
    """A declaration of options (`config_class`) from user-given values (text or typed),
    rejecting unknown names with the known ones and values of the wrong kind with the kind
    needed."""
    values = dict(values or {})
    fields = {f.name: f for f in config_fields(config_class)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise UserError(
            f"unknown option(s) {', '.join(unknown)}; the options are {', '.join(fields)}"
        )
    return config_class(**{name: _coerce(fields[name], v) for name, v in values.items()})


def _coerce(option: OptionField, value: Any) -> Any:
    if option.optional and (value is None or _unset_text(value)):
        return None
    typed = _typed(option.kind, value)
    if typed is None:
        unset = ", or empty text for unset" if option.optional else ""
        raise UserError(
            f"option {option.name} needs {_KIND_WORDS[option.kind]}{unset}, not '{value}'"
        )
    return typed


def _typed(kind: type, value: Any) -> Any:
    """`value` as a `kind` (text is parsed; a float must be finite), or None if it is none."""
    try:
        if isinstance(value, str) and kind is not str:
            value = _parse(value.strip(), kind)
        if isinstance(value, bool) != (kind is bool):
            return None
        if kind is float and isinstance(value, int | float):
            return float(value) if math.isfinite(value) else None
    except (ValueError, OverflowError):
        return None
    return value if isinstance(value, kind) else None


def _unset_text(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in UNSET_WORDS


def _parse(text: str, kind: type) -> Any:
    if kind is bool:
        if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(text)
        return text.lower() in ("true", "1", "yes")
    return kind(text)


def option(
    default: Any,
    doc: str,
    choices: tuple[str, ...] = (),
    *,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
    label: str = "",
    choice_words: tuple[tuple[str, str], ...] = (),
) -> Any:
    """A config field with its documentation (shown by `python -m engine solvers`), for a text
    option the values it may take (a page offers them as a list, each shown by its
    `choice_words` where given), and for a number its bounds: `minimum` (value ≥ it) or `above`
    (value > it), `maximum` (≤) or `below` (<), which `Options` checks and the pages' number
    inputs keep to; `label` is its short name on a page."""
    if (minimum is not None and above is not None) or (maximum is not None and below is not None):
        raise TypeError(
            "an option has one lower bound (minimum or above) and one upper bound (maximum or below)"
        )
    bounds = {"minimum": minimum, "above": above, "maximum": maximum, "below": below}
    metadata = {"doc": doc, "choices": choices, "label": label, "choice_words": choice_words}
    return field(default=default, metadata=metadata | bounds)
