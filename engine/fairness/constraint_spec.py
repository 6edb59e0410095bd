"""The frozen description of one fairness constraint, as it appears in a run's specification."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

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
    # rank levels added to pSP's grid Î (constraint generation: `engine.fairness.refine` adds
    # the ranks where a model's exact gap exceeds κ); empty for the grid alone
    ranks: tuple[float, ...] = ()

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
        ranks = tuple(sorted({float(r) for r in self.ranks}))
        if not all(_finite(r) and 0.0 <= r < 1.0 for r in ranks):
            raise UserError(f"the added ranks must lie in [0, 1), got {self.ranks!r}.")
        object.__setattr__(self, "ranks", ranks)

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-able values, without `ranks` when there are none: the canonical
        JSON (and so the run id) of a spec is what it was before the field existed."""
        fields = dataclasses.asdict(self)
        if not fields["ranks"]:
            del fields["ranks"]
        return fields

    def rank_levels(self) -> np.ndarray:
        """pSP's grid Î: `psp_grid` of the spec's interval, κ, size and mode, with the added
        `ranks`, sorted."""
        alpha, beta = self.interval if self.interval is not None else (0.0, 1.0)
        grid = psp_grid(alpha, beta, self.kappa, self.grid_size, self.grid)
        if not self.ranks or grid.size == 0:
            return grid
        return np.unique(np.concatenate([grid, self.ranks]))

    def option(self, name: str, default: OptionValue) -> OptionValue:
        """The family-specific option `name`, or `default` when the spec does not set it."""
        for key, value in self.options:
            if key == name:
                return value
        return default


def psp_grid(alpha: float, beta: float, kappa: float, size: int, mode: GridMode) -> np.ndarray:
    """The grid Î of rank levels p.

    "inside" (spec 003 §1.7): `linspace(α, β − κ(β − α), size, endpoint=False)`, the range of
    Lemma 5.1, so no grid point restricts ranks outside I. Empty when κ = 1 (pSP is then vacuous).
    "literal": `size` equally spaced values in I = [α, β) (paper 003, Sec. 7.1 read literally).
    """
    if mode == "inside":
        hi = beta - kappa * (beta - alpha)
        if hi <= alpha:
            return np.zeros(0)
        return np.linspace(alpha, hi, size, endpoint=False)
    if mode == "literal":
        return np.linspace(alpha, beta, size, endpoint=False)
    raise UserError(f"Unknown grid {mode!r}; use 'inside' or 'literal'.")


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
