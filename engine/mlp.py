"""The MLP as a torch module: what draws an MLP's initial weights (PyTorch's default
initialisation, so runs start where a torch user's would), and a reference forward pass for
`engine.networks.MLPNetwork`, which computes the scores solvers use."""

from __future__ import annotations

import torch

from engine.models import Params

_ACTIVATIONS = {"relu": torch.nn.ReLU, "sigmoid": torch.nn.Sigmoid}


class MLP(torch.nn.Module):
    def __init__(self, n_features: int, hidden: tuple[int, ...], activation: str = "relu") -> None:
        super().__init__()
        widths = (n_features, *hidden)
        layers: list[torch.nn.Module] = []
        for a, b in zip(widths[:-1], widths[1:], strict=True):
            layers += [torch.nn.Linear(a, b, dtype=torch.float64), _ACTIVATIONS[activation]()]
        layers.append(torch.nn.Linear(widths[-1], 1, dtype=torch.float64))
        self.layers = torch.nn.Sequential(*layers)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.layers(X).squeeze(-1)


def make_mlp(
    n_features: int, hidden: tuple[int, ...], seed: int = 0, activation: str = "relu"
) -> MLP:
    """The module with PyTorch's default initialisation from `seed`, leaving torch's global
    generator as it was (a run's randomness comes from its own seed, never global state)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MLP(n_features, hidden, activation)


def init_mlp_params(n_features: int, hidden: tuple[int, ...], seed: int) -> Params:
    """The initial weights (they do not depend on the activation)."""
    module = make_mlp(n_features, hidden, seed)
    return {name: p.detach().numpy().copy() for name, p in module.named_parameters()}
