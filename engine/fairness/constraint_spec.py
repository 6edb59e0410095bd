"""The frozen description of one fairness constraint, as it appears in a run's specification."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from engine.errors import UserError

Pairs = Literal["all", "vs_rest", "vs_mean"]
SurrogateName = Literal["ramp", "sigmoid"]
GridMode = Literal["inside", "literal"]

OptionValue = float | int | str


@dataclass(frozen=True)
class ConstraintSpec:
    """A constraint family with its parameters; hashable and never mutated.

    `kappa` is the allowed violation on the family's own scale (normalised KS distance for pSP,
    loss gap δ for paper 000, rate gap ε for paper 001, AUC gap κ for paper 004).
    `interval` is I = [α, β) counted from the top of each group (paper 003, Def. 4.1).
    `options` holds the few family-specific settings as sorted (name, value) pairs, so the spec
    stays hashable; read them with `option`.
    """

    family: str
    kappa: float
    interval: tuple[float, float] | None = None
    pairs: Pairs = "all"
    surrogate: SurrogateName = "ramp"
    temperature: float = 1.0
    grid_size: int = 10
    grid: GridMode = "inside"
    threshold: float = 0.0
    options: tuple[tuple[str, OptionValue], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.family, str) or not self.family:
            raise UserError("A constraint needs a family name, e.g. 'pSP'.")
        if not _finite(self.kappa) or self.kappa < 0:
            raise UserError(f"kappa must be a finite number ≥ 0, got {self.kappa!r}.")
        if self.interval is not None:
            if len(self.interval) != 2 or not all(_finite(v) for v in self.interval):
                raise UserError(f"interval must be two numbers (α, β), got {self.interval!r}.")
            a, b = (float(v) for v in self.interval)
            if not (0.0 <= a < b <= 1.0):
                raise UserError(
                    f"interval (α, β) = ({a}, {b}) must satisfy 0 ≤ α < β ≤ 1: it is a range of "
                    "ranks counted from the top of each group (paper 003, Def. 4.1)."
                )
            object.__setattr__(self, "interval", (a, b))
        if self.pairs not in ("all", "vs_rest", "vs_mean"):
            raise UserError(f"pairs must be 'all', 'vs_rest' or 'vs_mean', got {self.pairs!r}.")
        if self.surrogate not in ("ramp", "sigmoid"):
            raise UserError(f"surrogate must be 'ramp' or 'sigmoid', got {self.surrogate!r}.")
        if not _finite(self.temperature) or self.temperature <= 0:
            raise UserError(f"temperature must be > 0, got {self.temperature!r}.")
        if (
            isinstance(self.grid_size, bool)
            or not isinstance(self.grid_size, int)
            or self.grid_size < 1
        ):
            raise UserError(f"grid_size must be a whole number ≥ 1, got {self.grid_size!r}.")
        if self.grid not in ("inside", "literal"):
            raise UserError(f"grid must be 'inside' or 'literal', got {self.grid!r}.")
        if not _finite(self.threshold):
            raise UserError(f"threshold must be a finite number, got {self.threshold!r}.")
        opts = (
            tuple(self.options.items()) if isinstance(self.options, dict) else tuple(self.options)
        )
        names = [k for k, _ in opts]
        if len(set(names)) != len(names):
            raise UserError(f"Repeated constraint option in {names}.")
        object.__setattr__(self, "options", tuple(sorted((str(k), v) for k, v in opts)))

    def option(self, name: str, default: OptionValue) -> OptionValue:
        """The family-specific option `name`, or `default` when the spec does not set it."""
        for key, value in self.options:
            if key == name:
                return value
        return default


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
