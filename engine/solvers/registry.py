"""The registry of solvers: one name per algorithm, every one behind the same interface."""

from __future__ import annotations

from engine.errors import UserError
from engine.solvers.base import Solver

_SOLVERS: dict[str, type[Solver]] = {}


def register(cls: type[Solver]) -> type[Solver]:
    """Class decorator: make a solver available under `cls.name`."""
    if cls.name in _SOLVERS:
        raise ValueError(f"two solvers are named {cls.name}")
    _SOLVERS[cls.name] = cls
    return cls


def solver_class(name: str) -> type[Solver]:
    _load_all()
    if name not in _SOLVERS:
        raise UserError(f"unknown solver '{name}'; the solvers are: {', '.join(sorted(_SOLVERS))}")
    return _SOLVERS[name]


def solver_names() -> list[str]:
    _load_all()
    return sorted(_SOLVERS)


def _load_all() -> None:
    """Import the solver modules, whose decorators fill the registry."""
    import engine.solvers.catalogue  # noqa: F401
