"""Models: linear (optionally with group cross-terms) and a small MLP.

Parameters travel as a dict of float64 numpy arrays (the same form the run store saves), so a
solver, the store and the app agree on one representation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from engine.errors import UserError

Params = dict[str, np.ndarray]


@dataclass(frozen=True)
class ModelSpec:
    """`linear`: h(x) = ⟨w, (1, x)⟩; with `cross_terms`, x is extended to (x, γ, γ·x) as in
    paper 003, Sec. 7.1. `mlp`: ReLU layers of the given widths, then one score."""

    kind: Literal["linear", "mlp"] = "linear"
    cross_terms: bool = False
    hidden: tuple[int, ...] = (64,)

    def __post_init__(self) -> None:
        if self.kind not in ("linear", "mlp"):
            raise UserError(f"model must be 'linear' or 'mlp', not '{self.kind}'")
        if self.kind == "mlp" and (not self.hidden or min(self.hidden) < 1):
            raise UserError("an MLP needs at least one hidden layer of width 1 or more")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))

    @property
    def affine(self) -> bool:
        """Scores are affine in the parameters (what difference-of-convex solvers need)."""
        return self.kind == "linear"


class MLP(torch.nn.Module):
    def __init__(self, n_features: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        widths = (n_features, *hidden)
        layers: list[torch.nn.Module] = []
        for a, b in zip(widths[:-1], widths[1:], strict=True):
            layers += [torch.nn.Linear(a, b, dtype=torch.float64), torch.nn.ReLU()]
        layers.append(torch.nn.Linear(widths[-1], 1, dtype=torch.float64))
        self.layers = torch.nn.Sequential(*layers)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.layers(X).squeeze(-1)


def init_mlp_params(n_features: int, hidden: tuple[int, ...], seed: int) -> Params:
    torch.manual_seed(seed)
    module = MLP(n_features, hidden)
    return {name: p.detach().numpy().copy() for name, p in module.named_parameters()}
