"""Which model a run trains: linear (optionally with group cross-terms) or a small MLP, whose
torch module lives in `engine.mlp`; this module needs no torch, so the app can describe runs.

Parameters travel as a dict of float64 numpy arrays (the same form the run store saves), so a
solver, the store and the app agree on one representation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from engine.errors import UserError

Params = dict[str, np.ndarray]
ACTIVATIONS = ("relu", "sigmoid")
MAX_HIDDEN_WIDTH = 4096  # wider layers of a dense float64 MLP outgrow memory on real data


@dataclass(frozen=True)
class ModelSpec:
    """`linear`: h(x) = ⟨w, (1, x)⟩; with `cross_terms`, x is extended to (x, γ, γ·x) as in
    paper 003, Sec. 7.1. `mlp`: dense layers of the given widths, each followed by the
    activation (ReLU or the sigmoid), then one score."""

    kind: Literal["linear", "mlp"] = "linear"
    cross_terms: bool = False
    hidden: tuple[int, ...] = (64,)
    activation: Literal["relu", "sigmoid"] = "relu"

    def __post_init__(self) -> None:
        if self.kind not in ("linear", "mlp"):
            raise UserError(f"model must be 'linear' or 'mlp', not '{self.kind}'")
        if self.kind == "mlp" and (not self.hidden or min(self.hidden) < 1):
            raise UserError("an MLP needs at least one hidden layer of width 1 or more")
        if self.kind == "mlp" and max(self.hidden) > MAX_HIDDEN_WIDTH:
            raise UserError(
                f"hidden layers of at most {MAX_HIDDEN_WIDTH} units are supported, "
                f"not {max(self.hidden)}"
            )
        if self.activation not in ACTIVATIONS:
            raise UserError(
                f"activation must be one of {', '.join(ACTIVATIONS)}, not '{self.activation}'"
            )
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))

    @property
    def affine(self) -> bool:
        """Scores are affine in the parameters (what difference-of-convex solvers need)."""
        return self.kind == "linear"
