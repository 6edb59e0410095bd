"""Run budgets and solver options, without torch: what a run specification holds about its
solver, so the app and the command line can build, check and list runs without loading solvers.

An option whose default is None is *unset* until given: the solver then chooses (e.g. the
quadratic baselines' step η = 1/L). Text that means "leave it unset" (`UNSET_WORDS`) is read as
None, so a page's empty text box and a command line's `--option step=auto` ask for the same thing.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import typing
from dataclasses import dataclass, field
from typing import Any

from engine.errors import UserError

UNSET_WORDS = frozenset({"", "none", "auto"})
_KIND_WORDS = {bool: "true or false", int: "a whole number", float: "a finite number",
               str: "text"}  # fmt: skip


class BudgetClock(enum.StrEnum):
    """The clock a time budget is counted on."""

    WALL = "wall"  # as the person waiting sees it: records, evaluations and reports spend it
    SOLVER = "solver"  # the solver's own time, without them: paper 000's protocol, whose saved
    # iterates are evaluated off the clock, so solvers are compared at equal solver time


@dataclass(frozen=True)
class Budget:
    """Stop after this many solver iterations and/or seconds (None: no limit), counted on
    `clock` (wall time unless a study compares solvers at equal solver time).

    `save_every` (None: off) saves the iterate after every that many solver iterations and
    evaluates it on the train and test sets off the solver's clock, as paper 000 §3 does for its
    plots (state saved every 100 iterations, Ghost every 10); `save_seconds` saves it every that
    many seconds of the solver's clock, which suits solvers whose speeds differ a hundredfold
    (a few points per 0.5 s bin of the bands, whatever the solver).
    """

    max_iterations: int | None = None
    max_seconds: float | None = None
    save_every: int | None = None
    save_seconds: float | None = None
    clock: BudgetClock = BudgetClock.WALL

    def __post_init__(self) -> None:
        try:  # a stored spec holds the clock's word
            object.__setattr__(self, "clock", BudgetClock(self.clock))
        except ValueError:
            words = " or ".join(c.value for c in BudgetClock)
            raise UserError(f"a time budget's clock is {words}, not {self.clock!r}") from None
        if self.max_iterations is not None and self.max_iterations < 1:
            raise UserError("the iteration budget must be at least 1")
        if self.max_seconds is not None and not (
            math.isfinite(self.max_seconds) and self.max_seconds > 0
        ):
            raise UserError("the time budget must be a finite number of seconds > 0")
        if self.save_every is not None and self.save_every < 1:
            raise UserError("iterates are saved every 1 or more iterations")
        if self.save_seconds is not None and not (
            math.isfinite(self.save_seconds) and self.save_seconds > 0
        ):
            raise UserError("iterates are saved every finite number of seconds > 0")


@dataclass(frozen=True)
class OptionField:
    """One solver option: `kind` is the type of a set value (bool, int, float or str);
    `optional` options default to None, meaning unset (the solver chooses); `choices` are the
    values a text option may take (empty: any)."""

    name: str
    default: Any
    help: str
    kind: type
    optional: bool
    choices: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "default": self.default, "help": self.help,
                "type": self.kind.__name__, "optional": self.optional,
                "choices": list(self.choices)}  # fmt: skip


def config_fields(config_class: type) -> list[OptionField]:
    """Every option of a solver config, with its default, help (the field's `doc`) and type."""
    hints = typing.get_type_hints(config_class)
    return [
        OptionField(
            f.name,
            f.default,
            f.metadata.get("doc", ""),
            *_kind(hints[f.name]),
            f.metadata.get("choices", ()),
        )  # fmt: skip
        for f in dataclasses.fields(config_class)
    ]


def _kind(hint: Any) -> tuple[type, bool]:
    """(value type, optional) of an annotation such as `float` or `float | None`."""
    members = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    optional = type(None) in typing.get_args(hint)
    if len(members) != 1 or members[0] not in _KIND_WORDS:
        raise TypeError(f"solver options are bool, int, float or str (or one of them | None): "
                        f"{hint!r}")  # fmt: skip
    return members[0], optional


def config_from_dict(config_class: type, values: dict[str, Any] | None) -> Any:
    """A solver config from user-given values (text or typed), rejecting unknown names with the
    known ones and values of the wrong kind with the kind needed."""
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


def require_positive(config: Any, solver: str, names: tuple[str, ...]) -> None:
    """Refuse any of the options `names` of `config` that is not a finite number > 0."""
    for name in names:
        value = getattr(config, name)
        if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
            raise UserError(f"{solver} option {name} must be a finite number > 0")


def require_choices(config: Any, solver: str) -> None:
    """Refuse a text option of `config` whose value is not among its `choices`."""
    for option_field in config_fields(type(config)):
        value = getattr(config, option_field.name)
        if option_field.choices and value not in option_field.choices:
            raise UserError(f"{solver} option {option_field.name} is one of "
                            f"{', '.join(option_field.choices)}, not '{value}'")  # fmt: skip


def option(default: Any, doc: str, choices: tuple[str, ...] = ()) -> Any:
    """A config field with its documentation (shown by `python -m engine solvers`) and, for a
    text option, the values it may take (a page offers them as a list)."""
    return field(default=default, metadata={"doc": doc, "choices": choices})
