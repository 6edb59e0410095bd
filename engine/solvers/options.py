"""Run budgets and solver options, without torch: what a run specification holds about its
solver, so the app and the command line can build, check and list runs without loading solvers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from engine.errors import UserError


@dataclass(frozen=True)
class Budget:
    """Stop after this many solver iterations and/or wall seconds (None: no limit)."""

    max_iterations: int | None = None
    max_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.max_iterations is not None and self.max_iterations < 1:
            raise UserError("the iteration budget must be at least 1")
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise UserError("the time budget must be positive")


def config_from_dict(config_class: type, values: dict[str, Any] | None) -> Any:
    """A solver config from user-given values, rejecting unknown names with the known ones."""
    values = dict(values or {})
    known = {f.name: f for f in dataclasses.fields(config_class)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise UserError(
            f"unknown option(s) {', '.join(unknown)}; the options are {', '.join(known)}"
        )
    typed = {}
    for name, value in values.items():
        default = getattr(config_class, name, None)
        typed[name] = _coerce(name, value, default)
    return config_class(**typed)


def _coerce(name: str, value: Any, default: Any) -> Any:
    if isinstance(value, str) and not isinstance(default, str):
        try:
            if isinstance(default, bool):
                if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                return value.lower() in ("true", "1", "yes")
            if isinstance(default, int):
                return int(value)
            if isinstance(default, float) or default is None:
                return float(value)
        except ValueError:
            raise UserError(f"option {name} needs a number, not '{value}'") from None
    return value


def config_fields(config_class: type) -> list[dict[str, Any]]:
    """Name, default and help (the field's `doc` metadata) of every option, for listings."""
    return [
        {"name": f.name, "default": f.default, "help": f.metadata.get("doc", "")}
        for f in dataclasses.fields(config_class)
    ]


def option(default: Any, doc: str) -> Any:
    """A config field with its documentation (shown by `python -m engine solvers`)."""
    return field(default=default, metadata={"doc": doc})
