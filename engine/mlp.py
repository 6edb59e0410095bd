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


def mlp_scores(params: dict[str, torch.Tensor], X: torch.Tensor) -> torch.Tensor:
    """The MLP's scores with the weights `params` (named as `MLP.named_parameters` names them:
    "layers.0.weight", "layers.0.bias", "layers.2.weight", ...), as a plain chain of linear maps
    and ReLUs: what `torch.func.functional_call` computes, without its per-call swapping of the
    module's tensors, which cost minibatch solvers about a third of a step."""
    layers = sorted({int(name.split(".")[1]) for name in params if name.startswith("layers.")})
    h = X
    for position, layer in enumerate(layers):
        h = torch.nn.functional.linear(h, params[f"layers.{layer}.weight"],
                                       params[f"layers.{layer}.bias"])  # fmt: skip
        if position < len(layers) - 1:
            h = torch.relu(h)
    return h.squeeze(-1)


def make_mlp(n_features: int, hidden: tuple[int, ...], seed: int = 0) -> MLP:
    """The module with PyTorch's default initialisation from `seed`, leaving torch's global
    generator as it was (a run's randomness comes from its own seed, never global state)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MLP(n_features, hidden)


def init_mlp_params(n_features: int, hidden: tuple[int, ...], seed: int) -> Params:
    module = make_mlp(n_features, hidden, seed)
    return {name: p.detach().numpy().copy() for name, p in module.named_parameters()}
