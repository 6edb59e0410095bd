"""The MLP model as a torch module, and its initial parameters."""

from __future__ import annotations

import torch

from engine.models import Params


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
